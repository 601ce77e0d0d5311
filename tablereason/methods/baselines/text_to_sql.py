"""Text-to-SQL: one guarded DuckDB SELECT over the table ``t``, retried with the error shown."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any, ClassVar

from sqlglot import exp

from tablereason.answers.query_rows import query_rows
from tablereason.calls import Door, ReplySpec, Sampling
from tablereason.errors import ConfigurationError, LLMError, SQLError
from tablereason.llm.base import LLM
from tablereason.methods.base import TableMethod
from tablereason.methods.baselines.code_text import (
    SQL_START,
    SQL_STOP,
    answer_text,
    code_column_names,
    one_line,
)
from tablereason.methods.code_extraction import extract_sql
from tablereason.methods.constraints.parts import grammar
from tablereason.methods.constraints.sql import CLOSED_VALUES, Column, grammar_type, select_rules
from tablereason.operations.row_expressions import column_types
from tablereason.prompts.render import render, template_hash, template_names
from tablereason.sandbox.sql import SQLLimits, run_sql
from tablereason.table.named import TableSet
from tablereason.trace.record import Prediction, Trace, TraceStep

if TYPE_CHECKING:  # pragma: no cover
    from tablereason.llm.constraints import Grammar
    from tablereason.table.value import Table


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
        constrain: Send each query's constraint (the rest of a SELECT over ``t`` and
            its columns, text compared with the table's values) to models that
            enforce it.
        temperature: Sampling temperature of every request (``None``: each call's own).
        top_p: Nucleus sampling bound of every request.
        seed: Seed sent with sampled requests, so a sampled run replays exactly.

    Example:
        >>> from tablereason.llm import ScriptedLLM
        >>> TextToSQL(ScriptedLLM(replies=[])).patience
        3
    """

    name: ClassVar[str] = "text_to_sql"
    takes_several_tables: ClassVar[bool] = True

    def __init__(
        self,
        llm: LLM,
        patience: int = 3,
        limits: SQLLimits | None = None,
        max_rows: int | None = 20,
        max_tokens: int = 256,
        constrain: bool = True,
        temperature: float | None = None,
        top_p: float = 1.0,
        seed: int | None = None,
    ) -> None:
        self.llm = llm
        self.sampling = Sampling.checked(temperature, top_p, seed)
        self.door = Door(llm, site="baselines", constrain=constrain, sampling=self.sampling)
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
                **vars(self.sampling),
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
                query=one_line(failed_query or "") or "(no query in the reply)",
                error=one_line(error),
            ) + "\n"  # fmt: skip
        if isinstance(table, TableSet):  # several tables, typed, joined by name
            tables = table.describe(self.max_rows)
            return render("baselines/text_to_sql_tables", tables=tables, question=question,
                          repair=repair)  # fmt: skip
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

    def _constraint(self, table: Table) -> Grammar:
        """The rest of the query after ``SELECT``: over ``t`` and its columns as the prompt shows.

        Cells are text in ``t``, so a column whose every cell is a number is compared
        through ``TRY_CAST(... AS DOUBLE)``; a text column with few values only with them.
        """
        names = code_column_names(table.columns)
        types = column_types(table, table.columns)
        columns = []
        for name, shown in zip(table.columns, names, strict=True):
            sql = exp.to_identifier(shown, quoted=True).sql(dialect="duckdb")
            if grammar_type(types[name]) == "number":
                columns.append(Column(shown, "number", spelling=f"TRY_CAST({sql} AS DOUBLE)"))
                continue
            values = tuple(dict.fromkeys(v for v in table.column_values(name) if v.strip()))
            closed = values if len(values) <= CLOSED_VALUES else ()
            columns.append(Column(shown, "text", closed, spelling=sql))
        return grammar(select_rules(columns))

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
        frame = None
        if isinstance(table, TableSet):
            inputs: Any = dict(table)  # the worker holds these tables, typed, and no other
        else:
            trace.add(TraceStep(kind="input", name="table", table=table))
            frame = table.to_pandas().astype(str)
            frame.columns = code_column_names(table.columns)
            inputs = {"t": frame}
        query: str | None = None
        feedback: str | None = None
        last_error = "no query was generated"
        enforced = self.door.enforces("grammar") and not isinstance(table, TableSet)
        constraint = self._constraint(table) if enforced else None
        for attempt in range(self.patience):
            text = self.prompt(table, question, failed_query=query, error=feedback)
            started = time.perf_counter()
            step = trace.add(TraceStep(
                kind="sql", name="text_to_sql", prompt_name="text_to_sql",
                arguments={"attempt": attempt + 1},
            ))  # fmt: skip
            spec: ReplySpec[str] = ReplySpec(
                constraint=constraint,
                max_tokens=self.max_tokens,
                stop=SQL_STOP,
                temperature=0.0 if attempt == 0 else 0.3,
            )
            try:
                reply = self.door.ask(step, text, spec, site="baselines/text_to_sql").text
            except LLMError as exc:
                step.error = str(exc)
                return Prediction(answer="", trace=trace, error=str(exc))
            query = extract_sql(reply, prefix=SQL_START)
            step.arguments = {"query": query, **step.arguments}
            try:
                result = run_sql(inputs, query, self.limits)
            except SQLError as exc:
                step.error = last_error = str(exc)
                step.duration_s = time.perf_counter() - started
                feedback = last_error
                continue
            step.duration_s = time.perf_counter() - started
            cells = [answer_text(row[0]) for row in result.rows if row and row[0] is not None]
            step.arguments["rows"] = [list(map(str, row)) for row in result.rows[:20]]
            if not cells:
                step.error = last_error = "the query returned no rows"
                feedback = last_error
                continue
            answer = [str(c) for c in cells]
            if frame is not None:  # rows behind a join of several tables are not traced
                step.arguments["source_rows"] = query_rows(frame, query, answer, self.limits)
            trace.add(TraceStep(kind="answer", name="sql_result", arguments={"answer": answer}))
            return Prediction(answer=answer, trace=trace)
        return Prediction(answer="", trace=trace, error=last_error)
