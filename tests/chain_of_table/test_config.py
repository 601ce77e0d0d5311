from __future__ import annotations

from collections.abc import Callable

import pytest

from tablereason.datasets import Example
from tablereason.errors import ConfigurationError, UnknownNameError
from tablereason.llm import Request, ScriptedLLM
from tablereason.methods import METHODS, PROFILES, ChainOfTable
from tablereason.methods.base import Method, TableMethod
from tablereason.methods.chain_of_table.planner import GRAPH
from tablereason.methods.chain_of_table.steps import STEPS
from tablereason.table import Table
from tablereason.trace import Prediction


def test_registries() -> None:
    registered = METHODS.get("chain_of_table")  # the class, or a MethodSpec building it
    assert getattr(registered, "factory", registered) is ChainOfTable
    assert PROFILES.names() == ["paper", "efficient"]
    assert set(STEPS.names()) == set(GRAPH) - {"<init>"}
    with pytest.raises(UnknownNameError, match="did you mean 'paper'"):
        ChainOfTable(ScriptedLLM(replies=[]), profile="papr")


def test_profiles_differ_as_documented() -> None:
    paper, efficient = PROFILES.get("paper"), PROFILES.get("efficient")
    assert (paper.select_samples, paper.select_temperature, paper.select_union) == (8, 0.5, 2)
    assert paper.add_column_per_row and paper.sort_numerical_only and paper.repairs == 0
    assert (efficient.select_samples, efficient.repairs, efficient.reuse_plan) == (1, 1, True)
    assert paper.group_threshold == efficient.group_threshold == 0.8


def test_overrides_and_validation() -> None:
    llm = ScriptedLLM(replies=[])
    method = ChainOfTable(llm, task="wikitq", profile="paper", select_samples=4)
    assert method.settings.select_samples == 4 and method.settings.profile == "paper"
    with pytest.raises(ConfigurationError):
        ChainOfTable(llm, select_samples=0)
    with pytest.raises(ConfigurationError):
        ChainOfTable(llm, no_such_setting=True)
    with pytest.raises(ConfigurationError, match="unknown task"):
        ChainOfTable(llm, task="hotpotqa")  # type: ignore[arg-type]


def test_config_names_every_prompt_with_its_hash() -> None:
    config = ChainOfTable(ScriptedLLM(replies=[]), task="tabfact").config()
    assert config["method"] == "chain_of_table" and config["task"] == "tabfact"
    assert "chain_of_table/efficient/plan" in config["prompts"]
    assert config["settings"]["profile"] == "efficient"


def test_a_table_method_run_on_an_example_or_a_table() -> None:
    table = Table.from_records(["player", "points"], [["ann", "12"], ["bo", "9"]])
    example = Example.from_table(
        table,
        "ann scored 12 points",
        dataset="tabfact",
        metadata={"cleaned_statement": "ann had 7 points"},
    )

    def requests(run: Callable[[ChainOfTable], Prediction]) -> list[str]:
        def reply(request: Request) -> str:  # add_column first, which shows the cleaned statement
            return " f_add_column(x) -> <END>" if request.call_site.endswith("/plan") else " no"

        llm = ScriptedLLM(fn=reply)
        prediction = run(ChainOfTable(llm, task="tabfact", profile="paper"))
        assert prediction.answer == "no"
        return [request.as_text() for request in llm.requests]

    method = ChainOfTable(ScriptedLLM(replies=[]), task="tabfact", profile="paper")
    assert isinstance(method, TableMethod) and isinstance(method, Method)
    assert method.example_options(example) == {"cleaned_question": "ann had 7 points"}
    by_example = requests(lambda m: m.run(example))
    by_table = requests(
        lambda m: m.run(table, example.question, cleaned_question="ann had 7 points")
    )
    assert by_example == by_table
    assert any("ann had _ points" in text for text in by_example)  # the masked cleaned statement
    with pytest.raises(ConfigurationError, match="takes no options"):
        method.run(table, "q", unit="m")
