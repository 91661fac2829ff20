"""The TypeScript declarations (types/prompt-api-runtime.d.ts).

``tsc -p tests/types`` compiles the sample that uses every member, and the file of
wrong uses whose every ``@ts-expect-error`` must see an error (an unused one fails
the build). ``tests/types/check-idl.mjs`` checks the declarations against the spec's
WebIDL; the tests below also prove it fails when a declaration is wrong.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[2]
SPEC = REPO_ROOT.parent / "shared" / "spec" / "prompt-api-spec.txt"
DECLARATIONS = REPO_ROOT / "types" / "prompt-api-runtime.d.ts"
TYPES_DIR = REPO_ROOT / "tests" / "types"
CHECK_IDL = TYPES_DIR / "check-idl.mjs"

needs_node_modules = pytest.mark.skipif(
    not (REPO_ROOT / "node_modules" / "typescript").is_dir()
    or shutil.which("node") is None
    or shutil.which("npx") is None,
    reason="needs node, npx and node_modules/typescript (run `npm ci`)",
)
needs_spec = pytest.mark.skipif(
    not SPEC.is_file(), reason=f"the Prompt API spec is not at {SPEC} (the shared checkout)"
)


def run(*command: str | Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(part) for part in command],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


def check_idl(*arguments: str | Path) -> subprocess.CompletedProcess[str]:
    return run("node", CHECK_IDL, *arguments)


@needs_node_modules
def test_sample_compiles_and_wrong_uses_are_rejected() -> None:
    result = run("npx", "--no-install", "tsc", "--strict", "--noEmit", "-p", "tests/types")
    assert result.returncode == 0, result.stdout + result.stderr


@needs_node_modules
@needs_spec
def test_declarations_match_the_idl() -> None:
    result = check_idl(SPEC)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "OK: every IDL definition" in result.stdout
    # The documented differences are reported, not hidden.
    assert "LanguageModel.params: extension contexts only (optional)" in result.stdout
    assert "typedef LanguageModelPromptResult: narrower" in result.stdout


@needs_node_modules
@needs_spec
def test_builtin_parser_reads_the_idl_as_webidl2_does() -> None:
    webidl2 = check_idl(SPEC, "--parser=webidl2", "--dump")
    if webidl2.returncode == 2 and "not installed" in webidl2.stderr:
        pytest.skip("webidl2 is not installed")
    builtin = check_idl(SPEC, "--parser=builtin", "--dump")
    assert webidl2.returncode == 0, webidl2.stderr
    assert builtin.returncode == 0, builtin.stderr
    model = json.loads(webidl2.stdout)
    assert json.loads(builtin.stdout) == model
    names = {definition["name"] for definition in model}
    assert {"LanguageModel", "LanguageModelToolCall", "LanguageModelMessageType"} <= names
    # And the check passes with the builtin parser too.
    result = check_idl(SPEC, DECLARATIONS, "--parser=builtin")
    assert result.returncode == 0, result.stdout + result.stderr


#: (what the broken copy changes, the text replaced, its replacement, what the check names)
BROKEN = [
    (
        "a member removed",
        "    readonly contextWindow: number;\n",
        "",
        "LanguageModel.contextWindow: missing",
    ),
    (
        "an enum value removed",
        "    | 'slightly-creative'\n",
        "",
        'LanguageModelSamplingMode "slightly-creative": enum value missing',
    ),
    (
        "a required dictionary member made optional",
        "    inputSchema: object;",
        "    inputSchema?: object;",
        "LanguageModelToolDeclaration.inputSchema: optional, but the IDL says required",
    ),
    (
        "a wrong type",
        "    append(input: LanguageModelPrompt, options?: LanguageModelAppendOptions): "
        "Promise<void>;",
        "    append(input: LanguageModelPrompt, options?: LanguageModelAppendOptions): "
        "Promise<number>;",
        "LanguageModel.append (return type): type not the same as the IDL's",
    ),
]


@needs_node_modules
@needs_spec
@pytest.mark.parametrize(
    ("old", "new", "named"), [case[1:] for case in BROKEN], ids=[case[0] for case in BROKEN]
)
def test_check_fails_on_a_broken_declaration(
    tmp_path: Path, old: str, new: str, named: str
) -> None:
    text = DECLARATIONS.read_text()
    assert text.count(old) == 1, old
    broken = tmp_path / "prompt-api-runtime.d.ts"
    broken.write_text(text.replace(old, new))
    result = check_idl(SPEC, broken)
    assert result.returncode == 1, result.stdout + result.stderr
    assert named in result.stdout, result.stdout


@needs_node_modules
def test_errors_file_fails_when_the_types_are_too_loose(tmp_path: Path) -> None:
    """A role typed as any string lets a wrong role through: errors.ts then fails."""
    text = DECLARATIONS.read_text()
    old = "type LanguageModelMessageRole = 'system' | 'user' | 'assistant';"
    assert text.count(old) == 1
    loose = tmp_path / "prompt-api-runtime.d.ts"
    loose.write_text(text.replace(old, "type LanguageModelMessageRole = string;"))
    config = {
        "extends": str(TYPES_DIR / "tsconfig.json"),
        "compilerOptions": {"paths": {"prompt-api-runtime": [str(loose)]}},
        "include": [],
        "files": [str(TYPES_DIR / "sample.ts"), str(TYPES_DIR / "errors.ts"), str(loose)],
    }
    (tmp_path / "tsconfig.json").write_text(json.dumps(config))
    result = run("npx", "--no-install", "tsc", "--strict", "--noEmit", "-p", tmp_path)
    assert result.returncode != 0
    assert "errors.ts" in result.stdout and "TS2578" in result.stdout, result.stdout
