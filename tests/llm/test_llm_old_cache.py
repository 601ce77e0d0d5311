"""A cache recorded before requests had a constraint still replays, with no miss.

The fixture (``tests/fixtures/llm/cache_0b421d7.*``) was recorded by the code of commit
0b421d7 (``record_old_cache.py``). Fields added to ``Request`` since enter cache keys only
when they differ from their defaults, so every recorded key is found again.
"""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tablereason.llm import CachedLLM, Completion, OneOf, Request, cache_key
from tablereason.llm.errors import CacheMissError
from tablereason.llm.wrappers.cache import KEYED_ALWAYS

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "llm"
MANIFEST = json.loads((FIXTURES / "cache_0b421d7.json").read_text(encoding="utf-8"))


class Offline:
    """Stands for a backend by name and model; it is never asked anything."""

    def __init__(self, name: str, model: str) -> None:
        self.name, self.model = name, model

    def complete(self, request: Request) -> Completion:
        raise AssertionError("offline replay must not call the model")

    async def acomplete(self, request: Request) -> Completion:
        raise AssertionError("offline replay must not call the model")


def test_the_old_cache_replays_offline_with_no_miss(tmp_path: Path) -> None:
    path = tmp_path / "cache.sqlite"
    shutil.copy(FIXTURES / "cache_0b421d7.sqlite", path)  # opening it switches it to WAL
    replays: dict[tuple[str, str], CachedLLM] = {}
    for entry in MANIFEST["entries"]:
        where = (entry["backend"], entry["model"])
        llm = replays.setdefault(where, CachedLLM(Offline(*where), path, offline=True))
        request = Request.model_validate(entry["request"])
        assert request.constraint is None
        assert llm.complete(request).texts == entry["texts"]
    assert sum(r.stats().misses for r in replays.values()) == 0
    assert sum(r.stats().hits for r in replays.values()) == len(MANIFEST["entries"]) == 9


def test_old_keys_are_computed_again_exactly() -> None:
    seen: dict[str, int] = {}
    for entry in MANIFEST["entries"]:
        request = Request.model_validate(entry["request"])
        base = cache_key(entry["backend"], entry["model"], request)
        occurrence = seen.get(base, 0) if request.temperature > 0 and request.seed is None else 0
        seen[base] = occurrence + 1
        assert cache_key(entry["backend"], entry["model"], request, occurrence) == entry["key"]


def _old_key(backend: str, model: str, request: Request) -> str:
    """The key as commit 0b421d7 computed it: the request's whole JSON form."""
    dumped = {k: v for k, v in request.model_dump(mode="json").items() if k in KEYED_ALWAYS}
    payload = {"backend": backend, "model": model, "request": dumped}
    text = json.dumps(payload, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


REQUESTS = st.builds(
    Request,
    prompt=st.text(max_size=20),
    n=st.integers(1, 4),
    temperature=st.sampled_from([0.0, 0.7]),
    max_tokens=st.integers(1, 600),
    stop=st.lists(st.text(max_size=3), max_size=2).map(tuple),
    seed=st.one_of(st.none(), st.integers(0, 99)),
    logprobs=st.booleans(),
)


@settings(max_examples=200, deadline=None)
@given(REQUESTS)
def test_every_field_added_since_is_left_out_of_the_key_at_its_default(request: Request) -> None:
    assert cache_key("openai", "m", request) == _old_key("openai", "m", request)
    constrained = request.model_copy(update={"constraint": OneOf(options=("a",))})
    assert cache_key("openai", "m", constrained) != cache_key("openai", "m", request)


def test_fields_added_later_follow_the_same_rule() -> None:
    new = set(Request.model_fields) - KEYED_ALWAYS - {"call_site"}
    assert new == {"constraint"}, "a new Request field: give it a default and test its key"
    for name in new:
        assert Request.model_fields[name].is_required() is False


def test_the_constraint_key_leaves_out_its_own_defaults() -> None:
    plain = Request(prompt="q", constraint=OneOf(options=("a", "b")))
    key: dict[str, Any] = json.loads(json.dumps(plain.model_dump(mode="json")))
    assert key["constraint"] == {"after": None, "kind": "choice", "options": ["a", "b"]}
    from tablereason.llm.wrappers.cache import request_key

    assert request_key(plain)["constraint"] == {"kind": "choice", "options": ["a", "b"]}


def test_a_miss_is_still_a_miss(tmp_path: Path) -> None:
    path = tmp_path / "cache.sqlite"
    shutil.copy(FIXTURES / "cache_0b421d7.sqlite", path)
    llm = CachedLLM(Offline("openai", "qwen2.5-7b"), path, offline=True)
    with pytest.raises(CacheMissError):
        llm.complete(Request(prompt="2 + 2 =", constraint=OneOf(options=("4",))))
