"""Chain-of-Table (Wang et al., ICLR 2024): a planned chain of table operations, then an answer.

The model picks the next operation from a fixed graph, generates its arguments, the
:class:`~tablereason.table.Table` applies it, and a final query answers from the last
table (and the group table, after a group step). Two profiles exist: ``"paper"``
reproduces the published code, ``"efficient"`` (the default) fixes its bugs and cuts
its costs; docs/chain_of_table.md lists every difference.

Example:
    >>> from tablereason.llm import ScriptedLLM
    >>> from tablereason.table import Table
    >>> table = Table.from_records(["player", "points"], [["ann", "12"], ["bo", "9"]])
    >>> llm = ScriptedLLM(replies=["f_select_row(row 1) -> <END>", "row 1])", " yes"])
    >>> ChainOfTable(llm, task="tabfact").run(table, "ann scored 12 points").answer
    'yes'
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from tablereason.errors import ConfigurationError, ParseError, TableReasonError
from tablereason.llm.base import LLM
from tablereason.methods.chain_of_table import large as L
from tablereason.methods.chain_of_table import parse as P
from tablereason.methods.chain_of_table import views as V
from tablereason.methods.chain_of_table.planner import END, next_operation
from tablereason.methods.chain_of_table.session import (
    Session,
    Task,
    finish,
    mask_digits,
    timed_step,
)
from tablereason.methods.chain_of_table.settings import PROFILES, ChainOfTableSettings
from tablereason.methods.chain_of_table.steps import OPERATIONS, GroupCrash
from tablereason.operations.table_profile import lowercased
from tablereason.prompts.render import render, template_hash, template_names
from tablereason.trace.record import Prediction, Trace, TraceStep

if TYPE_CHECKING:  # pragma: no cover
    from tablereason.table.value import Table

MAX_STEPS = 12  # the graph allows at most 5 operations and 6 planning steps


class ChainOfTable:
    """The Chain-of-Table method for TabFact (yes/no) and WikiTQ (short answers).

    Args:
        llm: Any backend of the :class:`~tablereason.llm.LLM` protocol.
        task: ``"tabfact"`` (verify a statement: ``yes``/``no``) or ``"wikitq"``
            (answer a question: a list of short answers).
        profile: ``"efficient"`` (default) or ``"paper"``.
        **overrides: Individual :class:`ChainOfTableSettings` fields to change.

    Example:
        >>> from tablereason.llm import ScriptedLLM
        >>> method = ChainOfTable(ScriptedLLM(replies=[]), task="wikitq", select_samples=3)
        >>> method.settings.select_samples
        3
    """

    name = "chain_of_table"

    def __init__(
        self, llm: LLM, task: Task = "tabfact", profile: str = "efficient", **overrides: Any
    ) -> None:
        if task not in ("tabfact", "wikitq"):
            raise ConfigurationError(f"unknown task {task!r}; choose 'tabfact' or 'wikitq'")
        self.llm = llm
        self.task: Task = task
        base = PROFILES.get(profile)
        try:
            self.settings = ChainOfTableSettings.model_validate({**base.model_dump(), **overrides})
        except ValueError as err:
            raise ConfigurationError(f"invalid Chain-of-Table settings: {err}") from None

    def config(self) -> dict[str, Any]:
        """The run configuration: task, settings and a hash of every prompt template."""
        return {
            "method": self.name,
            "task": self.task,
            "settings": self.settings.model_dump(),
            "prompts": {n: template_hash(n) for n in template_names("chain_of_table")},
        }

    def run(
        self, table: Table, question: str, *, cleaned_question: str | None = None
    ) -> Prediction:
        """Answer ``question`` (a WikiTQ question or a TabFact statement) over ``table``.

        Args:
            table: The input table.
            question: The question or statement.
            cleaned_question: Dater's cleaned statement, used only by the paper profile's
                add-column step (as the reference does); defaults to ``question``.

        Returns:
            A :class:`~tablereason.trace.Prediction`: ``"yes"``/``"no"`` for TabFact, a list
            of strings for WikiTQ, and the full trace. Bad model replies never raise; an
            LLM failure ends the run with ``Prediction.error`` set.
        """
        settings = self.settings
        if settings.lowercase_wikitq and self.task == "wikitq":
            large = table.num_rows > L.LOWERCASE_IN_DUCKDB_ROWS  # DuckDB lowers large ones
            table = lowercased(table) if large else _lowercased(table)
            question = question.lower()
            cleaned_question = cleaned_question.lower() if cleaned_question else None
        add_question = cleaned_question or question
        if settings.mask_digits:
            add_question = mask_digits(add_question)
        trace = Trace(method=f"{self.name}/{settings.profile}", question=question)
        source = trace.add(TraceStep(kind="input", name="table", table=table))
        session = Session(
            llm=self.llm,
            settings=settings,
            task=self.task,
            question=question,
            add_column_question=add_question,
            table=table,
            trace=trace,
        )
        if L.is_large(table, settings.large_table_rows):
            session.large = L.LargeState(source_rows=table.num_rows)
            source.note = L.mode_note(session)
        elif session.paper and table.num_rows > settings.view_rows:
            source.note = (
                f"paper profile: prompts show the first {settings.view_rows} of "
                f"{table.num_rows} rows, as the reference does"
            )
        try:
            for _ in range(MAX_STEPS):
                op = next_operation(session)
                if op == END:
                    break
                OPERATIONS.get(op)(session)
            answer = self._final_query(session)
        except GroupCrash as err:
            return Prediction(answer=self._empty(), trace=trace, error=f"example lost: {err}")
        except TableReasonError as err:
            trace.add(TraceStep(kind="error", name=type(err).__name__, error=str(err)))
            return Prediction(answer=self._empty(), trace=trace, error=str(err))
        return Prediction(answer=answer, trace=trace)

    def _empty(self) -> str | list[str]:
        return "" if self.task == "tabfact" else []

    def _final_query(self, session: Session) -> str | list[str]:
        """Ask for the answer from the final table (and the group table, if any)."""
        name = session.prompt_name(f"final_{self.task}")
        step = timed_step(session.trace, "answer", "final_query", name)
        table = session.table
        numbers: list[int] | None = None
        if session.large is not None:
            block = L.view_block(session, caption=table.caption)
            total = session.large.group_total
            group = L.group_block(*session.groups, total) if session.groups else ""
        else:
            if session.paper:
                rows = table.rows(self.settings.view_rows)
            else:
                numbers, rows = session.view()
            block = V.pipe_block(table.caption, table.columns, rows, numbers)
            group = V.group_block(*session.groups) if session.groups else ""
        prompt = render(name, table=block, group=group, question=session.question)
        step.table = table
        answer: str | list[str]
        if session.paper:
            text = session.ask(step, prompt, max_tokens=200)[0]
            if self.task == "tabfact":
                answer = P.parse_verdict_paper(text)
            else:
                try:
                    answer = P.parse_short_answer(text)
                except ParseError as err:
                    step.error, answer = str(err), []
        elif self.task == "tabfact":
            verdict = session.ask_parsed(step, prompt, P.parse_verdict, max_tokens=8, stop=("\n",))
            answer = verdict if verdict is not None else P.parse_verdict_paper(step.raw[-1])
        else:
            items = session.ask_parsed(
                step, prompt, P.parse_short_answer, max_tokens=48, stop=("\n",)
            )
            answer = items if items is not None else []
        step.arguments["answer"] = answer
        step.arguments["chain"] = [entry.text for entry in session.chain]
        if session.groups:
            step.arguments["group"] = [session.groups[0], [list(g) for g in session.groups[1]]]
        finish(step)
        return answer


def _lowercased(table: Table) -> Table:
    """A lower-cased copy of ``table`` (header, cells and caption)."""
    from tablereason.table.value import Table

    header = [h.lower() for h in table.columns]
    rows = [[c.lower() for c in row] for row in table.rows()]
    caption = table.caption.lower() if table.caption else table.caption
    return Table.from_records(header, rows, caption=caption)


def completions(trace: Trace) -> int:
    """Number of completions (choices) the model returned over a whole trace."""
    return sum(len(step.raw) for step in trace.steps)
