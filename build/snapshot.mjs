// Writes dist/pyodide/snapshot.bin.gz: Pyodide's memory right after start-up, with
// the given wheels unpacked and the given Python run. The worker restores it instead
// of starting Python from scratch (Python's start-up is most of a cold boot).
// Usage: node build/snapshot.mjs DIST PYTHON_SOURCE WHEEL...
import { readFileSync, writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { gzipSync } from 'node:zlib';

const [dist, source, ...wheels] = process.argv.slice(2);
const indexURL = resolve(dist, 'pyodide') + '/';
const { loadPyodide } = await import(pathToFileURL(indexURL + 'pyodide.mjs').href);
const pyodide = await loadPyodide({ indexURL, _makeSnapshot: true });
for (const wheel of wheels) pyodide.unpackArchive(new Uint8Array(readFileSync(wheel)), 'wheel');
pyodide.runPython(source);
const memory = pyodide.makeMemorySnapshot();
// Pyodide restores a snapshot into its initial memory without growing it: check that
// this one restores (and that its modules are there) before shipping it.
const restored = await loadPyodide({ indexURL, _loadSnapshot: memory });
restored.runPython('import py_runtime.hosts.pyodide');
const snapshot = gzipSync(memory);
writeFileSync(resolve(indexURL, 'snapshot.bin.gz'), snapshot);
console.log(`snapshot.bin.gz: ${(snapshot.length / 1e6).toFixed(1)} MB (${(memory.length / 2 ** 20).toFixed(0)} MiB)`);
