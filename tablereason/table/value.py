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
"""

from __future__ import annotations

import html
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
from pydantic import BaseModel, ConfigDict, Field
from sqlglot import exp

from tablereason.errors import (
    TableError,
    TableParseError,
    UnknownColumnError,
    closest,
)
from tablereason.table import formats, storage
from tablereason.table.relation import Column, Scan
from tablereason.table.storage import Store, to_text

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

_CHUNK_CELLS = 100_000  # cells per chunk streamed into DuckDB (memory vs. calls)


class Step(BaseModel):
    """One lineage step: the operation's registered name and its typed arguments.

    ``detail`` records decisions the operation took on its own (for example
    whether a sort read cells as numbers); it is informative only.
    """

    model_config = ConfigDict(frozen=True, arbitrary_types_allowed=True)

    operation: str
    args: BaseModel
    detail: dict[str, Any] = Field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """JSON-able form: ``{"operation", "args", "detail"}``."""
        return {
            "operation": self.operation,
            "args": self.args.model_dump(mode="json"),
            "detail": self.detail,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Step:
        """Rebuild a step saved with :meth:`to_dict`; arguments are re-validated."""
        from tablereason.operations import OPERATIONS

        op = OPERATIONS.get(data["operation"])
        return cls(
            operation=op.name,
            args=op.args.model_validate(data.get("args", {})),
            detail=dict(data.get("detail", {})),
        )


class Table:
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
        "_flat",
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
        self._flat: Table | None = None
        self.caption = caption
        self.parent = parent
        self.step = step

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
        else:  # the whole file fits in one chunk
            return cls.from_records(labels, chunk, caption)
        store = Store()
        base = store.create_base(len(labels))
        width, n = len(labels), 0
        width = cls._append_chunk(store, base, width, n, chunk)
        n, chunk = len(chunk), []
        for row in reader:
            chunk.append(row)
            if len(chunk) >= chunk_rows:
                width = cls._append_chunk(store, base, width, n, chunk)
                n += len(chunk)
                chunk = []
        if chunk:
            width = cls._append_chunk(store, base, width, n, chunk)
            n += len(chunk)
        labels += [""] * (width - len(labels))
        return cls._from_base(store, base, labels, n, caption)

    @staticmethod
    def _append_chunk(
        store: Store, base: str, width: int, start: int, rows: list[list[str]]
    ) -> int:
        widest = max(len(r) for r in rows)
        for i in range(width, widest):
            store.add_field(base, f"c{i}")
        width = max(width, widest)
        columns = [[r[i] if i < len(r) else "" for r in rows] for i in range(width)]
        store.append(base, np.arange(start, start + len(rows), dtype=np.int64), columns)
        return width

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
        table = cls._from_base(store, base, labels, n_rows, caption)
        if table._is_small():
            table._records = (
                records if records is not None else [list(r) for r in zip(*columns, strict=True)]
            )
        return table

    @classmethod
    def _from_base(
        cls,
        store: Store,
        base: str,
        labels: list[str],
        n_rows: int,
        caption: str | None,
        *,
        parent: Table | None = None,
        step: Step | None = None,
    ) -> Table:
        names = formats.unique_names(labels)
        columns = [
            Column(n, lab, base, f"c{i}")
            for i, (n, lab) in enumerate(zip(names, labels, strict=True))
        ]
        return cls(store, base, columns, None, n_rows, caption=caption, parent=parent, step=step)

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
        for column in self._columns:
            if column.name == name:
                return column
        folded = [c for c in self._columns if c.name.casefold() == name.casefold()]
        if len(folded) == 1:
            return folded[0]
        if not folded:
            folded = [
                c for c in self._columns if c.name.strip().casefold() == name.strip().casefold()
            ]
            if len(folded) == 1:
                return folded[0]
        names = self.columns
        best = closest(name, names)
        hint = f"; did you mean {best!r}?" if best else ""
        raise UnknownColumnError(
            f"unknown column {name!r}{hint} available columns: {', '.join(repr(n) for n in names)}"
        )

    def rows(self, max_rows: int | None = None) -> list[list[str]]:
        """The cells, row by row, in table order (at most ``max_rows`` rows)."""
        return [list(r) for r in self._view(max_rows)]

    def column_values(self, name: str) -> list[str]:
        """Every cell of one column, in table order."""
        cells = self._cells()
        if cells is not None:
            i = self._position(name)
            return [r[i] for r in cells]
        with self._scan() as scan:
            query = scan.select(scan.cell(self.column(name).name)).order_by(scan.pos, copy=False)
            result = self._store.fetch(query)
        return [to_text(r[0]) for r in result]

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
        cells = self._cells()
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
        with view._scan() as scan:
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

        def cell(text: str) -> str:
            return text.replace("|", "\\|").replace("\n", " ")

        lines = ["| " + " | ".join(cell(c) for c in self.columns) + " |"]
        lines.append("|" + "|".join("---" for _ in self.columns) + "|")
        lines += ["| " + " | ".join(cell(c) for c in row) + " |" for row in self._view(max_rows)]
        return "\n".join(lines)

    def _repr_html_(self, max_rows: int = 50) -> str:
        head = "".join(f"<th>{html.escape(c)}</th>" for c in self.columns)
        body = "".join(
            "<tr>" + "".join(f"<td>{html.escape(c)}</td>" for c in row) + "</tr>"
            for row in self._view(max_rows)
        )
        cap = f"<caption>{html.escape(self.caption)}</caption>" if self.caption else ""
        more = f"<p>{self._n - max_rows} more rows</p>" if self._n > max_rows else ""
        return f"<table>{cap}<thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>{more}"

    def __repr__(self) -> str:
        shown = self.to_pipe(max_rows=10)
        more = f"\n... ({self._n - 10} more rows)" if self._n > 10 else ""
        return f"<Table {self._n}x{len(self._columns)}>\n{shown}{more}"

    # -- operations (one implementation each, in tablereason.operations) ---------------

    def apply(self, operation: str, **arguments: Any) -> Any:
        """Apply a registered operation by name with keyword arguments."""
        from tablereason.operations import OPERATIONS

        op = OPERATIONS.get(operation)
        return op.function(self, op.args(**arguments))

    def add_column(self, name: str, values: Sequence[Any]) -> Table:
        """A copy with one more column, one value per row. An existing name is an error."""
        return self.apply("add_column", name=name, values=[to_text(v) for v in values])

    def select_rows(self, indices: Iterable[int]) -> Table:
        """Rows at these 0-based positions, duplicates removed, in table order."""
        return self.apply("select_rows", indices=list(indices))

    def select_columns(self, names: Iterable[str]) -> Table:
        """These columns, in table order (exact names first, then case-insensitive)."""
        return self.apply("select_columns", names=list(names))

    def group_by(self, column: str) -> Table:
        """A table of ``column`` and ``Count``: one row per distinct value, most frequent first."""
        return self.apply("group_by", column=column)

    def sort_by(self, column: str, descending: bool = False, numeric: bool | None = None) -> Table:
        """Rows sorted by ``column`` (stable); ``numeric=None`` decides from the content."""
        return self.apply("sort_by", column=column, descending=descending, numeric=numeric)

    def lookup_rows(self, terms: Iterable[str], columns: Iterable[str] | None = None) -> Table:
        """Rows where a cell contains any of ``terms`` (case-insensitive)."""
        return self.apply(
            "lookup_rows", terms=list(terms), columns=None if columns is None else list(columns)
        )

    def lookup_columns(self, terms: Iterable[str]) -> Table:
        """Columns whose name matches one of ``terms`` (unchanged when none does)."""
        return self.apply("lookup_columns", terms=list(terms))

    def verbalize(self, max_rows: int | None = None) -> str:
        """Plain sentences, one per row, naming each column and its value."""
        return str(self.apply("verbalize", max_rows=max_rows))

    def sql(self, query: str, timeout_s: float = 10.0) -> Table:
        """Run one read-only SELECT over this table, referred to as ``t``."""
        return self.apply("sql", query=query, timeout_s=timeout_s)

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

    def replay(self, steps: Iterable[Step | dict[str, Any]]) -> Table:
        """Apply saved steps (``Step`` or their ``to_dict()`` form) to this table."""
        from tablereason.operations import OPERATIONS

        table = self
        for raw in steps:
            step = Step.from_dict(raw) if isinstance(raw, dict) else raw
            table = OPERATIONS.get(step.operation).function(table, step.args)
        return table

    # -- primitives for operations ----------------------------------------------------

    def _rids(self) -> np.ndarray:
        return self._rows if self._rows is not None else np.arange(self._n, dtype=np.int64)

    def _is_small(self) -> bool:
        """True when the table has at most ``storage.SMALL_CELLS`` cells."""
        return self._n * len(self._columns) <= storage.SMALL_CELLS

    def _held_cells(self) -> list[list[str]] | None:
        """The cells of a small table when Python already holds them (no query)."""
        return self._records if self._records is not None and self._is_small() else None

    def _cells(self) -> list[list[str]] | None:
        """The cells of a small table (read once if needed); ``None`` for a large one.

        Operations use this to choose their Python path; the rows must not be modified.
        """
        if not self._is_small():
            return None
        if self._records is None:
            self._records = self._fetch(None)
        return self._records

    def _position(self, name: str) -> int:
        """Index of the column ``name`` resolves to (as in :meth:`column`)."""
        return self._columns.index(self.column(name))

    def _flattened(self) -> Table:
        """This table over storage that needs no join and no row order, for SQL views.

        A small table whose rows or columns come from several places is written
        once as a physical table of its own cells; any other table is itself.
        """
        plain = self._rows is None and all(c.source == self._base for c in self._columns)
        cells = None if plain else self._held_cells()
        if cells is None:
            return self
        if self._flat is None:
            columns = [[row[i] for row in cells] for i in range(len(self._columns))]
            base = self._store.add_base(columns, self._n)
            self._flat = Table(
                self._store,
                base,
                [Column(c.name, c.label, base, f"c{i}") for i, c in enumerate(self._columns)],
                None,
                self._n,
                caption=self.caption,
                records=cells,
            )
        return self._flat

    @contextmanager
    def _scan(self) -> Iterator[Scan]:
        self._store.require([self._base, *(c.source for c in self._columns)])
        with self._store.order(self._rows) as order:
            yield Scan(self._base, self._columns, order)

    def _derive(
        self,
        step: Step,
        *,
        rows: np.ndarray | bool | None = False,
        columns: Sequence[Column] | None = None,
        records: list[list[str]] | None = None,
    ) -> Table:
        """A child table sharing storage: new row order and/or new columns.

        ``records``, when given, are the child's cells in order (small tables).
        """
        new_rows = self._rows if rows is False else rows
        assert new_rows is None or isinstance(new_rows, np.ndarray)
        n = self._n if new_rows is None else len(new_rows)
        return Table(
            self._store,
            self._base,
            self._columns if columns is None else columns,
            new_rows,
            n,
            caption=self.caption,
            parent=self,
            step=step,
            records=records,
        )

    def _from_query(self, step: Step, labels: list[str], select: exp.Select) -> Table:
        """A child table over the stored result of ``select`` (``__rid, c0, ...``)."""
        base, n_rows = self._store.add_query(select)
        return Table._from_base(
            self._store, base, labels, n_rows, self.caption, parent=self, step=step
        )

    def _new_base(
        self, step: Step, labels: list[str], columns: Sequence[Sequence[str]], n_rows: int
    ) -> Table:
        """A child table over new storage in the same store (group and SQL results).

        A small result also keeps its cells in Python.
        """
        base = self._store.add_base(columns, n_rows)
        table = Table._from_base(
            self._store, base, labels, n_rows, self.caption, parent=self, step=step
        )
        if table._is_small():
            table._records = [list(r) for r in zip(*columns, strict=True)]
        return table
