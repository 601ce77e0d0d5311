r"""Replies emptied by a whitespace stop inside their leading whitespace (llm/stops.py).

The server-side stop is modelled exactly: the reply text is cut at the first
occurrence of any stop string from its first character. The properties check that
the mended reply is what a client cutting *after* the leading whitespace would get,
that replies with text are never asked again, and that the embedded backend mends too.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, ClassVar

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from llama_stand_in import StandInLlama, install

from tablereason.llm import LocalLlama, Request
from tablereason.llm.backends.stops import (
    blank_stops,
    cut_after_leading_whitespace,
    mend_blank_stops,
)
from tablereason.llm.base import Choice, Usage


def server_cut(text: str, stop: tuple[str, ...]) -> str:
    """What a server returns: the text up to the first stop string, from position 0."""
    positions = [i for i in (text.find(s) for s in stop if s) if i >= 0]
    return text[: min(positions)] if positions else text


_STOPS = st.lists(
    st.sampled_from(["\n", "\n\n", "\nQuestion:", "])", "*/", "\n#E5"]), min_size=1, max_size=3
).map(tuple)
_LEAD = st.text(alphabet=" \n\t", max_size=4)
_BODY = st.text(alphabet=st.sampled_from(list("ab1 ])\n*/Q:")), max_size=20)


@settings(max_examples=300, deadline=None)
@given(stop=_STOPS, lead=_LEAD, body=_BODY)
def test_mended_reply_is_the_reply_cut_after_its_leading_whitespace(
    stop: tuple[str, ...], lead: str, body: str
) -> None:
    model_text = lead + body
    request = Request(prompt="p", stop=stop)
    asked: list[Request] = []

    def ask(again: Request) -> tuple[list[Choice], Usage]:
        asked.append(again)
        return [Choice(text=server_cut(model_text, again.stop), finish_reason="stop")], Usage()

    first = Choice(text=server_cut(model_text, stop), finish_reason="stop")
    choices, usage = mend_blank_stops(request, [first], ask)
    if first.text.strip() or not blank_stops(stop):
        assert choices == [first] and usage is None and not asked  # never touched
        return
    assert len(asked) == 1 and not blank_stops(asked[0].stop)
    assert set(asked[0].stop) == set(stop) - set(blank_stops(stop))
    expected, _ = cut_after_leading_whitespace(server_cut(model_text, asked[0].stop), stop)
    assert choices[0].text == expected
    assert choices[0].text == choices[0].text.lstrip()
    assert not any(s in choices[0].text for s in stop)


@given(text=st.text(max_size=40), stop=_STOPS)
def test_cut_after_leading_whitespace(text: str, stop: tuple[str, ...]) -> None:
    cut, found = cut_after_leading_whitespace(text, stop)
    assert text.lstrip().startswith(cut)
    assert found == any(s in text.lstrip() for s in stop)
    assert not any(s in cut for s in stop)


def test_a_reply_cut_by_the_token_limit_is_not_asked_again() -> None:
    request = Request(prompt="p", stop=("\n",))
    blank = Choice(text="  ", finish_reason="length")
    choices, usage = mend_blank_stops(request, [blank], lambda r: pytest.fail("asked again"))
    assert choices == [blank] and usage is None


def test_only_the_emptied_choices_of_several_are_replaced() -> None:
    request = Request(prompt="p", stop=("\n",), n=3, temperature=0.5)
    first = [Choice(text="a"), Choice(text=""), Choice(text="\n")]
    seen: list[int] = []

    def ask(again: Request) -> tuple[list[Choice], Usage]:
        seen.append(again.n)
        return [Choice(text="\nb\nc"), Choice(text="\n\nd")], Usage(completion_tokens=4)

    choices, usage = mend_blank_stops(request, first, ask)
    assert [c.text for c in choices] == ["a", "b", "d"] and seen == [2]
    assert usage is not None and usage.completion_tokens == 4


class _NewlineLlama(StandInLlama):
    """A llama_cpp.Llama stand-in whose completions open with a newline; stops cut at 0."""

    instances: ClassVar[list[StandInLlama]] = []

    def __init__(self, model_path: str, n_ctx: int, **kwargs: Any) -> None:
        super().__init__(model_path, n_ctx, **kwargs)
        self.stops: list[list[str]] = []

    def create_completion(self, prompt: str, **options: Any) -> dict[str, Any]:
        self.stops.append(list(options["stop"]))
        text = server_cut("\n1985\nnext line", tuple(options["stop"]))
        return {
            "choices": [{"text": text, "finish_reason": "stop", "logprobs": None}],
            "usage": {"prompt_tokens": 3, "completion_tokens": 2},
        }


def test_the_embedded_backend_mends_a_reply_emptied_by_a_line_stop(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    install(monkeypatch, _NewlineLlama)
    model = tmp_path / "tiny.gguf"
    model.write_bytes(b"GGUF")
    llm = LocalLlama(model, n_ctx=64, n_threads=1)
    done = llm.complete(Request(prompt="The answer is:", stop=("\n",), max_tokens=8))
    assert done.text == "1985" and done.usage.requests == 2
    assert llm.load().stops == [["\n"], []]
    plain = llm.complete(Request(prompt="The answer is:", max_tokens=8))
    assert plain.text == "\n1985\nnext line" and plain.usage.requests == 1
