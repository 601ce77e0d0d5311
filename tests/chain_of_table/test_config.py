from __future__ import annotations

import pytest

from tablereason.errors import ConfigurationError, UnknownNameError
from tablereason.llm import ScriptedLLM
from tablereason.methods import METHODS, PROFILES, ChainOfTable
from tablereason.methods.chain_of_table.planner import GRAPH
from tablereason.methods.chain_of_table.steps import OPERATIONS


def test_registries() -> None:
    assert METHODS.get("chain_of_table") is ChainOfTable
    assert PROFILES.names() == ["paper", "efficient"]
    assert set(OPERATIONS.names()) == set(GRAPH) - {"<init>"}
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
    assert "chain_of_table/efficient_plan" in config["prompts"]
    assert config["settings"]["profile"] == "efficient"
