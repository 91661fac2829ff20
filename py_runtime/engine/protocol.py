"""The worker protocol: every message between the page's shim and the engine, defined once.

Messages are JSON objects with one discriminant key, ``kind``. Each request and
reply kind is a frozen dataclass below (``REQUESTS`` and ``REPLIES`` map kinds to
classes); the data inside them (options, prompts, constraints, chunks, errors) is
typed with ``TypedDict``s. ``decode_request`` is the only place wire data is read
and checked, ``encode`` the only place it is written. The shim's types and the
constants both sides share (web/src/protocol.js) are generated from this module
by ``python -m py_runtime.engine.codegen``.

A tool call has one shape both ways, ``{kind: "tool-call", callId, name,
arguments}``: in a prompt its ``arguments`` is the shim's probe of the page
object, in a reply the JSON object itself.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal, NotRequired, TypedDict

from .vocabulary import (
    Availability,
    Device,
    Dtype,
    MessageType,
    Role,
    SamplingModeName,
    ToolCallResults,
)

# -- what the shim learned from page objects ("probes") ---------------------------------


class Threw(TypedDict):
    """A page exception during a probed operation; ``threw`` indexes the shim's list."""

    threw: int


class LanguageTag(TypedDict):
    """A language as given, and ``Intl.getCanonicalLocales``'s answer (null: invalid)."""

    tag: str
    canonical: str | None


class ExpectedWire(TypedDict):
    type: MessageType
    languages: NotRequired[list[LanguageTag]]


class SchemaProbe(TypedDict):
    """``inputSchema`` probed in the order of the options algorithm's step 5.3;
    the shim stops at the first step that fails, so later keys may be absent."""

    type: Literal["object", "other"] | Threw
    properties: NotRequired[Literal["undefined", "object", "other"] | Threw]
    required: NotRequired[Literal["undefined", "array", "other"] | Threw]
    json: NotRequired[str | None | Threw]


class ToolDeclarationWire(TypedDict):
    name: str
    description: str
    inputSchema: SchemaProbe


class CoreOptionsWire(TypedDict, total=False):
    """``LanguageModelCreateCoreOptions``; unrestricted doubles Infinity/NaN as strings."""

    topK: float | str
    temperature: float | str
    samplingMode: SamplingModeName
    expectedInputs: list[ExpectedWire]
    expectedOutputs: list[ExpectedWire]
    tools: list[ToolDeclarationWire]


class CreateOptionsWire(CoreOptionsWire, total=False):
    initialPrompts: list[MessageWire]


# -- prompts: message values as the shim describes them ------------------------------------


class StringValue(TypedDict):
    kind: Literal["string"]
    string: str


class MediaValue(TypedDict):
    """An image or audio value; ``decoded`` says whether the page could decode it."""

    kind: Literal["blob", "image-source", "audio-buffer", "buffer-source"]
    decoded: NotRequired[bool]


class ArgumentsProbe(TypedDict):
    """A tool call's ``arguments`` object, probed for validation step 6.5.7.4."""

    isArray: bool
    platform: bool
    json: str | None


class ToolCallValue(TypedDict):
    kind: Literal["tool-call"]
    callId: str
    name: str
    arguments: ArgumentsProbe | None


class AnyValue(TypedDict):
    """A non-string ``any`` value (``describeAny``): its JSON, or null when unserialisable."""

    kind: Literal["array", "object", "primitive", "platform"]
    json: str | None


class ToolResultItem(TypedDict):
    type: Literal["text", "image", "audio", "object"]
    value: StringValue | AnyValue


class ToolSuccessValue(TypedDict):
    kind: Literal["tool-success"]
    callId: str
    name: str
    result: list[ToolResultItem]


class ToolErrorValue(TypedDict):
    kind: Literal["tool-error"]
    callId: str
    name: str
    errorMessage: str


MessageValue = StringValue | MediaValue | ToolCallValue | ToolSuccessValue | ToolErrorValue


class ContentWire(TypedDict):
    type: MessageType
    value: MessageValue


class MessageWire(TypedDict):
    role: Role
    content: str | list[ContentWire]
    prefix: NotRequired[bool]


PromptWire = str | list[MessageWire]


class JsonSchemaConstraint(TypedDict):
    kind: Literal["json-schema"]
    json: str


class RegExpConstraint(TypedDict):
    """A RegExp response constraint: its source and flags cross."""

    kind: Literal["regexp"]
    source: str
    flags: str


Constraint = JsonSchemaConstraint | RegExpConstraint


class Config(TypedDict, total=False):
    """The page's configuration (data- attributes or ``promptAPIRuntime.configure``)."""

    model: str
    dtype: Dtype
    device: Device
    contextWindow: int | str
    threads: int | str
    #: When ``prompt()`` returns a list: only when the answer holds a tool call (the
    #: shared WPT file's rule, the default), or whenever ``expectedOutputs`` lists
    #: ``tool-call`` (Chromium's newer WPT). Read by the shim only.
    toolCallResults: ToolCallResults
    #: How often cached model files are revalidated with the server (HEAD requests,
    #: in the background once the model has loaded): ``daily`` (the default),
    #: ``always`` or ``never``. Read by the worker.
    cacheRevalidation: Literal["daily", "always", "never"]
    #: Seconds a model download may go without receiving a byte before it fails with
    #: a NetworkError (default 30). Read by the worker.
    downloadTimeout: int | str
    #: The server backend (``model`` is ``openai:`` + a base URL): the model's name on
    #: that server (default: the one it serves), the API key it wants (sent as a
    #: bearer token; configure() only, not an attribute a page's DOM shows), and the
    #: seconds a request may go without a byte (default 60). Read by the worker.
    serverModel: str
    serverKey: str
    serverTimeout: int | str
    #: ``off``: ONNX Runtime's plain wasm build, which reads a model's external data as
    #: bytes, even where the browser has JSPI (``auto``, the default, then uses the JSPI
    #: build, which reads it from a Blob of the cached file). Read by the worker.
    jspi: Literal["auto", "off"]
    #: Where the runtime's files (worker.mjs, pyodide/, ort/, packages/, xgrammar/)
    #: are served from, relative to the page; default: beside the script. Shim only.
    assetsURL: str


# -- requests: page -> engine ----------------------------------------------------------


@dataclass(frozen=True)
class Init:
    """First message: the configuration; the engine starts its model adapter."""

    config: Config


@dataclass(frozen=True)
class AvailabilityRequest:
    id: int
    options: CoreOptionsWire


@dataclass(frozen=True)
class CreateRequest:
    id: int
    options: CreateOptionsWire
    activation: bool


@dataclass(frozen=True)
class PromptRequest:
    id: int
    session: int
    input: PromptWire
    constraint: Constraint | None
    omit: bool


@dataclass(frozen=True)
class AppendRequest:
    id: int
    session: int
    input: PromptWire


@dataclass(frozen=True)
class MeasureRequest:
    id: int
    session: int
    input: PromptWire
    constraint: Constraint | None
    omit: bool


@dataclass(frozen=True)
class CloneRequest:
    id: int
    session: int


@dataclass(frozen=True)
class DestroyRequest:
    id: int
    session: int


@dataclass(frozen=True)
class BenchmarkRequest:
    id: int
    promptTokens: int
    decodeTokens: int


@dataclass(frozen=True)
class StatsRequest:
    """What the engine holds now (``promptAPIRuntime.stats()``): for leak checks."""

    id: int


@dataclass(frozen=True)
class Abort:
    """Stop the running request ``target``."""

    target: int


@dataclass(frozen=True)
class Settle:
    """The page's answer to a prompt's or append's ``return``: keep its effects or not."""

    target: int
    keep: bool


Call = (
    AvailabilityRequest
    | CreateRequest
    | PromptRequest
    | AppendRequest
    | MeasureRequest
    | CloneRequest
    | DestroyRequest
    | BenchmarkRequest
    | StatsRequest
)
Request = Init | Call | Abort | Settle

REQUESTS: dict[str, type[Request]] = {
    "init": Init,
    "availability": AvailabilityRequest,
    "create": CreateRequest,
    "prompt": PromptRequest,
    "append": AppendRequest,
    "measure": MeasureRequest,
    "clone": CloneRequest,
    "destroy": DestroyRequest,
    "benchmark": BenchmarkRequest,
    "stats": StatsRequest,
    "abort": Abort,
    "settle": Settle,
}

# -- replies: engine -> page ------------------------------------------------------------


class TextChunk(TypedDict):
    kind: Literal["text"]
    text: str


class ToolCallChunk(TypedDict):
    kind: Literal["tool-call"]
    callId: str
    name: str
    arguments: dict[str, Any] | None


ChunkWire = TextChunk | ToolCallChunk


class ErrorWire(TypedDict):
    """An error the shim rebuilds in the page's realm: ``name`` is ``TypeError``,
    ``RangeError``, a DOMException name, or ``JSException`` (rethrow the page's own
    exception number ``index``); ``QuotaExceededError`` carries ``requested``/``quota``."""

    name: str
    message: str
    requested: NotRequired[float]
    quota: NotRequired[float]
    index: NotRequired[int]


class SessionInfo(TypedDict):
    """A new session's id and the attributes the page reads synchronously."""

    session: int
    contextUsage: float
    contextWindow: float
    samplingMode: SamplingModeName | None
    topK: int
    temperature: float


class Settlement(TypedDict):
    """A prompt's or append's outcome, for the page to accept or refuse."""

    contextUsage: float
    overflowed: bool


class SpeedResult(TypedDict):
    promptTokens: int
    decodeTokens: int
    prefillMs: float
    decodeMs: float
    prefillTokensPerSecond: float
    decodeTokensPerSecond: float
    outsideRunShare: float


class RuntimeStats(TypedDict):
    """Live sessions, and the model backend's KV caches, their tensors and grammar
    matchers (0 without a loaded real model)."""

    sessions: int
    caches: int
    tensors: int
    matchers: int


#: What each call's ``return`` reply carries.
RESULTS: dict[str, Any] = {
    "availability": Availability,
    "create": SessionInfo,
    "prompt": Settlement,
    "append": Settlement,
    "measure": float,
    "clone": SessionInfo,
    "destroy": None,
    "benchmark": SpeedResult,
    "stats": RuntimeStats,
}


@dataclass(frozen=True)
class Progress:
    id: int
    loaded: float


@dataclass(frozen=True)
class Chunk:
    id: int
    chunk: ChunkWire


@dataclass(frozen=True)
class Return:
    id: int
    value: Any


@dataclass(frozen=True)
class Throw:
    id: int
    error: ErrorWire


@dataclass(frozen=True)
class BootError:
    """The engine could not start: every pending and later call rejects with ``error``."""

    error: ErrorWire


Reply = Progress | Chunk | Return | Throw | BootError

REPLIES: dict[str, type[Reply]] = {
    "progress": Progress,
    "chunk": Chunk,
    "return": Return,
    "throw": Throw,
    "boot-error": BootError,
}
KINDS: dict[type, str] = {cls: kind for kind, cls in (*REQUESTS.items(), *REPLIES.items())}
