"""The backend registry: every kind of model that can answer, and what each supports.

An entry is either a model in this process (``local``, ``scripted``) or a kind of
OpenAI-compatible server (``openai``, ``vllm``, ``llama.cpp``, ``llama-cpp-python``,
``ollama``, and ``openai-compatible`` for any other). Each declares its
:class:`Capabilities` (the constraint kinds it enforces, whether it enforces a slot after
free text, ``n``, log-probabilities, stop strings, seeds); a server entry also declares its
:mod:`~tablereason.llm.backends.server.dialects` function and how the server says what it
is (the ``owned_by`` of its ``/v1/models`` entries, or a path of its own API).

:func:`choose` picks the entry a :class:`ModelSpec` names (the first that claims it);
:meth:`Backend.make` builds it through its ``"module:function"`` builder, imported only
then, so a plug-in registers a backend the same way (``BACKENDS.register(...)``).

Example:
    >>> BACKENDS.get("vllm").capabilities.enforces("regex")
    True
    >>> choose(ModelSpec(model="local")).name
    'local'
    >>> choose(ModelSpec(model="qwen", base_url="http://127.0.0.1:8000/v1")).name
    'openai-compatible'
"""

from __future__ import annotations

import importlib
import os
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from tablereason.errors import ConfigurationError
from tablereason.llm.backends.server import dialects
from tablereason.llm.base import Capabilities
from tablereason.llm.constraints import KINDS, Kind
from tablereason.registry import Registry

if TYPE_CHECKING:  # pragma: no cover
    from tablereason.llm.base import LLM

AUTO = "auto"
"""The server kind to detect from what the server says (the default)."""
SERVER_KIND_ENV = "TABLEREASON_SERVER_KIND"
"""Sets the server kind when ``--server-kind`` / ``server_kind=`` does not."""
LOCAL_MODEL = "local"
"""The model spec that names the embedded model (Gemma 3 270M through llama.cpp)."""


@dataclass(frozen=True)
class ModelSpec:
    """What a user named: the strings of ``ask``, the harness and the command line.

    Attributes:
        model: ``"local"``, a ``.gguf`` path, a served model's name, or None.
        base_url: An OpenAI-compatible server's API root.
        endpoint: ``"chat"`` or ``"completion"`` for a server.
        timeout: Seconds one request to a server may take in all.
        server_kind: A server entry's name, or ``"auto"`` / None to detect it.
        n_ctx: The embedded model's context window in tokens.
        threads: The embedded model's CPU threads.
    """

    model: str | None = None
    base_url: str | None = None
    endpoint: str | None = None
    timeout: float | None = None
    server_kind: str | None = None
    n_ctx: int | None = None
    threads: int | None = None

    @property
    def embedded(self) -> bool:
        """Whether the spec names a model file for this process."""
        model = self.model
        return (
            self.base_url is None
            and model is not None
            and (model == LOCAL_MODEL or model.endswith(".gguf"))
        )


def _never(spec: ModelSpec) -> bool:
    return False


@dataclass(frozen=True)
class Backend:
    """One registry entry (see the module notes).

    Attributes:
        name: The registered name (``--server-kind`` takes the server entries' names).
        description: One line for listings and messages.
        capabilities: What it supports.
        where: ``"process"`` or ``"server"``.
        build: ``"module:function"`` turning a :class:`ModelSpec` into the backend.
        claims: Whether a spec names this entry (tried in registration order).
        dialect: For servers: the request fields that carry a constraint.
        owned_by: For servers: ``owned_by`` values of ``/v1/models`` that name it.
        probe: For servers: a path of the server's own API (from its root) whose JSON
            reply names it, and the key that reply has.
    """

    name: str
    description: str
    capabilities: Capabilities
    where: Literal["process", "server"]
    build: str | None = None
    claims: Callable[[ModelSpec], bool] = _never
    dialect: dialects.Dialect = dialects.nothing
    owned_by: tuple[str, ...] = ()
    probe: tuple[str, str] | None = None

    def make(self, spec: ModelSpec) -> LLM:
        """Build the backend for ``spec``.

        Raises:
            ConfigurationError: The entry is built in Python only (``scripted``).
        """
        if self.build is None:
            raise ConfigurationError(
                f"the {self.name!r} backend is built in Python, not named by a model spec"
            )
        module, _, function = self.build.partition(":")
        built: LLM = getattr(importlib.import_module(module), function)(spec)
        return built


def choose(spec: ModelSpec) -> Backend:
    """The first entry that claims ``spec`` (its ``server_kind`` checked by :func:`chosen_kind`)."""
    for _, entry in BACKENDS.items():
        if entry.claims(spec):
            return entry
    raise ConfigurationError(f"no backend for {spec}")  # pragma: no cover - a catch-all exists


def server_kinds() -> list[str]:
    """Names of the server entries (what ``--server-kind`` accepts besides ``auto``)."""
    return [name for name, entry in BACKENDS.items() if entry.where == "server"]


def chosen_kind(value: str | None) -> str:
    """The server kind to use: ``value``, else ``$TABLEREASON_SERVER_KIND``, else ``"auto"``.

    Raises:
        ConfigurationError: Not ``"auto"`` nor a server entry of the registry.

    Example:
        >>> chosen_kind("vLLM")
        'vllm'
    """
    chosen = (value if value is not None else os.environ.get(SERVER_KIND_ENV)) or AUTO
    cleaned = chosen.strip().lower()
    if cleaned != AUTO and cleaned not in server_kinds():
        where = "--server-kind / server_kind=" if value is not None else f"${SERVER_KIND_ENV}"
        raise ConfigurationError(
            f"unknown server kind {chosen!r} in {where}: use auto or one of "
            f"{', '.join(server_kinds())}"
        )
    return cleaned


def _names_server(kind: str) -> Callable[[ModelSpec], bool]:
    def claims(spec: ModelSpec) -> bool:
        return not spec.embedded and spec.server_kind == kind

    return claims


def _openai_api(spec: ModelSpec) -> bool:
    if spec.embedded or spec.server_kind not in (None, AUTO, "openai"):
        return False
    return (
        spec.server_kind == "openai" or spec.base_url is None or ("api.openai.com" in spec.base_url)
    )


def _any_server(spec: ModelSpec) -> bool:
    return not spec.embedded


ALL = frozenset(KINDS)
_SERVER = "tablereason.llm.backends.server.chat:from_spec"

BACKENDS: Registry[Backend] = Registry("backend")
BACKENDS.register(
    "local",
    Backend(
        "local",
        "the embedded model: a GGUF file run by llama-cpp-python in this process",
        Capabilities(constraints=ALL, after=True),
        "process",
        build="tablereason.llm.backends.embedded:from_spec",
        claims=lambda spec: spec.embedded,
    ),
)
BACKENDS.register(
    "scripted",
    Backend(
        "scripted",
        "replies from a script, for tests (replies are checked, nothing is enforced)",
        Capabilities(logprobs=False, stop=False, seed=False),
        "process",
    ),
)


def _server(
    name: str,
    description: str,
    capabilities: Capabilities,
    dialect: dialects.Dialect,
    *,
    owned_by: tuple[str, ...] = (),
    probe: tuple[str, str] | None = None,
    claims: Callable[[ModelSpec], bool] | None = None,
) -> None:
    """Register a kind of server (all are built by the same client, told their kind)."""
    entry = Backend(
        name,
        description,
        capabilities,
        "server",
        build=_SERVER,
        claims=claims or _names_server(name),
        dialect=dialect,
        owned_by=owned_by,
        probe=probe,
    )
    BACKENDS.register(name, entry)


CHOICE_AND_JSON: frozenset[Kind] = frozenset({"choice", "json"})
_server(
    "openai",
    "OpenAI's API: structured outputs (a strict JSON schema; a choice as an enum)",
    Capabilities(constraints=CHOICE_AND_JSON, endpoints=("chat",)),
    dialects.openai,
    owned_by=("openai", "system", "openai-internal"),
    claims=_openai_api,
)
_server(
    "vllm",
    "vLLM: structured_outputs (choice, regex, json, grammar)",
    Capabilities(constraints=ALL, after=True),
    dialects.vllm,
    owned_by=("vllm",),
    probe=("/version", "version"),
)
_server(
    "llama.cpp",
    "llama.cpp's llama-server: grammar (GBNF) and json_schema",
    Capabilities(constraints=ALL, after=True, n=False),
    dialects.llama_cpp,
    owned_by=("llamacpp",),
    probe=("/props", "default_generation_settings"),
)
_server(
    "llama-cpp-python",
    "llama-cpp-python's server (python -m llama_cpp.server): grammar (GBNF)",
    Capabilities(constraints=ALL, after=True, n=False),
    dialects.llama_cpp_python,
    owned_by=("me",),
)
_server(
    "ollama",
    "Ollama: format (a JSON schema), through its OpenAI-compatible response_format",
    Capabilities(constraints=CHOICE_AND_JSON, endpoints=("chat",), n=False),
    dialects.ollama,
    probe=("/api/version", "version"),
)
_server(
    "openai-compatible",
    "any other OpenAI-compatible server: no constraint is sent; replies are checked",
    Capabilities(),
    dialects.nothing,
    claims=_any_server,
)
