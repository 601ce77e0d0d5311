"""Program-aided baselines: Program-of-Thought (Python) and Text-to-SQL, run in the sandbox.

Program-of-Thought asks the model for a Python program that sets ``ans``, with
the table shown as text and passed to the program as the DataFrame ``df``; it
uses the shared generate-verify-retry loop. Text-to-SQL asks for one DuckDB
SELECT over the table ``t`` and answers with the cells of the result. Both
prompts (``prompts/baselines/``) show three worked WikiTQ training examples and end
where the code must follow (``SQL: SELECT``, an opened ```` ```python ```` fence); a retry
states the last failure above that same ending, so the model goes on writing code
rather than echoing the error. The code is read out of the reply with
:mod:`~tablereason.methods.code_extraction` (fences, prose, comments, a second query).
Both record every model call, program and result in a trace and never raise on a bad
model answer: the prediction then carries an empty answer and the error.

Example:
    >>> from tablereason.llm import ScriptedLLM
    >>> from tablereason.table import Table
    >>> table = Table.from_records(["name", "score"], [["ann", "12"], ["bo", "9"]])
    >>> llm = ScriptedLLM(replies=["ans = int(df['score'].astype(int).max())"])
    >>> ProgramOfThought(llm).run(table, "What is the top score?").answer  # doctest: +SKIP
    '12'
"""

from __future__ import annotations

import json
import time
from typing import TYPE_CHECKING, Any, ClassVar

from sqlglot import exp

from tablereason.errors import ConfigurationError, LLMError, SQLError
from tablereason.llm.base import LLM, Request
from tablereason.methods.base import TableMethod
from tablereason.methods.code_extraction import extract_python, extract_sql
from tablereason.prompts.render import render, template_hash, template_names
from tablereason.sandbox.sql import SQLLimits, run_sql
from tablereason.sandbox.verify import RetrySettings, generate_and_verify
from tablereason.trace.record import Prediction, Trace, TraceStep

if TYPE_CHECKING:  # pragma: no cover
    from tablereason.sandbox.python import PythonSandbox
    from tablereason.table.value import Table

SQL_START = "SELECT"
"""The prompt's last word: the model continues the query from there."""
SQL_STOP = (";", "\n\n", "\nQuestion:", "\nError:", "\nThis query failed:")
PROGRAM_STOP = ("\n```",)
_FEEDBACK_CHARS = 300


def code_column_names(columns: list[str]) -> list[str]:
    r"""The names the table's columns have in the code: as the prompt shows them, and unique.

    Both baselines use them: the SQL table ``t`` and the DataFrame ``df`` carry them, and
    Text-to-SQL lists them under the table.

    Line breaks become spaces (as in the table text), an empty name becomes
    ``column <i>``, and a repeated name gets `` (2)``, `` (3)``, ...

    Example:
        >>> code_column_names(["Water level\ncm", "Year", "Year", ""])
        ['Water level cm', 'Year', 'Year (2)', 'column 4']
    """
    names: list[str] = []
    seen: set[str] = set()
    for index, column in enumerate(columns, start=1):
        base = " ".join(column.split()) or f"column {index}"
        name, count = base, 1
        while name in seen:
            count += 1
            name = f"{base} ({count})"
        seen.add(name)
        names.append(name)
    return names


def _one_line(text: str, limit: int = _FEEDBACK_CHARS) -> str:
    """``text`` on one line, at most ``limit`` characters."""
    line = " ".join(text.split())
    return line if len(line) <= limit else line[: limit - 3].rstrip() + "..."


def _answer_text(value: Any) -> str | list[str]:
    if value is None:
        return ""
    if isinstance(value, list):
        return [str(_answer_text(v)) for v in value]
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def _question_text(question: str, unit: str | None, choices: list[str] | None) -> str:
    text = question
    if unit:
        text += f" (Unit: {unit})"
    if choices:
        text += f" Please select from the following options: {choices}."
    return text


class ProgramOfThought(TableMethod):
    """Program-of-Thought over a table (TabMWP, WikiTQ), executed in the sandbox.

    A :class:`~tablereason.methods.base.TableMethod`: ``run(example)``, or
    ``run(table, question, unit=..., choices=..., title=...)``.

    Args:
        llm: Any backend of the LLM protocol.
        settings: Retry and verification settings (``RetrySettings.paper()`` for the
            Chameleon program generator and verifier behaviour).
        sandbox: Sandbox pool; the shared default when None.
        max_tokens: Completion budget per program.
        max_rows: Rows of the table shown in the prompt (the program sees all rows).

    Example:
        >>> from tablereason.llm import ScriptedLLM
        >>> ProgramOfThought(ScriptedLLM(replies=[])).settings.patience
        3
    """

    name: ClassVar[str] = "program_of_thought"

    def __init__(
        self,
        llm: LLM,
        settings: RetrySettings | None = None,
        sandbox: PythonSandbox | None = None,
        max_tokens: int = 256,
        max_rows: int | None = 60,
    ) -> None:
        self.llm = llm
        self.settings = settings or RetrySettings()
        self.sandbox = sandbox
        self.max_tokens = max_tokens
        self.max_rows = max_rows

    def config(self) -> dict[str, Any]:
        """Settings and a hash of every prompt template, for run configurations."""
        return {
            "method": self.name,
            "settings": {
                "patience": self.settings.patience,
                "feedback": self.settings.feedback,
                "extract": self.settings.strip_fences,
                "max_tokens": self.max_tokens,
                "max_rows": self.max_rows,
            },
            "prompts": {n: template_hash(n) for n in template_names("baselines")},
        }

    def prompt(
        self,
        table: Table,
        question: str,
        *,
        title: str | None = None,
        unit: str | None = None,
        choices: list[str] | None = None,
        feedback: str | None = None,
    ) -> str:
        """The program-generation prompt; it ends inside an opened ```` ```python ```` fence.

        Below the table, a ``Columns of df:`` line lists the DataFrame's column names as
        Python strings (see :func:`code_column_names`).

        Args:
            table: The table (shown as text, at most ``max_rows`` rows).
            question: The question.
            title: A title for the table (TabMWP).
            unit: The answer's unit, shown after the question.
            choices: Options to pick the answer from.
            feedback: Why the last program failed (a retry), stated above the fence.
        """
        if choices:
            kind = "one of the options given in the question"
        elif unit:
            kind = "a number"
        else:
            kind = "a number or text from the table"
        repair = (
            render("baselines/program_of_thought_repair", error=_one_line(feedback)) + "\n"
            if feedback
            else ""
        )
        return render(
            "baselines/program_of_thought",
            kind=kind,
            regarding=f" ({title})" if title else "",
            table=table.to_pipe(max_rows=self.max_rows),
            columns=", ".join(
                json.dumps(n, ensure_ascii=False) for n in code_column_names(table.columns)
            ),
            question=_question_text(question, unit, choices),
            repair=repair,
        )

    def answer(
        self,
        table: Table,
        question: str,
        *,
        title: str | None = None,
        unit: str | None = None,
        choices: list[str] | None = None,
        **options: Any,
    ) -> Prediction:
        """Generate, verify and run programs until one yields an answer.

        Args:
            table: The table (the program gets all of it as ``df``).
            question: The question.
            title: A title for the table (TabMWP).
            unit: The answer's unit, shown after the question.
            choices: Options to pick the answer from.
            **options: None other is known; any raises :class:`ConfigurationError`.

        Raises:
            ConfigurationError: For an unknown option.
        """
        if options:
            raise ConfigurationError(
                f"{self.name} takes no options {sorted(options)}; it knows title, unit, choices"
            )
        trace = Trace(method=self.name, question=question)

        def generate(temperature: float, feedback: str | None) -> str:
            text = self.prompt(
                table, question, title=title, unit=unit, choices=choices, feedback=feedback
            )
            started = time.perf_counter()
            completion = self.llm.complete(
                Request(
                    prompt=text,
                    temperature=temperature,
                    max_tokens=self.max_tokens,
                    stop=PROGRAM_STOP,
                    call_site="baselines/program_of_thought",
                )
            )
            trace.add(TraceStep(
                kind="program", name="program_generator", prompt_name="program_of_thought",
                raw=[completion.text], arguments={"temperature": temperature},
                usage=completion.usage, duration_s=time.perf_counter() - started,
            ))  # fmt: skip
            if not self.settings.strip_fences:  # the reference runs the reply as it is
                return completion.text
            return extract_python(completion.text, answer=self.settings.answer)

        frame = table.to_pandas()
        frame.columns = code_column_names(table.columns)
        try:
            outcome = generate_and_verify(generate, self.settings, {"df": frame}, self.sandbox)
        except LLMError as exc:
            return Prediction(answer="", trace=trace, error=str(exc))
        program_steps = [s for s in trace.steps if s.kind == "program"]
        for step, attempt in zip(program_steps, outcome.attempts, strict=False):
            step.arguments["program"] = attempt.program
            step.error = attempt.reason
            if attempt.result is not None:
                step.arguments["value"] = attempt.result.value
                step.note = attempt.result.stdout or None
        answer = _answer_text(outcome.value)
        trace.add(TraceStep(
            kind="answer", name="program_executor",
            arguments={"program": outcome.program, "verified": outcome.verified,
                       "value": outcome.value},
            error=None if outcome.verified else "no program verified; kept the last one",
        ))  # fmt: skip
        error = None if outcome.verified else outcome.attempts[-1].reason
        return Prediction(answer=answer, trace=trace, error=error)


class TextToSQL(TableMethod):
    """Text-to-SQL over a table (WikiTQ): one guarded SELECT, retried with the error as feedback.

    A :class:`~tablereason.methods.base.TableMethod`: ``run(example)`` or
    ``run(table, question)``.

    Args:
        llm: Any backend of the LLM protocol.
        patience: Most queries to ask for.
        limits: SQL limits (time, memory, rows).
        max_rows: Rows shown in the prompt.
        max_tokens: Completion budget per query.

    Example:
        >>> from tablereason.llm import ScriptedLLM
        >>> TextToSQL(ScriptedLLM(replies=[])).patience
        3
    """

    name: ClassVar[str] = "text_to_sql"

    def __init__(
        self,
        llm: LLM,
        patience: int = 3,
        limits: SQLLimits | None = None,
        max_rows: int | None = 20,
        max_tokens: int = 256,
    ) -> None:
        self.llm = llm
        self.patience = max(1, patience)
        self.limits = limits or SQLLimits()
        self.max_rows = max_rows
        self.max_tokens = max_tokens

    def config(self) -> dict[str, Any]:
        """Settings and a hash of every prompt template, for run configurations."""
        return {
            "method": self.name,
            "settings": {
                "patience": self.patience,
                "max_rows": self.max_rows,
                "max_tokens": self.max_tokens,
            },
            "prompts": {n: template_hash(n) for n in template_names("baselines")},
        }

    def prompt(
        self,
        table: Table,
        question: str,
        *,
        failed_query: str | None = None,
        error: str | None = None,
    ) -> str:
        """The query-generation prompt; it ends with ``SQL: SELECT``.

        Below the table, a ``Columns:`` line lists the column names as SQL identifiers
        (see :func:`code_column_names`), the names the query runs against.

        Args:
            table: The table ``t`` (shown as text, at most ``max_rows`` rows).
            question: The question.
            failed_query: The last query, when it failed (a retry).
            error: Why it failed, stated with the query above ``SQL: SELECT``.
        """
        repair = ""
        if error is not None:
            repair = render(
                "baselines/text_to_sql_repair",
                query=_one_line(failed_query or "") or "(no query in the reply)",
                error=_one_line(error),
            ) + "\n"  # fmt: skip
        columns = ", ".join(
            exp.to_identifier(name, quoted=True).sql(dialect="duckdb")
            for name in code_column_names(table.columns)
        )
        return render(
            "baselines/text_to_sql",
            caption=f" ({table.caption})" if table.caption else "",
            table=table.to_pipe(max_rows=self.max_rows, caption=False),
            columns=columns,
            question=question,
            repair=repair,
        )

    def answer(self, table: Table, question: str, **options: Any) -> Prediction:
        """Ask for a query, run it in the SQL sandbox, answer with the result cells.

        A query that does not parse, is refused or fails (any
        :class:`~tablereason.errors.SQLError`), or returns no rows, is recorded on its
        trace step and asked for again with the error (up to ``patience`` queries); when
        none works the prediction has an empty answer and the last error. Only a model
        failure (:class:`~tablereason.errors.LLMError`) ends the run early, also as an
        error on the prediction.

        Raises:
            ConfigurationError: For any option (Text-to-SQL takes none).
        """
        if options:
            raise ConfigurationError(f"{self.name} takes no options, got {sorted(options)}")
        trace = Trace(method=self.name, question=question)
        frame = table.to_pandas().astype(str)
        frame.columns = code_column_names(table.columns)
        query: str | None = None
        feedback: str | None = None
        last_error = "no query was generated"
        for attempt in range(self.patience):
            text = self.prompt(table, question, failed_query=query, error=feedback)
            started = time.perf_counter()
            try:
                completion = self.llm.complete(Request(
                    prompt=text, temperature=0.0 if attempt == 0 else 0.3,
                    max_tokens=self.max_tokens, stop=SQL_STOP, call_site="baselines/text_to_sql",
                ))  # fmt: skip
            except LLMError as exc:
                return Prediction(answer="", trace=trace, error=str(exc))
            query = extract_sql(completion.text, prefix=SQL_START)
            step = trace.add(TraceStep(
                kind="sql", name="text_to_sql", prompt_name="text_to_sql",
                raw=[completion.text], arguments={"query": query, "attempt": attempt + 1},
                usage=completion.usage,
            ))  # fmt: skip
            try:
                result = run_sql({"t": frame}, query, self.limits)
            except SQLError as exc:
                step.error = last_error = str(exc)
                step.duration_s = time.perf_counter() - started
                feedback = last_error
                continue
            step.duration_s = time.perf_counter() - started
            cells = [_answer_text(row[0]) for row in result.rows if row and row[0] is not None]
            step.arguments["rows"] = [list(map(str, row)) for row in result.rows[:20]]
            if not cells:
                step.error = last_error = "the query returned no rows"
                feedback = last_error
                continue
            answer = [str(c) for c in cells]
            trace.add(TraceStep(kind="answer", name="sql_result", arguments={"answer": answer}))
            return Prediction(answer=answer, trace=trace)
        return Prediction(answer="", trace=trace, error=last_error)
