"""The :class:`Table`: an immutable, DuckDB-backed table with lineage.

Every operation returns a new table that remembers its ``parent`` and the
``step`` (operation name and typed arguments) that made it, so every
intermediate table of a chain stays inspectable and a saved chain replays to
the same result. Cells are text, exactly as given; numeric and date readings
are derived when an operation needs them and never overwrite the text.

Rows have an explicit order: a table is a list of base row ids over physical
DuckDB tables, so selecting rows or columns costs no copy and every operation
runs over all rows while prompts see a bounded view (``to_pipe(max_rows=...)``).

Small tables (at most :data:`~tablereason.table.storage.SMALL_CELLS` cells, which
covers WikiTQ and TabFact tables) also hold their cells in Python; operations on
them compute the same result in Python, without a DuckDB round trip, and their
physical tables are written only when a query needs them.

This module holds the value: building, reading and showing a table. Its operation
methods come from :class:`~tablereason.table.verbs.TableVerbs`, and operations
compute on it through :attr:`Table.kernel` (:mod:`tablereason.table.kernel`).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from tablereason.errors import TableError, TableParseError
from tablereason.table import formats
from tablereason.table.kernel import Kernel, append_rows, over_base
from tablereason.table.lineage import Step
from tablereason.table.relation import Column, find_column
from tablereason.table.storage import Store, to_text
from tablereason.table.verbs import TableVerbs

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

__all__ = ["Step", "Table"]

_CHUNK_CELLS = 25_000  # cells per chunk streamed into DuckDB (memory vs. calls)


class Table(TableVerbs):
    """An immutable table of text cells, stored in DuckDB, with lineage.

    Build one with :meth:`from_records`, :meth:`from_pandas`, :meth:`from_csv` or
    :meth:`from_pipe`. Operations (``select_rows``, ``sort_by``...) return new
    tables.

    Example:
        >>> t = Table.from_records(["name", "year"], [["Ann", "1999"], ["Bo", "2001"]])
        >>> print(t.select_rows([1]).to_pipe())
        col : name | year
        row 1 : Bo | 2001
    """

    __slots__ = (
        "_base",
        "_columns",
        "_n",
        "_records",
        "_rows",
        "_store",
        "caption",
        "parent",
        "step",
    )

    def __init__(
        self,
        store: Store,
        base: str,
        columns: Sequence[Column],
        rows: np.ndarray | None,
        n_rows: int,
        *,
        caption: str | None = None,
        parent: Table | None = None,
        step: Step | None = None,
        records: list[list[str]] | None = None,
    ) -> None:
        self._store = store
        self._base = base
        self._columns = tuple(columns)
        self._rows = rows
        self._n = n_rows
        # The cells in table order, once read (or given); never mutated.
        self._records = records
        self.caption = caption
        self.parent = parent
        self.step = step

    @property
    def kernel(self) -> Kernel:
        """What operations may use of this table: storage, row order, cells, children.

        See :mod:`tablereason.table.kernel` for what each member guarantees.
        """
        return Kernel(self)

    # -- builders ---------------------------------------------------------------------

    @classmethod
    def from_records(
        cls,
        header: Sequence[Any],
        rows: Iterable[Sequence[Any]],
        caption: str | None = None,
    ) -> Table:
        """Build a table from a header and rows of cells.

        Cells are kept as text (``None`` becomes ""). Short rows are padded with
        empty cells; a row longer than the header widens the table with unnamed
        columns (named ``Column <k>``).

        Raises:
            TableError: If there is no column at all.
        """
        labels = [to_text(h) for h in header]
        body = [[to_text(c) for c in row] for row in rows]
        width = max([len(labels), *(len(r) for r in body)])
        if width == 0:
            raise TableError("a table needs at least one column; got an empty header and no cells")
        labels += [""] * (width - len(labels))
        for row in body:
            if len(row) < width:
                row += [""] * (width - len(row))
        columns = [list(c) for c in zip(*body, strict=True)] if body else [[] for _ in labels]
        return cls._build(labels, columns, len(body), caption, records=body)

    @classmethod
    def from_pandas(cls, frame: pd.DataFrame, caption: str | None = None) -> Table:
        """Build a table from a pandas DataFrame; values become text (NaN → "")."""
        labels = [to_text(c) for c in frame.columns]
        if not labels:
            raise TableError("a table needs at least one column; the DataFrame has none")
        columns: list[Any] = []  # object arrays of str, one per column
        for i in range(frame.shape[1]):
            series = frame.iloc[:, i]
            values = series.to_numpy(dtype=object)
            if not all(isinstance(v, str) for v in values):
                values = np.array([to_text(v) for v in values], dtype=object)
            columns.append(values)
        return cls._build(labels, columns, len(frame), caption)

    @classmethod
    def from_csv(
        cls,
        path: str | Path,
        caption: str | None = None,
        *,
        delimiter: str = ",",
        escape: str | None = "\\",
    ) -> Table:
        """Load a CSV file whose first line is the header.

        The default dialect reads WikiTableQuestions CSVs (backslash-escaped
        quotes, quoted line breaks); ``escape=None`` reads standard CSV with
        doubled quotes. The file streams into DuckDB in chunks, so large files
        load without holding every row in Python.

        Raises:
            TableParseError: If the file is not valid CSV.
            TableError: If the file is empty.
        """
        rows = formats.read_csv_rows(Path(path), delimiter=delimiter, escape=escape)
        return cls.from_rows(rows, caption, source=str(path))

    @classmethod
    def from_rows(
        cls,
        rows: Iterable[list[str]],
        caption: str | None = None,
        *,
        source: str = "the input",
    ) -> Table:
        """Build a table from a stream of text rows, the first being the header.

        Rows stream into DuckDB in chunks, so a long stream is never held in Python
        at once; rows are padded or widen the table as in :meth:`from_records`.

        Args:
            rows: Rows of text cells (lists, which may be padded in place), header first.
            caption: The table's caption.
            source: What the rows come from, for the message when there are none.

        Raises:
            TableParseError: If there is no header row.

        Example:
            >>> Table.from_rows(iter([["a", "b"], ["1"]])).to_records()
            [['a', 'b'], ['1', '']]
        """
        reader = iter(rows)
        labels = next(reader, None)
        if labels is None:
            raise TableParseError(f"{source}: the file is empty; expected a header line")
        chunk: list[list[str]] = []
        chunk_rows = max(1, _CHUNK_CELLS // max(1, len(labels)))
        for row in reader:
            chunk.append(row)
            if len(chunk) >= chunk_rows:
                break
        else:  # the whole stream fits in one chunk
            return cls.from_records(labels, chunk, caption)
        store = Store()
        base = store.create_base(len(labels))
        width = append_rows(store, base, len(labels), 0, chunk)
        n, chunk = len(chunk), []  # each chunk is let go once it is written
        for row in reader:
            chunk.append(row)
            if len(chunk) >= chunk_rows:
                width = append_rows(store, base, width, n, chunk)
                n, chunk = n + len(chunk), []
        if chunk:
            width = append_rows(store, base, width, n, chunk)
            n += len(chunk)
        labels += [""] * (width - len(labels))
        return over_base(cls, store, base, labels, n, caption)

    @classmethod
    def from_pipe(cls, text: str, *, escaped: bool = False) -> Table:
        r"""Parse the PIPE text form written by :meth:`to_pipe`.

        ``escaped`` must match the ``escape`` flag the text was written with;
        escaped text reads back exactly for any table.

        Example:
            >>> Table.from_pipe("col : a | b\nrow 1 : 1 | 2").to_records()
            [['a', 'b'], ['1', '2']]
        """
        caption, header, rows = formats.parse_pipe(text, escaped=escaped)
        return cls.from_records(header, rows, caption=caption)

    @classmethod
    def _build(
        cls,
        labels: list[str],
        columns: Sequence[Sequence[str]],
        n_rows: int,
        caption: str | None,
        *,
        records: list[list[str]] | None = None,
    ) -> Table:
        store = Store()
        base = store.add_base(columns, n_rows)
        table = over_base(cls, store, base, labels, n_rows, caption)
        if table.kernel.is_small():
            table._records = (
                records if records is not None else [list(r) for r in zip(*columns, strict=True)]
            )
        return table

    # -- reading ----------------------------------------------------------------------

    @property
    def columns(self) -> list[str]:
        """Unique display names of the columns, in order."""
        return [c.name for c in self._columns]

    @property
    def labels(self) -> list[str]:
        """Header labels exactly as given (may be empty or repeated)."""
        return [c.label for c in self._columns]

    @property
    def num_rows(self) -> int:
        """Number of rows."""
        return self._n

    @property
    def shape(self) -> tuple[int, int]:
        """``(rows, columns)``."""
        return self._n, len(self._columns)

    def __len__(self) -> int:
        return self._n

    def column(self, name: str) -> Column:
        """Resolve a column name: exact match first, then a unique case-insensitive one.

        Raises:
            UnknownColumnError: Naming the closest column and every available one.
        """
        return find_column(self._columns, name)

    def rows(self, max_rows: int | None = None) -> list[list[str]]:
        """The cells, row by row, in table order (at most ``max_rows`` rows)."""
        return [list(r) for r in self._view(max_rows)]

    def column_values(self, name: str) -> list[str]:
        """Every cell of one column, in table order."""
        cells = self.kernel.cells()
        if cells is not None:
            i = self.kernel.position(name)
            return [r[i] for r in cells]
        with self.kernel.scan() as scan:
            query = scan.select(scan.cell(self.column(name).name)).order_by(scan.pos, copy=False)
            result = self._store.fetch(query)
        return [to_text(r[0]) for r in result]

    def rows_at(self, positions: Sequence[int]) -> list[list[str]]:
        """The cells of the rows at these 0-based positions, in the order given.

        A large table reads only those rows from DuckDB.

        Example:
            >>> Table.from_records(["a"], [["x"], ["y"], ["z"]]).rows_at([2, 0])
            [['z'], ['x']]
        """
        cells = self.kernel.cells()
        if cells is not None:
            return [cells[i] for i in positions]
        if not len(positions):
            return []
        wanted = np.asarray(positions, dtype=np.int64)
        rids = self.kernel.row_ids()[wanted]
        order = np.argsort(rids, kind="stable")
        view = Table(self._store, self._base, self._columns, rids[order], len(rids))
        found = view._fetch(None)
        out: list[list[str]] = [[] for _ in positions]
        for row, at in zip(found, order.tolist(), strict=True):
            out[at] = row
        return out

    def to_records(self) -> list[list[str]]:
        """Header labels as given, then every row: ``[header, row1, row2, ...]``."""
        return [self.labels, *self.rows()]

    def to_pandas(self) -> pd.DataFrame:
        """A pandas DataFrame of text cells with the display names as columns."""
        import pandas as pd

        rows = self.rows()
        return (
            pd.DataFrame(rows, columns=self.columns, dtype=object)
            if rows
            else pd.DataFrame({name: pd.Series([], dtype=object) for name in self.columns})
        )

    def equals(self, other: Table) -> bool:
        """True when columns, caption and every cell are equal (lineage is ignored)."""
        return (
            isinstance(other, Table)
            and self.columns == other.columns
            and self.caption == other.caption
            and self._n == other._n
            and self._view(None) == other._view(None)
        )

    def _view(self, max_rows: int | None) -> Sequence[list[str]]:
        """The cells in table order without copying (callers must not modify them)."""
        cells = self.kernel.cells()
        if cells is not None:
            return cells if max_rows is None else cells[:max_rows]
        if max_rows is not None and max_rows < self._n:
            return self._fetch(max_rows)
        if self._records is None:
            self._records = self._fetch(None)
        return self._records

    def _fetch(self, max_rows: int | None) -> list[list[str]]:
        if not self._columns:
            return [[] for _ in range(self._n if max_rows is None else min(max_rows, self._n))]
        view = self if max_rows is None or self._rows is None else self._limited(max_rows)
        with view.kernel.scan() as scan:
            query = scan.select(*(scan.cell(c.name) for c in view._columns)).order_by(
                scan.pos, copy=False
            )
            if max_rows is not None:
                query = query.limit(max_rows, copy=False)
            result = self._store.fetch(query)
        return [[to_text(v) for v in row] for row in result]

    def _limited(self, max_rows: int) -> Table:
        assert self._rows is not None
        return Table(
            self._store, self._base, self._columns, self._rows[:max_rows], min(max_rows, self._n)
        )

    # -- display ----------------------------------------------------------------------

    def to_pipe(
        self, max_rows: int | None = None, caption: bool = True, *, escape: bool = False
    ) -> str:
        """The PIPE text form used in Chain-of-Table prompts.

        ``table caption : ...`` comes first only when there is a caption and
        ``caption`` is true; then ``col : a | b`` and ``row i : x | y`` with 1-based
        positions in this table. No trailing newline. Cells print as stored (a
        line break as a space); ``escape=True`` gives the exact, parseable variant
        (see :mod:`tablereason.table.formats`).
        """
        return formats.format_pipe(
            self.caption if caption else None, self.columns, self._view(max_rows), escape=escape
        )

    def to_markdown(self, max_rows: int | None = None) -> str:
        """A Markdown table (``|`` in cells escaped)."""
        return formats.format_markdown(self.columns, self._view(max_rows))

    def _repr_html_(self, max_rows: int = 50) -> str:
        more = self._n - max_rows if self._n > max_rows else 0
        return formats.format_html(self.caption, self.columns, self._view(max_rows), more)

    def __repr__(self) -> str:
        shown = self.to_pipe(max_rows=10)
        more = f"\n... ({self._n - 10} more rows)" if self._n > 10 else ""
        return f"<Table {self._n}x{len(self._columns)}>\n{shown}{more}"

    # -- lineage ----------------------------------------------------------------------

    def lineage(self) -> list[Table]:
        """Every table from the source to this one, in order."""
        chain: list[Table] = []
        node: Table | None = self
        while node is not None:
            chain.append(node)
            node = node.parent
        return chain[::-1]

    def steps(self) -> list[Step]:
        """The steps that made this table from its source."""
        return [t.step for t in self.lineage() if t.step is not None]

    def source(self) -> Table:
        """The table this chain started from."""
        return self.lineage()[0]
