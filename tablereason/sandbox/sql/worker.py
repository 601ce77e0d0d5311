"""The worker process that runs model-written SQL, and the message framing both sides use.

:mod:`tablereason.sandbox.sql.engine` starts this file as ``python -I sqlworker.py`` with
an empty environment. The worker reads requests from stdin and writes replies
to stdout, one length-prefixed pickle each, and imports only the standard
library, DuckDB and pandas, so it runs without the package on its path.

Each query runs on an in-memory DuckDB connection with external access,
extension loading and Python replacement scans off and the configuration
locked, and sees only the tables sent with it: they are registered for that
query and unregistered after it, so one request's query can never name another
request's table. While the query runs, the process's address space is capped
(``RLIMIT_AS``) at its size before the query plus the query's memory budget:
an allocation past the budget fails inside DuckDB with an out-of-memory error
instead of growing the process. A timer interrupts the query when its time is
up; rows are fetched in batches and the fetch stops at the row and byte limits.

Replies hold only plain values (``None``, ``bool``, ``int``, ``float``, ``str``,
``bytes``, ``Decimal``, naive dates and times, and lists, tuples and dicts of
them); anything else is sent as its ``str()``, so the parent decodes replies
with an allow-list.
"""

from __future__ import annotations

import contextlib
import datetime
import decimal
import os
import pickle
import struct
import threading
import time
from collections import OrderedDict
from collections.abc import Iterator
from typing import Any

HEADER = struct.Struct("!Q")
MALLOC_CONF = "retain:false,dirty_decay_ms:0,muzzy_decay_ms:0"
"""DuckDB's allocator settings in the worker (``DUCKDB_JE_MALLOC_CONF``): memory a query
frees is unmapped at once, so the address-space cap of the next query starts from what
the worker really holds."""
CACHE_CELLS = 10_000_000
"""Cells of keyed tables the worker keeps between requests (least recently used go first)."""
MATERIALIZE_CELLS = 200_000
"""Kept tables up to this many cells are copied into DuckDB (faster to query than a view
of the pandas frame); larger ones stay views, outside DuckDB's memory limit."""
_FETCH_BATCH = 256
_MAX_CURSORS = 64
_PLAIN = frozenset(
    {type(None), bool, int, float, str, bytes, decimal.Decimal, datetime.date, datetime.timedelta}
)


def write_message(fd: int, message: Any) -> None:
    """Write one length-prefixed pickle to a file descriptor."""
    data = pickle.dumps(message, protocol=pickle.HIGHEST_PROTOCOL)
    if len(data) < 1 << 20:  # one write: the reader wakes once
        _write_all(fd, HEADER.pack(len(data)) + data)
    else:
        _write_all(fd, HEADER.pack(len(data)))
        _write_all(fd, data)


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def _read_exact(fd: int, size: int) -> bytes | None:
    chunks: list[bytes] = []
    left = size
    while left:
        chunk = os.read(fd, min(left, 1 << 20))
        if not chunk:
            return None
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)


def plain(value: Any) -> Any:
    """``value`` with every part that is not a plain value replaced by its ``str()``."""
    kind = type(value)
    if kind in _PLAIN:
        return value
    if kind is datetime.datetime or kind is datetime.time:
        return value if value.tzinfo is None else str(value)
    if kind is list:
        return [plain(v) for v in value]
    if kind is tuple:
        return tuple(plain(v) for v in value)
    if kind is dict:
        return {plain(k): plain(v) for k, v in value.items()}
    return str(value)


def _size(value: Any) -> int:
    if isinstance(value, str | bytes):
        return len(value) + 8
    if isinstance(value, list | tuple):
        return 8 + sum(_size(v) for v in value)
    if isinstance(value, dict):
        return 8 + sum(_size(k) + _size(v) for k, v in value.items())
    return 8


class _Worker:
    """A DuckDB database (remade when the settings change) and cursors kept for reuse.

    Each cursor is a DuckDB connection of its own: its tables (temporary tables,
    or registered views of large ones) are invisible to every other cursor. A
    request whose tables all have keys reuses the cursor that holds exactly those
    tables; any other request gets a fresh cursor that is closed after it.
    """

    def __init__(self) -> None:
        self._db: Any = None
        self._settings: tuple[int, int] | None = None
        self._cursors: OrderedDict[tuple[tuple[str, str | None], ...], tuple[Any, int]] = (
            OrderedDict()
        )
        self._watchdog = _Watchdog()

    def handle(self, request: dict[str, Any]) -> tuple[Any, ...]:
        limits = request["limits"]
        self._database(limits["duckdb_memory"], limits["threads"])
        tables = request["tables"]
        signature = tuple((name, key) for name, key, _ in tables)
        shared = all(key is not None for _, key in signature)
        held = self._cursors.get(signature) if shared else None
        if held is not None:
            self._cursors.move_to_end(signature)
            cursor = held[0]
        else:
            missing = [key for _, key, data in tables if data is None]
            if missing:
                return ("missing", missing)
            frames = [(name, _to_frame(data), _typed(data)) for name, _, data in tables]
            cursor = self._cursor(frames, shared)
            if shared:
                self._keep(signature, cursor, sum(frame.size for _, frame, _ in frames))
        try:
            before = _address_space_size()
            reply = self._run(cursor, request["sql"], limits)
            # Memory a query left mapped would widen the next query's cap: retire then.
            return (*reply, {"retire": _address_space_size() - before > limits["memory"] // 2})
        finally:
            if not shared:
                with contextlib.suppress(Exception):
                    cursor.close()

    def _cursor(
        self, frames: list[tuple[str, Any, tuple[str, str] | None]], materialize: bool
    ) -> Any:
        """A new cursor holding ``frames`` under their names (copied into DuckDB when small).

        A frame sent with a typed view (the parent's ``SELECT`` over the frame, and the
        name it reads the frame by) is held as that view's result: a table when copied,
        else a view over the frame registered under that name.
        """
        cursor = self._db.cursor()
        for name, frame, typed in frames:
            quoted = '"' + name.replace('"', '""') + '"'
            copy = materialize and frame.size <= MATERIALIZE_CELLS
            if typed is not None:
                select, source = typed
                cursor.register(source, frame)
                if copy:
                    cursor.execute(f"CREATE TEMP TABLE {quoted} AS {select}")
                    cursor.unregister(source)
                else:
                    cursor.execute(f"CREATE TEMP VIEW {quoted} AS {select}")
            elif copy:
                cursor.register("__incoming", frame)
                cursor.execute(f"CREATE TEMP TABLE {quoted} AS SELECT * FROM __incoming")
                cursor.unregister("__incoming")
            else:
                cursor.register(name, frame)
        return cursor

    def _keep(self, signature: tuple[tuple[str, str | None], ...], cursor: Any, cells: int) -> None:
        self._cursors[signature] = (cursor, cells)
        total = sum(c for _, c in self._cursors.values())
        while (total > CACHE_CELLS or len(self._cursors) > _MAX_CURSORS) and len(self._cursors) > 1:
            old, old_cells = self._cursors.popitem(last=False)[1]
            total -= old_cells
            with contextlib.suppress(Exception):
                old.close()

    def _database(self, memory: int, threads: int) -> None:
        import duckdb

        if self._db is not None and self._settings == (memory, threads):
            return
        self._reset()
        config: dict[str, Any] = {
            "enable_external_access": False,
            "autoinstall_known_extensions": False,
            "autoload_known_extensions": False,
            "allow_community_extensions": False,
            "python_enable_replacements": False,
            "memory_limit": f"{max(memory // 2**20, 16)}MiB",
            "threads": threads,
            "temp_directory": "",
        }
        db = duckdb.connect(":memory:", config=config)
        db.execute("SET lock_configuration = true")
        self._db, self._settings = db, (memory, threads)

    def _reset(self) -> None:
        """Close the database and its cursors (later requests send their tables again)."""
        for cursor, _ in self._cursors.values():
            with contextlib.suppress(Exception):
                cursor.close()
        self._cursors.clear()
        if self._db is not None:
            with contextlib.suppress(Exception):
                self._db.close()
        self._db = self._settings = None

    def _run(self, cursor: Any, sql: str, limits: dict[str, Any]) -> tuple[Any, ...]:
        import duckdb

        healthy = False
        try:
            statements = cursor.extract_statements(sql)
            if len(statements) != 1 or statements[0].type != duckdb.StatementType.SELECT:
                healthy = True
                return ("error", "sql", "only one SELECT statement may run")
            with self._watchdog.watch(limits["seconds"], cursor), _address_space(limits["memory"]):
                result = cursor.execute(sql)
                columns = [d[0] for d in result.description or []]
                rows = _fetch(result, limits["max_rows"] + 1, limits["max_result_bytes"])
            healthy = True
        except _TooLarge:
            healthy = True
            return ("error", "result", "")
        except duckdb.InterruptException:
            return ("error", "timeout", "")
        except (duckdb.OutOfMemoryException, MemoryError):
            return ("error", "memory", "")
        except duckdb.Error as error:
            healthy = not isinstance(error, duckdb.FatalException | duckdb.InternalException)
            return (
                "error",
                "sql",
                str(error).splitlines()[0] if str(error) else type(error).__name__,
            )
        except Exception as error:  # e.g. a value Python cannot hold
            return ("error", "sql", f"{type(error).__name__}: {str(error).splitlines()[0][:300]}")
        finally:
            if not healthy:
                self._reset()
        return ("ok", columns, [plain(row) for row in rows])


class _TooLarge(Exception):
    """The result passed the byte limit."""


def _fetch(cursor: Any, max_rows: int, max_bytes: int) -> list[tuple[Any, ...]]:
    rows: list[tuple[Any, ...]] = []
    size = 0
    while len(rows) < max_rows:
        batch = cursor.fetchmany(min(_FETCH_BATCH, max_rows - len(rows)))
        if not batch:
            break
        size += sum(_size(row) for row in batch)
        if size > max_bytes:
            raise _TooLarge
        rows.extend(batch)
    return rows


def _typed(data: Any) -> tuple[str, str] | None:
    """The typed view a table was sent with (its ``SELECT`` and source name), if any."""
    if isinstance(data, dict) and data.get("select"):
        return str(data["select"]), str(data["source"])
    return None


def _to_frame(data: Any) -> Any:
    import pandas as pd

    if isinstance(data, pd.DataFrame):
        return data
    columns = {
        name: pd.array(cells, dtype="string").fillna("")
        for name, cells in zip(data["columns"], data["cells"], strict=True)
    }
    return pd.DataFrame(columns)


class _Watchdog:
    """One thread that interrupts the running query when its time is up."""

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self._due: tuple[float, Any] | None = None
        self._thread: threading.Thread | None = None

    @contextlib.contextmanager
    def watch(self, seconds: float, cursor: Any) -> Iterator[None]:
        with self._cond:
            self._due = (time.monotonic() + seconds, cursor)
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, daemon=True)
                self._thread.start()
            self._cond.notify()
        try:
            yield
        finally:
            with self._cond:
                self._due = None

    def _run(self) -> None:
        with self._cond:
            while True:
                if self._due is None:
                    self._cond.wait()
                    continue
                deadline, cursor = self._due
                left = deadline - time.monotonic()
                if left > 0:
                    self._cond.wait(left)
                    continue
                with contextlib.suppress(Exception):
                    cursor.interrupt()
                self._due = None


def _address_space_size() -> int:
    """Bytes of address space the process holds (0 where ``/proc`` is missing)."""
    try:
        with open("/proc/self/statm") as statm:
            return int(statm.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")
    except OSError:  # pragma: no cover - not Linux: no cap, and no retiring
        return 0


@contextlib.contextmanager
def _address_space(budget: int) -> Iterator[None]:
    """Cap the address space at its current size plus ``budget`` bytes for the block."""
    try:
        import resource
    except ImportError:  # pragma: no cover - not on Linux
        yield
        return
    current = _address_space_size()
    if not current:  # pragma: no cover - no /proc: the cap cannot be placed
        yield
        return
    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    cap = current + budget
    if hard != resource.RLIM_INFINITY:
        cap = min(cap, hard)
    resource.setrlimit(resource.RLIMIT_AS, (cap, hard))
    try:
        yield
    finally:
        resource.setrlimit(resource.RLIMIT_AS, (soft, hard))


def main() -> None:
    """Serve requests from stdin until it closes."""
    out = os.dup(1)
    os.dup2(2, 1)  # anything printed by accident must not corrupt the replies
    worker = _Worker()
    while True:
        header = _read_exact(0, HEADER.size)
        if header is None:
            return
        payload = _read_exact(0, HEADER.unpack(header)[0])
        if payload is None:
            return
        try:
            reply = worker.handle(pickle.loads(payload))
        except Exception as error:  # the worker must answer, never die
            reply = ("error", "sql", f"{type(error).__name__}: {str(error)[:300]}")
        try:
            write_message(out, reply)
        except BrokenPipeError:
            return


if __name__ == "__main__":
    main()
