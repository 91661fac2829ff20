"""``python -m py_runtime prompt``/``serve`` as a user runs them: a subprocess, its
stdout, its one-line errors and exit status (each prompt starts headless Chromium)."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from py_runtime.devtools.cli_inputs import parse_regex

REPO_ROOT = Path(__file__).resolve().parents[2]
DIST = REPO_ROOT / "dist"
FIXTURE = REPO_ROOT / "tests" / "fixtures" / "tiny-qwen2-toolcall"
#: The fixture model, fast and greedy (it answers its README's dialogues exactly).
GREEDY = ["--model", str(FIXTURE), "--dtype", "q4", "--sampling-mode", "most-predictable"]
ECHO_PREFIX = "On-device model is not available in Chromium"
WEATHER_TOOL = {
    "name": "get_weather",
    "description": "Get the current weather for a location",
    "inputSchema": {
        "type": "object",
        "properties": {"location": {"type": "string", "description": "City name"}},
        "required": ["location"],
    },
}

pytestmark = pytest.mark.needs_files(
    DIST / "language-model.js", reason="dist/ is missing: run `python3 build/build.py`"
)


def cli(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "py_runtime", *args],
        cwd=REPO_ROOT,
        input=stdin,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


def succeeded(completed: subprocess.CompletedProcess[str]) -> str:
    assert completed.returncode == 0, completed.stderr
    assert completed.stderr == ""
    return completed.stdout


def one_line_error(completed: subprocess.CompletedProcess[str], status: int = 2) -> str:
    """The single stderr line of a failed run (checked: status, no traceback)."""
    assert completed.returncode == status, (completed.stdout, completed.stderr)
    assert "Traceback" not in completed.stderr + completed.stdout
    lines = completed.stderr.splitlines()
    assert len(lines) == 1, completed.stderr
    assert lines[0].startswith("error: ")
    return lines[0]


def write_json(path: Path, value: Any) -> Path:
    path.write_text(json.dumps(value), encoding="utf-8")
    return path


# --- answers -----------------------------------------------------------------------


def test_dash_reads_the_prompt_from_stdin() -> None:
    stdout = succeeded(cli("prompt", "--model", "echo", "-", stdin="a prompt from stdin\n"))
    assert stdout.startswith(ECHO_PREFIX)
    assert stdout.endswith("a prompt from stdin\n")  # its trailing newline dropped, one added


def test_system_is_the_first_initial_prompt() -> None:
    stdout = succeeded(cli("prompt", "--model", "echo", "--system", "Be brief.", "Hi"))
    assert stdout.rstrip("\n").endswith("Be brief.Hi")  # the echo model echoes both


def test_json_prints_one_object_at_the_end() -> None:
    stdout = succeeded(cli("prompt", "--model", "echo", "--json", "Hi"))
    assert len(stdout.splitlines()) == 1
    result = json.loads(stdout)
    assert set(result) == {"text", "toolCalls", "contextUsage", "contextWindow"}
    assert result["text"].startswith(ECHO_PREFIX) and result["text"].endswith("\nHi")
    assert result["toolCalls"] == []
    # The echo model counts UTF-8 bytes: the prompt's and the answer's.
    assert result["contextUsage"] == len("Hi") + len(result["text"].encode())
    assert result["contextWindow"] == 1000


def test_schema_is_the_response_constraint(tmp_path: Path) -> None:
    schema = {"type": "object", "properties": {"answer": {"type": "string"}}}
    file = write_json(tmp_path / "schema.json", schema)
    stdout = succeeded(cli("prompt", "--model", "echo", "--schema", str(file), "Hi"))
    # As Chromium's, the echo model sees the schema's text appended to the prompt.
    assert "JSON Schema" in stdout
    assert stdout.rstrip("\n").endswith(json.dumps(schema, separators=(",", ":")))


def test_regex_holds_the_fixtures_answer() -> None:
    stdout = succeeded(cli("prompt", *GREEDY, "--regex", "(yes|no)", "Hello!"))
    assert stdout in ("yes\n", "no\n")


def test_fixture_answers_greedily_from_stdin_as_json() -> None:
    result = json.loads(succeeded(cli("prompt", *GREEDY, "--json", "-", stdin="Hello!\n")))
    assert result["text"] == "Hello! How can I help you today?"
    assert result["toolCalls"] == []
    assert 0 < result["contextUsage"] < result["contextWindow"] == 2048


def test_tools_print_each_call_as_a_json_line(tmp_path: Path) -> None:
    tools = write_json(tmp_path / "tools.json", [WEATHER_TOOL])
    stdout = succeeded(
        cli("prompt", *GREEDY, "--tools", str(tools), "What is the weather like in Paris today?")
    )
    lines = stdout.splitlines()
    assert len(lines) == 1, stdout
    call = json.loads(lines[0])
    assert call.pop("callId")
    assert call == {"type": "tool-call", "name": "get_weather", "arguments": {"location": "Paris"}}


def test_tools_with_json_list_the_calls_after_the_text(tmp_path: Path) -> None:
    tool = {**WEATHER_TOOL, "description": 'Weather. Args: {"location": "Oslo"}'}
    tools = write_json(tmp_path / "tools.json", [tool])
    stdout = succeeded(
        cli(
            "prompt",
            "--model",
            "echo",
            "--tools",
            str(tools),
            "--json",
            "<GenerateSimpleToolCalls>go",
        )
    )
    result = json.loads(stdout)
    assert result["text"].endswith("\ngo")
    assert result["toolCalls"] == [
        {"callId": "call_1", "name": "get_weather", "arguments": {"location": "Oslo"}}
    ]


def test_regex_takes_a_literal_with_flags() -> None:
    assert parse_regex("/(yes|no)/i") == {"source": "(yes|no)", "flags": "i"}
    assert parse_regex("(yes|no)") == {"source": "(yes|no)", "flags": ""}
    assert parse_regex("/a/b") == {"source": "/a/b", "flags": ""}  # b is no flag


def test_serve_prints_its_url_first() -> None:
    server = subprocess.Popen(
        [sys.executable, "-m", "py_runtime", "serve", "--port", "0"],
        cwd=REPO_ROOT,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert server.stdout is not None
        first = server.stdout.readline()
    finally:
        server.terminate()
        server.wait(timeout=30)
    assert re.search(r"http://127\.0\.0\.1:\d+/", first), first


# --- errors: one line on stderr, a non-zero status, what to fix ----------------------


def test_model_folder_that_does_not_exist() -> None:
    line = one_line_error(cli("prompt", "--model", "/nonexistent", "Hi"))
    assert "--model /nonexistent: no such folder" in line
    assert "config.json" in line


def test_model_folder_without_config_json(tmp_path: Path) -> None:
    line = one_line_error(cli("prompt", "--model", str(tmp_path), "Hi"))
    assert f"{tmp_path / 'config.json'} is missing" in line


def test_model_folder_without_the_dtypes_weights() -> None:
    line = one_line_error(cli("prompt", "--model", str(FIXTURE), "--dtype", "bnb4", "Hi"))
    assert "onnx/model_bnb4.onnx is missing" in line
    assert "q4" in line  # the dtypes it has


def test_bad_dtype() -> None:
    line = one_line_error(cli("prompt", "--model", "echo", "--dtype", "q3", "Hi"))
    assert "--dtype" in line and "'q3'" in line and "q4" in line


def test_missing_schema_file(tmp_path: Path) -> None:
    missing = tmp_path / "missing.json"
    line = one_line_error(cli("prompt", "--model", "echo", "--schema", str(missing), "Hi"))
    assert f"--schema {missing}: no such file" in line


def test_schema_file_that_is_not_json(tmp_path: Path) -> None:
    file = tmp_path / "schema.json"
    file.write_text("{not json", encoding="utf-8")
    line = one_line_error(cli("prompt", "--model", "echo", "--schema", str(file), "Hi"))
    assert f"--schema {file}: not JSON" in line


def test_schema_with_regex() -> None:
    line = one_line_error(
        cli("prompt", "--model", "echo", "--schema", "s.json", "--regex", "a", "x")
    )
    assert "--schema and --regex" in line


def test_tools_file_that_is_not_a_list(tmp_path: Path) -> None:
    file = write_json(tmp_path / "tools.json", WEATHER_TOOL)
    line = one_line_error(cli("prompt", "--model", "echo", "--tools", str(file), "Hi"))
    assert f"--tools {file}: must hold a list of tool declarations" in line


def test_json_errors_are_an_object_on_stdout() -> None:
    completed = cli("prompt", "--model", "/nonexistent", "--json", "Hi")
    line = one_line_error(completed)
    error = json.loads(completed.stdout)["error"]
    assert error["name"] == "UsageError"
    assert line == f"error: {error['message']}"


def test_invalid_regex_names_the_flag() -> None:
    line = one_line_error(cli("prompt", "--model", "echo", "--regex", "(", "Hi"))
    assert line.startswith("error: --regex (: SyntaxError: ")


def test_page_error_is_one_line_with_its_name(tmp_path: Path) -> None:
    broken = tmp_path / "broken"
    shutil.copytree(FIXTURE, broken, ignore=shutil.ignore_patterns("*.onnx"))
    (broken / "onnx" / "model_q4.onnx").write_bytes(b"not an onnx model")
    line = one_line_error(cli("prompt", "--model", str(broken), "--dtype", "q4", "Hi"), status=1)
    assert re.match(r"error: \w+Error: ", line), line
    assert "the console has the details" not in line  # its detail is shown instead


def test_gemma3_answers_on_the_command_line_as_transformers_does(tmp_path: Path) -> None:
    """Gemma 3 270M (``models prepare gemma3-270m``) through the CLI, which runs it in the
    page: its greedy answer's first 12 tokens are transformers' (expected.json)."""
    from py_runtime.devtools import models
    from py_runtime.tokenizer import Tokenizer

    folder = models.folder("gemma3-270m")
    if not (folder / "expected.json").is_file():
        pytest.skip("Gemma 3 270M is missing: python -m py_runtime models prepare gemma3-270m")
    (case, *_) = json.loads((folder / "expected.json").read_text())
    copy = models.capped_copy(folder, tmp_path / "gemma3-270m", len(case["answer_ids"]))
    args = [
        "--model",
        str(copy),
        "--dtype",
        "fp32",
        "--sampling-mode",
        "most-predictable",
        "--json",
    ]
    result = json.loads(succeeded(cli("prompt", *args, case["prompt"])))
    tokenizer = Tokenizer.from_json((folder / "tokenizer.json").read_text())
    assert result["text"] == tokenizer.decode([i for i in case["answer_ids"] if i not in (1, 106)])
