"""Fake servers of each kind (vLLM, llama.cpp, llama-cpp-python, Ollama, OpenAI, other).

Each says what it is the way the real one does (``owned_by`` in ``/v1/models``, its own
``/version``, ``/props`` or ``/api/version``), records every body (``bodies``), and answers
a request that carries the constraint field its kind reads with ``answer`` (in that
kind's wire form: OpenAI's wrapped object, Ollama's JSON string), any other request with
the fake server's usual text. ``honours=False`` makes a server that accepts the field
and ignores it, replying with the usual text (the case fail-closed is for).
"""

from __future__ import annotations

import json
from typing import Any

from support.fake_server import FakeOpenAIServer

MODELS = {"object": "list"}

ROUTES: dict[str, dict[str, Any]] = {
    "vllm": {
        "/v1/models": {**MODELS, "data": [{"id": "served", "owned_by": "vllm"}]},
        "/version": {"version": "0.12.0"},
    },
    "llama.cpp": {
        "/v1/models": {**MODELS, "data": [{"id": "served", "owned_by": "llamacpp"}]},
        "/props": {"default_generation_settings": {}, "total_slots": 1},
    },
    "llama-cpp-python": {
        "/v1/models": {**MODELS, "data": [{"id": "served", "owned_by": "me"}]},
    },
    "ollama": {
        "/v1/models": {**MODELS, "data": [{"id": "served", "owned_by": "library"}]},
        "/api/version": {"version": "0.12.3"},
    },
    "openai": {
        "/v1/models": {**MODELS, "data": [{"id": "served", "owned_by": "system"}]},
    },
    "openai-compatible": {
        "/v1/models": {**MODELS, "data": [{"id": "served", "owned_by": "someone"}]},
    },
}


def carried(kind: str, body: dict[str, Any]) -> bool:
    """Whether ``body`` carries a constraint in the field ``kind`` reads."""
    if kind == "vllm":
        return "structured_outputs" in body
    if kind in ("llama.cpp", "llama-cpp-python"):
        return "grammar" in body or (kind == "llama.cpp" and "json_schema" in body)
    if kind in ("openai", "ollama"):
        return body.get("response_format", {}).get("type") == "json_schema"
    return False


def wire(kind: str, body: dict[str, Any], answer: str) -> str:
    """``answer`` as a server of ``kind`` writes it under the constraint it was sent."""
    if kind in ("openai", "ollama"):
        schema = body["response_format"]["json_schema"]["schema"]
        if schema.get("type") == "object" and set(schema["properties"]) == {"answer"}:
            return json.dumps({"answer": answer})
        if schema.get("type") == "string":
            return json.dumps(answer)
    return answer


class DialectServer(FakeOpenAIServer):
    """A fake server of one kind (see the module notes)."""

    def __init__(
        self, kind: str, *, answer: str = "yes", honours: bool = True, **kwargs: Any
    ) -> None:
        super().__init__(routes=ROUTES[kind], **kwargs)
        self.kind = kind
        self.answer = answer
        self.honours = honours

    def build_reply(self, path: str, body: dict[str, Any], empty: bool = False) -> dict[str, Any]:
        data = super().build_reply(path, body, empty)
        if not (self.honours and carried(self.kind, body)):
            return data
        text = wire(self.kind, body, self.answer)
        for choice in data["choices"]:
            if "message" in choice:
                choice["message"]["content"] = text
            else:
                choice["text"] = text
        return data
