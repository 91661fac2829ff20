// How long the engine takes to read a tokenizer.json in Pyodide (Node's, the page's
// wasm build): from the JSON, and from its prepared form (py_runtime/tokenizer/prepared.py).
//
//   node bench/tokenizer_load.mjs ~/.cache/prompt-api-models/gemma3-270m/tokenizer.json [runs]
import fs from 'node:fs';
import { fileURLToPath } from 'node:url';
import { loadPyodide } from 'pyodide';

const [file, runs = '3'] = process.argv.slice(2);
const sources = fileURLToPath(new URL('../py_runtime/tokenizer/', import.meta.url));
const pyodide = await loadPyodide();
pyodide.FS.mkdirTree('/lib/py_runtime/tokenizer');
pyodide.FS.writeFile('/lib/py_runtime/__init__.py', '');
for (const name of fs.readdirSync(sources).filter((n) => n.endsWith('.py'))) {
  pyodide.FS.writeFile(`/lib/py_runtime/tokenizer/${name}`, fs.readFileSync(sources + name));
}
pyodide.FS.writeFile('/tokenizer.json', fs.readFileSync(file));
console.log(pyodide.runPython(`
import statistics, sys, time
sys.path.insert(0, '/lib')
from py_runtime.tokenizer import Tokenizer
text = open('/tokenizer.json').read()
plain, prepared = [], []
for _ in range(${Number(runs)}):
    started = time.perf_counter(); _, blob = Tokenizer.from_json_prepared(text, None)
    plain.append(time.perf_counter() - started)
    started = time.perf_counter(); Tokenizer.from_json_prepared(text, blob)
    prepared.append(time.perf_counter() - started)
(f"{len(text) / 1e6:.1f} MB: from the JSON {statistics.median(plain):.2f} s, "
 f"from the prepared form ({len(blob) / 1e6:.1f} MB) {statistics.median(prepared):.2f} s (medians)")
`));
