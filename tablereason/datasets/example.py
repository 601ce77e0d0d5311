"""The one :class:`Example` model every dataset produces.

An example is plain data: question, gold answer, optional choices, text context,
passages and metadata. Its table is described by a :class:`TableSource` (records
or a CSV path) and built on first access, so loading a dataset stays cheap and
``import tablereason.datasets`` does not load DuckDB. An example can also hold live
tables (:meth:`Example.from_table`): one ``Table``, or several named ones, kept as they
are and never copied into Python rows.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr

if TYPE_CHECKING:  # pragma: no cover
    from tablereason.table.named import TableSet
    from tablereason.table.value import Table


class TableSource(BaseModel):
    """How to build an example's table: from records, or from a CSV file.

    Exactly one of ``path`` or ``header`` (with ``rows``) is set.

    Example:
        >>> src = TableSource(header=["a"], rows=[["1"]], caption="t")
        >>> src.num_rows
        1
    """

    model_config = ConfigDict(frozen=True)

    header: list[str] | None = None
    rows: list[list[str]] | None = None
    path: str | None = None
    caption: str | None = None

    @property
    def num_rows(self) -> int | None:
        """Number of data rows when known without reading a file."""
        return None if self.rows is None else len(self.rows)

    def build(self) -> Table:
        """Build the :class:`~tablereason.table.Table` this source describes."""
        # Imported here, not at the top: loading a dataset must not load DuckDB.
        from tablereason.table.value import Table

        if self.path is not None:
            return Table.from_csv(self.path, caption=self.caption)
        return Table.from_records(self.header or [], self.rows or [], caption=self.caption)


class Passage(BaseModel):
    """A titled text paragraph (HotpotQA context).

    Attributes:
        title: Title of the source article, as given by the dataset.
        text: The paragraph text.
        is_supporting: Whether the dataset marks it as a gold supporting paragraph.
        sentences: The paragraph split into sentences, when the source has them.
    """

    model_config = ConfigDict(frozen=True)

    title: str
    text: str
    is_supporting: bool = False
    sentences: list[str] | None = None


class Example(BaseModel):
    """One benchmark question with its gold answer and inputs.

    Attributes:
        dataset: Dataset name (``"wikitq"``).
        id: Stable identifier within the dataset and split.
        question: The question, claim or statement to answer.
        answer: Gold answer: a string, or a list of strings (WikiTQ).
        choices: Answer options for multiple-choice questions.
        context: Text context (ScienceQA hint); empty when none.
        passages: Retrieval paragraphs (HotpotQA).
        table_source: How to build the table, when the example has one.
        metadata: Dataset-specific fields (labels, types, grades, canonical targets).

    Example:
        >>> ex = Example(dataset="demo", id="1", question="2+2?", answer="4")
        >>> ex.answers, ex.table is None
        (['4'], True)
    """

    model_config = ConfigDict(arbitrary_types_allowed=True)

    dataset: str
    id: str
    question: str
    answer: str | list[str]
    choices: list[str] | None = None
    context: str = ""
    passages: list[Passage] = Field(default_factory=list)
    table_source: TableSource | None = None
    metadata: dict[str, Any] = Field(default_factory=dict)

    _table: Any = PrivateAttr(default=None)
    _lock: Any = PrivateAttr(default_factory=threading.Lock)

    def __eq__(self, other: object) -> bool:
        # Compare the data only: the cached table and its lock are not part of the value.
        # Live tables (no source) are the same only when they are the same objects.
        if not isinstance(other, Example):
            return NotImplemented
        live = self.table_source is None and (self._table is not None or other._table is not None)
        if live and self._table is not other._table:
            return False
        return self.model_dump() == other.model_dump()

    __hash__ = None  # type: ignore[assignment]

    @property
    def answers(self) -> list[str]:
        """The gold answer as a list (one item for single answers)."""
        return list(self.answer) if isinstance(self.answer, list) else [self.answer]

    @property
    def table(self) -> Table | None:
        """The example's table, built on first access and then cached.

        ``None`` for an example without one, and for several named tables (see
        :attr:`tables`).
        """
        if self.several_tables:
            return None
        if self._table is None and self.table_source is not None:
            with self._lock:
                if self._table is None:
                    self._table = self.table_source.build()
        return self._table  # type: ignore[no-any-return]

    @property
    def has_table(self) -> bool:
        """Whether the example has a table (a source to build, or live tables), unbuilt."""
        return self.table_source is not None or self._table is not None

    @property
    def tables(self) -> TableSet | None:
        """The example's named tables, when it holds several (``None`` otherwise)."""
        return self._table if self.several_tables else None  # type: ignore[no-any-return]

    @property
    def several_tables(self) -> bool:
        """Whether the example holds several named tables (a ``TableSet``)."""
        return self._table is not None and isinstance(self._table, Mapping)

    @classmethod
    def from_table(
        cls,
        table: Table | Mapping[str, Table],
        question: str,
        *,
        answer: str | list[str] = "",
        dataset: str = "custom",
        id: str = "0",
        **fields: Any,
    ) -> Example:
        """Wrap a live table, or several named ones, and a question as an example.

        Nothing is copied: the example holds the table itself (``example.table is t``),
        so a question over a large table costs no row in Python. Several tables become a
        :class:`~tablereason.table.named.TableSet` (names checked), for the methods that
        take several. The example has no ``table_source``: it lives in this process.

        Args:
            table: The table to reason over, or ``{"name": table, ...}``.
            question: The question about it.
            answer: Gold answer, when known.
            dataset: Dataset name to record.
            id: Example identifier.
            **fields: Other :class:`Example` fields (``choices``, ``metadata``...).

        Returns:
            An example whose ``table`` is ``table`` itself.

        Example:
            >>> from tablereason.table import Table
            >>> t = Table.from_records(["a"], [["1"]])
            >>> Example.from_table(t, "what is a?").table is t
            True
            >>> two = Example.from_table({"x": t, "y": t}, "how many?")
            >>> two.several_tables, list(two.tables), two.table
            (True, ['x', 'y'], None)
        """
        example = cls(dataset=dataset, id=id, question=question, answer=answer, **fields)
        if isinstance(table, Mapping):
            from tablereason.table.named import TableSet  # the engine loads with its tables

            table = table if isinstance(table, TableSet) else TableSet(table)
        example._table = table
        return example
