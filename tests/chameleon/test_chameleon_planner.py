"""The planner: strict parsing, every validity rule, defaults, merging, the prompt."""

from __future__ import annotations

import pytest

from tablereason.errors import ParseError
from tablereason.methods.chameleon import (
    DEFAULT_PLANS,
    MODULES,
    check_plan,
    choose_plan,
    merge_program_steps,
    parse_module_plan,
    profile_settings,
    task_modules,
)
from tablereason.methods.chameleon.inventory import MERGED_PROGRAM, abbreviate
from tablereason.methods.chameleon.planner import module_descriptions

PG, PV, PE, AG, SG = (
    "program_generator", "program_verifier", "program_executor", "answer_generator",
    "solution_generator",
)  # fmt: skip
DEFAULT = profile_settings("default", "tabmwp")
PAPER = profile_settings("paper", "tabmwp")
SQA_DEFAULT = profile_settings("default", "scienceqa")
SQA_PAPER = profile_settings("paper", "scienceqa")


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('["program_generator", "program_executor", "answer_generator"]', [PG, PE, AG]),
        ("['Row_Lookup', 'Solution_Generator', 'Answer_Generator']",
         ["row_lookup", SG, AG]),
        ("Modules: [row lookup, KNOWLEDGE-RETRIEVAL, solution_generator, answer_generator]\n",
         ["row_lookup", "knowledge_retrieval", SG, AG]),
        ("[ 'program  generator' ,'answer__generator', ]", [PG, AG]),
    ],
)  # fmt: skip
def test_parse_plan_forms(text: str, expected: list[str]) -> None:
    assert parse_module_plan(text, "tabmwp") == expected


def test_parse_plan_published_search_name() -> None:
    assert parse_module_plan('["Bing_Search", "Solution_Generator", "Answer_Generator"]',
                      "scienceqa") == ["search", SG, AG]  # fmt: skip


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("program_generator, answer_generator", r"no \[\.\.\.\] list"),
        ("[program_generator, 'answer_generator]", "malformed"),
        ("[__import__('os').system('echo hi'), answer_generator]", "malformed"),
        ("[1, 2]", "malformed"),
    ],
)
def test_parse_plan_rejects_malformed(text: str, message: str) -> None:
    with pytest.raises(ParseError, match=message) as info:
        parse_module_plan(text, "tabmwp")
    assert info.value.raw == text


def test_parse_plan_unknown_name_says_what_was_meant() -> None:
    with pytest.raises(ParseError, match="program_generator") as info:
        parse_module_plan('["program_generater", "answer_generator"]', "tabmwp")
    assert "program_generater" in str(info.value)
    with pytest.raises(ParseError, match="unknown"):
        parse_module_plan('["row_lookup", "solution_generator", "answer_generator"]', "scienceqa")
    with pytest.raises(ParseError):
        parse_module_plan('["question_answering", "answer_generator"]', "tabmwp")


def test_empty_plan_is_invalid_and_falls_back() -> None:
    assert parse_module_plan("[]", "tabmwp") == []
    assert check_plan([], "tabmwp", DEFAULT) == ["empty"]
    plan, parsed, problem = choose_plan("[]", "tabmwp", DEFAULT)
    assert plan == list(DEFAULT_PLANS["tabmwp"]) and parsed == [] and problem
    assert "empty" in problem


def test_default_plans() -> None:
    assert DEFAULT_PLANS["tabmwp"] == (PG, PV, PE, AG)
    assert DEFAULT_PLANS["scienceqa"] == (SG, AG)
    for task, plan in DEFAULT_PLANS.items():
        for settings in (profile_settings("paper", task), profile_settings("default", task)):
            assert check_plan(list(plan), task, settings) == []


def test_unparsable_reply_falls_back_with_reason() -> None:
    plan, parsed, problem = choose_plan("I would use a calculator.", "tabmwp", PAPER)
    assert plan == [PG, PV, PE, AG] and parsed == []
    assert problem is not None and problem.startswith("unparsable plan")
    plan, _, problem = choose_plan("nothing", "scienceqa", SQA_PAPER)
    assert plan == [SG, AG] and problem


def test_rule_answer_generator_present_and_last() -> None:
    assert check_plan([PG, PE], "tabmwp", PAPER) == ["answer_generator"]
    # The published TabMWP check only needs the answer generator somewhere.
    assert check_plan([PG, PE, AG, "table_verbalizer"], "tabmwp", PAPER) == []
    assert "answer_generator" in check_plan([PG, PE, AG, "table_verbalizer"], "tabmwp", DEFAULT)


def test_rule_scienceqa_ends_with_solution_and_answer() -> None:
    for settings in (SQA_PAPER, SQA_DEFAULT):
        assert check_plan([SG, AG], "scienceqa", settings) == []
        assert check_plan(["knowledge_retrieval", AG], "scienceqa", settings) == [
            "ends_with_solution"
        ]
        assert "ends_with_solution" in check_plan([AG, SG], "scienceqa", settings)


@pytest.mark.parametrize(
    "plan",
    [
        [PV, PG, PE, AG],  # verifier before generator
        [PE, PG, AG],  # executor before generator
        [PG, PE, PV, AG],  # executor before verifier
        [PV, PE, AG],  # no generator at all
        [PE, AG],
    ],
)
def test_rule_order_enforced_by_default(plan: list[str]) -> None:
    assert "order" in check_plan(plan, "tabmwp", DEFAULT)
    chosen, parsed, problem = choose_plan(str(plan), "tabmwp", DEFAULT)
    assert chosen == list(DEFAULT_PLANS["tabmwp"]) and parsed == plan
    assert problem is not None and "order" in problem


def test_rule_order_not_enforced_in_paper_profile() -> None:
    # The published ordering check never fires; the paper profile reproduces that.
    assert check_plan([PV, PG, PE, AG], "tabmwp", PAPER) == []
    assert check_plan([PV, PG, PE, AG], "tabmwp", PAPER.model_copy(
        update={"enforce_order": True})) == ["order"]  # fmt: skip


def test_rule_order_accepts_good_orders() -> None:
    for plan in ([PG, PV, PE, AG], [PG, PE, AG], ["row_lookup", PG, "knowledge_retrieval", PE, AG],
                 [PG, PV, "table_verbalizer", PE, AG], [SG, AG]):  # fmt: skip
        assert check_plan(plan, "tabmwp", DEFAULT) == [], plan


def test_rule_duplicates_and_answer_source_default_only() -> None:
    assert check_plan([SG, SG, AG], "tabmwp", DEFAULT) == ["duplicate"]
    assert check_plan([SG, SG, AG], "tabmwp", PAPER) == []
    assert check_plan(["row_lookup", AG], "tabmwp", DEFAULT) == ["answer_source"]
    assert check_plan(["row_lookup", AG], "tabmwp", PAPER) == []
    assert check_plan([PG, PV, AG], "tabmwp", DEFAULT) == ["answer_source"]


def test_rule_unknown_for_the_task() -> None:
    assert check_plan(["query_generator", SG, AG], "tabmwp", DEFAULT) == ["unknown"]


def test_merge_adjacent_generator_and_verifier() -> None:
    assert merge_program_steps([PG, PV, PE, AG]) == [MERGED_PROGRAM, PE, AG]
    assert merge_program_steps(["row_lookup", PG, PV, PE, AG])[1] == MERGED_PROGRAM
    # Not adjacent: both stay, the verifier runs on its own.
    assert merge_program_steps([PG, "table_verbalizer", PV, PE, AG]) == [
        PG, "table_verbalizer", PV, PE, AG
    ]  # fmt: skip
    assert merge_program_steps([PG, PE, AG]) == [PG, PE, AG]
    assert abbreviate(merge_program_steps([PG, PV, PE, AG])) == "PG+PV,PE,AG"


def test_inventory_covers_both_tasks() -> None:
    assert task_modules("tabmwp") == [
        "row_lookup", "column_lookup", "table_verbalizer", "knowledge_retrieval", PG, PV, PE,
        SG, AG,
    ]  # fmt: skip
    assert task_modules("scienceqa") == [
        "query_generator", "search", "image_captioner", "text_detector", "knowledge_retrieval",
        SG, AG,
    ]  # fmt: skip
    for task in ("tabmwp", "scienceqa"):
        for name in task_modules(task):
            spec = MODULES.get(name)
            assert task in spec.tasks and spec.description and spec.update_cache
            assert name in module_descriptions(task)
