"""A threaded static HTTP server for browser tests, cross-origin isolated."""

from __future__ import annotations

import mimetypes
import socket
import threading
import time
from collections.abc import Callable, Mapping
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from types import TracebackType
from typing import Self
from urllib.parse import unquote, urlsplit

ISOLATION_HEADERS: dict[str, str] = {
    "Cross-Origin-Opener-Policy": "same-origin",
    "Cross-Origin-Embedder-Policy": "require-corp",
    "Cross-Origin-Resource-Policy": "same-origin",
    "Cache-Control": "no-cache",
}

MIME_TYPES: dict[str, str] = {
    ".js": "text/javascript",
    ".mjs": "text/javascript",
    ".wasm": "application/wasm",
    ".json": "application/json",
    ".html": "text/html; charset=utf-8",
    ".htm": "text/html; charset=utf-8",
    ".css": "text/css",
    ".txt": "text/plain; charset=utf-8",
    ".jinja": "text/plain; charset=utf-8",
    ".svg": "image/svg+xml",
    ".png": "image/png",
    ".whl": "application/octet-stream",
    ".zip": "application/zip",
    ".onnx": "application/octet-stream",
    ".onnx_data": "application/octet-stream",
    ".bin": "application/octet-stream",
}

_CHUNK = 1 << 20

#: Extra response headers: the same for every path, or a function of the URL path.
Headers = Mapping[str, str] | Callable[[str], Mapping[str, str]]

#: The faults a path can be given (``StaticServer.faults``), for fault-injection tests:
#: "500" answers 500; "drop" sends the headers and half the body, then closes the
#: connection; "stall" sends the headers and the first MiB (at most half the body),
#: then nothing until the fault is lifted (then the connection is closed).
FAULTS = ("500", "drop", "stall")


def guess_type(path: str) -> str:
    """Return the Content-Type for a file name or URL path."""
    suffix = Path(path).suffix.lower()
    if suffix in MIME_TYPES:
        return MIME_TYPES[suffix]
    guessed, _ = mimetypes.guess_type(path)
    return guessed or "application/octet-stream"


def inject_after_doctype(page: bytes, markup: bytes) -> bytes:
    """Insert ``markup`` at the top of an HTML page, after its doctype if any."""
    head = page[:200].lower()
    start = head.find(b"<!doctype")
    if start == -1:
        return markup + page
    end = page.index(b">", start) + 1
    return page[:end] + markup + page[end:]


def _normalize_prefix(prefix: str) -> str:
    """Make a mount prefix start and end with a slash."""
    prefix = "/" + prefix.strip("/")
    return prefix if prefix == "/" else prefix + "/"


class StaticServer:
    """Serve directories (mounts) and single files on 127.0.0.1 in a thread."""

    def __init__(
        self,
        mounts: dict[str, Path],
        files: dict[str, Path | bytes] | None = None,
        port: int = 0,
        headers: Headers | None = None,
    ) -> None:
        """``headers``: sent with every answer after the isolation headers (a header of
        the same name replaces one of those), or a function giving them per URL path
        (e.g. a Content-Security-Policy for pages only)."""
        self._lock = threading.Lock()
        self._headers = headers
        #: Markup put at the top of every .html file served from a mount.
        self.html_injection: bytes | None = None
        #: Every request answered, as (method, path): tests count downloads with it.
        self.requests: list[tuple[str, str]] = []
        #: URL path -> one of FAULTS, applied to GET requests while set.
        self.faults: dict[str, str] = {}
        self._mounts: dict[str, Path] = {}
        self._files: dict[str, Path | bytes] = {}
        for prefix, directory in mounts.items():
            self.add_mount(prefix, directory)
        for url_path, content in (files or {}).items():
            self.add_file(url_path, content)
        self._port = port
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # Registration --------------------------------------------------------

    def add_mount(self, prefix: str, directory: Path) -> None:
        """Serve `directory` under the URL prefix `prefix`."""
        with self._lock:
            self._mounts[_normalize_prefix(prefix)] = Path(directory).resolve()

    def add_file(self, url_path: str, content: Path | bytes) -> None:
        """Serve `content` (a file or bytes) at exactly `url_path`."""
        if not url_path.startswith("/"):
            url_path = "/" + url_path
        with self._lock:
            self._files[url_path] = content if isinstance(content, bytes) else Path(content)

    def resolve(self, url_path: str) -> Path | bytes | None:
        """Map a decoded URL path to what to serve, or None for 404."""
        with self._lock:
            if url_path in self._files:
                return self._files[url_path]
            mounts = sorted(self._mounts.items(), key=lambda item: len(item[0]), reverse=True)
        for prefix, root in mounts:
            if url_path == prefix.rstrip("/") and prefix != "/":
                relative = ""
            elif url_path.startswith(prefix):
                relative = url_path[len(prefix) :]
            else:
                continue
            # Refuse traversal lexically (symlinks inside a mount are allowed).
            segments = [part for part in relative.split("/") if part not in ("", ".")]
            if ".." in segments or any("\x00" in part or "\\" in part for part in segments):
                return None
            target = root.joinpath(*segments)
            if target.is_dir():
                target = target / "index.html"
            return target if target.is_file() else None
        return None

    def headers_for(self, url_path: str) -> dict[str, str]:
        """Every header an answer for ``url_path`` carries besides its content's."""
        extra = self._headers(url_path) if callable(self._headers) else self._headers
        return {**ISOLATION_HEADERS, **(extra or {})}

    # Lifecycle -----------------------------------------------------------

    @property
    def port(self) -> int:
        """The bound TCP port (after start)."""
        if self._httpd is None:
            raise RuntimeError("server not started")
        return int(self._httpd.server_address[1])

    @property
    def url(self) -> str:
        """The origin, e.g. http://127.0.0.1:8123 (no trailing slash)."""
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> Self:
        """Bind and start serving in a daemon thread."""
        if self._httpd is not None:
            return self
        handler = type("_BoundHandler", (_Handler,), {"static_server": self})
        httpd = _QuietHTTPServer(("127.0.0.1", self._port), handler)
        httpd.daemon_threads = True
        self._httpd = httpd
        self._thread = threading.Thread(
            target=httpd.serve_forever, name="StaticServer", daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving and close the socket."""
        if self._httpd is None:
            return
        self._httpd.shutdown()
        self._httpd.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)
        self._httpd = None
        self._thread = None

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()


class _QuietHTTPServer(ThreadingHTTPServer):
    """Browsers drop connections (closing a page, cancelling a fetch): not errors."""

    def handle_error(self, request: object, client_address: object) -> None:
        import sys

        if not isinstance(sys.exc_info()[1], ConnectionError):
            super().handle_error(request, client_address)  # type: ignore[arg-type]


class _Handler(BaseHTTPRequestHandler):
    """Request handler; `static_server` is set on a bound subclass."""

    static_server: StaticServer
    protocol_version = "HTTP/1.1"
    server_version = "StaticServer/1"

    def log_message(self, format: str, *args: object) -> None:  # noqa: A002
        """Stay quiet: no per-request lines on stderr."""

    def do_GET(self) -> None:
        """Serve a GET request."""
        self._serve(send_body=True)

    def do_HEAD(self) -> None:
        """Serve a HEAD request."""
        self._serve(send_body=False)

    def _send_headers(
        self, status: HTTPStatus, content_type: str, length: int, etag: str | None = None
    ) -> None:
        """Send the status line and headers, isolation headers included."""
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(length))
        if etag:
            self.send_header("ETag", etag)
        url_path = unquote(urlsplit(self.path).path)
        for name, value in self.static_server.headers_for(url_path).items():
            self.send_header(name, value)
        self.end_headers()

    def _not_found(self, send_body: bool) -> None:
        """Answer 404."""
        body = b"404 Not Found\n"
        self._send_headers(HTTPStatus.NOT_FOUND, "text/plain; charset=utf-8", len(body))
        if send_body:
            self.wfile.write(body)

    def _serve_fault(self, fault: str, url_path: str, body: bytes, content_type: str) -> None:
        """Send a "drop" or "stall" answer (see FAULTS), then close the connection."""
        self.close_connection = True
        self._send_headers(HTTPStatus.OK, content_type, len(body))
        try:
            if fault == "drop":
                self.wfile.write(body[: len(body) // 2])
            else:
                self.wfile.write(body[: min(_CHUNK, len(body) // 2)])
                self.wfile.flush()
                while self.static_server.faults.get(url_path) == "stall":
                    time.sleep(0.05)
            self.wfile.flush()
            self.connection.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass  # the client gave up first

    def _serve(self, send_body: bool) -> None:
        """Answer GET or HEAD for the request path."""
        url_path = unquote(urlsplit(self.path).path)
        self.static_server.requests.append((self.command, url_path))
        try:
            content = self.static_server.resolve(url_path)
        except (OSError, ValueError):
            content = None
        if content is None:
            self._not_found(send_body)
            return
        fault = self.static_server.faults.get(url_path) if send_body else None
        if fault == "500":
            body = b"500 Internal Server Error\n"
            self._send_headers(HTTPStatus.INTERNAL_SERVER_ERROR, "text/plain", len(body))
            self.wfile.write(body)
            return
        content_type = guess_type(url_path if isinstance(content, bytes) else content.name)
        if fault and isinstance(content, Path):
            self._serve_fault(fault, url_path, content.read_bytes(), content_type)
            return
        inject = self.static_server.html_injection
        if inject and isinstance(content, Path) and content.suffix in (".html", ".htm"):
            content = inject_after_doctype(content.read_bytes(), inject)
        if isinstance(content, bytes):
            self._send_headers(HTTPStatus.OK, content_type, len(content))
            if send_body:
                self.wfile.write(content)
            return
        try:
            handle = content.open("rb")
        except OSError:
            self._not_found(send_body)
            return
        with handle:
            stat = content.stat()
            size = stat.st_size
            # A file's version, as servers give it (the model cache revalidates with it).
            etag = f'"{size:x}-{stat.st_mtime_ns:x}"'
            self._send_headers(HTTPStatus.OK, content_type, size, etag)
            if not send_body:
                return
            try:
                while chunk := handle.read(_CHUNK):
                    self.wfile.write(chunk)
            except (BrokenPipeError, ConnectionResetError):
                self.close_connection = True
