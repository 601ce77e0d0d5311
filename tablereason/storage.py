"""DuckDB storage behind :class:`~tablereason.table.Table`.

All tables live in one in-process DuckDB database that is locked down before
any data enters it: external access (files, network, extension loading) is
disabled and the configuration is locked, so SQL run on it, model-written SQL
included, reaches nothing but the tables. Data is loaded from Python objects,
never from paths.

A :class:`Store` is one connection (a cursor on that database) with its own
lock, shared by a source table and every table derived from it. Physical
tables are keyed by a dense ``__rid`` column (0..n-1) and hold text columns
``c0, c1, ...``; display names live in Python. Every statement is built with
sqlglot and every identifier is quoted.
"""

from __future__ import annotations

import contextlib
import itertools
import threading
import weakref
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import duckdb
import numpy as np
import sqlglot
from sqlglot import exp

RID = "__rid"
SMALL_LOAD = 2000  # rows up to which data is bound as list parameters rather than a DataFrame
POS = "__pos"
DIALECT = "duckdb"

_database: duckdb.DuckDBPyConnection | None = None
_database_lock = threading.Lock()
_names = itertools.count()


def database() -> duckdb.DuckDBPyConnection:
    """The process-wide, locked-down DuckDB database (created on first use)."""
    global _database
    with _database_lock:
        if _database is None:
            conn = duckdb.connect(":memory:", config={"preserve_insertion_order": True})
            conn.execute("SET enable_external_access = false")
            conn.execute("SET lock_configuration = true")
            _database = conn
        return _database


def ident(name: str) -> exp.Identifier:
    """A quoted SQL identifier."""
    return exp.to_identifier(name, quoted=True)


def col(name: str, table: str | None = None) -> exp.Column:
    """A quoted column reference, optionally qualified by a quoted table alias."""
    return exp.column(ident(name), table=ident(table) if table else None)


def table_ref(name: str, alias: str | None = None) -> exp.Table:
    """A quoted table reference with an optional quoted alias."""
    table = exp.Table(this=ident(name))
    if alias:
        table.set("alias", exp.TableAlias(this=ident(alias)))
    return table


def template(sql: str) -> exp.Expr:
    """Parse a fixed SQL template written in this package (``:name`` placeholders)."""
    return sqlglot.parse_one(sql, dialect=DIALECT)


def fill(tmpl: exp.Expr, **values: exp.Expr) -> exp.Expr:
    """A copy of a template with its placeholders replaced by expressions."""
    return exp.replace_placeholders(tmpl.copy(), **values)


def render(expression: exp.Expr) -> str:
    """Render an expression as DuckDB SQL."""
    return expression.sql(dialect=DIALECT)


def to_text(value: Any) -> str:
    """Turn a value from DuckDB or pandas into cell text (``None`` and NaN become "")."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, float) and value != value:  # NaN
        return ""
    if isinstance(value, bool | np.bool_):
        return "true" if value else "false"
    return str(value)


def new_name(prefix: str) -> str:
    """A fresh physical table name."""
    return f"{prefix}_{next(_names)}"


class Store:
    """One connection to the shared database, with a lock, for a family of tables.

    Physical tables created through a store are dropped when the store is
    garbage-collected (that is, when no table of the family is left).
    """

    def __init__(self) -> None:
        self._conn = database().cursor()
        self._lock = threading.RLock()
        self._owned: list[str] = []
        weakref.finalize(self, _drop_all, self._conn, self._owned)

    # -- loading ----------------------------------------------------------------------

    def create_base(self, width: int) -> str:
        """Create an empty physical table with ``width`` text columns."""
        name = new_name("base")
        schema = exp.Schema(
            this=table_ref(name),
            expressions=[exp.ColumnDef(this=ident(RID), kind=exp.DataType.build("BIGINT"))]
            + [
                exp.ColumnDef(this=ident(f"c{i}"), kind=exp.DataType.build("VARCHAR"))
                for i in range(width)
            ],
        )
        with self._lock:
            self._conn.execute(render(exp.Create(this=schema, kind="TABLE")))
            self._owned.append(name)
        return name

    def append(self, name: str, rids: np.ndarray, columns: Sequence[Sequence[str]]) -> None:
        """Append rows (given column-wise, fields ``c0, c1, ...``) with these row ids."""
        import pandas as pd

        frame = pd.DataFrame(
            {
                RID: np.asarray(rids, dtype=np.int64),
                **{f"c{i}": _as_object(c) for i, c in enumerate(columns)},
            }
        )
        view = new_name("incoming")
        insert = exp.Insert(
            this=exp.Schema(this=table_ref(name), expressions=[ident(c) for c in frame.columns]),
            expression=exp.select(*(ident(c) for c in frame.columns)).from_(table_ref(view)),
        )
        with self._lock:
            self._conn.register(view, frame)
            try:
                self._conn.execute(render(insert))
            finally:
                self._conn.unregister(view)

    def add_field(self, name: str, field: str) -> None:
        """Add a text column, empty in every existing row."""
        alter = exp.Alter(
            this=table_ref(name),
            kind="TABLE",
            actions=[
                exp.ColumnDef(
                    this=ident(field),
                    kind=exp.DataType.build("VARCHAR"),
                    constraints=[
                        exp.ColumnConstraint(
                            kind=exp.DefaultColumnConstraint(this=exp.Literal.string(""))
                        )
                    ],
                )
            ],
        )
        with self._lock:
            self._conn.execute(render(alter))

    def add_base(
        self, columns: Sequence[Sequence[str]], n_rows: int, rids: np.ndarray | None = None
    ) -> str:
        """Store columns of text (each ``n_rows`` long) as a new physical table.

        Row ids are ``0..n_rows-1`` unless ``rids`` is given. Small tables go in
        with one statement whose data are bound parameters; large ones through a
        registered DataFrame.
        """
        rids = np.arange(n_rows, dtype=np.int64) if rids is None else rids
        if n_rows > SMALL_LOAD:
            name = self.create_base(len(columns))
            self.append(name, rids, columns)
            return name
        name = new_name("base")
        fields = [(RID, "BIGINT")] + [(f"c{i}", "VARCHAR") for i in range(len(columns))]
        select = exp.select(
            *(
                exp.alias_(
                    exp.Cast(
                        this=exp.func("unnest", exp.Placeholder()), to=exp.DataType.build(kind)
                    ),
                    ident(field),
                )
                for field, kind in fields
            )
        )
        params = [[int(r) for r in rids], *([str(v) for v in c] for c in columns)]
        with self._lock:
            self._conn.execute(render(select.ctas(table_ref(name))), params)
            self._owned.append(name)
        return name

    def add_query(self, select: exp.Select) -> tuple[str, int]:
        """Store the result of a query built by this package (``__rid, c0, ...``)."""
        name = new_name("base")
        with self._lock:
            result = self._conn.execute(render(select.ctas(table_ref(name)))).fetchone()
            self._owned.append(name)
        return name, int(result[0]) if result else 0

    # -- queries ----------------------------------------------------------------------

    @contextmanager
    def order(self, rids: np.ndarray | None) -> Iterator[str | None]:
        """Expose a row order (base row ids in table order) as a temporary relation.

        Yields its name (columns ``__rid``, ``__pos``), or ``None`` when the table
        uses every base row in base order.
        """
        if rids is None:
            yield None
            return
        import pandas as pd

        name = new_name("order")
        frame = pd.DataFrame({RID: rids, POS: np.arange(len(rids), dtype=np.int64)})
        with self._lock:
            self._conn.register(name, frame)
            try:
                yield name
            finally:
                self._conn.unregister(name)

    def fetch(
        self, expression: exp.Expr, params: Sequence[Any] | None = None
    ) -> list[tuple[Any, ...]]:
        """Run a statement built by this package and return every row."""
        with self._lock:
            return self._conn.execute(render(expression), params).fetchall()

    def fetch_numpy(self, expression: exp.Expr) -> dict[str, np.ndarray]:
        """Run a statement built by this package and return its columns as arrays."""
        with self._lock:
            result = self._conn.execute(render(expression)).fetchnumpy()
        return {k: np.asarray(v) for k, v in result.items()}

    @contextmanager
    def connection(self) -> Iterator[duckdb.DuckDBPyConnection]:
        """Hold the store's lock and hand out its connection."""
        with self._lock:
            yield self._conn

    def interrupt(self) -> None:
        """Interrupt the query running on this store's connection."""
        self._conn.interrupt()


def _drop_all(conn: duckdb.DuckDBPyConnection, names: list[str]) -> None:
    for name in names:
        with contextlib.suppress(duckdb.Error):  # interpreter shutdown
            conn.execute(render(exp.Drop(this=table_ref(name), kind="TABLE", exists=True)))


def _as_object(values: Sequence[str]) -> np.ndarray:
    if isinstance(values, np.ndarray) and values.dtype == object:
        return values
    arr = np.empty(len(values), dtype=object)
    arr[:] = list(values)
    return arr
