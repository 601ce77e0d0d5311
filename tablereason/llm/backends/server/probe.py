"""What an OpenAI-compatible server is, and which models it serves, asked of the server.

:func:`served_models` reads ``/v1/models``. :func:`detect` finds the server's kind where
the server says what it is: the ``owned_by`` of its ``/v1/models`` entries (vLLM says
``vllm``, llama-server ``llamacpp``, llama-cpp-python ``me``), else a path of its own API
(Ollama's ``/api/version``, llama-server's ``/props``, vLLM's ``/version``), as the
server entries of :data:`~tablereason.llm.backends.registry.BACKENDS` declare. It is
asked once per API root and remembered for the process, within
:data:`PROBE_BUDGET_S` seconds in all, and never fails: a server that says nothing
(or cannot be reached) is ``openai-compatible``, a kind that is sent no constraint.

Example:
    >>> detect("https://api.openai.com/v1", api_key="sk-none").kind
    'openai'
"""

from __future__ import annotations

import logging
import threading
import time
import urllib.parse
from dataclasses import dataclass
from typing import Any

from tablereason.errors import ConfigurationError, LLMError, TableReasonError
from tablereason.llm.backends.registry import BACKENDS
from tablereason.llm.backends.server.transport import JSONTransport

log = logging.getLogger(__name__)

PROBE_BUDGET_S = 3.0
"""Seconds all the requests of one detection may take together."""
GENERIC = "openai-compatible"

_lock = threading.Lock()
_known: dict[str, ServerInfo] = {}
_asking: dict[str, threading.Lock] = {}


@dataclass(frozen=True)
class ServerInfo:
    """What a server said about itself.

    Attributes:
        kind: The registry entry it is (``"openai-compatible"`` when it said nothing).
        how: What told us, for messages (``"owned_by 'vllm' in /v1/models"``).
        models: The models it listed, if it listed any.
    """

    kind: str
    how: str
    models: tuple[str, ...] = ()


def _root(base_url: str) -> str:
    """The server's own root: the API root without its ``/v1``."""
    parts = urllib.parse.urlsplit(base_url)
    path = parts.path.rstrip("/")
    if path.endswith("/v1"):
        path = path[: -len("/v1")]
    return urllib.parse.urlunsplit((parts.scheme, parts.netloc, path, "", ""))


def _model_list(reply: Any) -> list[dict[str, Any]]:
    data = reply.get("data") if isinstance(reply, dict) else None
    if not isinstance(data, list):
        raise LLMError("its /models reply has no list of models (`data`)")
    return [entry for entry in data if isinstance(entry, dict)]


def served_models(base_url: str, *, api_key: str, timeout: float) -> tuple[str, ...]:
    """The ids of the models a server lists at ``/models``.

    Raises:
        LLMError: The server cannot be reached or gives no model list.
    """
    try:
        reply = JSONTransport(base_url, api_key=api_key, timeout=timeout).get("/models")
        ids = tuple(str(e["id"]) for e in _model_list(reply) if isinstance(e.get("id"), str))
    except TableReasonError as error:
        raise LLMError(
            f"cannot ask the server at {base_url} which models it serves ({error}); is it "
            "running there? Or name the model (--model, model=)"
        ) from None
    return ids


def only_model(base_url: str, *, api_key: str, timeout: float) -> str:
    """The model a server serves, when it serves one.

    Raises:
        LLMError: The server cannot be asked.
        ConfigurationError: It lists no model, or several (they are listed).
    """
    models = served_models(base_url, api_key=api_key, timeout=timeout)
    if len(models) == 1:
        return models[0]
    if not models:
        raise ConfigurationError(
            f"the server at {base_url} lists no model at /models: name one (--model, model=)"
        )
    shown = ", ".join(models[:10]) + (", ..." if len(models) > 10 else "")
    raise ConfigurationError(
        f"the server at {base_url} serves {len(models)} models ({shown}): choose one with "
        "--model (model=)"
    )


def _kind_from_models(entries: list[dict[str, Any]]) -> str | None:
    owners = {str(e.get("owned_by")) for e in entries if e.get("owned_by") is not None}
    for name, entry in BACKENDS.items():
        if entry.where == "server" and owners & set(entry.owned_by):
            return name
    return None


def _ask(base_url: str, api_key: str) -> ServerInfo:
    ends = time.monotonic() + PROBE_BUDGET_S

    def left() -> float:
        return max(0.05, ends - time.monotonic())

    models: tuple[str, ...] = ()
    try:
        reply = JSONTransport(base_url, api_key=api_key, timeout=left()).get("/models")
        entries = _model_list(reply)
        models = tuple(str(e.get("id")) for e in entries)
        kind = _kind_from_models(entries)
        if kind is not None:
            owner = next(str(e.get("owned_by")) for e in entries if e.get("owned_by"))
            return ServerInfo(kind, f"owned_by {owner!r} in /v1/models", models)
    except TableReasonError as error:
        log.debug("server probe %s/models: %s", base_url, error)
    root = _root(base_url)
    for name, entry in BACKENDS.items():
        if entry.probe is None or time.monotonic() >= ends:
            continue
        path, key = entry.probe
        try:
            said = JSONTransport(root, api_key=api_key, timeout=left()).get(path)
        except TableReasonError as error:
            log.debug("server probe %s%s: %s", root, path, error)
            continue
        if isinstance(said, dict) and key in said:
            return ServerInfo(name, f"{path} answered with {key!r}", models)
    return ServerInfo(GENERIC, "the server did not say what it is", models)


def detect(base_url: str | None, *, api_key: str) -> ServerInfo:
    """The kind of the server at ``base_url`` (asked once per process; never raises).

    Args:
        base_url: The API root (``http://127.0.0.1:8000/v1``); None means OpenAI's.
        api_key: Sent as a bearer token.
    """
    if base_url is None or "api.openai.com" in base_url:
        return ServerInfo("openai", "the URL is OpenAI's")
    with _lock:
        known = _known.get(base_url)
        if known is not None:
            return known
        asking = _asking.setdefault(base_url, threading.Lock())
    with asking:  # one probe per server, even when many threads ask at once
        with _lock:
            known = _known.get(base_url)
        if known is None:
            try:
                known = _ask(base_url, api_key)
            except Exception as error:  # never fatal: the server is then a generic one
                known = ServerInfo(GENERIC, f"the probe failed ({type(error).__name__})")
            log.info("server at %s: %s (%s)", base_url, known.kind, known.how)
            with _lock:
                _known[base_url] = known
    return known


def forget() -> None:
    """Forget every detected server (tests start servers on reused ports)."""
    with _lock:
        _known.clear()
