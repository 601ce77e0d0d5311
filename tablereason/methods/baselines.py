"""Program-aided baselines: Program-of-Thought (Python) and Text-to-SQL, run in the sandbox.

Program-of-Thought asks the model for a Python program that sets ``ans``, with
the table shown as text and passed to the program as the DataFrame ``df``; it
uses the shared generate-verify-retry loop. Text-to-SQL asks for one DuckDB
SELECT over the table ``t`` and answers with the cells of the result. Both
record every model call, program and result in a trace and never raise on a bad
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

import time
from typing import TYPE_CHECKING, Any

from tablereason.errors import LLMError, SQLError
from tablereason.llm.base import LLM, Request
from tablereason.sandbox.sql import SQLLimits, run_sql
from tablereason.sandbox.verify import RetrySettings, generate_and_verify, strip_fences
from tablereason.trace import Prediction, Trace, TraceStep

if TYPE_CHECKING:  # pragma: no cover
    from tablereason.sandbox.python import PythonSandbox
    from tablereason.table import Table

POT_TEMPLATE = (
    "Read the following table{regarding} and then write Python code to answer a question:"
    "\n\n{table}\n\n{question}\n\n"
    "# The table is also available as the pandas DataFrame `df` (all cells are strings)."
    "\n# Python Code, return 'ans'. Make sure that 'ans' is {kind}\n"
)
SQL_TEMPLATE = (
    "Write one DuckDB SQL query that answers the question over the table `t`.\n"
    "Quote every column name with double quotes. All columns hold text.\n\n"
    "Table t{caption}:\n{table}\n\nQuestion: {question}\n\n"
    "Reply with the SQL query only.\nSQL:"
)
_FEEDBACK = "\n# The previous attempt failed: {feedback}\n# Write a corrected version.\n"


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


class ProgramOfThought:
    """Program-of-Thought over a table (TabMWP, WikiTQ), executed in the sandbox.

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

    name = "program_of_thought"

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

    def prompt(
        self,
        table: Table,
        question: str,
        *,
        title: str | None = None,
        unit: str | None = None,
        choices: list[str] | None = None,
    ) -> str:
        """The program-generation prompt (TabMWP program-generator format)."""
        kind = "a string selected from the options in the question" if choices else "a number"
        return POT_TEMPLATE.format(
            regarding=f" regarding {title}" if title else "",
            table=table.to_pipe(max_rows=self.max_rows),
            question=_question_text(question, unit, choices),
            kind=kind,
        )

    def run(
        self,
        table: Table,
        question: str,
        *,
        title: str | None = None,
        unit: str | None = None,
        choices: list[str] | None = None,
    ) -> Prediction:
        """Generate, verify and run programs until one yields an answer."""
        trace = Trace(method=self.name, question=question)
        prompt = self.prompt(table, question, title=title, unit=unit, choices=choices)

        def generate(temperature: float, feedback: str | None) -> str:
            text = prompt + (_FEEDBACK.format(feedback=feedback) if feedback else "")
            started = time.perf_counter()
            completion = self.llm.complete(
                Request(
                    prompt=text,
                    temperature=temperature,
                    max_tokens=self.max_tokens,
                    call_site="baselines/program_of_thought",
                )
            )
            trace.add(TraceStep(
                kind="program", name="program_generator", prompt_name="program_of_thought",
                raw=[completion.text], arguments={"temperature": temperature},
                usage=completion.usage, duration_s=time.perf_counter() - started,
            ))  # fmt: skip
            return completion.text

        try:
            outcome = generate_and_verify(
                generate, self.settings, {"df": table.to_pandas()}, self.sandbox
            )
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


class TextToSQL:
    """Text-to-SQL over a table (WikiTQ): one guarded SELECT, retried with the error as feedback.

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

    name = "text_to_sql"

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

    def prompt(self, table: Table, question: str) -> str:
        """The query-generation prompt."""
        return SQL_TEMPLATE.format(
            caption=f" ({table.caption})" if table.caption else "",
            table=table.to_pipe(max_rows=self.max_rows, caption=False),
            question=question,
        )

    def run(self, table: Table, question: str) -> Prediction:
        """Ask for a query, run it in the SQL sandbox, answer with the result cells."""
        trace = Trace(method=self.name, question=question)
        base = self.prompt(table, question)
        frame = table.to_pandas().astype(str)
        feedback: str | None = None
        last_error = "no query was generated"
        for attempt in range(self.patience):
            text = base + (_FEEDBACK.format(feedback=feedback) if feedback else "")
            started = time.perf_counter()
            try:
                completion = self.llm.complete(Request(
                    prompt=text, temperature=0.0 if attempt == 0 else 0.3,
                    max_tokens=self.max_tokens, call_site="baselines/text_to_sql",
                ))  # fmt: skip
            except LLMError as exc:
                return Prediction(answer="", trace=trace, error=str(exc))
            query = strip_fences(completion.text).strip().rstrip(";")
            step = trace.add(TraceStep(
                kind="sql", name="text_to_sql", prompt_name="text_to_sql",
                raw=[completion.text], arguments={"query": query}, usage=completion.usage,
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
