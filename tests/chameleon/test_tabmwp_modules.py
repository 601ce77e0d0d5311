"""TabMWP modules with a scripted model: lookups, context, programs, solution, answer."""

from __future__ import annotations

from typing import Any

import pytest
from support.chameleon_replies import routed

from tablereason.datasets.example import Example
from tablereason.errors import ParseError
from tablereason.methods.chameleon import Chameleon
from tablereason.methods.chameleon.inventory import MODULES
from tablereason.methods.chameleon.session import ChainRun
from tablereason.methods.chameleon.tabmwp_modules import RUNNERS, parse_columns, parse_rows
from tablereason.sandbox import PythonSandbox


def make_run(example: Example, llm: Any, box: PythonSandbox | None = None,
             profile: str = "default", **overrides: Any) -> ChainRun:  # fmt: skip
    method = Chameleon(llm, "tabmwp", profile, sandbox=box, **overrides)
    return ChainRun(llm, method.settings, method.make_cache(example), sandbox=box)


def run_module(run: ChainRun, name: str) -> dict[str, Any]:
    """Run one module and check it changed only the cache fields it declares."""
    before = run.cache.state()
    RUNNERS[name](run)
    after = run.cache.state()
    changed = {k for k in before if before[k] != after[k]}
    declared = set(MODULES.get(name).update_cache) if name in MODULES else {
        "program", "program_verified"}  # fmt: skip
    assert changed <= declared, (name, changed, declared)
    return {k: after[k] for k in changed}


def test_row_lookup_thresholds(tabmwp_examples: dict[str, Example]) -> None:
    coins = tabmwp_examples["16"]  # 9 lines x 2 columns = 18 cells
    llm = routed(row_lookup=["Rows: 2, 4"])
    run = make_run(coins, llm)  # 18-cell threshold (paper and published runs): skipped
    assert run_module(run, "row_lookup") == {}
    assert llm.requests == [] and "skipped" in (run.trace.steps[-1].note or "")
    run = make_run(coins, llm, rl_cell_threshold=12)  # the published code's default
    changed = run_module(run, "row_lookup")
    assert changed["table"] == [["Name", "Number of coins"], ["Camilla", "94"], ["Mary", "84"]]
    assert run.trace.steps[-1].arguments["rows"] == [1, 3]
    assert run.cache.records["row_lookup:output"] == "Rows: 2, 4"
    assert "row 2 : Camilla | 94" in llm.requests[0].as_text()
    # Few rows: skipped whatever the cells.
    run = make_run(coins, llm, rl_cell_threshold=0, rl_row_threshold=9)
    assert run_module(run, "row_lookup") == {}


def test_row_lookup_all_and_unparsable_keep_the_table(tabmwp_examples: dict[str, Example]) -> None:
    coins = tabmwp_examples["16"]
    for reply in ("all", "I think the table is fine.", "Rows: 40, 41"):
        run = make_run(coins, routed(row_lookup=[reply]), rl_cell_threshold=12)
        assert run_module(run, "row_lookup") == {}
        step = run.trace.steps[-1]
        assert step.raw == [reply]
        assert (step.error is None) == (reply == "all")
        assert step.table is run.cache.table


def test_parse_rows_and_columns() -> None:
    assert parse_rows("3, 1, 3", 4) == [0, 2]
    assert parse_rows("All rows are needed", 4) is None
    with pytest.raises(ParseError):
        parse_rows("", 4)
    assert parse_columns("all", ["a", "b"]) is None
    assert parse_columns("B, a", ["a", "b", "c"]) == ["a", "b"]
    with pytest.raises(ParseError):
        parse_columns("Price", ["a", "b"])


def test_column_lookup_names_and_thresholds(tabmwp_examples: dict[str, Example]) -> None:
    chocolate = tabmwp_examples["1597"]  # headerless, 6 lines x 3 columns
    run = make_run(chocolate, routed(column_lookup=["x"]))
    assert run_module(run, "column_lookup") == {}  # 18 cells: skipped
    run = make_run(chocolate, routed(column_lookup=["Country | 2002"]), cl_cell_threshold=12)
    changed = run_module(run, "column_lookup")
    assert changed["table"][1] == ["Country", "2002"]
    assert changed["table"][0] == ["Column 1", "Column 2"]
    run = make_run(chocolate, routed(column_lookup=["Price"]), cl_cell_threshold=12)
    assert run_module(run, "column_lookup") == {}
    assert "kept unchanged" in (run.trace.steps[-1].error or "")


def test_column_lookup_measures_original_size_in_paper(tabmwp_examples: dict[str, Example]) -> None:
    chocolate = tabmwp_examples["1597"]
    for profile, expect_call in (("paper", True), ("default", False)):
        llm = routed(row_lookup=["1, 2"], column_lookup=["all"])
        run = make_run(chocolate, llm, profile=profile, rl_cell_threshold=12, cl_cell_threshold=8)
        run_module(run, "row_lookup")  # two rows left: 2 x 3 = 6 cells
        run_module(run, "column_lookup")
        sites = [r.call_site for r in llm.requests]
        assert ("chameleon/column_lookup" in sites) == expect_call, profile


@pytest.mark.parametrize(("profile", "expected"), [
    ("paper", "Table description: Eight friends.Knowledge:\n- The mean is the average."),
    ("default", "Table description: Eight friends.\n\nKnowledge:\n- The mean is the average."),
])  # fmt: skip
def test_context_fragments(
    tabmwp_examples: dict[str, Example], profile: str, expected: str
) -> None:
    llm = routed(table_verbalizer=["Eight friends."],
                 knowledge_retrieval=["- The mean is the average."])  # fmt: skip
    run = make_run(tabmwp_examples["16"], llm, profile=profile)
    run_module(run, "table_verbalizer")
    run_module(run, "knowledge_retrieval")
    assert run.cache.context == expected
    assert "Knowledge:" not in llm.requests[0].as_text().split("Table description:")[-1]
    assert "Eight friends." in llm.requests[1].as_text()


GOOD = "coins = [76, 94, 86, 84, 80, 83, 82, 87]\nans = sum(coins) / len(coins)"


def test_merged_generate_verify_loop_retries(tabmwp_examples: dict[str, Example],
                                             box: PythonSandbox) -> None:  # fmt: skip
    llm = routed(program_generator_and_verifier=["ans=", "print(3)", GOOD])
    run = make_run(tabmwp_examples["16"], llm, box)
    run_module(run, "program_generator_and_verifier")
    steps = [s for s in run.trace.steps if s.name == "program_generator_and_verifier"]
    assert [s.arguments["verified"] for s in steps] == [False, False, True]
    assert [s.arguments["temperature"] for s in steps] == [0.0, 0.3, 0.6]
    assert "previous program failed" in llm.requests[1].as_text()
    assert run.cache.program == GOOD and run.cache.program_verified is True
    run_module(run, "program_executor")
    assert run.cache.program_value == 84
    run_module(run, "answer_generator")
    assert run.cache.answer == "84" and run.cache.raw_answer == 84.0


def test_merged_loop_paper_settings(tabmwp_examples: dict[str, Example],
                                    box: PythonSandbox) -> None:  # fmt: skip
    fenced = f"```python\n{GOOD}\n```"
    llm = routed(program_generator_and_verifier=[fenced, GOOD])
    run = make_run(tabmwp_examples["16"], llm, box, profile="paper")
    run_module(run, "program_generator_and_verifier")
    temps = [s.arguments["temperature"] for s in run.trace.steps]
    assert temps == [0.0, 0.1]  # fences are not stripped; retries at a fixed 0.1
    assert "previous program failed" not in llm.requests[1].as_text()
    assert run.cache.program == GOOD


def test_loop_keeps_last_program_when_none_verifies(tabmwp_examples: dict[str, Example],
                                                    box: PythonSandbox) -> None:  # fmt: skip
    llm = routed(program_generator_and_verifier=["x = 1", "x = 2", "ans = None"])
    run = make_run(tabmwp_examples["16"], llm, box)
    run_module(run, "program_generator_and_verifier")
    assert run.cache.program == "ans = None" and run.cache.program_verified is False
    run_module(run, "program_executor")
    run_module(run, "answer_generator")
    assert run.cache.answer == "" and run.cache.raw_answer is None


def test_standalone_generator_verifier_executor(tabmwp_examples: dict[str, Example],
                                                box: PythonSandbox) -> None:  # fmt: skip
    llm = routed(program_generator=["ans = 1 / 0"])
    run = make_run(tabmwp_examples["16"], llm, box)
    run_module(run, "program_generator")
    assert len(llm.requests) == 1 and run.cache.program == "ans = 1 / 0"
    assert "Make sure that 'ans' is a number" in llm.requests[0].as_text()
    run_module(run, "program_verifier")
    assert run.cache.program_verified is False
    assert "ZeroDivisionError" in (run.trace.steps[-1].error or "")
    run_module(run, "program_executor")
    assert run.cache.program_value is None and run.trace.steps[-1].error


def test_executor_without_program_records_it(tabmwp_examples: dict[str, Example]) -> None:
    run = make_run(tabmwp_examples["16"], routed())
    assert run_module(run, "program_executor") == {}
    assert run.trace.steps[-1].error == "no program to execute"


def test_choice_program_prompt(tabmwp_examples: dict[str, Example], box: PythonSandbox) -> None:
    llm = routed(program_generator=["ans = 'Australia'"])
    run = make_run(tabmwp_examples["1597"], llm, box)
    run_module(run, "program_generator")
    prompt = llm.requests[0].as_text()
    assert "regarding Chocolate consumption per capita (kg)" in prompt
    assert "Please select from the following options: ['Switzerland'," in prompt
    assert prompt.endswith("a string selected from the options in the question")


def test_solution_generator_retries_until_answer(tabmwp_examples: dict[str, Example]) -> None:
    # "the" in lower case: the published check is case-sensitive, ours is not.
    replies = ["So the answer is 84", "Adding up gives 672 and 672 / 8 = 84. The answer is 84."]
    for profile, calls in (("default", 1), ("paper", 2)):
        llm = routed(solution_generator=list(replies))
        run = make_run(tabmwp_examples["16"], llm, profile=profile)
        run_module(run, "solution_generator")
        assert len(llm.requests) == calls, profile
        run_module(run, "answer_generator")
        assert run.cache.answer == "84", profile


def test_solution_generator_gives_up(tabmwp_examples: dict[str, Example]) -> None:
    llm = routed(solution_generator=["hmm", "still thinking"])
    run = make_run(tabmwp_examples["16"], llm)
    run_module(run, "solution_generator")
    assert run.trace.steps[-1].error and run.cache.solution == "still thinking"


@pytest.mark.parametrize(("profile", "solution", "answer", "raw"), [
    ("paper", "So 80 + 4 = 84. The answer is 84.", "84", 84.0),
    ("paper", "The answer is 12. The answer is 13.", "12. The answer is 13",
     "12. The answer is 13"),
    ("paper", "The answer is yes", "ye", "ye"),
    ("default", "The answer is 12. The answer is 13.", "13", 13.0),
    ("default", "The answer is 84 coins.", "84", "84 coins"),
    ("default", "The answer is $4,656.", "4,656", "$4,656"),
])  # fmt: skip
def test_answer_generator_from_solution(tabmwp_examples: dict[str, Example], profile: str,
                                        solution: str, answer: str, raw: Any) -> None:  # fmt: skip
    run = make_run(tabmwp_examples["16"], routed(), profile=profile)
    run.cache.solution = solution
    run_module(run, "answer_generator")
    assert run.cache.answer == answer and run.cache.raw_answer == raw


def test_answer_generator_matches_options_by_default(tabmwp_examples: dict[str, Example]) -> None:
    for profile, expected in (("default", "no"), ("paper", "false")):
        run = make_run(tabmwp_examples["416"], routed(), profile=profile)
        run.cache.program_value = False
        run_module(run, "answer_generator")
        assert run.cache.answer == expected and run.cache.raw_answer is False
    run = make_run(tabmwp_examples["1597"], routed())
    run.cache.solution = "Australia had 4 kg. The answer is australia."
    run_module(run, "answer_generator")
    assert run.cache.answer == "Australia"


def test_program_value_wins_over_solution(tabmwp_examples: dict[str, Example]) -> None:
    run = make_run(tabmwp_examples["16"], routed())
    run.cache.solution, run.cache.program_value = "The answer is 3.", [7, 8]
    run_module(run, "answer_generator")
    assert run.cache.answer == "7" and run.trace.steps[-1].arguments["source"] == "program"
