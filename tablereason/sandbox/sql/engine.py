"""Where model-written SQL runs: a pool of worker processes, each query in its own scope.

A checked query (see :mod:`tablereason.sandbox.sql.guard`) never runs on the process's
own DuckDB database. It goes to a worker process (:mod:`tablereason.sandbox.sql.worker`)
together with the tables it may read, and in the worker it sees those tables
and nothing else: no other table of the process, no catalog of them, no file.
The worker caps its own address space for the length of each query, so a query
that tries to build a huge value fails there with a clear error and the
calling process does not grow; a query that outlives its time is interrupted,
and a worker that does not answer in time is killed and replaced.

Limits come from :class:`SQLLimits`. ``Table.sql`` uses :func:`table_sql_limits`
(settable with :func:`set_table_sql_limits` or the ``TABLEREASON_SQL_MEMORY``,
``TABLEREASON_SQL_THREADS`` and ``TABLEREASON_SQL_WORKERS`` environment
variables); :func:`tablereason.sandbox.run_sql` takes its limits as an argument.
"""

from __future__ import annotations

import atexit
import io
import os
import pickle
import select
import subprocess
import sys
import tempfile
import threading
import time
import weakref
from collections import OrderedDict
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

from tablereason.errors import ConfigurationError, SQLError
from tablereason.sandbox.sql import worker as sqlworker
from tablereason.sandbox.sql.limits import (
    SQLLimits,
    memory_bytes,
    set_table_sql_limits,
    table_sql_limits,
    with_seconds,
)

__all__ = [
    "SQLLimits",
    "SQLResourceError",
    "SQLTimeoutError",
    "TableInput",
    "execute",
    "memory_bytes",
    "set_table_sql_limits",
    "table_sql_limits",
    "with_seconds",
    "worker_pids",
]

_GRACE_S = 2.0
"""How long past its time limit a query may go before its worker is killed."""
_SEND_S_PER_MILLION_CELLS = 3.0
_KNOWN_KEYS = 4096


class SQLTimeoutError(SQLError):
    """The query ran longer than its time limit and was stopped."""


class SQLResourceError(SQLError):
    """The query needed more memory than its limit, or its result was too large."""


@dataclass(frozen=True)
class TableInput:
    """A table sent with a query: its SQL name, a cache key and how to build its data.

    ``data()`` returns a pandas DataFrame or ``{"columns": [names], "cells":
    [one sequence of text per column]}``. With a ``key``, a worker keeps the table
    and later queries with the same key do not send it again (``data`` is then
    not called); the key must change whenever the data does.
    """

    name: str
    data: Callable[[], Any]
    key: str | None = None
    cells: int = 0


def execute(
    tables: Sequence[TableInput], sql: str, limits: SQLLimits
) -> tuple[list[str], list[tuple[Any, ...]], bool]:
    """Run one checked SELECT over ``tables`` in a worker: columns, rows, truncated.

    Raises:
        SQLTimeoutError: It ran past ``limits.seconds``.
        SQLResourceError: It needed more than ``limits.memory``, or its result
            passed ``limits.max_result_bytes``.
        SQLError: DuckDB refused or failed it (the message is DuckDB's first line).
    """
    pool = _pool()
    for attempt in range(pool.size + 1):
        try:
            with pool.worker() as worker:
                reply = worker.query(tables, sql, limits)
            break
        except _Gone:  # an idle worker had died (killed from outside): take another
            if attempt == pool.size:
                raise SQLError("the SQL workers keep stopping; run the query again") from None
    kind = reply[0]
    if kind == "ok":
        rows = reply[2]
        return reply[1], rows[: limits.max_rows], len(rows) > limits.max_rows
    reason, detail = reply[1], reply[2]
    if reason == "timeout":
        raise SQLTimeoutError(
            f"the query ran longer than {limits.seconds:g} s and was stopped; simplify it"
        )
    if reason == "memory":
        raise SQLResourceError(
            f"the query needed more than {limits.memory} of memory and was stopped; "
            "filter or aggregate sooner, or build smaller values"
        )
    if reason == "result":
        raise SQLResourceError(
            f"the result is larger than {limits.max_result_bytes // 2**20} MiB; "
            "select fewer rows or columns, or aggregate"
        )
    raise SQLError(f"the query failed: {detail}")


class _Gone(Exception):
    """The worker had exited before the request reached it."""


class _Dead(Exception):
    """The worker exited or stopped answering."""


class _Worker:
    """One worker process and what it is known to cache."""

    def __init__(self) -> None:
        script = Path(sqlworker.__file__)
        # Isolated mode (no environment, no user site, no script folder on the path),
        # plus the folders this interpreter found DuckDB and pandas in.
        boot = (
            "import runpy, sys; sys.path.extend(sys.argv[2:]); "
            "runpy.run_path(sys.argv[1], run_name='__main__')"
        )
        self._stderr = tempfile.TemporaryFile()  # noqa: SIM115 - closed in close()
        self._proc = subprocess.Popen(
            [sys.executable, "-I", "-c", boot, str(script), *_package_folders()],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self._stderr,
            env={"DUCKDB_JE_MALLOC_CONF": sqlworker.MALLOC_CONF},
            cwd=script.parent,
            close_fds=True,
        )
        self._keys: OrderedDict[str, None] = OrderedDict()
        self.alive = True
        self.answered = False
        self.pid = self._proc.pid

    def startup_failure(self) -> str:
        """The last line the worker wrote to stderr, for a worker that died unused."""
        self._stderr.seek(0)
        lines = self._stderr.read().decode("utf-8", "replace").strip().splitlines()
        return lines[-1][:300] if lines else f"exit status {self._proc.poll()}"

    def query(self, tables: Sequence[TableInput], sql: str, limits: SQLLimits) -> tuple[Any, ...]:
        budget = memory_bytes(limits.memory)
        settings = {
            "seconds": limits.seconds, "memory": budget, "duckdb_memory": budget // 2,
            "threads": limits.threads, "max_rows": limits.max_rows,
            "max_result_bytes": limits.max_result_bytes,
        }  # fmt: skip
        send_all = False
        for _ in range(2):
            entries, cells = [], 0
            for table in tables:
                known = table.key is not None and table.key in self._keys and not send_all
                entries.append((table.name, table.key, None if known else table.data()))
                cells += 0 if known else table.cells
            reply = self._exchange(
                {"sql": sql, "tables": entries, "limits": settings},
                limits.seconds + _GRACE_S + _SEND_S_PER_MILLION_CELLS * cells / 1e6,
                limits,
            )
            for table in tables:
                if table.key is not None:
                    self._keys[table.key] = None
                    self._keys.move_to_end(table.key)
            while len(self._keys) > _KNOWN_KEYS:
                self._keys.popitem(last=False)
            if reply[0] != "missing":
                return reply
            send_all = True
        return ("error", "sql", "the SQL worker lost the query's tables")

    def _exchange(
        self, request: dict[str, Any], seconds: float, limits: SQLLimits
    ) -> tuple[Any, ...]:
        try:
            if self._proc.poll() is not None:
                raise BrokenPipeError
            sqlworker.write_message(self._stdin(), request)
        except OSError:  # it died while idle: the query never reached it
            self.close()
            if not self.answered:
                raise SQLError(
                    f"the SQL worker could not start ({self.startup_failure()}); check that "
                    f"duckdb and pandas import in {sys.executable}"
                ) from None
            raise _Gone from None
        try:
            reply = _decode(self._read(time.monotonic() + seconds))
            self.answered = True
            if isinstance(reply[-1], dict) and reply[-1].get("retire"):
                self.close()  # the next query gets a fresh worker
            return reply
        except _Dead as dead:
            self.close()
            if not self.answered and dead.args and dead.args[0] == "exited":
                raise SQLError(
                    f"the SQL worker could not start ({self.startup_failure()}); check that "
                    f"duckdb and pandas import in {sys.executable}"
                ) from None
            if dead.args and dead.args[0] == "late":
                raise SQLTimeoutError(
                    f"the query ran longer than {limits.seconds:g} s and was stopped; simplify it"
                ) from None
            raise SQLResourceError(
                "the SQL worker stopped while running the query (most likely it ran out "
                f"of its {limits.memory} of memory); simplify the query"
            ) from None
        except OSError:
            self.close()
            raise SQLError("the SQL worker stopped; run the query again") from None

    def _stdin(self) -> int:
        assert self._proc.stdin is not None
        return self._proc.stdin.fileno()

    def _read(self, deadline: float) -> bytes:
        header = self._read_exact(sqlworker.HEADER.size, deadline)
        return self._read_exact(sqlworker.HEADER.unpack(header)[0], deadline)

    def _read_exact(self, size: int, deadline: float) -> bytes:
        assert self._proc.stdout is not None
        fd = self._proc.stdout.fileno()
        chunks: list[bytes] = []
        while size:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([fd], [], [], left)[0]:
                raise _Dead("late")
            chunk = os.read(fd, min(size, 1 << 20))
            if not chunk:
                raise _Dead("exited")
            chunks.append(chunk)
            size -= len(chunk)
        return b"".join(chunks)

    def close(self) -> None:
        """Stop the process (at once) and forget it."""
        self.alive = False
        if self._proc.poll() is None:
            self._proc.kill()
        for stream in (self._proc.stdin, self._proc.stdout):
            if stream is not None:
                with suppress(OSError):
                    stream.close()
        self._proc.wait()
        self._stderr.close()


def _package_folders() -> list[str]:
    """Folders holding the duckdb and pandas packages this interpreter imports."""
    import duckdb
    import pandas

    folders: list[str] = []
    for module in (duckdb, pandas):
        folder = str(Path(module.__file__ or "").resolve().parent.parent)
        if folder not in folders:
            folders.append(folder)
    return folders


class _Decoder(pickle.Unpickler):
    """Unpickles only plain values (see :func:`tablereason.sandbox.sql.worker.plain`)."""

    _ALLOWED: ClassVar[frozenset[tuple[str, str]]] = frozenset(
        {("decimal", "Decimal"), ("datetime", "date"), ("datetime", "datetime"),
         ("datetime", "time"), ("datetime", "timedelta")}
    )  # fmt: skip

    def find_class(self, module: str, name: str) -> Any:
        if (module, name) not in self._ALLOWED:
            raise pickle.UnpicklingError(f"{module}.{name} is not a plain value")
        return super().find_class(module, name)


def _decode(payload: bytes) -> tuple[Any, ...]:
    try:
        reply = _Decoder(io.BytesIO(payload)).load()
    except Exception as error:
        raise SQLError(f"the SQL worker sent a reply that is not plain data: {error}") from None
    if not isinstance(reply, tuple) or not reply:
        raise SQLError("the SQL worker sent a malformed reply")
    return reply


class _Pool:
    """Worker processes shared by the threads of this process (``size`` at most)."""

    def __init__(self, size: int) -> None:
        self.size = size
        self._idle: list[_Worker] = []
        self._all: weakref.WeakSet[_Worker] = weakref.WeakSet()
        self._count = 0
        self._cond = threading.Condition()
        self.pid = os.getpid()

    @contextmanager
    def worker(self) -> Iterator[_Worker]:
        with self._cond:
            while not self._idle and self._count >= self.size:
                self._cond.wait()
            worker = self._idle.pop() if self._idle else None
            if worker is None:
                self._count += 1
        if worker is None:
            try:
                worker = _Worker()
                with self._cond:
                    self._all.add(worker)
            except OSError as error:
                with self._cond:
                    self._count -= 1
                    self._cond.notify()
                raise SQLError(f"could not start the SQL worker: {error}") from None
        try:
            yield worker
        finally:
            with self._cond:
                if worker.alive:
                    self._idle.append(worker)
                else:
                    self._count -= 1
                    self._all.discard(worker)
                self._cond.notify()

    def close(self) -> None:
        with self._cond:
            idle, self._idle = self._idle, []
            self._count -= len(idle)
        for worker in idle:
            worker.close()

    def pids(self) -> list[int]:
        with self._cond:
            return [w.pid for w in self._all if w.alive]


_pool_instance: _Pool | None = None
_pool_lock = threading.Lock()


def _pool() -> _Pool:
    global _pool_instance
    with _pool_lock:
        if _pool_instance is None or _pool_instance.pid != os.getpid():  # first use, or after fork
            size = os.environ.get("TABLEREASON_SQL_WORKERS", "2")
            try:
                _pool_instance = _Pool(max(1, int(size)))
            except ValueError:
                raise ConfigurationError(
                    f"TABLEREASON_SQL_WORKERS must be a whole number, got {size!r}"
                ) from None
        return _pool_instance


def worker_pids() -> list[int]:
    """Process ids of this process's SQL workers, for monitoring their memory."""
    return _pool().pids()


def _close_pool() -> None:
    if _pool_instance is not None and _pool_instance.pid == os.getpid():
        _pool_instance.close()


atexit.register(_close_pool)
