"""Chain-of-Table (Wang et al., ICLR 2024): a planned chain of table operations, then an answer.

The model picks the next operation from a fixed graph, generates its arguments, the
:class:`~tablereason.table.Table` applies it, and a final query answers from the last
table (and the group table, after a group step). Two profiles exist: ``"paper"``
reproduces the published code, ``"efficient"`` (the default) fixes its bugs and cuts
its costs, and switches to the large-table mode on a table past ``large_table_rows``
(:mod:`~tablereason.methods.chain_of_table.modes`); docs/chain_of_table.md lists every
difference.

Example:
    >>> from tablereason.llm import ScriptedLLM
    >>> from tablereason.table import Table
    >>> table = Table.from_records(["player", "points"], [["ann", "12"], ["bo", "9"]])
    >>> llm = ScriptedLLM(replies=["f_select_row(row 1) -> <END>", "row 1])", " yes"])
    >>> ChainOfTable(llm, task="tabfact").run(table, "ann scored 12 points").answer
    'yes'
"""

from __future__ import annotations

from typing import Any

from tablereason.datasets.example import Example
from tablereason.errors import ConfigurationError, TableReasonError
from tablereason.llm.base import LLM
from tablereason.methods.base import TableMethod
from tablereason.methods.chain_of_table.answer import Answer, final_answer
from tablereason.methods.chain_of_table.group_sort import GroupCrash
from tablereason.methods.chain_of_table.large import LOWERCASE_IN_DUCKDB_ROWS, mode_note
from tablereason.methods.chain_of_table.large_view import LargeView
from tablereason.methods.chain_of_table.modes import LARGE, mode_for
from tablereason.methods.chain_of_table.planner import Planner
from tablereason.methods.chain_of_table.session import Session, Task, mask_digits
from tablereason.methods.chain_of_table.settings import PROFILES, ChainOfTableSettings
from tablereason.methods.chain_of_table.state import ChainState
from tablereason.methods.chain_of_table.steps import END
from tablereason.operations.table_profile import lowercased
from tablereason.prompts.render import template_hash, template_names
from tablereason.table.value import Table
from tablereason.trace.record import Prediction, Trace, TraceStep

MAX_STEPS = 12  # the graph allows at most 5 operations and 6 planning steps


class ChainOfTable(TableMethod):
    """The Chain-of-Table method for TabFact (yes/no) and WikiTQ (short answers).

    A :class:`~tablereason.methods.base.TableMethod`: ``run(table, question)`` or
    ``run(example)``, which passes a TabFact example's cleaned statement on.

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
    takes_task = True

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

    def example_options(self, example: Example) -> dict[str, Any]:
        """A TabFact example's cleaned statement (``metadata["cleaned_statement"]``), if any.

        Example:
            >>> from tablereason.llm import ScriptedLLM
            >>> from tablereason.table import Table
            >>> example = Example.from_table(Table.from_records(["a"], [["1"]]), "a is 1",
            ...     dataset="tabfact", metadata={"cleaned_statement": "a is one"})
            >>> ChainOfTable(ScriptedLLM(replies=[])).example_options(example)
            {'cleaned_question': 'a is one'}
        """
        cleaned = example.metadata.get("cleaned_statement")
        return {"cleaned_question": cleaned} if cleaned else {}

    def answer(
        self,
        table: Table,
        question: str,
        *,
        cleaned_question: str | None = None,
        **options: Any,
    ) -> Prediction:
        """Answer ``question`` (a WikiTQ question or a TabFact statement) over ``table``.

        Args:
            table: The input table.
            question: The question or statement.
            cleaned_question: Dater's cleaned statement, used only by the paper profile's
                add-column step (as the reference does); defaults to ``question``.
            **options: None other is known; any raises :class:`ConfigurationError`.

        Returns:
            A :class:`~tablereason.trace.Prediction`: ``"yes"``/``"no"`` for TabFact, a list
            of strings for WikiTQ, and the full trace. Bad model replies never raise; an
            LLM failure ends the run with ``Prediction.error`` set.

        Raises:
            ConfigurationError: For an unknown option.
        """
        if options:
            raise ConfigurationError(
                f"{self.name} takes no options {sorted(options)}; it knows cleaned_question"
            )
        session, state = self._start(table, question, cleaned_question)
        planner = Planner(session)
        try:
            for _ in range(MAX_STEPS):
                op = planner.next_operation(state)
                if op == END:
                    break
                step = session.way(op).step
                state = state.after(step(session, state.table, planner.argument(op, state.table)))
            answer = final_answer(session, state)
        except GroupCrash as err:
            return Prediction(
                answer=self._empty(), trace=session.trace, error=f"example lost: {err}"
            )
        except TableReasonError as err:
            session.trace.add(TraceStep(kind="error", name=type(err).__name__, error=str(err)))
            return Prediction(answer=self._empty(), trace=session.trace, error=str(err))
        return Prediction(answer=answer, trace=session.trace)

    def _start(
        self, table: Table, question: str, cleaned_question: str | None
    ) -> tuple[Session, ChainState]:
        """The question's session and first state; the input step opens the trace."""
        settings = self.settings
        if settings.lowercase_wikitq and self.task == "wikitq":
            in_duckdb = table.num_rows > LOWERCASE_IN_DUCKDB_ROWS  # DuckDB lowers large ones
            table = lowercased(table) if in_duckdb else _lowercased(table)
            question = question.lower()
            cleaned_question = cleaned_question.lower() if cleaned_question else None
        add_question = cleaned_question or question
        if settings.mask_digits:
            add_question = mask_digits(add_question)
        trace = Trace(method=f"{self.name}/{settings.profile}", question=question)
        source = trace.add(TraceStep(kind="input", name="table", table=table))
        mode = mode_for(settings, table)
        session = Session(
            llm=self.llm,
            settings=settings,
            task=self.task,
            question=question,
            add_column_question=add_question,
            trace=trace,
            mode=mode,
            large=LargeView() if mode is LARGE else None,
        )
        if mode is LARGE:
            source.note = mode_note(table, settings.large_table_rows)
        elif mode.note_first_rows and table.num_rows > settings.view_rows:
            source.note = (
                f"paper profile: prompts show the first {settings.view_rows} of "
                f"{table.num_rows} rows, as the reference does"
            )
        return session, ChainState(table=table)

    def _empty(self) -> Answer:
        return "" if self.task == "tabfact" else []


def _lowercased(table: Table) -> Table:
    """A lower-cased copy of ``table`` (header, cells and caption)."""
    header = [h.lower() for h in table.columns]
    rows = [[c.lower() for c in row] for row in table.rows()]
    caption = table.caption.lower() if table.caption else table.caption
    return Table.from_records(header, rows, caption=caption)


def completions(trace: Trace) -> int:
    """Number of completions (choices) the model returned over a whole trace."""
    return sum(len(step.raw) for step in trace.steps)
