from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tablereason.errors import ParseError
from tablereason.methods.rewoo.parse import (
    PlanStep,
    execution_order,
    parse_worker_plan,
    parse_worker_plan_paper,
    references,
    split_call,
)


def test_standard_plan() -> None:
    text = (
        "Plan: Search for the owner of Hungry Horse.\n"
        "#E1 = Wikipedia[Hungry Horse]\n"
        "Plan: Read the owner.\n"
        "#E2 = LLM[Who owns Hungry Horse? Given context: #E1]\n"
    )
    plan = parse_worker_plan(text)
    assert plan.format == "text" and not plan.malformed and not plan.warnings
    assert [(s.var, s.tool, s.input) for s in plan.steps] == [
        ("#E1", "Wikipedia", "Hungry Horse"),
        ("#E2", "LLM", "Who owns Hungry Horse? Given context: #E1"),
    ]
    assert plan.steps[1].plan == "Read the owner."
    assert plan.steps[1].depends_on == ["#E1"]
    assert plan.plans == ["Search for the owner of Hungry Horse.", "Read the owner."]


def test_twelve_steps_keep_e1_and_e10_apart() -> None:
    lines = []
    for i in range(1, 13):
        lines.append(f"Plan: step {i}")
        ref = " and #E10" if i == 11 else (" and #E1" if i == 12 else "")
        lines.append(f"#E{i} = Calculator[{i} + {i}{ref}]")
    plan = parse_worker_plan("\n".join(lines))
    assert [s.var for s in plan.steps] == [f"#E{i}" for i in range(1, 13)]
    assert plan.step("#E11").depends_on == ["#E10"]  # type: ignore[union-attr]
    assert plan.step("#E12").depends_on == ["#E1"]  # type: ignore[union-attr]
    assert plan.step("#E10").input == "10 + 10"  # type: ignore[union-attr]
    assert references("#E1 #E10 #E100 #E1") == ["#E1", "#E10", "#E100"]


def test_forward_references_order_execution() -> None:
    text = (
        "Plan: a\n#E1 = LLM[combine #E3 and #E2]\nPlan: b\n#E2 = Calculator[1+1]\n#E3 = LLM[x #E2]"
    )
    plan = parse_worker_plan(text)
    assert plan.step("#E1").depends_on == ["#E3", "#E2"]  # type: ignore[union-attr]
    assert execution_order(plan.steps) == [["#E2"], ["#E3"], ["#E1"]]
    assert plan.step("#E3").plan == "b"  # type: ignore[union-attr]


def test_spacing_case_bullets_and_bold() -> None:
    text = (
        "  **Plan 1:** look it up\n"
        "- #e1 := wikipedia [ Oslo ]\n"
        "2. PLAN: then ask\n"
        "  # E2 : llm[what is #e1 ?]\n"
        "Step 3: Plan: compute\n"
        "#E3=Calculator[2*3]"
    )
    plan = parse_worker_plan(text)
    assert [(s.var, s.tool, s.input) for s in plan.steps] == [
        ("#E1", "wikipedia", "Oslo"),
        ("#E2", "llm", "what is #e1 ?"),
        ("#E3", "Calculator", "2*3"),
    ]
    assert plan.plans == ["look it up", "then ask", "compute"]
    # References are written "#E<n>"; a lower-case "#e1" is not one.
    assert plan.step("#E2").depends_on == []  # type: ignore[union-attr]


def test_plan_and_evidence_on_one_line_and_nested_brackets() -> None:
    text = (
        "Plan: compare them. #E1 = LLM[Which is older, [A] or [B]?] \n"
        "Plan: x #E2 = Calculator[(1+2)*3]"
    )
    plan = parse_worker_plan(text)
    assert [s.input for s in plan.steps] == ["Which is older, [A] or [B]?", "(1+2)*3"]
    assert plan.plans == ["compare them.", "x"]


def test_multiline_input_and_unclosed_bracket() -> None:
    plan = parse_worker_plan("#E1 = LLM[first line\nsecond line]\n#E2 = Wikipedia[Oslo\nPlan: next")
    assert plan.steps[0].input == "first line\nsecond line"
    assert plan.steps[1].input == "Oslo"
    assert any("no closing" in w for w in plan.warnings)


def test_malformed_lines_are_kept_not_fatal() -> None:
    text = "Sure! Here is my plan.\nPlan: look\n#E1 Wikipedia[Oslo]\n#E2 = Wikipedia[Oslo]\nThanks"
    plan = parse_worker_plan(text)
    assert [s.var for s in plan.steps] == ["#E2"]
    assert plan.malformed == ["Sure! Here is my plan.", "#E1 Wikipedia[Oslo]", "Thanks"]


def test_call_without_tool_form_is_literal_evidence() -> None:
    plan = parse_worker_plan("#E1 = the answer is 4")
    assert plan.steps[0].tool == "" and plan.steps[0].input == "the answer is 4"


def test_duplicates_undefined_and_self_references_warn() -> None:
    plan = parse_worker_plan("#E1 = LLM[a]\n#E2 = LLM[#E7 and #E2]\n#E1 = LLM[b]")
    assert [(s.var, s.input) for s in plan.steps] == [("#E2", "#E7 and #E2"), ("#E1", "b")]
    assert plan.step("#E2").depends_on == []  # type: ignore[union-attr]
    joined = " | ".join(plan.warnings)
    assert "defined twice" in joined and "#E7" in joined and "itself" in joined


def test_cycles_still_get_an_order() -> None:
    plan = parse_worker_plan("#E1 = LLM[#E2]\n#E2 = LLM[#E1]\n#E3 = Calculator[1]")
    assert execution_order(plan.steps) == [["#E3"], ["#E1"], ["#E2"]]


def test_json_fallback_list_and_object() -> None:
    items = [
        {"plan": "look", "tool": "Wikipedia", "input": "Oslo"},
        {"Plan": "ask", "Tool": "LLM", "Input": "about #E1", "evidence": "#E2"},
    ]
    for text in (
        "Here you go:\n" + json.dumps(items),
        "```json\n" + json.dumps({"steps": items}) + "\n```",
    ):
        plan = parse_worker_plan(text)
        assert plan.format == "json"
        assert [(s.var, s.tool, s.input, s.plan) for s in plan.steps] == [
            ("#E1", "Wikipedia", "Oslo", "look"),
            ("#E2", "LLM", "about #E1", "ask"),
        ]
        assert plan.steps[1].depends_on == ["#E1"]


def test_nothing_readable() -> None:
    plan = parse_worker_plan("I don't know. {not json")
    assert plan.format == "none" and plan.steps == [] and plan.malformed


def test_split_call() -> None:
    assert split_call("Wikipedia [Oslo]") == ("Wikipedia", "Oslo", True)
    assert split_call("no tool here") == ("", "no tool here", True)


# ------------------------------------------------------------------ paper parser


def test_paper_parser_quirks() -> None:
    text = "\n".join(
        ["Plan: p"]
        + [f"#E{i} = LLM[q{i}]" for i in range(1, 12)]
        + [" Plan: indented", "  #E12 = LLM[x]", "#E1 = LLM[again]", "plan: lower"]
    )
    plan = parse_worker_plan_paper(text)
    assert plan.plans == ["Plan: p"]
    assert [s.var for s in plan.steps] == [f"#E{i}" for i in range(1, 12)]
    assert plan.steps[0].call == "LLM[again]"  # overwritten, first position kept
    assert plan.steps[9].call == "No evidence found"  # #E10
    assert plan.steps[10].call == "No evidence found"  # #E11
    assert " Plan: indented" in plan.malformed and "plan: lower" in plan.malformed


def test_paper_parser_crashes_without_equals() -> None:
    with pytest.raises(ParseError) as info:
        parse_worker_plan_paper("Plan: a\n#E1 Wikipedia[x]")
    assert info.value.raw.startswith("Plan: a")


# ------------------------------------------------------------------ property


_TOOLS = ["Wikipedia", "LLM", "Calculator", "Table"]


@st.composite
def plans(draw: st.DrawFn) -> tuple[str, list[tuple[str, str, list[str]]]]:
    n = draw(st.integers(min_value=1, max_value=15))
    lines: list[str] = []
    expected = []
    for i in range(1, n + 1):
        tool = draw(st.sampled_from(_TOOLS))
        refs = draw(
            st.lists(st.integers(1, n).filter(lambda r, i=i: r != i), max_size=2, unique=True)
        )
        words = draw(
            st.lists(st.sampled_from(["alpha", "beta", "1", "x [y]", "z?"]), min_size=1, max_size=3)
        )
        body = " ".join(words + [f"#E{r}" for r in refs])
        eq = draw(st.sampled_from(["=", " = ", "  =", ":="]))
        pad = draw(st.sampled_from(["", " ", "  "]))
        plan_word = draw(st.sampled_from(["Plan", "plan", "PLAN"]))
        lines.append(f"{plan_word}: do step {i}")
        lines.append(f"{pad}#E{i}{eq}{tool}[{body}]")
        expected.append((tool, body, [f"#E{r}" for r in refs]))
    return "\n".join(lines), expected


@settings(max_examples=100, deadline=None)
@given(plans())
def test_generated_plans_round_trip(case: tuple[str, list[tuple[str, str, list[str]]]]) -> None:
    text, expected = case
    plan = parse_worker_plan(text)
    assert not plan.malformed and plan.format == "text"
    assert [(s.tool, s.input, s.depends_on) for s in plan.steps] == expected
    waves = execution_order(plan.steps)
    seen: set[str] = set()
    for wave in waves:
        for var in wave:
            step = plan.step(var)
            assert step is not None
            # Every dependency runs first unless the step is part of a cycle.
            if not set(step.depends_on) <= seen:
                assert len(wave) == 1
        seen.update(wave)
    assert seen == {f"#E{i}" for i in range(1, len(expected) + 1)}


@settings(max_examples=100, deadline=None)
@given(st.text(max_size=200))
def test_parser_never_raises(text: str) -> None:
    parse_worker_plan(text)
    assert all(isinstance(s, PlanStep) for s in parse_worker_plan(text).steps)
