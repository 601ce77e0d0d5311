"""The one :class:`Example` model every dataset produces.

An example is plain data: question, gold answer, optional choices, text context,
passages and metadata. Its table is described by a :class:`TableSource` (records
or a CSV path) and built on first access, so loading a dataset stays cheap and
``import tablereason.datasets`` does not load DuckDB.
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr

if TYPE_CHECKING:  # pragma: no cover
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
        if not isinstance(other, Example):
            return NotImplemented
        return self.model_dump() == other.model_dump()

    __hash__ = None  # type: ignore[assignment]

    @property
    def answers(self) -> list[str]:
        """The gold answer as a list (one item for single answers)."""
        return list(self.answer) if isinstance(self.answer, list) else [self.answer]

    @property
    def table(self) -> Table | None:
        """The example's table, built on first access and then cached."""
        if self._table is None and self.table_source is not None:
            with self._lock:
                if self._table is None:
                    self._table = self.table_source.build()
        return self._table  # type: ignore[no-any-return]

    @classmethod
    def from_table(
        cls,
        table: Table,
        question: str,
        *,
        answer: str | list[str] = "",
        dataset: str = "custom",
        id: str = "0",
        **fields: Any,
    ) -> Example:
        """Wrap an existing table and a question as an example.

        Args:
            table: The table to reason over.
            question: The question about it.
            answer: Gold answer, when known.
            dataset: Dataset name to record.
            id: Example identifier.
            **fields: Other :class:`Example` fields (``choices``, ``metadata``...).

        Returns:
            An example whose ``table`` is ``table`` itself.

        Example:
            >>> from tablereason.table import Table  # doctest: +SKIP
            >>> t = Table.from_records(["a"], [["1"]])  # doctest: +SKIP
            >>> Example.from_table(t, "what is a?").table is t  # doctest: +SKIP
            True
        """
        header, *rows = table.to_records()
        source = TableSource(
            header=list(header), rows=[list(r) for r in rows], caption=table.caption
        )
        example = cls(
            dataset=dataset, id=id, question=question, answer=answer, table_source=source, **fields
        )
        example._table = table
        return example
