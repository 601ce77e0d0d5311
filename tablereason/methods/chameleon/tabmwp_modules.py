"""TabMWP modules: row and column lookup, verbaliser, knowledge, programs, solution, answer.

Row and column lookup ask the model to *name* rows (by number) or columns (by
name) and apply the choice with :meth:`Table.select_rows` /
:meth:`Table.select_columns`; an unparsable reply keeps the table and records the
error (the published code pastes the reply in as the new table). Programs run
only in the sandbox. A table larger than the settings' ``view_rows`` is shown as a
bounded view and programs get it whole as ``df`` (:mod:`.table_view`).

Example:
    >>> from tablereason.table import Table
    >>> table_text(Table.from_records(["Column 1", "Column 2"], [["a", "1"]]))
    'a | 1'
"""

from __future__ import annotations

import re
from collections.abc import Callable

from tablereason.errors import ParseError
from tablereason.methods.chameleon.answers import (
    answer_text,
    extract_tabmwp,
    floatify,
    has_answer,
    match_option,
)
from tablereason.methods.chameleon.session import ChainRun
from tablereason.methods.chameleon.table_view import has_header, program_inputs, shown, table_text
from tablereason.prompts.render import render, template
from tablereason.sandbox.python import run_python
from tablereason.sandbox.verify import generate_and_verify, strip_fences, verify_program

__all__ = ["RUNNERS", "has_header", "parse_columns", "parse_rows", "table_text"]
_LEADING_NUMBER = re.compile(
    r"^\s*\$?\s*(-?(?:\d[\d,]*)?\.?\d+(?:\s*/\s*\d+)?)\s*(?:[A-Za-z%$][\w\s.'$%-]*)?$"
)
_FEEDBACK = "\n# The previous program failed: {feedback}\n# Write a corrected program.\n"


def _shown(run: ChainRun, *, rows: bool = False) -> str:
    """The current table as this run's prompts show it (bounded when it is large)."""
    return shown(run.cache.table, run.cache.question, run.settings.view_rows, rows=rows)


def _inputs(run: ChainRun) -> dict[str, object] | None:
    """The inputs of a program: the whole table as ``df`` when the prompt shows a view."""
    return program_inputs(run.cache.table, run.settings.view_rows)


def question_text(run: ChainRun) -> str:
    """The question with its unit and options appended, as the published prompts show it."""
    cache = run.cache
    text = cache.question
    if cache.unit:
        text += f" (Unit: {cache.unit})"
    if cache.choices:
        text += f" Please select from the following options: {cache.choices}."
    return text


def _context_block(run: ChainRun) -> str:
    return f"\n{run.cache.context}\n" if run.cache.context else ""


def _size(run: ChainRun) -> tuple[int, int]:
    """(lines including the header, columns) of the table a lookup threshold measures."""
    cache = run.cache
    if run.settings.lookup_original_size and cache.table_rows:
        return cache.table_rows, cache.table_columns
    table = cache.table
    return table.num_rows + (1 if has_header(table) else 0), len(table.columns)


def parse_rows(reply: str, num_rows: int) -> list[int] | None:
    """Row positions (0-based) named in a row-lookup reply; None means "all rows".

    Raises:
        ParseError: When the reply names no row of the table.

    Example:
        >>> parse_rows("Rows: 2, 4", 5), parse_rows("all", 3)
        ([1, 3], None)
    """
    first = reply.strip().splitlines()[0] if reply.strip() else ""
    if re.match(r"^\s*(rows?\s*:?\s*)?all\b", first, re.I):
        return None
    numbers = [int(n) for n in re.findall(r"\d+", first)]
    picked = sorted({n - 1 for n in numbers if 1 <= n <= num_rows})
    if not picked:
        raise ParseError(
            f"no row number between 1 and {num_rows} in the reply",
            raw=reply, expected="row numbers separated by commas, or 'all'",
        )  # fmt: skip
    return picked


def parse_columns(reply: str, columns: list[str]) -> list[str] | None:
    """Column names named in a column-lookup reply (table order); None means "all columns".

    Raises:
        ParseError: When the reply names no column of the table.

    Example:
        >>> parse_columns("Price | quantity supplied", ["Price", "Demand", "Quantity supplied"])
        ['Price', 'Quantity supplied']
    """
    first = reply.strip().splitlines()[0] if reply.strip() else ""
    if re.match(r"^\s*(columns?\s*:?\s*)?all\b", first, re.I):
        return None
    wanted = {p.strip().strip("\"'").lower() for p in re.split(r"[|,]", first) if p.strip()}
    picked = [c for c in columns if c.strip().lower() in wanted]
    if not picked:
        raise ParseError(
            f"no column of {columns} in the reply",
            raw=reply, expected="column names separated by ' | ', or 'all'",
        )  # fmt: skip
    return picked


def row_lookup(run: ChainRun) -> None:
    """Keep the rows the model names (skipped for small tables, as published)."""
    settings, cache = run.settings, run.cache
    step = run.step("row_lookup")
    lines, columns = _size(run)
    if lines <= settings.rl_row_threshold or lines * columns <= settings.rl_cell_threshold:
        step.note = f"skipped: {lines} rows x {columns} columns is under the threshold"
        run.record("row_lookup", None, None)
        return run.finish(step)
    prompt = render(
        "chameleon/tabmwp_row_lookup",
        question=question_text(run), table=_shown(run, rows=True), context=_context_block(run),
    )  # fmt: skip
    reply = run.ask(step, prompt, prompt_name="tabmwp_row_lookup",
                    max_tokens=settings.lookup_max_tokens, stop=("\n\n",))  # fmt: skip
    run.record("row_lookup", prompt, reply)
    try:
        rows = parse_rows(reply, cache.table.num_rows)
    except ParseError as err:
        step.error = f"{err}; the table is kept unchanged"
    else:
        step.arguments["rows"] = "all" if rows is None else rows
        if rows is not None:
            cache.table = cache.table.select_rows(rows)
    step.table = cache.table
    run.finish(step)


def column_lookup(run: ChainRun) -> None:
    """Keep the columns the model names (skipped for narrow or small tables)."""
    settings, cache = run.settings, run.cache
    step = run.step("column_lookup")
    lines, columns = _size(run)
    if columns <= settings.cl_column_threshold or lines * columns <= settings.cl_cell_threshold:
        step.note = f"skipped: {lines} rows x {columns} columns is under the threshold"
        run.record("column_lookup", None, None)
        return run.finish(step)
    prompt = render(
        "chameleon/tabmwp_column_lookup",
        question=question_text(run), table=_shown(run), context=_context_block(run),
    )  # fmt: skip
    reply = run.ask(step, prompt, prompt_name="tabmwp_column_lookup",
                    max_tokens=settings.lookup_max_tokens, stop=("\n\n",))  # fmt: skip
    run.record("column_lookup", prompt, reply)
    table = cache.table
    # Headerless tables are shown without their generic names; the model names the
    # columns by their first cells.
    labels = table.columns if has_header(table) else table.rows(1)[0] if len(table) else []
    try:
        picked = parse_columns(reply, list(labels))
    except ParseError as err:
        step.error = f"{err}; the table is kept unchanged"
    else:
        names = None if picked is None else [table.columns[labels.index(p)] for p in picked]
        step.arguments["columns"] = "all" if names is None else names
        if names is not None:
            cache.table = table.select_columns(names)
    step.table = cache.table
    run.finish(step)


def table_verbalizer(run: ChainRun) -> None:
    """Add a plain-language description of the table to the context."""
    cache = run.cache
    step = run.step("table_verbalizer")
    prompt = render(
        "chameleon/tabmwp_verbalizer",
        question=question_text(run), table=_shown(run), context=_context_block(run),
    )  # fmt: skip
    reply = run.ask(step, prompt, prompt_name="tabmwp_verbalizer",
                    max_tokens=run.settings.verbalizer_max_tokens,
                    stop=("\n\nQuestion:",))  # fmt: skip
    run.record("table_verbalizer", prompt, reply)
    cache.add_context("Table description: ", reply, glue=run.settings.glue_context)
    run.finish(step)


def knowledge_retrieval(run: ChainRun) -> None:
    """Add background knowledge bullets to the context."""
    cache = run.cache
    step = run.step("knowledge_retrieval")
    prompt = render(
        "chameleon/tabmwp_knowledge",
        table=_shown(run), context=_context_block(run), question=question_text(run),
    )  # fmt: skip
    reply = run.ask(step, prompt, prompt_name="tabmwp_knowledge",
                    max_tokens=run.settings.knowledge_max_tokens, stop=("\n\nTable:",))  # fmt: skip
    run.record("knowledge_retrieval", prompt, reply)
    cache.add_context("Knowledge:\n", reply, glue=run.settings.glue_context)
    run.finish(step)


def _program_prompt(run: ChainRun) -> str:
    cache = run.cache
    kind = "choice" if cache.choices else "free"
    return render(
        "chameleon/tabmwp_program",
        demos=template(f"chameleon/tabmwp_program_demos_{kind}"),
        regarding=f" regarding {cache.title}" if cache.title else "",
        table=_shown(run),
        context=f"\n\n{cache.context}" if cache.context else "",
        question=question_text(run),
        kind="a string selected from the options in the question" if cache.choices else "a number",
    )


def program_generator(run: ChainRun) -> None:
    """Write one program (no check)."""
    step = run.step("program_generator", kind="program")
    prompt = _program_prompt(run)
    reply = run.ask(step, prompt, prompt_name="tabmwp_program",
                    max_tokens=run.settings.program_max_tokens,
                    stop=("\n\nRead the following table",))  # fmt: skip
    run.record("program_generator", prompt, reply)
    run.cache.program = reply
    step.arguments["program"] = reply
    run.finish(step)


def program_generator_and_verifier(run: ChainRun) -> None:
    """Generate programs until one verifies (the sandbox's generate-verify loop)."""
    settings = run.settings.program
    prompt = _program_prompt(run)

    def generate(temperature: float, feedback: str | None) -> str:
        step = run.step("program_generator_and_verifier", kind="program")
        text = prompt + (_FEEDBACK.format(feedback=feedback) if feedback else "")
        reply = run.ask(step, text, prompt_name="tabmwp_program", temperature=temperature,
                        max_tokens=run.settings.program_max_tokens,
                        stop=("\n\nRead the following table",))  # fmt: skip
        step.arguments = {"temperature": run.door.sent_temperature(temperature), "program": reply}
        run.finish(step)
        return reply

    outcome = generate_and_verify(generate, settings, _inputs(run), run.sandbox)
    steps = [s for s in run.trace.steps if s.name == "program_generator_and_verifier"]
    for step, attempt in zip(steps[-len(outcome.attempts) :], outcome.attempts, strict=True):
        step.arguments["verified"] = attempt.verified
        step.error = attempt.reason
        if attempt.result is not None:
            run.executions[attempt.raw] = attempt.result
    chosen = next((a for a in outcome.attempts if a.verified), outcome.attempts[-1])
    run.cache.program = chosen.raw
    run.cache.program_verified = outcome.verified
    run.record("program_generator_and_verifier", prompt, chosen.raw)


def _execute(run: ChainRun, program: str) -> tuple[object, str | None]:
    settings = run.settings.program
    if program in run.executions:
        result = run.executions[program]
    else:
        code = strip_fences(program) if settings.strip_fences else program
        result = run_python(code, _inputs(run), settings.limits, answer=settings.answer,
                            mode=settings.mode, sandbox=run.sandbox)  # fmt: skip
        run.executions[program] = result
    return result.value, result.error


def program_verifier(run: ChainRun) -> None:
    """Check the current program (assigns ``ans``, runs, non-empty value)."""
    step = run.step("program_verifier", kind="program")
    program = run.cache.program
    if program is None:
        step.error = "no program to verify"
        run.cache.program_verified = False
    else:
        attempt = verify_program(program, run.settings.program, _inputs(run), run.sandbox)
        if attempt.result is not None:
            run.executions[program] = attempt.result
        run.cache.program_verified = attempt.verified
        step.error = attempt.reason
    step.arguments["verified"] = run.cache.program_verified
    run.record("program_verifier", program, run.cache.program_verified)
    run.finish(step)


def program_executor(run: ChainRun) -> None:
    """Run the current program in the sandbox and keep ``ans``."""
    step = run.step("program_executor", kind="program")
    program = run.cache.program
    if program is None:
        step.error = "no program to execute"
        return run.finish(step)
    value, error = _execute(run, program)
    run.cache.program_value = value
    step.arguments = {"program": program, "value": value}
    step.error = error
    run.record("program_executor", program, value)
    run.finish(step)


def solution_generator(run: ChainRun) -> None:
    """Write a worked solution ending in "The answer is ...", retried until it does."""
    cache, settings = run.cache, run.settings
    kind = "choice" if cache.choices else "free"
    prompt = render(
        "chameleon/tabmwp_solution",
        demos=template(f"chameleon/tabmwp_solution_demos_{kind}"),
        regarding=f" regarding {cache.title}" if cache.title else "",
        table=_shown(run),
        context=f"\n\n{cache.context}" if cache.context else "",
        question=question_text(run),
    )
    step = run.step("solution_generator")
    solution = ""
    for attempt in range(settings.sg_patience):
        solution = run.ask(step, prompt, prompt_name="tabmwp_solution",
                           temperature=settings.program.temperature(attempt),
                           max_tokens=settings.solution_max_tokens,
                           stop=("\n\nRead the following table",))  # fmt: skip
        if has_answer(solution, task="tabmwp", paper=run.paper):
            break
    else:
        step.error = f"no stated answer after {settings.sg_patience} attempt(s)"
    cache.solution = solution
    step.arguments["attempts"] = len(step.raw)
    run.record("solution_generator", prompt, solution)
    run.finish(step)


def answer_generator(run: ChainRun) -> None:
    """The program value if there is one, else the answer stated in the solution."""
    cache = run.cache
    step = run.step("answer_generator", kind="answer")
    source = None
    value: object = None
    if cache.program_value is not None:
        value, source = cache.program_value, "program"
    elif cache.solution is not None:
        value, source = extract_tabmwp(cache.solution, paper=run.paper), "solution"
    raw = floatify(value)
    text = raw if isinstance(raw, str) else answer_text(raw)
    if not run.paper and isinstance(raw, str):
        text = _tidy_text(text, cache.choices)
    if run.settings.match_options and cache.choices and text:
        text = match_option(text, cache.choices) or text
    cache.raw_answer, cache.answer = raw, text
    step.arguments = {"source": source, "raw_answer": raw, "answer": text}
    run.record("answer_generator", value, raw)
    run.finish(step)


def _tidy_text(text: str, choices: list[str] | None) -> str:
    """Default profile: a free-text answer that starts with a number keeps just the number."""
    if choices:
        return text
    match = _LEADING_NUMBER.match(text)
    return match.group(1).replace(" ", "") if match else text


RUNNERS: dict[str, Callable[[ChainRun], None]] = {
    "row_lookup": row_lookup,
    "column_lookup": column_lookup,
    "table_verbalizer": table_verbalizer,
    "knowledge_retrieval": knowledge_retrieval,
    "program_generator": program_generator,
    "program_generator_and_verifier": program_generator_and_verifier,
    "program_verifier": program_verifier,
    "program_executor": program_executor,
    "solution_generator": solution_generator,
    "answer_generator": answer_generator,
}
