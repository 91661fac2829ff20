"""Hugging Face chat templates, rendered exactly as transformers renders them.

``ChatTemplate.render`` gives the same string as transformers'
``tokenizer.apply_chat_template(messages, tools=..., tokenize=False, ...)``,
without transformers: the same sandboxed Jinja environment (``trim_blocks``,
``lstrip_blocks``, the ``loopcontrols`` extension and a pass-through
``{% generation %}`` tag), the same globals (``raise_exception``,
``strftime_now``, ``dict``, ``namespace``), the same ``tojson`` filter and the
same variables (``messages``, ``tools``, ``documents``, ``add_generation_prompt``
and the named special tokens). jinja2 is imported on first use only.

The Prompt API messages are mapped to this format by ``hf_messages``.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable, Mapping, Sequence
from datetime import datetime
from functools import cache
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from jinja2 import Template

__all__ = ["SPECIAL_TOKEN_NAMES", "ChatTemplate", "ChatTemplateError"]

#: The named special tokens transformers passes to every template (as strings,
#: the ones that are set). ``additional_special_tokens`` are not passed.
SPECIAL_TOKEN_NAMES: tuple[str, ...] = (
    "bos_token",
    "eos_token",
    "unk_token",
    "sep_token",
    "pad_token",
    "cls_token",
    "mask_token",
)

#: Names a message's reasoning may come under; transformers copies the first one
#: set to ``reasoning_content`` (and ``thinking``) before rendering.
_REASONING_FIELDS: tuple[str, ...] = ("reasoning_content", "thinking", "reasoning")

#: Appended to the final message by ``continue_final_message``, then cut off.
_CONTINUE_TAG = "CONTINUE_FINAL_MESSAGE_TAG "


class ChatTemplateError(ValueError):
    """A template that does not compile or fails while rendering.

    ``raise_exception("...")`` in a template raises this with that message.
    """


# -- the Jinja environment ---------------------------------------------------


@cache
def _environment() -> Any:
    """The sandboxed environment transformers builds for chat templates (built once)."""
    import jinja2
    import jinja2.ext
    import jinja2.nodes
    from jinja2.sandbox import ImmutableSandboxedEnvironment

    class GenerationTag(jinja2.ext.Extension):
        """``{% generation %}...{% endgeneration %}``: transformers marks assistant
        tokens with it; the rendered text is just the body."""

        tags = {"generation"}

        def parse(self, parser: Any) -> Any:
            lineno = next(parser.stream).lineno
            body = parser.parse_statements(("name:endgeneration",), drop_needle=True)
            call = self.call_method("_render_body")
            return jinja2.nodes.CallBlock(call, [], [], body).set_lineno(lineno)

        def _render_body(self, caller: Callable[[], str]) -> str:
            return caller()

    def raise_exception(message: str) -> None:
        raise ChatTemplateError(message)

    def tojson(
        x: Any,
        ensure_ascii: bool = False,
        indent: int | str | None = None,
        separators: tuple[str, str] | None = None,
        sort_keys: bool = False,
    ) -> str:
        # Unlike Jinja's own filter: no HTML escaping, key order kept, options exposed.
        return json.dumps(
            x, ensure_ascii=ensure_ascii, indent=indent, separators=separators, sort_keys=sort_keys
        )

    def strftime_now(format: str) -> str:
        return datetime.now().strftime(format)

    class TemplateDict:
        """``dict(...)`` and ``dict.fromkeys(...)``, without the type's other attributes."""

        def __call__(self, *args: Any, **kwargs: Any) -> dict[Any, Any]:
            return dict(*args, **kwargs)

        def fromkeys(self, *args: Any, **kwargs: Any) -> dict[Any, Any]:
            return dict.fromkeys(*args, **kwargs)

    class TemplateNamespace(jinja2.utils.Namespace):
        """A ``namespace`` that refuses underscore-prefixed attribute names."""

        def __init__(*args: Any, **kwargs: Any) -> None:
            # No named ``self``, as in Jinja's Namespace, so that ``namespace(self=...)`` works.
            self, args = args[0], args[1:]
            attrs = dict(*args, **kwargs)
            for name in attrs:
                TemplateNamespace._check_name(name)
            jinja2.utils.Namespace.__init__(self, attrs)

        def __setitem__(self, name: str, value: Any) -> None:
            TemplateNamespace._check_name(name)
            jinja2.utils.Namespace.__setitem__(self, name, value)

        @staticmethod
        def _check_name(name: Any) -> None:
            if isinstance(name, str) and name.startswith("_"):
                raise jinja2.exceptions.SecurityError(
                    "Chat templates cannot store underscore-prefixed attributes on a namespace, "
                    f"but got {name!r}."
                )

    env = ImmutableSandboxedEnvironment(
        trim_blocks=True, lstrip_blocks=True, extensions=[GenerationTag, jinja2.ext.loopcontrols]
    )
    env.filters["tojson"] = tojson
    env.globals["raise_exception"] = raise_exception
    env.globals["strftime_now"] = strftime_now
    env.globals["dict"] = TemplateDict()
    env.globals["namespace"] = TemplateNamespace
    return env


def _compile(source: str) -> Template:
    import jinja2

    try:
        template: Template = _environment().from_string(source)
        return template
    except jinja2.TemplateError as err:
        raise ChatTemplateError(f"The chat template does not compile: {err}") from err


# -- what the template sees -----------------------------------------------------


def _plain(value: Any) -> Any:
    """A deep copy made of plain JSON-like types, as transformers' ``_plain_template_data``:
    subclasses of str/int/float become the base type, dataclasses become dicts and
    anything else becomes an inert ``"<TypeName>"`` placeholder."""
    if value is None or type(value) in (str, int, float, bool):
        return value
    if isinstance(value, str):
        return str.__str__(value)
    if isinstance(value, int):
        return int.__int__(value)
    if isinstance(value, float):
        return float.__float__(value)
    if isinstance(value, Mapping):
        return {_plain(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_plain(item) for item in value]
    if isinstance(value, tuple):
        return tuple(_plain(item) for item in value)
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: _plain(getattr(value, f.name)) for f in dataclasses.fields(value)}
    return f"<{type(value).__name__}>"


def _prepare_messages(messages: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Drop keys whose value is None, copy to plain data, alias reasoning fields."""
    chat: list[dict[str, Any]] = []
    for message in messages:
        if not isinstance(message, Mapping):
            raise TypeError(f"Chat messages should be dicts, but got {message!r}.")
        message = _plain({k: v for k, v in message.items() if v is not None})
        reasoning = next(
            (message[k] for k in _REASONING_FIELDS if message.get(k) is not None), None
        )
        if reasoning is not None:
            message = {"thinking": reasoning, **message, "reasoning_content": reasoning}
        chat.append(message)
    return chat


def _special_token(value: Any) -> str | None:
    """A token as tokenizer_config.json writes it: a string, ``{"content": ...}`` or null."""
    if isinstance(value, Mapping):
        value = value.get("content")
    return None if value is None else str(value)


class ChatTemplate:
    """A chat template and the special tokens it may read.

    ``template`` is a Jinja source, or a mapping of named templates (tokenizer
    configs with several: "default", "tool_use", ...) chosen as transformers
    chooses: "tool_use" when ``tools`` is not None and there is one, else "default".
    Special tokens are strings, ``{"content": ...}`` dicts or None (not passed).
    """

    def __init__(
        self,
        template: str | Mapping[str, str],
        bos_token: str | Mapping[str, Any] | None = None,
        eos_token: str | Mapping[str, Any] | None = None,
        **special_tokens: str | Mapping[str, Any] | None,
    ) -> None:
        if isinstance(template, Mapping):
            self.templates: dict[str, str] = dict(template)
            self.template: str | None = None
        else:
            self.templates = {}
            self.template = template
        tokens = {"bos_token": bos_token, "eos_token": eos_token, **special_tokens}
        self.special_tokens: dict[str, str] = {}
        for name, value in tokens.items():
            token = _special_token(value)
            if token is not None:
                self.special_tokens[name] = token
        self._compiled: dict[str, Template] = {}

    @classmethod
    def from_tokenizer_config(
        cls, config: Mapping[str, Any], chat_template_jinja: str | None = None
    ) -> ChatTemplate:
        """From tokenizer_config.json's contents; a chat_template.jinja file's text wins.

        ``chat_template`` may be a string or a list of ``{"name", "template"}``.
        """
        template: Any = chat_template_jinja
        if template is None:
            template = config.get("chat_template")
            if isinstance(template, list | tuple):
                template = {t["name"]: t["template"] for t in template}
        if template is None:
            raise ValueError("The tokenizer config has no chat_template.")
        tokens = {name: config.get(name) for name in SPECIAL_TOKEN_NAMES}
        return cls(template, **tokens)

    def source(self, tools: Sequence[Mapping[str, Any]] | None = None) -> str:
        """The template source used for a render with ``tools``."""
        if self.template is not None:
            return self.template
        if tools is not None and "tool_use" in self.templates:
            return self.templates["tool_use"]
        if "default" in self.templates:
            return self.templates["default"]
        raise ChatTemplateError(
            "This model has several chat templates and none is named 'default': "
            f"{sorted(self.templates)}."
        )

    def _template(self, source: str) -> Template:
        compiled = self._compiled.get(source)
        if compiled is None:
            compiled = self._compiled[source] = _compile(source)
        return compiled

    def render(
        self,
        messages: Sequence[Mapping[str, Any]],
        tools: Sequence[Mapping[str, Any]] | None = None,
        add_generation_prompt: bool = True,
        *,
        continue_final_message: bool | str = False,
        **kwargs: Any,
    ) -> str:
        """The prompt text, as ``apply_chat_template(..., tokenize=False)`` gives it.

        ``tools=None`` and ``tools=[]`` reach the template as given (None vs an empty
        list). ``continue_final_message`` (needs ``add_generation_prompt=False``)
        leaves the last message open, for prefilled assistant text. ``kwargs`` are
        extra template variables (e.g. ``enable_thinking``); they override special
        tokens of the same name.
        """
        import jinja2

        if not messages:
            raise ValueError("Cannot apply a chat template to an empty conversation.")
        if continue_final_message and add_generation_prompt:
            raise ValueError("continue_final_message and add_generation_prompt are not compatible.")
        if tools is not None:
            for tool in tools:
                if not isinstance(tool, Mapping):
                    raise ValueError(f"Tools should be JSON schema dicts, but got {tool!r}.")
        source = self.source(tools)
        template = self._template(source)
        chat = _prepare_messages(messages)
        final_message = ""
        if continue_final_message:
            final_message = _tag_final_message(chat, continue_final_message, source)
        variables = _plain({**self.special_tokens, **kwargs})
        try:
            rendered = template.render(
                messages=chat,
                tools=_plain(list(tools) if tools is not None else None),
                documents=None,  # no retrieval documents: the Prompt API has none
                add_generation_prompt=add_generation_prompt,
                **variables,
            )
        except jinja2.TemplateError as err:
            raise ChatTemplateError(f"The chat template failed: {err}") from err
        if continue_final_message:
            rendered = _cut_at_tag(rendered, final_message)
        return rendered


def _tag_final_message(chat: list[dict[str, Any]], field: bool | str, source: str) -> str:
    """Append the continue tag to the final message's text; returns that text."""
    field = field if isinstance(field, str) else "content"
    final = chat[-1].get(field)
    if final is None:
        raise ValueError(
            f'continue_final_message is set but the final message has no "{field}" to continue.'
        )
    fields = [field]
    if field in _REASONING_FIELDS:
        fields = [f for f in _REASONING_FIELDS if chat[-1].get(f) == final]
    if not any(f in source for f in fields):
        raise ValueError(
            f'continue_final_message is set to "{field}" but the chat template does not read it.'
        )
    if isinstance(final, list | tuple):
        for block in reversed(final):
            if "text" in block:
                text: str = block["text"]
                block["text"] = text + _CONTINUE_TAG
                return text
        raise ValueError("continue_final_message is set but the final message has no text.")
    for f in fields:
        chat[-1][f] = chat[-1][f] + _CONTINUE_TAG
    return str(final)


def _cut_at_tag(rendered: str, final_message: str) -> str:
    """Cut the rendered chat just after the final message's text."""
    tag = _CONTINUE_TAG.strip()
    if final_message.strip() not in rendered or tag not in rendered:
        raise ValueError(
            "continue_final_message is set but the final message does not appear in the "
            "rendered chat (the template changed it)."
        )
    at = rendered.rindex(tag)
    if rendered[at : at + len(_CONTINUE_TAG)] == _CONTINUE_TAG:
        return rendered[:at]
    return rendered[:at].rstrip()  # the template trimmed the message's trailing space
