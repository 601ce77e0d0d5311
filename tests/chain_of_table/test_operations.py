"""Every operation, skip and fallback rule, driven by scripted replies."""

from __future__ import annotations

import pytest
from cot_helpers import fixture_table, load_fixture

from tablereason.errors import LLMError
from tablereason.llm import ScriptedLLM
from tablereason.methods import ChainOfTable
from tablereason.methods.chain_of_table.add_column import add_column_rejection
from tablereason.table import Table

RECORDS = load_fixture("tabfact")
IOWA, PARTY = RECORDS[0], RECORDS[1]
ADD = (
    'We extract the value from column "date" and create a different column "year" for each '
    "row. The datatype is DateType.\nTherefore, the answer is: f_add_column(year). The value: {v}"
)


def run(replies, record=IOWA, profile="paper", task="tabfact", table=None, **kw):
    llm = ScriptedLLM(replies=replies)
    method = ChainOfTable(llm, task=task, profile=profile, **kw)
    pred = method.run(table or fixture_table(record), record["question"])
    return llm, pred


def op_step(pred, name):
    return next(s for s in pred.trace.steps if s.kind == "operation" and s.name == name)


# ---------------------------------------------------------------- add column


def test_paper_add_column_makes_one_call_per_row_after_the_first_three() -> None:
    rows = len(IOWA["rows"])
    per_row = [" 2007 | noise"] * (rows - 3)
    replies = [" f_add_column(year)", ADD.format(v="2007 | 2007 | 2007"), *per_row, " <END>", "no"]
    _llm, pred = run(replies)
    step = op_step(pred, "add_column")
    assert len(step.raw) == 1 + (rows - 3)
    # Per-row values keep the text before the first "|"; all equal, so rule 4 rejects.
    assert step.arguments["values"] == ["2007"] * rows
    assert "identical" in step.note
    assert pred.trace.steps[-1].arguments["chain"] == ["skip f_add_column()"]


def test_paper_add_column_applies_a_varied_column() -> None:
    rows = IOWA["rows"]
    firsts = [r[0].split()[0] for r in rows]
    per_row = [f" {w}" for w in firsts[3:]]
    replies = [
        " f_add_column(month)",
        ADD.format(v=" | ".join(firsts[:3])).replace("year", "month"),
    ]
    llm, pred = run([*replies, *per_row, " <END>", "YES"])
    step = op_step(pred, "add_column")
    assert step.note is None, step.note
    assert step.table.columns[-1] == "month"
    assert [r[-1] for r in step.table.rows()] == firsts
    assert pred.trace.steps[-1].arguments["chain"] == ["f_add_column(month)"]
    prompt = llm.requests[1].as_text()
    assert "Statement: cedar rapids is the site with the earliest date" in prompt
    per_row_prompt = llm.requests[2].as_text()
    assert "Statement:" not in per_row_prompt.split("\n\n")[-1]
    assert per_row_prompt.endswith(
        'Explanation: We extract the value from column "date" and create a different column '
        '"month" for each row. The datatype is DateType.\nTherefore, the answer is: '
        "f_add_column(month). The value:"
    )


def test_paper_add_column_digits_are_masked_in_its_prompt() -> None:
    llm, _ = run([" f_add_column(a)", "junk", " <END>", "NO"], record=PARTY)
    assert "both have _ total members" in llm.requests[1].as_text()


@pytest.mark.parametrize(
    ("name", "values", "reason"),
    [
        ("number of x", ["a", "b"], "number of"),
        ("y", ["a", "a"], "identical"),
        ("y", ["a", " "], "empty"),
        ("c1", ["a", "b"], "already exists"),
        ("y", ["ab", "cd"], "repeats an existing column"),
        ("y", ["a", "zz"], "no existing column contains"),
    ],
)
def test_add_column_rejection_rules(name, values, reason) -> None:
    header, columns = ["c1", "c2"], [["ab", "cd"], ["x", "y"]]
    assert reason in add_column_rejection(header, columns, name, values, paper=True)


def test_add_column_rules_differ_only_where_documented() -> None:
    header, columns = ["Name"], [["Ann Lee", "Bo Ray"]]
    assert add_column_rejection(header, columns, "first", ["ann", "bo"], paper=True)
    assert add_column_rejection(header, columns, "first", ["ann", "bo"], paper=False) is None
    assert add_column_rejection(header, [["x1"]], "y", ["x"], paper=True)
    assert add_column_rejection(header, [["x1"]], "y", ["x"], paper=False) is None
    assert add_column_rejection(header, columns, "name", ["Ann", "Bo"], paper=False)


def test_efficient_add_column_one_call_for_all_rows_with_stop() -> None:
    firsts = [r[0].split()[0] for r in IOWA["rows"]]
    body = "\n".join(f"row {i} : {w}" for i, w in enumerate(firsts, start=1))
    replies = [" f_add_column(month) -> <END>", f" month\n{body}", " yes"]
    llm, pred = run(replies, profile="efficient")
    step = op_step(pred, "add_column")
    assert len(step.raw) == 1 and step.note is None
    assert llm.requests[1].stop == ("\n\n", "*/")
    assert [r[-1] for r in pred.trace.steps[-1].table.rows()] == firsts


def test_efficient_add_column_in_chunks_and_one_repair() -> None:
    firsts = [r[0].split()[0] for r in IOWA["rows"]]
    chunks = [
        " month\n" + "\n".join(f"row {i} : {firsts[i - 1]}" for i in range(1, 6)),
        "row 6 : oops",  # misses rows 7 and 8: repaired once
        "\n".join(f"row {i} : {firsts[i - 1]}" for i in range(6, 9)),
    ]
    llm, pred = run(  # the chain names the column: the prompt gives the name
        [" f_add_column(month) -> <END>", *chunks, " no"],
        profile="efficient",
        add_column_chunk_rows=5,
    )
    step = op_step(pred, "add_column")
    assert len(step.raw) == 3 and "re-ask" in (step.note or "")
    assert llm.requests[2].prompt.endswith("New column: month\n")
    assert "could not be read" in llm.requests[3].prompt
    assert llm.requests[3].prompt.startswith(llm.requests[2].prompt)
    assert pred.trace.steps[-1].table.columns[-1] == "month"


# ---------------------------------------------------------------- select rows / columns


def test_paper_select_row_unites_the_top_two_votes() -> None:
    samples = ["f_row([row 2])"] * 3 + ["f_row([row 5, row 7])"] * 3 + ["f_row([row 1])"] * 2
    llm, pred = run([" f_select_row(x)", samples, " <END>", "YES"])
    assert (llm.requests[1].n, llm.requests[1].temperature) == (8, 0.5)
    step = op_step(pred, "select_row")
    assert step.arguments["rows"] == [2, 5, 7]
    expected = [IOWA["rows"][i] for i in (1, 4, 6)]
    assert step.table.rows() == expected
    assert pred.trace.steps[-1].arguments["chain"] == ["f_select_row(row 1, row 2, row 3)"]


@pytest.mark.parametrize("samples", [["f_row([*])"] * 8, ["f_row([row 99])"] * 8, ["no"] * 8])
def test_paper_select_row_falls_back_to_every_row(samples) -> None:
    _, pred = run([" f_select_row(x)", samples, " <END>", "YES"])
    assert op_step(pred, "select_row").table.num_rows == len(IOWA["rows"])
    assert pred.trace.steps[-1].arguments["chain"] == ["f_select_row(*)"]


def test_paper_select_column_matches_lower_case_names_only() -> None:
    samples = ["f_col([site, Sport])"] * 8
    _, pred = run([" f_select_column(x)", samples, " <END>", "YES"])
    assert pred.trace.steps[-1].table.columns == ["site"]
    _, pred = run([" f_select_column(x)", ["f_col([Site])"] * 8, " <END>", "YES"])
    assert pred.trace.steps[-1].arguments["chain"] == ["f_select_column(*)"]


def test_paper_select_column_prompt_is_json() -> None:
    llm, _ = run([" f_select_column(x)", ["f_col([site])"] * 8, " <END>", "YES"])
    prompt = llm.requests[1].as_text()
    assert '  "columns": ["date", "site", "sport", "winning team", "series"],' in prompt
    assert prompt.endswith(
        "statement : cedar rapids is the site with the earliest date.\n"
        "similar words link to columns :\n"
    )


def test_efficient_select_rows_on_a_bounded_view_and_range_check() -> None:
    header = ["name", "score"]
    rows = [[f"player {i}", str(i)] for i in range(1, 41)]
    table = Table.from_records(header, rows)
    record = {"question": "how many points did player 33 score?"}
    replies = [" f_select_row() -> <END>", "row 33, row 0, row 77])", " 33"]
    llm, pred = run(
        replies, record=record, profile="efficient", task="wikitq", table=table, view_rows=6
    )
    prompt = llm.requests[1].prompt
    assert "row 33 : player 33 | 33" in prompt and "row 20 :" not in prompt
    assert prompt.split("/*")[-1].count("\nrow ") == 6
    assert pred.trace.steps[-1].table.rows() == [["player 33", "33"]]
    assert pred.answer == ["33"]


def test_efficient_select_columns_case_insensitive() -> None:
    replies = [" f_select_column() -> <END>", "Site, SPORT])", " yes"]
    _, pred = run(replies, profile="efficient")
    assert pred.trace.steps[-1].table.columns == ["site", "sport"]


# ---------------------------------------------------------------- group, sort


def test_group_passes_a_count_table_to_the_final_query_and_keeps_the_table() -> None:
    replies = [" f_group_column(x)", "so f_group(winning team).", " <END>", "YES"]
    llm, pred = run(replies)
    step = op_step(pred, "group_column")
    assert step.table.equals(fixture_table(IOWA))
    final = llm.requests[-1].as_text()
    assert "/*\nGroup the rows according to column: winning team.\n" in final
    assert "Group ID | winning team | Count\nGroup 1 | iowa state | 6\n" in final


def test_group_rejects_columns_with_too_many_distinct_values() -> None:
    _, pred = run([" f_group_column(x)", "f_group(date)", " <END>", "YES"])
    assert "too many distinct values" in op_step(pred, "group_column").note
    assert pred.trace.steps[-1].arguments["chain"] == ["skip f_group_column()"]


def test_all_empty_group_column_loses_the_example_in_paper_only() -> None:
    table = Table.from_records(["a", "b"], [["x", ""], ["y", ""]])
    record = {"question": "q"}
    _, pred = run([" f_group_column(b)", "f_group(b)"], record=record, table=table)
    assert pred.error and pred.error.startswith("example lost") and pred.answer == ""
    _, pred = run(
        [" f_group_column(b) -> <END>", " no"],
        record=record,
        table=table,
        profile="efficient",
    )
    assert pred.error is None and pred.answer == "no"
    assert "only empty cells" in op_step(pred, "group_column").note


def test_paper_sort_applies_numerical_only() -> None:
    numerical = 'The datatype is Numerical. f_sort(total), the order is "large to small".'
    _, pred = run([" f_sort_column(x)", numerical, "YES"], record=PARTY)
    totals = [r[-1] for r in pred.trace.steps[-1].table.rows()]
    assert totals == sorted(totals, key=float, reverse=True)
    string = numerical.replace("Numerical", "String")
    _, pred = run([" f_sort_column(x)", string, " <END>", "YES"], record=PARTY)
    assert "not Numerical" in op_step(pred, "sort_column").note


def test_sort_skips_an_already_sorted_column() -> None:
    text = 'The datatype is Numerical. f_sort(game), the order is "small to large".'
    _, pred = run([" f_sort_column(x)", text, " <END>", "YES"], record=RECORDS[5])
    assert "already sorted" in op_step(pred, "sort_column").note


def test_efficient_sort_applies_any_datatype() -> None:
    replies = [" f_sort_column() -> <END>", 'site), the order is "small to large".', " no"]
    _, pred = run(replies, profile="efficient")
    sites = [r[1] for r in pred.trace.steps[-1].table.rows()]
    assert sites == sorted(sites)


# ---------------------------------------------------------------- final query, errors, trace


def test_efficient_final_repairs_once_then_answers() -> None:
    llm, pred = run([" <END> -> f_select_row()", "*])", "maybe", " YES"], profile="efficient")
    assert pred.answer == "yes"
    assert llm.requests[-1].stop == ("\n",) and llm.requests[-1].max_tokens == 8


def test_wikitq_answers_are_lists(wikitq_records) -> None:
    record = wikitq_records[0]
    llm = ScriptedLLM(replies=[" f_select_row() -> <END>", "*])", " January 26, 1995 | x"])
    pred = ChainOfTable(llm, task="wikitq").run(fixture_table(record), record["question"])
    assert pred.answer == ["January 26, 1995", "x"]
    assert "Question: " + record["question"] in llm.requests[-1].prompt


def test_paper_wikitq_lower_cases_table_and_question(wikitq_records) -> None:
    record = wikitq_records[0]
    llm = ScriptedLLM(replies=[" f_select_column(x)", ["f_col([title])"] * 8, " <END>", "Dee"])
    pred = ChainOfTable(llm, task="wikitq", profile="paper").run(
        fixture_table(record), record["question"]
    )
    assert pred.trace.steps[-1].table.columns == ["title"]
    assert pred.answer == ["Dee"]


def test_llm_failure_is_recorded_not_raised() -> None:
    _, pred = run([" f_select_row(x)", LLMError("server down")])
    assert pred.error == "server down" and pred.answer == ""
    assert pred.trace.steps[-1].kind == "error"


def test_trace_records_every_step() -> None:
    samples = ["f_row([row 1, row 2])"] * 8
    _, pred = run([" f_select_row(x)", samples, " <END>", "YES"])
    steps = pred.trace.steps
    assert [s.kind for s in steps] == ["input", "plan", "operation", "plan", "answer"]
    for step in steps[1:]:
        assert step.prompt_name and step.prompt_name.startswith("chain_of_table/")
        assert step.raw and step.usage.requests == 1 and step.usage.prompt_tokens > 0
        assert 0 <= step.duration_s < 60
    assert steps[2].table.num_rows == 2 and steps[2].arguments == {"rows": [1, 2]}
    assert pred.trace.usage.requests == 4
    assert '"kind": "operation"' in pred.trace.to_json()
