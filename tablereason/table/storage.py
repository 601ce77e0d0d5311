"""DuckDB storage behind :class:`~tablereason.table.Table`.

All tables live in one in-process DuckDB database that is locked down before
any data enters it: external access (files, network, extension loading) is
disabled and the configuration is locked, with a memory limit and a thread
count for a shared machine (:mod:`tablereason.table.database`). Data is loaded from
Python objects, never from paths. Model-written SQL never runs here: it runs in
a worker that holds only the table it was given (:mod:`tablereason.sandbox.sql.engine`).

A :class:`Store` is one connection (a cursor on that database) with its own
lock, shared by a source table and every table derived from it. Physical
tables are keyed by a dense ``__rid`` column (0..n-1) and hold text columns
``c0, c1, ...``; display names live in Python. Every statement is built with
sqlglot and every identifier is quoted.

Small tables (at most :data:`SMALL_CELLS` cells) are written lazily: the store
keeps their columns and creates the physical table the first time a query
needs it (:meth:`Store.require`). Operations on small tables work on the cells
Python already holds, so most small tables never reach DuckDB at all.
"""

from __future__ import annotations

import contextlib
import itertools
import threading
import weakref
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import duckdb
import numpy as np
import sqlglot
from sqlglot import exp

from tablereason.errors import SQLError
from tablereason.table.database import USE_CATALOG, database

# Documented here before the database had its own module; still importable from storage.
from tablereason.table.database import configure_database as configure_database
from tablereason.table.database import database_settings as database_settings
from tablereason.table.deadlines import WATCHDOG

RID = "__rid"
SMALL_LOAD = 2000  # rows up to which data is bound as list parameters rather than a DataFrame
SMALL_CELLS = 10_000
"""Tables with at most this many cells are small: their cells are also held in
Python, operations on them run in Python, and their storage is written lazily."""
POS = "__pos"
DIALECT = "duckdb"

_names = itertools.count()


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


"""``USE "tables"``: a connection's tables go to the compressed catalog."""


def to_text(value: Any) -> str:
    """Turn a value from DuckDB or pandas into cell text (``None``, NaN, NaT, NA become "")."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, float) and value != value:  # NaN
        return ""
    if type(value).__name__ in ("NaTType", "NAType"):  # pandas' missing values
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
        self._conn.execute(USE_CATALOG)  # each cursor starts in the default catalog
        self._lock = threading.RLock()
        self._owned: list[str] = []
        # Physical tables not written yet: name -> (row ids, columns).
        self._pending: dict[str, tuple[np.ndarray, list[list[str]]]] = {}
        self._limit = threading.local()  # a thread's limit on its queries (see limited())
        # Each column's type, declared at load or inferred once: (table, field) -> type.
        self.column_types: dict[tuple[str, str], str] = {}
        weakref.finalize(self, _drop_all, self._conn, self._owned)

    # -- loading ----------------------------------------------------------------------

    def create_base(self, width: int) -> str:
        """Create an empty physical table with ``width`` text columns."""
        name = new_name("base")
        self._create(name, width)
        return name

    def _create(self, name: str, width: int) -> None:
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

        Row ids are ``0..n_rows-1`` unless ``rids`` is given. A small table (at
        most :data:`SMALL_CELLS` cells) is only recorded here and written when a
        query first needs it (:meth:`require`); larger ones are written now.
        """
        rids = np.arange(n_rows, dtype=np.int64) if rids is None else rids
        name = new_name("base")
        if n_rows * len(columns) <= SMALL_CELLS:
            with self._lock:
                self._pending[name] = (rids, [list(c) for c in columns])
        else:
            self._write(name, rids, columns)
        return name

    def held(self, name: str) -> list[list[str]] | None:
        """The columns of a physical table not written yet (Python holds them), else ``None``."""
        with self._lock:
            data = self._pending.get(name)
        return None if data is None else data[1]

    def require(self, names: Iterable[str]) -> None:
        """Write the physical tables among ``names`` that are still pending."""
        with self._lock:
            for name in names:
                data = self._pending.get(name)
                if data is not None:
                    self._write(name, *data)
                    del self._pending[name]

    def _write(self, name: str, rids: np.ndarray, columns: Sequence[Sequence[str]]) -> None:
        """Create physical table ``name``: bound list parameters when small, else a DataFrame."""
        if len(rids) > SMALL_LOAD:
            self._create(name, len(columns))
            self.append(name, rids, columns)
            return
        kinds = [exp.DataType.Type.BIGINT] + [exp.DataType.Type.VARCHAR] * len(columns)
        fields = [RID] + [f"c{i}" for i in range(len(columns))]
        select = exp.select(
            *(
                exp.alias_(
                    exp.Cast(
                        this=exp.Anonymous(this="unnest", expressions=[exp.Placeholder()]),
                        to=exp.DataType(this=kind),
                    ),
                    ident(field),
                    copy=False,
                )
                for field, kind in zip(fields, kinds, strict=True)
            ),
            copy=False,
        )
        create = exp.Create(this=table_ref(name), kind="TABLE", expression=select)
        params = [np.asarray(rids, dtype=np.int64).tolist(), *(list(c) for c in columns)]
        with self._lock:
            self._conn.execute(render(create), params)
            self._owned.append(name)

    def add_query(self, select: exp.Select) -> tuple[str, int]:
        """Store the result of a query built by this package (``__rid, c0, ...``)."""
        name = new_name("base")
        with self._running() as conn:
            result = conn.execute(render(select.ctas(table_ref(name)))).fetchone()
            self._owned.append(name)
        return name, int(result[0]) if result else 0

    def append_query(self, name: str, select: exp.Select) -> None:
        """Append the result of a query built by this package to the table ``name``."""
        with self._running() as conn:
            conn.execute(render(exp.Insert(this=table_ref(name), expression=select)))

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

        frame = pd.DataFrame({RID: rids, POS: np.arange(len(rids), dtype=np.int64)})
        with self.registered(frame) as name:
            yield name

    @contextmanager
    def registered(self, data: Any) -> Iterator[str]:
        """Expose data DuckDB scans from Python as a temporary relation; yields its name.

        For a DataFrame, Arrow data or an object with ``__arrow_c_stream__``. The lock is
        held for the block, so the name is seen only by the statements this package
        sends in it. Nothing here reads a file.
        """
        name = new_name("registered")
        with self._lock:
            self._conn.register(name, data)
            try:
                yield name
            finally:
                self._conn.unregister(name)

    def fetch(
        self, expression: exp.Expr, params: Sequence[Any] | None = None
    ) -> list[tuple[Any, ...]]:
        """Run a statement built by this package and return every row."""
        with self._running() as conn:
            return conn.execute(render(expression), params).fetchall()

    def fetch_numpy(self, expression: exp.Expr) -> dict[str, np.ndarray]:
        """Run a statement built by this package and return its columns as arrays."""
        with self._running() as conn:
            result = conn.execute(render(expression)).fetchnumpy()
        return {k: np.asarray(v) for k, v in result.items()}

    @contextmanager
    def limited(self, seconds: float, what: str) -> Iterator[None]:
        """Run every query this thread sends in the block under a time limit.

        For reads that evaluate expressions a model wrote (computed columns, conditions):
        a query that outlasts ``seconds`` is interrupted, and it or any other DuckDB
        failure becomes a :class:`~tablereason.errors.SQLError` that names ``what``.
        Nested blocks keep the smaller limit and the inner ``what``.
        """
        previous = getattr(self._limit, "value", None)
        limit = seconds if previous is None else min(seconds, previous[0])
        self._limit.value = (limit, what)
        try:
            yield
        finally:
            self._limit.value = previous

    @contextmanager
    def _running(self) -> Iterator[duckdb.DuckDBPyConnection]:
        """The connection for one query, under this thread's limit if it has one."""
        limit = getattr(self._limit, "value", None)
        with self._lock:
            if limit is None:
                yield self._conn
                return
            seconds, what = limit
            try:
                with self.time_limit(seconds):
                    yield self._conn
            except duckdb.InterruptException:
                raise SQLError(f"{what} ran longer than {seconds:g} s and was stopped") from None
            except duckdb.Error as error:
                line = str(error).strip().splitlines()[0] if str(error).strip() else ""
                raise SQLError(f"{what} failed: {line or type(error).__name__}") from None

    @contextmanager
    def connection(self) -> Iterator[duckdb.DuckDBPyConnection]:
        """Hold the store's lock and hand out its connection."""
        with self._lock:
            yield self._conn

    def interrupt(self) -> None:
        """Interrupt the query running on this store's connection."""
        self._conn.interrupt()

    @contextmanager
    def time_limit(self, seconds: float) -> Iterator[None]:
        """Interrupt this store's query if the block runs longer than ``seconds``."""
        with WATCHDOG.watch(seconds, self.interrupt):
            yield


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
