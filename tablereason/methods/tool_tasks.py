"""What the tool-using methods (ReWOO, ReAct) share: task text, demos, tools and answers.

A task is ``"hotpotqa"`` (a short free-text answer), ``"scienceqa"`` (pick one of
the options; the image, when there is one, is referred to by its file path so the
captioner and OCR tools can read it), or a question over the user's own tables:
``"wikitq"`` (a short answer) or ``"tabfact"`` (a statement answered ``yes`` or
``no``). A table task shows the model a bounded view of each table (the DuckDB
summary Chain-of-Table's large mode writes: row count, one line per column, the
first rows and the rows that mention the question) and gives it the SQL tool (the
guard and the SQL worker) and the Python tool (the sandbox) over exactly those
tables (:func:`table_tools`).

Example:
    >>> from tablereason.datasets import Example
    >>> ex = Example(dataset="scienceqa", id="1", question="Which is a mammal?",
    ...              answer="whale", choices=["shark", "whale"])
    >>> print(question_text(ex, "scienceqa"))
    Question: Which is a mammal?
    Options: (A) shark (B) whale
    >>> choose_option("(B)", ["shark", "whale"]), choose_option("a whale", ["shark", "whale"])
    ('whale', 'whale')
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from tablereason.datasets.example import Example
from tablereason.errors import ConfigurationError
from tablereason.table.named import TableSet
from tablereason.table.value import Table

if TYPE_CHECKING:  # pragma: no cover
    from tablereason.llm.base import LLM
    from tablereason.tools import Tool

TextTask = Literal["hotpotqa", "scienceqa", "wikitq", "tabfact"]
TASKS: tuple[str, ...] = ("hotpotqa", "scienceqa", "wikitq", "tabfact")
TABLE_TASKS: tuple[str, ...] = ("wikitq", "tabfact")
"""The tasks over the user's tables: the SQL and Python tools read them."""
VIEW_ROWS = 15
"""Lines of each table's view (column lines and rows) shown by default."""

DEMO_IDS: dict[str, tuple[str, ...]] = {
    # HotpotQA dev questions the demos were written from: excluded from tests and benchmarks.
    "hotpotqa": (
        "5ae24abc5542994d89d5b3c3",
        "5ab802085542990e739ec7ca",
        "5ac097b05542996f0d89cc18",
        "5a7605f85542994ccc91868d",
    ),
    # The ScienceQA demos are invented; no problem of the data is used.
    "scienceqa": (),
}

_LETTER = re.compile(r"^(?:\(([A-Ea-e])\)|([A-E])(?:[.):](?:\s|$)|$))")
_ANSWER_PREFIX = re.compile(r"^(?:the\s+)?(?:final\s+)?answer\s*(?:is\b|[:：])\s*:?\s*", re.I)


def check_task(task: str) -> TextTask:
    """Validate a task name.

    Raises:
        ConfigurationError: For an unknown task.
    """
    if task not in TASKS:
        raise ConfigurationError(f"unknown task {task!r}; choose one of {list(TASKS)}")
    return task  # type: ignore[return-value]


@dataclass(frozen=True)
class Subject:
    """What one run answers: the example (or bare question) and, for a table task, its tables.

    Attributes:
        example: A dataset example or the bare question.
        tables: One table (``t`` in SQL, ``df`` in Python) or several by name; None for
            a text task.
    """

    example: Example | str
    tables: Table | TableSet | None = None

    @property
    def question(self) -> str:
        """The question text."""
        return self.example if isinstance(self.example, str) else self.example.question

    @property
    def input_table(self) -> Table | None:
        """The one table a run reads, recorded as its input (None for several or none)."""
        return self.tables if isinstance(self.tables, Table) else None


def subject_of(source: Example | str | Table | Mapping[str, Table], question: str | None,
               task: TextTask) -> Subject:  # fmt: skip
    """What a run of ``task`` answers, from what ``run`` was given.

    Raises:
        ConfigurationError: For tables without a question, a table task without a table,
            or tables given to a text task.

    Example:
        >>> t = Table.from_records(["a"], [["1"]])
        >>> subject_of(t, "how many?", "wikitq").input_table is t
        True
        >>> subject_of("Who?", None, "hotpotqa").tables is None
        True
    """
    if isinstance(source, (Table, Mapping)):
        if question is None or not question.strip():
            raise ConfigurationError("run(table, question) needs the question")
        tables: Table | TableSet = source if isinstance(source, Table) else TableSet(source)
        if task not in TABLE_TASKS:
            raise ConfigurationError(
                f"task {task!r} reads no table; give task='wikitq' (questions) or "
                "'tabfact' (statements) to ask about tables"
            )
        return Subject(question, tables)
    if question is not None:
        raise ConfigurationError("a question is given with a table: run(table, question)")
    table: Table | TableSet | None = None
    if isinstance(source, Example):  # live tables (one or several) or the dataset's table
        table = source.tables if source.several_tables else source.table
    if task in TABLE_TASKS:
        if table is None:
            raise ConfigurationError(
                f"task {task!r} asks about a table, and none was given: run(table, question)"
            )
        return Subject(source, table)
    return Subject(source)


def table_names(tables: Table | TableSet) -> list[tuple[str, str, Table]]:
    """Each table with its name in SQL and in Python.

    Example:
        >>> t = Table.from_records(["a"], [["1"]])
        >>> [(s, p) for s, p, _ in table_names(t)]
        [('t', 'df')]
    """
    if isinstance(tables, Table):
        return [("t", "df", tables)]
    return [(name, name, table) for name, table in tables.items()]


def table_view(tables: Table | TableSet, question: str, rows: int = VIEW_ROWS) -> str:
    """Each table as a table task shows it: its names, then its bounded view.

    The view holds at most ``rows`` lines of columns and rows (at least three rows),
    whatever the table's size.

    Example:
        >>> t = Table.from_records(["n"], [[str(i)] for i in range(500)])
        >>> view = table_view(t, "how many?", rows=6)
        >>> view.splitlines()[:2], sum(line.startswith("row ") for line in view.splitlines())
        (['Table t (t in SQL, df in Python):', 'rows : 500'], 5)
    """
    from tablereason.methods.chain_of_table.large_view import view_text

    blocks = []
    for sql, python, table in table_names(tables):
        names = f"{sql} in SQL and Python" if sql == python else f"{sql} in SQL, {python} in Python"
        view = view_text(table, question, caption=table.caption, budget=rows)
        blocks.append(f"Table {sql} ({names}):\n{view}")
    return "\n\n".join(blocks)


def question_text(
    example: Example | str | Subject, task: TextTask, *, view_rows: int = VIEW_ROWS
) -> str:
    """The task as the model sees it: ``Question: ...`` (ScienceQA adds context, options, image).

    The image is given by its file path, which the captioner and OCR tools read. A table
    task shows each table's bounded view first (:func:`table_view`); TabFact asks
    whether the statement is true.
    """
    subject = example if isinstance(example, Subject) else Subject(example)
    if subject.tables is not None:
        view = table_view(subject.tables, subject.question, view_rows)
        if task == "tabfact":
            statement = subject.question.strip()
            return f"{view}\nStatement: {statement}\nQuestion: Is the statement true?"
        return f"{view}\nQuestion: {subject.question.strip()}"
    example = subject.example
    if task == "tabfact":
        return f"Question: Is the statement true? {subject.question.strip()}"
    if isinstance(example, str):
        return f"Question: {example.strip()}"
    lines = [f"Question: {example.question.strip()}"]
    if task == "scienceqa":
        if example.context.strip():
            lines.append(f"Context: {example.context.strip()}")
        if example.choices:
            options = " ".join(f"({chr(65 + i)}) {c}" for i, c in enumerate(example.choices))
            lines.append(f"Options: {options}")
        image = str(example.metadata.get("image_file") or "")
        if image:
            lines.append(f"Image: {image}")
    return "\n".join(lines)


def clean_answer(text: str) -> str:
    r"""The first non-empty line of a reply, without an ``Answer:`` prefix or a final period.

    Example:
        >>> clean_answer("\n Answer: Bury St Edmunds.\nMore text")
        'Bury St Edmunds'
    """
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    first = _ANSWER_PREFIX.sub("", lines[0]).strip() if lines else ""
    return first[:-1].strip() if first.endswith(".") and not first.endswith("..") else first


def choose_option(answer: str, choices: list[str]) -> str:
    """Map a free-text answer to one option, so the answer is always one of the choices.

    Tried in order: the exact text, a letter (``B``, ``(b)``, ``B.``), an option the
    answer contains (the longest), then the most similar option.
    """
    if not choices:
        return answer
    text = answer.strip()
    lowered = {c.strip().lower(): c for c in choices}
    if text.lower() in lowered:
        return lowered[text.lower()]
    letter = _LETTER.match(text)
    if letter:
        index = ord((letter.group(1) or letter.group(2)).upper()) - 65
        if 0 <= index < len(choices):
            return choices[index]
    contained = [c for c in choices if c.strip() and c.strip().lower() in text.lower()]
    if contained:
        return max(contained, key=len)
    scores = [difflib.SequenceMatcher(None, text.lower(), c.lower()).ratio() for c in choices]
    return choices[max(range(len(choices)), key=scores.__getitem__)]


def final_answer(raw: str, example: Example | str | Subject, task: TextTask) -> str:
    """The answer to record: the cleaned reply, an option for ScienceQA, yes or no for TabFact.

    Example:
        >>> final_answer("True, it is", "Is it?", "tabfact"), final_answer("No.", "?", "tabfact")
        ('yes', 'no')
    """
    if isinstance(example, Subject):
        example = example.example
    answer = clean_answer(raw)
    if task == "scienceqa" and not isinstance(example, str) and example.choices:
        return choose_option(answer, example.choices)
    if task == "tabfact":
        first = answer.lower().split()[0].strip(".,!;:") if answer.split() else ""
        return {"true": "yes", "yes": "yes", "false": "no", "no": "no"}.get(first, answer)
    return answer


def tool_key(name: str) -> str:
    """A tool name as plans and actions are matched to it: no case, spaces or underscores.

    Example:
        >>> tool_key("Web_Search"), tool_key(" web search")
        ('websearch', 'websearch')
    """
    return "".join(name.lower().split()).replace("_", "")


def table_tools(tables: Table | TableSet) -> list[Tool]:
    """The tools of a table task: SQL (the guard and the worker) and Python (the sandbox).

    Both see exactly ``tables``: the SQL worker holds those tables and nothing else, and
    the sandbox gets one DataFrame per table.

    Example:
        >>> [t.name for t in table_tools(Table.from_records(["a"], [["1"]]))]
        ['SQL', 'Python']
    """
    from tablereason.tools.python_tool import PythonTool
    from tablereason.tools.sql_tool import SQLTool

    named = tables if isinstance(tables, Table) else dict(tables)
    return [SQLTool(named), PythonTool(named)]


def default_tools(
    task: TextTask, llm: LLM, *, react: bool = False, data_dir: str | None = None
) -> list[Tool]:
    """The tools a method uses when none are given.

    HotpotQA: the document store over the HotpotQA paragraphs (named ``Wikipedia`` for
    ReWOO, ``Search`` and ``Lookup`` for ReAct) and, for ReWOO, the LLM tool.
    ScienceQA: image captioner, OCR and the LLM tool. A table task has none until it
    is given its tables (:func:`table_tools`, built for each question).
    """
    from tablereason.tools import ToolContext, build_tools
    from tablereason.tools.docstore import WikiLookup, WikiSearch

    if task in TABLE_TASKS:
        return []
    context = ToolContext(llm=llm, data_dir=data_dir)
    if task == "hotpotqa":
        if react:
            explorer = context.explorer()
            return [WikiSearch(explorer, name="Search"), WikiLookup(explorer, name="Lookup")]
        return build_tools(["wikipedia", "llm"], context)
    return build_tools(["image_captioner", "ocr", "llm"], context)
