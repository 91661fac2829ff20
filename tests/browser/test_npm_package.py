"""The npm package, as a user gets it: ``npm pack`` makes a tarball; a fresh project
installs it, imports it for its side effect, bundles with esbuild and runs in Chromium;
its TypeScript declarations come into scope with the import."""

from __future__ import annotations

import json
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Page

from py_runtime.devtools.server import StaticServer

REPO_ROOT = Path(__file__).resolve().parents[2]
DIST = REPO_ROOT / "dist"
BIN = REPO_ROOT / "node_modules" / ".bin"
#: What a page needs beside the bundle (the package's dist/ minus its entry scripts).
ASSETS = ("worker.mjs", "pyodide", "ort", "packages", "xgrammar")
ECHO = "On-device model is not available in Chromium, this API is just echoing back the input:\n"

pytestmark = pytest.mark.needs_files(
    DIST / "language-model.mjs", BIN / "esbuild", reason="build dist/ and run `npm ci` first"
)

APP = """import 'prompt-api-runtime';

%s
window.answer = async (text) => {
  const session = await LanguageModel.create();
  return session.prompt(text);
};
"""

TYPED = """import 'prompt-api-runtime';

export async function ask(text: string): Promise<string> {
  promptAPIRuntime.configure({toolCallResults: 'when-called', assetsURL: '/assets/'});
  const session: LanguageModel = await LanguageModel.create({
    expectedOutputs: [{type: 'tool-call'}],
    tools: [{name: 'now', description: 'The time.', inputSchema: {type: 'object'},
             execute: () => new Date().toISOString()}],
  });
  const answer = await session.prompt(text, {responseConstraint: /yes|no/});
  return typeof answer === 'string' ? answer : answer.map((part) => part.type).join();
}
"""


def npm(*args: str, cwd: Path) -> str:
    done = subprocess.run(
        ["npm", *args, "--no-audit", "--no-fund", "--loglevel=error"],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A fresh project with the packed tarball installed from the file, offline."""
    root = tmp_path_factory.mktemp("npm")
    tarball = npm("pack", "--pack-destination", str(root), "--json", cwd=REPO_ROOT)
    name = json.loads(tarball)[0]["filename"]
    app = root / "app"
    app.mkdir()
    (app / "package.json").write_text(json.dumps({"name": "app", "private": True}))
    npm("install", "--offline", str(root / name), cwd=app)
    return app


def bundle(project: Path, name: str, setup: str) -> Path:
    source = project / f"{name}.js"
    source.write_text(APP % setup)
    out = project / "public" / name
    out.mkdir(parents=True)
    subprocess.run(
        [BIN / "esbuild", source, "--bundle", "--format=esm", f"--outfile={out / 'app.js'}"],
        check=True,
        cwd=project,
    )
    (out / "index.html").write_text(
        '<!doctype html><script type="module" src="app.js"></script><button id=go>go</button>'
    )
    return out


@pytest.fixture(scope="module")
def site(project: Path) -> Iterator[StaticServer]:
    package = project / "node_modules" / "prompt-api-runtime" / "dist"
    beside = bundle(project, "beside", "")
    for asset in ASSETS:  # the runtime's files next to the bundle: the default
        source = package / asset
        (shutil.copytree if source.is_dir() else shutil.copy2)(source, beside / asset)
    # ... or wherever the page says.
    bundle(project, "elsewhere", "promptAPIRuntime.configure({assetsURL: '/vendor/'});")
    with StaticServer({"/": project / "public", "/vendor/": package}) as server:
        yield server


def test_the_tarball_holds_the_runtime_and_its_types(project: Path):
    package = project / "node_modules" / "prompt-api-runtime"
    manifest = json.loads((package / "package.json").read_text())
    assert manifest["name"] == "prompt-api-runtime"
    assert not manifest.get("dependencies"), "everything is bundled in dist/"
    for path in (
        "dist/language-model.mjs",
        "dist/language-model.js",
        "dist/worker.mjs",
        "dist/pyodide/pyodide.asm.wasm",
        "types/prompt-api-runtime.d.ts",
    ):
        assert (package / path).is_file(), path
    assert not (package / "dist" / "extension").exists(), "the extension ships on its own"


@pytest.mark.parametrize("where", ["beside", "elsewhere"])
def test_a_bundled_app_runs_the_package(page: Page, site: StaticServer, where: str):
    page.goto(f"{site.url}/{where}/index.html")
    page.click("#go")  # user activation for the first create()
    assert page.evaluate("answer('from a bundle')") == ECHO + "from a bundle"


def test_importing_the_package_brings_its_types_into_scope(project: Path):
    (project / "typed.ts").write_text(TYPED)
    (project / "tsconfig.json").write_text(
        json.dumps(
            {
                "compilerOptions": {
                    "strict": True,
                    "noEmit": True,
                    "target": "ES2022",
                    "module": "ESNext",
                    "moduleResolution": "bundler",
                    "lib": ["ES2022", "DOM", "DOM.Iterable"],
                },
                "files": ["typed.ts"],
            }
        )
    )
    done = subprocess.run([BIN / "tsc", "-p", "."], cwd=project, capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr
    (project / "typed.ts").write_text(TYPED.replace("'when-called'", "'sometimes'"))
    done = subprocess.run([BIN / "tsc", "-p", "."], cwd=project, capture_output=True, text=True)
    assert done.returncode != 0 and "sometimes" in done.stdout, "the types can fail"
