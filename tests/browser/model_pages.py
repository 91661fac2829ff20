"""Greedy answers from a model folder, in the page and under CPython, for parity tests.

Both run the same engine and generation loop; only the backend differs (ONNX Runtime
Web in the page, onnxruntime in CPython). Imported by the browser test modules.
"""

from __future__ import annotations

import asyncio
import json
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from playwright.sync_api import Page

from py_runtime.devtools.wpt_host import WptHost

DIST = Path(__file__).resolve().parents[2] / "dist"


def page_answers(
    page: Page, folder: Path, dtype: str, prompts: list[str], attributes: str = ""
) -> list[str]:
    """The page's greedy answers to ``prompts``, with ``folder`` as its model (and more
    data- ``attributes`` on the script tag)."""
    page_html = f"""<!doctype html><meta charset=utf-8>
    <script src="/_lm/language-model.js" data-model="/_models/{folder.name}/"
            data-dtype="{dtype}" {attributes}></script><button id=go>go</button>"""
    with WptHost(DIST, model=str(folder), dtype=dtype) as host:
        server = host.server_for(folder.parent)
        server.add_file("/parity.html", page_html.encode())
        page.goto(f"{server.url}/parity.html")
        page.click("#go")  # user activation: the model is downloadable until created
        answers: list[str] = page.evaluate(
            """async (prompts) => {
              const answers = [];
              for (const prompt of prompts) {
                const session = await LanguageModel.create({samplingMode: 'most-predictable'});
                answers.push(await session.prompt(prompt));
              }
              return answers;
            }""",
            prompts,
        )
    return answers


def page_create_error(page: Page, folder: Path, attributes: str = "") -> str:
    """What the page's ``LanguageModel.create()`` rejects with, as ``name: message``
    (``created`` if it does not)."""
    html = f"""<!doctype html><meta charset=utf-8>
    <script src="/_lm/language-model.js" data-model="/_models/{folder.name}/"
            data-dtype="fp32" {attributes}></script><button id=go>go</button>"""
    with WptHost(DIST, model=str(folder), dtype="fp32") as host:
        server = host.server_for(folder.parent)
        server.add_file("/create.html", html.encode())
        page.goto(f"{server.url}/create.html")
        page.click("#go")
        return str(
            page.evaluate(
                """async () => {
                  try { await LanguageModel.create(); return 'created'; }
                  catch (error) { return `${error.name}: ${error.message}`; }
                }"""
            )
        )


def cpython_answers(folder: Path, dtype: str, prompts: list[str]) -> list[str]:
    """The same prompts through the engine and onnxruntime under CPython."""
    from py_runtime.engine.runtime import Runtime
    from py_runtime.hosts.cpython import local_model

    async def run() -> list[str]:
        runtime = Runtime(local_model(folder, dtype))  # type: ignore[arg-type]
        answers = []
        for prompt in prompts:
            info = await runtime.create(
                {"samplingMode": "most-predictable"}, True, lambda _: None, lambda: False
            )
            chunks: list[dict] = []

            async def keep(_: object) -> bool:
                return True

            await runtime.prompt(
                info["session"], prompt, None, False, chunks.append, keep, lambda: False
            )
            answers.append("".join(c["text"] for c in chunks if c["kind"] == "text"))
        return answers

    # A thread of its own: pytest-playwright keeps an event loop running here.
    with ThreadPoolExecutor(1) as pool:
        return pool.submit(asyncio.run, run()).result()


#: The fixture's weather tool, as the page declares it (tests/fixtures/tiny-qwen2-toolcall).
WEATHER_TOOL = {
    "name": "get_weather",
    "description": "Get the current weather for a location",
    "inputSchema": {
        "type": "object",
        "properties": {"location": {"type": "string", "description": "City name"}},
        "required": ["location"],
    },
}


def page_constrained_answers(
    page: Page, folder: Path, dtype: str, cases: list[dict[str, Any]]
) -> list[str]:
    """The page's greedy answers to ``cases``: each a ``prompt`` with a JSON ``schema``
    or a ``regexp`` (its text left out of the prompt unless ``omit`` is False), or
    ``tools`` (the weather tool declared); a tool call comes back as ``call <name>
    <arguments JSON>``."""
    page_html = f"""<!doctype html><meta charset=utf-8>
    <script src="/_lm/language-model.js" data-model="/_models/{folder.name}/"
            data-dtype="{dtype}"></script><button id=go>go</button>"""
    with WptHost(DIST, model=str(folder), dtype=dtype) as host:
        server = host.server_for(folder.parent)
        server.add_file("/parity.html", page_html.encode())
        page.goto(f"{server.url}/parity.html")
        page.click("#go")
        answers: list[str] = page.evaluate(
            """async ([cases, tool]) => {
              const answers = [];
              for (const {prompt, schema, regexp, tools, omit} of cases) {
                const options = {samplingMode: 'most-predictable'};
                if (tools) {
                  Object.assign(options, {
                    expectedInputs: [{type: 'tool-response'}],
                    expectedOutputs: [{type: 'tool-call'}],
                    tools: [tool],
                  });
                }
                const session = await LanguageModel.create(options);
                const constraint = schema ?? (regexp ? new RegExp(regexp) : undefined);
                const result = await session.prompt(prompt, constraint && {
                  responseConstraint: constraint, omitResponseConstraintInput: omit ?? true,
                });
                answers.push(typeof result === 'string' ? result : result.map(
                  (part) => part.type === 'tool-call'
                    ? `call ${part.value.name} ${JSON.stringify(part.value.arguments)}`
                    : part.value).join(''));
              }
              return answers;
            }""",
            [cases, WEATHER_TOOL],
        )
    return answers


def cpython_constrained_answers(folder: Path, dtype: str, cases: list[dict[str, Any]]) -> list[str]:
    """The same cases through the engine and onnxruntime under CPython."""
    from py_runtime.engine.runtime import Runtime
    from py_runtime.hosts.cpython import local_model

    schema = json.dumps(WEATHER_TOOL["inputSchema"])
    tool = {
        **WEATHER_TOOL,
        "inputSchema": {
            "type": "object",
            "properties": "object",
            "required": "array",
            "json": schema,
        },
    }

    async def run() -> list[str]:
        runtime = Runtime(local_model(folder, dtype))  # type: ignore[arg-type]
        answers = []
        for case in cases:
            options: dict[str, Any] = {"samplingMode": "most-predictable"}
            if case.get("tools"):
                options |= {
                    "expectedInputs": [{"type": "tool-response"}],
                    "expectedOutputs": [{"type": "tool-call"}],
                    "tools": [tool],
                }
            info = await runtime.create(options, True, lambda _: None, lambda: False)
            constraint = None
            if case.get("schema") is not None:
                # As the page sends it (JSON.stringify): its text may go into the prompt.
                text = json.dumps(case["schema"], separators=(",", ":"), ensure_ascii=False)
                constraint = {"kind": "json-schema", "json": text}
            elif case.get("regexp"):
                constraint = {"kind": "regexp", "source": case["regexp"], "flags": ""}
            chunks: list[dict] = []

            async def keep(_: object) -> bool:
                return True

            await runtime.prompt(
                info["session"],
                case["prompt"],
                constraint,  # type: ignore[arg-type]
                constraint is not None and case.get("omit", True),
                chunks.append,
                keep,
                lambda: False,
            )
            answers.append(
                "".join(
                    c["text"]
                    if c["kind"] == "text"
                    else f"call {c['name']} {json.dumps(c['arguments'], separators=(',', ':'))}"
                    for c in chunks
                )
            )
        return answers

    with ThreadPoolExecutor(1) as pool:
        return pool.submit(asyncio.run, run()).result()
