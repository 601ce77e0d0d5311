"""Sampling reaches every call: each method's temperature, top_p and seed go with every request."""

from __future__ import annotations

from typing import Any

import pytest

from tablereason.calls import Door, ReplySpec, Sampling
from tablereason.datasets import Example
from tablereason.errors import ConfigurationError
from tablereason.llm import Request, ScriptedLLM
from tablereason.methods import build_method
from tablereason.table import Table
from tablereason.tools import Calculator
from tablereason.trace import TraceStep

TABLE = Table.from_records(["city", "people"], [["Oslo", "0.7"], ["Rome", "2.8"]])
TABLE_QUESTION = Example.from_table(TABLE, "which city has more people?", dataset="wikitq")
TEXT_QUESTION = Example(dataset="hotpotqa", id="h", question="What is 2 + 3?", answer="5")
TABMWP = Example.from_table(TABLE, "how many people live in Rome?", dataset="tabmwp",
                            metadata={"unit": None, "table_title": "cities"})  # fmt: skip

CASES: dict[str, tuple[dict[str, Any], Example]] = {
    "chain_of_table": ({"task": "wikitq"}, TABLE_QUESTION),
    "program_of_thought": ({}, TABLE_QUESTION),
    "text_to_sql": ({}, TABLE_QUESTION),
    "rewoo": ({"tools": [Calculator()]}, TEXT_QUESTION),
    "react": ({"tools": [Calculator()]}, TEXT_QUESTION),
    "chameleon": ({"task": "tabmwp"}, TABMWP),
    "chameleon_cot": ({"task": "tabmwp"}, TABMWP),
    "chameleon_pot": ({"task": "tabmwp"}, TABMWP),
}


@pytest.mark.parametrize("name", list(CASES))
def test_every_request_of_every_method_is_sampled_as_set(name: str) -> None:
    seen: list[Request] = []

    def reply(request: Request) -> str:
        seen.append(request)
        return "<END>" if "f_" in request.as_text() else " 2.8"

    options, example = CASES[name]
    task = options.pop("task", None) if "task" in options else None
    method = build_method(name, ScriptedLLM(fn=reply), task=task, temperature=0.9, top_p=0.8,
                          seed=7, **options)  # fmt: skip
    options.update({"task": task} if task else {})
    method.run(example)
    assert seen, name
    assert {(r.temperature, r.top_p, r.seed) for r in seen} == {(0.9, 0.8, 7)}, name


def test_left_alone_a_method_asks_as_before() -> None:
    seen: list[Request] = []
    llm = ScriptedLLM(fn=lambda r: seen.append(r) or ("<END>" if "f_" in r.as_text() else " Rome"))
    build_method("chain_of_table", llm, task="wikitq").run(TABLE_QUESTION)
    assert {(r.temperature, r.top_p, r.seed) for r in seen} == {(0.0, 1.0, None)}


def test_the_door_applies_the_sampling_and_keeps_a_greedy_request_unseeded() -> None:
    seen: list[Request] = []
    llm = ScriptedLLM(fn=lambda r: seen.append(r) or "x")
    Door(llm, site="t", sampling=Sampling(top_p=0.5, seed=3)).ask(TraceStep(kind="a", name="a"),
                                                                  "p", ReplySpec())  # fmt: skip
    Door(llm, site="t", sampling=Sampling(temperature=0.4, seed=3)).ask(
        TraceStep(kind="a", name="a"), "p", ReplySpec(seed=9)
    )
    assert [(r.temperature, r.top_p, r.seed) for r in seen] == [(0.0, 0.5, None), (0.4, 1.0, 9)]


@pytest.mark.parametrize("bad", [{"temperature": -0.1}, {"temperature": 3}, {"top_p": 0},
                                 {"top_p": 1.5}])  # fmt: skip
def test_bad_sampling_settings_are_refused_by_every_method(bad: dict[str, float]) -> None:
    for name in CASES:
        options = {k: v for k, v in CASES[name][0].items() if k != "task"}
        with pytest.raises(ConfigurationError):
            build_method(name, ScriptedLLM(replies=[]), **options, **bad)
