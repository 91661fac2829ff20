"""Choosing a tool before the answer, for models told of their tools in the prompt.

A small model whose template has no tool format rarely opens a call by itself, even
when a declared tool answers the request (SmolLM2-135M-Instruct never did:
docs/tool-use.md). So before such a model answers a user turn, the runtime weighs two
pieces of evidence for each tool, both log-likelihood ratios in nats, and adds them:

- **the name**: the log-probability of the tool's name at the answer's start, given
  the call's opening (``<tool_call>{"name": "``), less the same after a content-free
  request (``CONTENT_FREE``) after the same system turn and history, which takes out
  the model's leaning toward some names whatever is asked (contextual calibration, as
  in Zhao et al., "Calibrate Before Use", 2021);
- **the request**: how much likelier the request itself is after a system turn that
  says what the tool does (and the values its arguments take from a list) than after
  a plain one (``PLAIN_SYSTEM``): the noisy-channel direction (as in Min et al., "Noisy
  Channel Language Model Prompting for Few-Shot Text Classification", 2022), which a
  small model scores far better than it names a tool; it also says whether any tool
  fits at all.

When the best tool's margin reaches the threshold, the answer opens that call, with
the arguments the runtime writes by the model's scores (``tool_arguments.py``). Below
it, the best tool's call and then the runner-up's (``RUNNERS``), each at a margin of
at least the grounded threshold, open only when the request states what is written
(every value from it, one at least outright: a number it writes, an enum value it
names, a passage it quotes; no string twice): a request for something no tool serves
rarely holds them all. Otherwise the model answers as it would (and may still call on
its own).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from os.path import commonprefix
from typing import Any

from ..engine.messages import Content, Message, user_text
from ..engine.options import ToolDeclaration
from .backend import Backend

#: The margin (in nats) at which the answer opens the best tool's call: chosen on
#: SmolLM2-135M-Instruct's tuning requests (docs/tool-use.md).
THRESHOLD = 9.0
#: The lower margin at which it opens a call whose arguments the request states: where
#: the evidence is not against the tool.
GROUNDED_THRESHOLD = 0.0
#: The tools, best first, whose calls are written to find one the request states.
RUNNERS = 2
#: The request whose scores calibrate the others': one that asks for nothing.
CONTENT_FREE = "N/A"
#: The system turn a request's likelihood is compared against; ``purpose`` adds a tool's.
PLAIN_SYSTEM = "You are a helpful assistant."
#: Calibrations kept per model (one per conversation before the request and tool set).
KEPT_BASELINES = 16


@dataclass(frozen=True)
class ToolChoice:
    tool: str
    margin: float  # the name's calibrated score plus the request's, in nats
    #: Whether the arguments the runtime wrote come from the request
    #: (tool_arguments.py); None where none were written.
    grounded: bool | None = None


def content_free(context: Sequence[Message]) -> list[Message]:
    """The conversation the calibration scores: the context before its last turn (the
    request), whose system turns, worked examples and history sway the names as much,
    then a request for nothing."""
    return [*context[:-1], user_text(CONTENT_FREE)]


async def name_scores(
    backend: Backend, cache: int, cached: Sequence[int], openings: Mapping[str, list[int]]
) -> dict[str, float]:
    """Per tool, the log-probability of its opening's tokens after the cache's
    ``cached`` tokens and the openings' shared start (``<tool_call>{"name": "``), which
    the model is given. The cache is left holding ``cached``, its last logits re-run."""
    head = list(commonprefix(list(openings.values())))
    if head:
        await backend.forward(cache, head)
    scores = {
        name: sum(await backend.score(cache, ids[len(head) :])) for name, ids in openings.items()
    }
    if head:  # back to the cached tokens, the last one re-run for its logits
        backend.truncate(cache, len(cached) - 1)
        await backend.forward(cache, [cached[-1]])
    return scores


def choices(schema: Any) -> list[str]:
    """The values each of a schema's properties may take from a list (``enum``), as
    "today or tomorrow", in the schema's order, nested objects' too."""
    properties = schema.get("properties") if isinstance(schema, dict) else None
    said: list[str] = []
    for value in properties.values() if isinstance(properties, dict) else ():
        listed = value.get("enum") if isinstance(value, dict) else None
        if isinstance(listed, list) and listed:
            words = [str(v) for v in listed]
            said.append(" or ".join([", ".join(words[:-1]), words[-1]] if words[:-1] else words))
        said += choices(value)
    return said


def purpose(tool: ToolDeclaration) -> Message:
    """The system turn that says what ``tool`` does, in the page's own words, with the
    values its arguments take from a list: "You can translate a phrase into another
    language (English, French or German)." """
    what = tool.description.strip().rstrip(".") or f"use {tool.name}"
    if what[1:2].islower():  # "Get the weather" -> "get the weather"; "URLs ..." kept
        what = what[0].lower() + what[1:]
    listed = choices(tool.input_schema)
    if listed:
        what += f" ({'; '.join(listed)})"
    return Message("system", (Content("text", f"{PLAIN_SYSTEM} You can {what}."),))


async def request_scores(
    backend: Backend, heads: Mapping[str | None, list[int]], request: list[int]
) -> dict[str | None, float]:
    """Per head (a system turn and the user turn's opening, as token ids), the
    log-probability of ``request`` (the user's text and the turn's end) after it: a
    scratch cache each, released."""
    scores: dict[str | None, float] = {}
    for key, head in heads.items():
        cache = backend.new_cache()
        try:
            await backend.forward(cache, head)
            scores[key] = sum(await backend.score(cache, request))
        finally:
            backend.release(cache)
    return scores


def rank(
    scores: Mapping[str, float],
    baseline: Mapping[str, float],
    requests: Mapping[str | None, float],
) -> list[ToolChoice]:
    """The tools by margin, best first: a name's calibrated score, plus the request's
    score after its purpose less after the plain system turn (keyed None)."""
    margins = [
        ToolChoice(name, scores[name] - baseline[name] + requests[name] - requests[None])
        for name in scores
    ]
    return sorted(margins, key=lambda choice: -choice.margin)
