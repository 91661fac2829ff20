"""Build the self-contained static ``dist/``: the shim, the worker, Pyodide's core and
a memory snapshot of it with the engine imported, the engine's wheels (and the
chat-template engine's) in ``dist/packages/``, ORT's files and XGrammar's; and the
browser extension in ``dist/extension/`` (with ``dist/prompt-api-runtime-extension.zip``).

Run from anywhere: ``python3 build/build.py`` (after ``npm ci``).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import ort_glue  # build/, beside this script

ROOT = Path(__file__).resolve().parent.parent
#: The build is made here, then swapped with dist/ in one rename, so that pages and
#: tests served from dist/ never see it half-built.
DIST = ROOT / "dist.building"
FINAL = ROOT / "dist"
NODE_MODULES = ROOT / "node_modules"
PYODIDE_FILES = (
    "pyodide.mjs",
    "pyodide.asm.mjs",
    "pyodide.asm.wasm",
    "python_stdlib.zip",
    "pyodide-lock.json",
)
ORT_FILES = (
    "ort.wasm.min.mjs",
    "ort-wasm-simd-threaded.mjs",
    "ort-wasm-simd-threaded.wasm",
    # wasm where the browser has JSPI: external data read from Blobs (ort-session.mjs).
    "ort.jspi.min.mjs",
    "ort-wasm-simd-threaded.jspi.mjs",
    "ort-wasm-simd-threaded.jspi.wasm",
    # WebGPU: ort.webgpu.min.mjs loads the asyncify build.
    "ort.webgpu.min.mjs",
    "ort-wasm-simd-threaded.asyncify.mjs",
    "ort-wasm-simd-threaded.asyncify.wasm",
)
JINJA2 = "jinja2==3.1.6"
MARKUPSAFE = "markupsafe==3.0.3"
# Run before the snapshot is taken, so that no page pays for it: importing everything
# the worker reaches for the echo model and for real models, and the tokenizer's
# Unicode classes. (Pyodide restores a snapshot only into its initial memory, 30 MiB:
# snapshot.mjs checks that this one fits.)
SNAPSHOT_PYTHON = """
import pyodide._package_loader  # what installing a wheel imports
import jinja2, jinja2.ext, jinja2.nodes, jinja2.sandbox
import py_runtime.hosts.pyodide, py_runtime.models.chat_template, py_runtime.models.hf_messages
py_runtime.tokenizer.precompute_classes()
"""


def run(*command: str | Path) -> None:
    subprocess.run([str(part) for part in command], check=True, cwd=ROOT)


def bundle(entry: str, outfile: str, fmt: str, define: dict[str, str] | None = None) -> None:
    """esbuild one entry point into dist/ (ES2022, readable, with a source map)."""
    defines = [f"--define:{key}={value}" for key, value in (define or {}).items()]
    run(
        NODE_MODULES / ".bin" / "esbuild",
        ROOT / "web" / entry,
        "--bundle",
        f"--format={fmt}",
        "--target=es2022",
        "--sourcemap",
        "--keep-names",  # interface names (LanguageModel.name) are observable
        "--log-level=warning",
        f"--outfile={DIST / outfile}",
        *defines,
    )


def wheels(into: Path) -> list[Path]:
    """The engine's wheel and jinja2's and markupsafe's (pure Python, for Pyodide's 3.13+)."""
    pip = (sys.executable, "-m", "pip", "--disable-pip-version-check", "-q")
    run(*pip, "wheel", "--no-deps", "-w", into, ROOT)
    run(
        *pip,
        "download",
        JINJA2,
        "--no-deps",
        "--only-binary=:all:",
        "--python-version",
        "3.13",
        "-d",
        into,
    )
    # markupsafe has no pure-Python wheel on PyPI; its build falls back to pure
    # Python when the C compiler fails, which CC=/bin/false makes sure of.
    env = {**os.environ, "CC": "/bin/false"}
    subprocess.run(
        [*pip, "wheel", "--no-deps", "--no-binary", ":all:", MARKUPSAFE, "-w", str(into)],
        check=True,
        cwd=ROOT,
        env=env,
    )
    return sorted(into.glob("*.whl"))


def project_name(wheel: Path) -> str:
    return wheel.name.split("-")[0].replace("_", "-").lower()


def build() -> None:
    if not (NODE_MODULES / ".bin" / "esbuild").exists():
        sys.exit("node_modules is missing: run `npm ci` first.")
    shutil.rmtree(DIST, ignore_errors=True)
    (DIST / "packages").mkdir(parents=True)
    with tempfile.TemporaryDirectory() as tmp:
        built = wheels(Path(tmp))
        for wheel in built:
            shutil.copy2(wheel, DIST / "packages" / wheel.name)
    packaged = sorted((DIST / "packages").glob("*.whl"))
    by_name = {project_name(w): f"packages/{w.name}" for w in packaged}
    build_info = {
        "snapshot": "pyodide/snapshot.bin.gz",
        "wheels": [by_name["py-runtime"]],
        "modelWheels": [by_name["jinja2"], by_name["markupsafe"]],
    }
    bundle("entry-classic.js", "language-model.js", "iife")
    bundle("language-model.mjs", "language-model.mjs", "esm")
    bundle("worker/worker.mjs", "worker.mjs", "esm", {"BUILD": json.dumps(build_info)})
    for folder, package, files in (
        ("pyodide", "pyodide", PYODIDE_FILES),
        ("ort", "onnxruntime-web/dist", ORT_FILES),
    ):
        (DIST / folder).mkdir()
        for name in files:
            shutil.copy2(NODE_MODULES / package / name, DIST / folder / name)
    ort_glue.edit(DIST / "ort")
    # XGrammar's web build (UMD, its wasm inlined), imported by the worker when a
    # constraint is first used (web/worker/grammar.mjs).
    xgrammar = NODE_MODULES / "@mlc-ai" / "web-xgrammar"
    (DIST / "xgrammar").mkdir()
    shutil.copy2(xgrammar / "lib" / "index.js", DIST / "xgrammar" / "xgrammar.js")
    for name in ("LICENSE", "LICENSE.txt", "LICENSE.md"):
        if (xgrammar / name).is_file():
            shutil.copy2(xgrammar / name, DIST / "xgrammar" / name)
    run("node", ROOT / "build" / "snapshot.mjs", DIST, SNAPSHOT_PYTHON, *packaged)
    shutil.copytree(ROOT / "web" / "demo", DIST, dirs_exist_ok=True)
    build_extension()
    size = sum(f.stat().st_size for f in DIST.rglob("*") if f.is_file())
    previous = ROOT / "dist.previous"
    shutil.rmtree(previous, ignore_errors=True)
    if FINAL.exists():
        FINAL.rename(previous)
    DIST.rename(FINAL)
    shutil.rmtree(previous, ignore_errors=True)
    print(f"built {FINAL.relative_to(ROOT)}/ ({size / 1e6:.1f} MB)")


#: The extension's scripts (web/extension/): entry, file in dist/extension/, format.
EXTENSION_SCRIPTS = (
    ("page.js", "page.js", "iife"),  # MAIN-world content script
    ("bridge.js", "bridge.js", "iife"),  # isolated-world content script
    ("service-worker.js", "service-worker.js", "esm"),
    ("offscreen.js", "offscreen.js", "esm"),
    ("extension-page.js", "language-model.js", "iife"),  # the API in the options page
    ("options.js", "options.js", "esm"),
)
#: What the engine needs, shared with the page build (hard links where possible).
ENGINE_FILES = ("worker.mjs", "worker.mjs.map", "pyodide", "ort", "packages", "xgrammar")


def link_tree(source: Path, target: Path) -> None:
    """Copy ``source`` to ``target``, hard-linking files where the file system can."""
    if source.is_dir():
        shutil.copytree(source, target, copy_function=link_tree_file)
    else:
        link_tree_file(str(source), str(target))


def link_tree_file(source: str, target: str) -> None:
    try:
        os.link(source, target)
    except OSError:
        shutil.copy2(source, target)


def build_extension() -> None:
    """dist/extension/ (an MV3 extension: load it unpacked) and its zip."""
    extension = DIST / "extension"
    extension.mkdir()
    for entry, outfile, fmt in EXTENSION_SCRIPTS:
        bundle(f"extension/{entry}", f"extension/{outfile}", fmt)
    for name in ("offscreen.html", "options.html"):
        shutil.copy2(ROOT / "web" / "extension" / name, extension / name)
    manifest = json.loads((ROOT / "web" / "extension" / "manifest.json").read_text())
    manifest["version"] = json.loads((ROOT / "package.json").read_text())["version"]
    (extension / "manifest.json").write_text(json.dumps(manifest, indent=2) + "\n")
    for name in ENGINE_FILES:
        link_tree(DIST / name, extension / name)
    shutil.make_archive(str(DIST / "prompt-api-runtime-extension"), "zip", extension)


if __name__ == "__main__":
    build()
