"""A causal language model's session: its KV cache and the token ids in it, the
prefill, and the generation loop (``causal_lm.py`` loads the model and renders the
conversation). An answer is held to a response constraint or to the tool-call
grammar; where the grammar forces text, its tokens are a draft the model verifies
(jump-forward); near the budget's end the answer's shortest valid ending is written (a
step that opens more than the budget can close is taken back); the decoded text is
split into text and tool calls.
"""

from __future__ import annotations

import dataclasses
import secrets
import string
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING, Any

from ..engine.completion import Completer
from ..engine.errors import Aborted, PromptAPIError, operation_error
from ..engine.grammar import Grammar, GrammarError
from ..engine.messages import Message, ToolCall, user_text
from ..engine.options import ToolDeclaration
from ..engine.regular import Prefix, parse
from ..engine.vocabulary import Sampling
from ..tokenizer import StreamDecoder, Tokenizer
from ..tool_calls import ParsedCall, ToolCallParser, make_parser
from ..tool_calls.grammar import call_openings, tool_call_grammar
from .backend import Backend
from .base import Chunk, StopCallback
from .tool_arguments import ArgumentWriter
from .tool_choice import RUNNERS, content_free, name_scores, rank, request_scores

if TYPE_CHECKING:
    from .causal_lm import CausalLM

#: Within this many tokens of the budget's end, a constrained answer's shortest ending
#: is looked up at every step (engine/completion.py).
ENDING_MARGIN = 48
#: Tool-call formats whose markers are special tokens, kept when decoding.
MARKED_BY_SPECIALS = frozenset({"mistral", "pythonic"})


def common_prefix_length(a: Sequence[int], b: Sequence[int]) -> int:
    n = min(len(a), len(b))
    for i in range(n):
        if a[i] != b[i]:
            return i
    return n


@dataclass
class CausalLMState:
    """One session's KV cache, the token ids it holds, and how it samples."""

    model: CausalLM
    tools: Sequence[ToolDeclaration]
    cache: int
    cached: list[int]
    sampling: Sampling

    @cached_property
    def schemas(self) -> dict[str, Any]:
        """The declared tools' input schemas, by name."""
        return {tool.name: tool.input_schema for tool in self.tools}

    @cached_property
    def tool_grammar(self) -> Grammar | None:
        """Answers that may call the session's tools, in the model's call syntax."""
        family = "prompted" if self.model.prompted_tools else self.model.parser_family
        return tool_call_grammar(family, self.schemas)

    @cached_property
    def argument_languages(self) -> dict[str, Prefix]:
        """The tools' arguments languages the runtime has written arguments in."""
        return {}

    @cached_property
    def loose_tool_grammar(self) -> Grammar | None:
        """The tool-call grammar with every tool's arguments held to a JSON object only:
        for schemas the grammar library cannot compile (it accepted their keywords)."""
        family = "prompted" if self.model.prompted_tools else self.model.parser_family
        return tool_call_grammar(family, {name: {"type": "object"} for name in self.schemas})

    @property
    def backend(self) -> Backend:
        assert self.model.backend is not None
        return self.model.backend

    def checkpoint(self) -> list[int]:
        return list(self.cached)

    def rollback(self, checkpoint: list[int]) -> None:
        keep = common_prefix_length(self.cached, checkpoint)
        self.backend.truncate(self.cache, keep)
        self.cached = self.cached[:keep]

    async def sync(self, text: str, stop: StopCallback) -> None:
        """Make the cache hold ``text``'s tokens, running only what is not there yet."""
        ids = self.model.encode(text)
        keep = common_prefix_length(self.cached, ids)
        if keep == len(ids) and keep > 0:
            keep -= 1  # re-run the last token: its logits are needed
        if keep < len(self.cached):
            self.backend.truncate(self.cache, keep)
        if stop():
            raise Aborted
        await self.backend.forward(self.cache, ids[keep:])
        self.cached = list(ids)

    async def prefill(
        self, context: Sequence[Message], added: Sequence[Message], stop: StopCallback
    ) -> None:
        await self.sync(self.model.render(context, self.tools, False), stop)

    async def generate(
        self, context: Sequence[Message], stop: StopCallback, grammar: Grammar | None = None
    ) -> AsyncIterator[Chunk]:
        """Decode until an end-of-sequence token, streaming text and tool calls; held
        to ``grammar`` (a response constraint), else to the tool-call grammar."""
        model = self.model
        assert model.tokenizer is not None
        await self.sync(model.render(context, self.tools, True), stop)
        family = model.parser_family
        # Formats whose markers are special tokens must see them (Mistral, LFM2).
        decoder = StreamDecoder(
            model.tokenizer, skip_special_tokens=family not in MARKED_BY_SPECIALS
        )
        schemas = self.schemas
        parser = make_parser(family, set(schemas), schemas) if schemas else None
        chosen: list[int] = []  # the opening of a call the runtime chose (tool_choice.py)
        if grammar is not None:
            await self._constrain(grammar, context)
        else:
            grammar = await self._constrain_tools(context)
            if grammar is not None and grammar is self.tool_grammar:
                chosen = await self._choose_tool(context, stop)
        end = min(len(self.cached) + model.max_response_tokens, model.context_window)
        completer = Completer(grammar) if grammar is not None else None
        # Tokens the next step may commit the answer to (a whole call), counted once.
        opening = (
            len(model.tokenizer.encode(completer.opening)) if completer and completer.opening else 1
        )
        if chosen and not self._closable(completer, chosen, int(end) - len(self.cached)):
            chosen = []  # the call's shortest whole form would not fit in the budget
        # The answer's text is its prefix (if any) and the tokens after ``start``.
        answer = (context[-1].text() if context and context[-1].prefix else "", len(self.cached))
        try:
            if chosen:
                if not self.backend.accept(self.cache, chosen):
                    raise operation_error("The tool-call grammar rejected a call's opening.")
                await self.backend.forward(self.cache, chosen)
                self.cached.extend(chosen)
                for chunk in _chunks(parser, family, "".join(map(decoder.feed, chosen)), False):
                    yield chunk
            # Near the budget's end: the answer's shortest valid ending (engine/completion.py).
            ending = self._ending(completer, answer, opening, int(end) - len(self.cached))
            closing: list[int] | None = None  # the ending the answer stops with
            while len(self.cached) < end:
                if stop():
                    raise Aborted
                left = int(end) - len(self.cached)
                if ending is not None and left - _spare(ending, opening) <= len(ending) <= left:
                    closing = ending  # only the ending (and the room to spare) still fits
                    break
                before = len(self.cached)
                forced = self.backend.forced(self.cache) if grammar and model.jump_forward else ""
                if forced and model.tokenizer.decode(self.cached[-3:]).endswith("\ufffd"):
                    # The answer ends inside a character: the forced text, as a string,
                    # lacks that character's remaining bytes. Sample them (masked) first.
                    forced = ""
                # Jump-forward: the forced text's tokens are a draft the model judges
                # (Backend.speculate), so the answer is the one sampled token by token.
                draft = model.tokenizer.encode(forced) if forced else []
                if draft:
                    draft = draft[:left]
                    ids, pending = await self.backend.speculate(self.cache, draft, self.sampling)
                    model.jumped_tokens += common_prefix_length(ids, draft)
                else:
                    ids, pending = [await self.backend.next_token(self.cache, self.sampling)], True
                finished = pending and (ids[-1] < 0 or ids[-1] in model.eos_ids)
                if finished:
                    ids = ids[:-1]
                if pending and not finished:
                    await self.backend.forward(self.cache, ids[-1:])
                self.cached.extend(ids)
                left = int(end) - len(self.cached)
                after = None if finished else self._ending(completer, answer, opening, left)
                if (
                    after is not None
                    and len(after) > left
                    and ending is not None
                    and len(ending) <= int(end) - before
                ):
                    # The step opened more than the budget can close (a JSON string of a
                    # format, nested objects, a call): take it back, end as before it.
                    assert grammar is not None  # an ending is known under a grammar only
                    await self._rewind(before, grammar, context, answer[1])
                    closing = ending
                    break
                ending = after
                pieces = "".join(decoder.feed(token) for token in ids)
                chunks = _chunks(parser, family, pieces, final=False)
                for chunk in chunks:
                    yield chunk
                if finished or (chosen and any(isinstance(c, ToolCall) for c in chunks)):
                    break  # a call the runtime opened ends the answer (tool_choice.py)
            if closing is not None:
                if closing and not self.backend.accept(self.cache, closing):
                    raise operation_error("The grammar rejected the ending it allows.")
                pieces = "".join(decoder.feed(token) for token in closing)
                if closing:
                    await self.backend.forward(self.cache, closing)
                self.cached.extend(closing)
                for chunk in _chunks(parser, family, pieces, final=False):
                    yield chunk
        finally:
            if grammar is not None:
                await self.backend.constrain(self.cache, None)
        for chunk in _chunks(parser, family, decoder.flush(), final=True):
            yield chunk

    async def _choose_tool(self, context: Sequence[Message], stop: StopCallback) -> list[int]:
        """The tokens that open a call to the tool the model leans to most (or, below
        the threshold, the runner-up whose call the request states), when the runtime
        chooses for it (tool_choice.py): a model told of its tools in the prompt,
        answering a user's turn; else none."""
        model = self.model
        turn = context[-1] if context else None
        if (
            model.tool_threshold is None
            or not model.prompted_tools
            or turn is None
            or turn.role != "user"
            or turn.prefix
            or any(c.type == "tool-response" for c in turn.content)
        ):
            return []
        assert model.tokenizer is not None
        openings = {
            name: model.tokenizer.encode(text)
            for name, text in call_openings("prompted", list(self.schemas)).items()
        }
        scores = await name_scores(self.backend, self.cache, self.cached, openings)
        baseline = await model.tool_baseline(
            content_free(context), self.tools, openings, stop, (self.cache, self.cached)
        )
        if stop():
            raise Aborted
        split = model.request_heads(self.tools, turn.text())
        requests = (
            await request_scores(self.backend, *split)
            if split
            else dict.fromkeys([None, *openings], 0.0)
        )
        ranked = rank(scores, baseline, requests)
        call = ranked[0].margin >= model.tool_threshold
        tried = ranked[:1] if call else ranked[:RUNNERS]
        made = ranked[0]  # the choice as recorded (ToolChoice.grounded: None, not written)
        for choice in [c for c in tried if call or c.margin >= model.grounded_threshold]:
            if stop():
                raise Aborted
            text, grounded = await self._write_arguments(choice.tool, turn.text())
            if call or grounded:
                model.tool_choices.append(dataclasses.replace(choice, grounded=grounded))
                return model.tokenizer.encode(text)
            if choice is made:
                made = dataclasses.replace(choice, grounded=False)
        model.tool_choices.append(made)
        return []

    async def _write_arguments(self, tool: str, request: str) -> tuple[str, bool]:
        """The call to ``tool`` opened, with as much of its arguments as the runtime
        writes by the model's scores (tool_arguments.py), scored in a copy of the cache;
        and whether the request states them."""
        assert self.tool_grammar is not None and self.model.tokenizer is not None
        opening = call_openings("prompted", [tool])[tool]
        (tag,) = [t for t in self.tool_grammar.tags if t.begin.startswith(opening)]
        tokenizer, backend = self.model.tokenizer, self.backend
        scratch = Scratch(backend, await backend.clone(self.cache), tokenizer)
        caches = [scratch.cache]
        focus: list[Scratch] = []  # the request alone, as a user turn (made when needed)

        async def focused(label: str, texts: Sequence[str]) -> list[float]:
            if not focus:
                caches.append(backend.new_cache())
                conversation = self.model.render([user_text(request)], (), True)
                await backend.forward(caches[-1], tokenizer.encode(conversation))
                focus.append(Scratch(backend, caches[-1], tokenizer))
            return await focus[0].score(label, texts)

        try:
            if tag.arguments not in self.argument_languages:
                self.argument_languages[tag.arguments] = Prefix(parse(tag.arguments))
            writer = ArgumentWriter(
                self.argument_languages[tag.arguments],
                request,
                scratch.score,
                scratch.greedy_string,
                focused,
            )
            text, grounded = await writer.write(tag.begin, self.schemas[tool])
            return tag.begin + text, grounded
        finally:
            for cache in caches:
                backend.release(cache)

    def _closable(self, completer: Completer | None, opening: list[int], left: int) -> bool:
        """Whether a call opened by ``opening`` can be closed within ``left`` tokens."""
        tokenizer = self.model.tokenizer
        assert tokenizer is not None
        rest = completer.completion(tokenizer.decode(opening)) if completer else None
        return rest is not None and len(opening) + len(tokenizer.encode(rest)) < left

    def _ending(
        self, completer: Completer | None, answer: tuple[str, int], opening: int, left: int
    ) -> list[int] | None:
        """The tokens of the answer's shortest valid ending, looked up once fewer than
        ``ENDING_MARGIN`` and ``opening`` tokens are ``left`` in the budget (None: not yet,
        or not known inside a character)."""
        tokenizer = self.model.tokenizer
        if completer is None or tokenizer is None or left > ENDING_MARGIN + opening:
            return None
        prefix, start = answer
        skip = self.model.parser_family not in MARKED_BY_SPECIALS
        written = tokenizer.decode(self.cached[start:], skip_special_tokens=skip)
        if written.endswith("\ufffd"):
            return None  # inside a character: its other bytes come first
        text = completer.completion(prefix + written)
        if text is None:
            return None
        return tokenizer.encode(text) if text else []

    async def _rewind(
        self, length: int, grammar: Grammar, context: Sequence[Message], start: int
    ) -> None:
        """Take the answer back to its first ``length`` cached tokens: the cache cut
        there, the grammar held again and fed the answer up to there."""
        self.backend.truncate(self.cache, length)
        del self.cached[length:]
        await self.backend.constrain(self.cache, grammar)
        await self._accept_prefix(context)
        if not self.backend.accept(self.cache, self.cached[start:]):
            raise operation_error("The grammar rejected an answer it allowed.")

    async def _constrain_tools(self, context: Sequence[Message]) -> Grammar | None:
        """Hold the answer to the tool-call grammar, if any; one the grammar library
        cannot compile falls back to the loose one, then to none (calls are still parsed):
        a declaration the options algorithm accepted never makes the session unusable."""
        for grammar in (self.tool_grammar, self.loose_tool_grammar):
            if grammar is None:
                return None
            try:
                await self.backend.constrain(self.cache, grammar)
            except GrammarError:
                continue
            await self._accept_prefix(context)
            return grammar
        return None

    async def _constrain(self, grammar: Grammar, context: Sequence[Message]) -> None:
        """Hold the answer to ``grammar``, past the assistant prefix (if any)."""
        assert self.model.tokenizer is not None
        try:
            await self.backend.constrain(self.cache, grammar)
        except GrammarError as error:
            raise PromptAPIError(
                "NotSupportedError", f"The response constraint cannot be enforced: {error}"
            ) from None
        await self._accept_prefix(context)

    async def _accept_prefix(self, context: Sequence[Message]) -> None:
        """Feed an assistant prefix through the grammar now held (NotSupportedError, and
        nothing held, when it rejects it)."""
        assert self.model.tokenizer is not None
        if context and context[-1].prefix:
            prefix = self.model.tokenizer.encode(context[-1].text())
            if not self.backend.accept(self.cache, prefix):
                await self.backend.constrain(self.cache, None)
                raise PromptAPIError(
                    "NotSupportedError", "The response constraint cannot start with the prefix."
                )

    async def clone(self, context: Sequence[Message]) -> CausalLMState:
        cache = await self.backend.clone(self.cache)
        return CausalLMState(self.model, self.tools, cache, list(self.cached), self.sampling)

    def release(self) -> None:
        self.backend.release(self.cache)


def _spare(ending: list[int], opening: int) -> int:
    """Room kept beside an answer's ending: the next step may open what needs closing,
    a whole call (``opening`` tokens) where the answer may end now."""
    return 1 + (opening if not ending else 1)


def new_call_id(family: str | None) -> str:
    """A fresh call id; Mistral's templates accept only 9 letters and digits."""
    if family == "mistral":
        alphabet = string.ascii_letters + string.digits
        return "".join(secrets.choice(alphabet) for _ in range(9))
    return f"call_{secrets.token_hex(12)}"


def _chunks(
    parser: ToolCallParser | None, family: str | None, piece: str, final: bool
) -> list[Chunk]:
    """Decoded text as chunks, with tool calls split out when tools exist."""
    if parser is None:
        return [piece] if piece else []
    try:
        segments = [*parser.feed(piece), *(parser.finish() if final else [])]
    except Exception as error:
        raise operation_error(f"The {family} tool-call parser failed: {error}") from None
    chunks: list[Chunk] = []
    for segment in segments:
        if isinstance(segment, ParsedCall):
            chunks.append(ToolCall(new_call_id(family), segment.name, segment.arguments))
        elif segment:
            chunks.append(segment)
    return chunks


class Scratch:
    """A copy of a session's cache that texts are scored and written in, after the
    copied tokens (tool_arguments.py); the tokens it holds beyond them are tracked so
    that texts sharing a start run it once."""

    def __init__(self, backend: Backend, cache: int, tokenizer: Tokenizer) -> None:
        self.backend, self.cache, self.tokenizer = backend, cache, tokenizer
        self.base = backend.cache_length(cache)
        self.extra: list[int] = []  # the tokens run after the copied ones

    async def _hold(self, ids: list[int]) -> None:
        """Make the cache hold ``ids`` after the copied tokens, the last one's logits
        kept (ids empty: the copied tokens' own last logits, never lost)."""
        keep = common_prefix_length(self.extra, ids)
        if keep == len(ids) and keep == len(self.extra):
            return
        if keep == len(ids):
            keep -= 1  # re-run the last token: its logits are needed
        self.backend.truncate(self.cache, self.base + keep)
        await self.backend.forward(self.cache, ids[keep:])
        self.extra = list(ids)

    async def score(
        self, prefix: str, texts: Sequence[str], count: int | None = None
    ) -> list[float]:
        """log P(text | prefix) for each text, after the copied tokens; with ``count``,
        of its first ``count`` tokens after those all the texts share.

        A pass per path, not per text: a text whose tokens but its last begin a longer
        one's is scored from that one's pass (its last token as an alternative there),
        as the runs of words from one start word are ("Oslo", "Oslo tomorrow")."""
        head = self.tokenizer.encode(prefix)
        wholes = [self.tokenizer.encode(prefix + text) for text in texts]
        shared = min(common_prefix_length(head, whole) for whole in wholes)
        assert shared > 0, "the texts share the prefix's first token"
        await self._hold(head[:shared])
        end = None if count is None else shared + count
        tails = [tuple(whole[shared:end]) for whole in wholes]
        paths: list[tuple[int, ...]] = []  # run one pass each, the longest first
        alternatives: list[list[tuple[int, int]]] = []  # each path's (position, token)s
        where: dict[tuple[int, ...], tuple[int, int | None]] = {}  # tail: path, alternative
        for tail in sorted(set(tails), key=len, reverse=True):
            last = len(tail) - 1
            number = next(
                (n for n, path in enumerate(paths) if path[:last] == tail[:last]), len(paths)
            )
            if number == len(paths):
                paths.append(tail)
                alternatives.append([])
            if paths[number][last] == tail[last]:
                where[tail] = (number, None)
            else:
                where[tail] = (number, len(alternatives[number]))
                alternatives[number].append((last, tail[last]))
        scores = [
            await self.backend.score(self.cache, list(path), also)
            for path, also in zip(paths, alternatives, strict=True)
        ]
        results = []
        for tail in tails:
            number, alternative = where[tail]
            own = scores[number]
            if alternative is None:
                results.append(sum(own[: len(tail)]))
            else:
                results.append(sum(own[: len(tail) - 1]) + own[len(paths[number]) + alternative])
        return results

    async def greedy_string(self, prefix: str, limit: int = 24) -> str | None:
        """The model's own string after ``prefix`` (which opens it): greedy, to the
        closing quote; None when it does not close within ``limit`` tokens."""
        ids = self.tokenizer.encode(prefix)
        await self._hold(ids)
        written: list[int] = []
        for _ in range(limit):
            token = await self.backend.next_token(self.cache, Sampling())
            written.append(token)
            text = self.tokenizer.decode(written)
            if '"' in text:
                self.extra = ids + written[:-1]
                value = text[: text.index('"')]
                return None if value.endswith("\\") else value
            await self.backend.forward(self.cache, [token])
        self.extra = ids + written
        return None
