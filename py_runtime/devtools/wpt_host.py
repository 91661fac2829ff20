"""Serving WPT-style test files the way WPT's server does, for ``wpt.py``.

Each ``.window.js`` file gets a generated wrapper page that loads
``/resources/testharness.js``, our ``testharnessreport.js`` and ``testdriver.js``,
the ``// META: script=`` files and the shim from ``dist/`` (with the model the run
was given); ``WptHost`` runs one static server per WPT root.
"""

from __future__ import annotations

import html
import re
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import Self
from urllib.parse import quote

from .server import StaticServer

REPO_ROOT = Path(__file__).resolve().parents[2]
RESOURCES_DIR = Path(__file__).resolve().parent / "wpt_resources"
DEFAULT_DIST = REPO_ROOT / "dist"
DEFAULT_TESTHARNESS = REPO_ROOT / "node_modules" / "wpt-runner" / "testharness" / "testharness.js"
TEST_SUFFIXES = (".window.js", ".any.js")

_META_RE = re.compile(r"^//\s*META:\s*(\w+)=(.*)$")


@dataclass(frozen=True)
class TestMetadata:
    """The ``// META:`` header of a test file."""

    title: str | None = None
    scripts: tuple[str, ...] = ()
    timeout_long: bool = False


def read_metadata(source: str) -> TestMetadata:
    """Parse leading ``// META: key=value`` lines as WPT does."""
    title: str | None = None
    scripts: list[str] = []
    timeout_long = False
    for line in source.splitlines():
        if not line.startswith("//"):
            break
        match = _META_RE.match(line.strip())
        if match is None:
            continue
        key, value = match.group(1), match.group(2).strip()
        if key == "title":
            title = value
        elif key == "script":
            scripts.append(value)
        elif key == "timeout":
            timeout_long = value == "long"
    return TestMetadata(title=title, scripts=tuple(scripts), timeout_long=timeout_long)


def find_wpt_root(path: Path) -> Path:
    """Pick the directory served at ``/`` for a test file."""
    path = path.resolve()
    parents = list(path.parents)
    for parent in parents:
        if parent.name == "wpt":
            return parent
    for parent in parents:
        if parent.name == "ai":
            return parent.parent
    return path.parent.parent


def wrapper_name(test_file_name: str) -> str:
    """Map ``x.window.js`` / ``x.any.js`` to the wrapper page's file name."""
    for suffix in TEST_SUFFIXES:
        if test_file_name.endswith(suffix):
            return test_file_name[: -len(".js")] + ".html"
    return test_file_name.removesuffix(".js") + ".window.html"


_ANY_GLOBAL = """<script>
self.GLOBAL = {
  isWindow: function() { return true; },
  isWorker: function() { return false; },
  isShadowRealm: function() { return false; },
};
</script>"""


def shim_script(shim_attrs: dict[str, str]) -> str:
    """The script tag that loads the product, with its configuration."""
    attrs = "".join(f' data-{name}="{html.escape(value)}"' for name, value in shim_attrs.items())
    return f'<script src="/_lm/language-model.js"{attrs}></script>'


def render_wrapper(
    test_file_name: str,
    meta: TestMetadata,
    shim_attrs: dict[str, str] | None,
    timeout_multiplier: float = 1,
) -> bytes:
    """Build the HTML page that runs one test file, like WPT's wrapper; without
    ``shim_attrs`` the page does not load our script (the extension provides the API)."""
    esc = html.escape
    parts = ["<!doctype html>", "<meta charset=utf-8>"]
    if meta.title is not None:
        parts.append(f"<title>{esc(meta.title, quote=False)}</title>")
    if meta.timeout_long:
        parts.append('<meta name="timeout" content="long">')
    if shim_attrs is not None:
        parts.append(shim_script(shim_attrs))
    if test_file_name.endswith(".any.js"):
        parts.append(_ANY_GLOBAL)
    parts.append('<script src="/resources/testharness.js"></script>')
    parts.append('<script src="/resources/testharnessreport.js"></script>')
    if timeout_multiplier != 1:  # as wptrunner's --timeout-multiplier
        parts.append(f"<script>setup({{timeout_multiplier: {timeout_multiplier:g}}});</script>")
    parts.extend(f'<script src="{esc(src)}"></script>' for src in meta.scripts)
    # As in WPT, the log div comes first, so the test runs with a document.body.
    parts.append("<div id=log></div>")
    parts.append(f'<script src="{esc(quote(test_file_name))}"></script>')
    return ("\n".join(parts) + "\n").encode()


class WptHost:
    """Serves test files (one server per WPT root) with our overrides."""

    def __init__(
        self,
        dist: Path | None = None,
        model: str | None = None,
        dtype: str | None = None,
        device: str | None = None,
        testharness: Path | None = None,
        timeout_multiplier: float = 1,
        tool_call_results: str | None = None,
        via_extension: bool = False,
    ) -> None:
        self.timeout_multiplier = timeout_multiplier
        #: Pages load no script of ours: the extension installs the API.
        self.via_extension = via_extension
        #: The shim's data-tool-call-results ("when-called" or "always-array").
        self.tool_call_results = tool_call_results
        self.dist = Path(dist) if dist is not None else DEFAULT_DIST
        self.testharness = Path(testharness) if testharness is not None else DEFAULT_TESTHARNESS
        if not self.testharness.is_file():
            raise FileNotFoundError(
                f"testharness.js not found at {self.testharness} (run `npm install`)"
            )
        self.model = model
        self.dtype = dtype
        self.device = device
        self._model_dir = Path(model).resolve() if model and Path(model).is_dir() else None
        self._servers: dict[Path, StaticServer] = {}

    def _files(self) -> dict[str, Path | bytes]:
        """The fixed override files every server answers."""
        files: dict[str, Path | bytes] = {
            "/resources/testharness.js": self.testharness,
            "/resources/testharnessreport.js": RESOURCES_DIR / "testharnessreport.js",
            "/resources/testdriver.js": RESOURCES_DIR / "testdriver.js",
            "/resources/testdriver-vendor.js": RESOURCES_DIR / "testdriver-vendor.js",
            "/ai/resources/util.js": RESOURCES_DIR / "ai" / "resources" / "util.js",
        }
        extras = {"idlharness.js": "idlharness.js", "WebIDLParser.js": "webidl2.js"}
        for url_name, file_name in extras.items():
            candidate = self.testharness.parent / file_name
            if candidate.is_file():
                files[f"/resources/{url_name}"] = candidate
        return files

    def server_for(self, root: Path) -> StaticServer:
        """Return the (started) server whose ``/`` is ``root``."""
        root = root.resolve()
        server = self._servers.get(root)
        if server is None:
            mounts = {"/": root, "/_lm/": self.dist}
            # Media the multimodal tests load, where the tree under test has none.
            for folder in ("media", "images"):
                if not (root / folder).is_dir():
                    mounts[f"/{folder}/"] = RESOURCES_DIR / folder
            if self._model_dir is not None:
                mounts[f"/_models/{self._model_dir.name}/"] = self._model_dir
            server = StaticServer(mounts, self._files()).start()
            # Pages of the tree itself (iframes, .html tests) get the shim too.
            if not self.via_extension:
                server.html_injection = shim_script(self.shim_attrs(server)).encode()
            self._servers[root] = server
        return server

    def shim_attrs(self, server: StaticServer) -> dict[str, str]:
        """The ``data-*`` attributes for the shim's script tag."""
        attrs: dict[str, str] = {}
        if self._model_dir is not None:
            attrs["model"] = f"{server.url}/_models/{quote(self._model_dir.name)}/"
        elif self.model:
            attrs["model"] = self.model
        if self.dtype:
            attrs["dtype"] = self.dtype
        if self.device:
            attrs["device"] = self.device
        if self.tool_call_results:
            attrs["tool-call-results"] = self.tool_call_results
        return attrs

    def extension_settings(self, path: Path) -> dict[str, str]:
        """The extension's settings for the page that runs ``path`` (the model as
        this host serves it)."""
        attrs = self.shim_attrs(self.server_for(find_wpt_root(Path(path).resolve())))
        return {
            "model": attrs.get("model", "echo"),
            "dtype": attrs.get("dtype", ""),
            "device": attrs.get("device", "wasm"),
        }

    def url_for(self, path: Path) -> str:
        """Register the wrapper page for a test file and return its URL."""
        path = Path(path).resolve()
        root = find_wpt_root(path)
        server = self.server_for(root)
        relative_dir = path.parent.relative_to(root).as_posix()
        prefix = "/" if relative_dir == "." else f"/{relative_dir}/"
        page_path = prefix + wrapper_name(path.name)
        meta = read_metadata(path.read_text(encoding="utf-8"))
        attrs = None if self.via_extension else self.shim_attrs(server)
        page = render_wrapper(path.name, meta, attrs, self.timeout_multiplier)
        server.add_file(page_path, page)
        return server.url + quote(page_path)

    def close(self) -> None:
        """Stop every server."""
        for server in self._servers.values():
            server.stop()
        self._servers.clear()

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()
