"""A persistent response cache that doubles as a recording for offline replay.

Responses live in one SQLite file in WAL mode: many threads and several processes can
read and write it at once. The key is a stable hash of the backend name, the model and
the request (its JSON form, which leaves out ``call_site``). Request fields added after
the first caches were recorded (:data:`KEYED_ALWAYS` lists the fields there were) enter
the key only when they differ from their defaults, so those caches keep replaying.

A damaged file never ends a run with a traceback. When the cache is opened, a file that
is a folder, is not SQLite, is truncated or damaged (``PRAGMA quick_check``, for files up
to :data:`~tablereason.llm.wrappers.cache_file.CHECK_MAX_BYTES`), or holds another program's
tables is refused with a :class:`~tablereason.llm.wrappers.cache_file.CacheFileError` that names
it and the way out, before any request is made. An
entry that is not a valid completion (invalid JSON, or JSON of another shape) is a miss:
reported once (a warning on the ``tablereason.llm.wrappers.cache`` logger), answered by the model
and replaced. A failure of the file met later (damage in a part the check did not read,
the file removed) is reported once, and the run goes on without the cache.

Entries are JSON read by pydantic into :class:`~tablereason.llm.base.Completion`; the
cache never unpickles or evaluates anything, so a planted entry cannot run code.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import logging
import os
import sqlite3
import threading
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

from pydantic import BaseModel, ConfigDict, ValidationError

from tablereason.llm.base import LLM, Completion, Request
from tablereason.llm.constraints import describe, satisfies
from tablereason.llm.errors import CacheMissError, ConstraintViolationError
from tablereason.llm.wrappers.base import LLMWrapper
from tablereason.llm.wrappers.cache_file import (
    CacheFileError,
    check_database,
    check_header,
    way_out,
)

_log = logging.getLogger(__name__)

_SCHEMA = """
CREATE TABLE IF NOT EXISTS responses (
    key TEXT PRIMARY KEY,
    backend TEXT NOT NULL,
    model TEXT NOT NULL,
    request TEXT NOT NULL,
    completion TEXT NOT NULL,
    created REAL NOT NULL
)
"""


KEYED_ALWAYS = frozenset(
    {"messages", "prompt", "n", "temperature", "top_p", "max_tokens", "stop", "seed", "logprobs"}
)
"""The fields a :class:`~tablereason.llm.base.Request` had when the first caches were
recorded: always in the key. Any other field is in it only when it differs from its
default."""


def _keyed(value: object) -> object:
    """The key form of a nested value.

    A pydantic value without its fields at their defaults (its ``kind`` kept: it tells the
    kinds apart).
    """
    if isinstance(value, BaseModel):
        dumped = value.model_dump(mode="json", exclude_defaults=True)
        kind = getattr(value, "kind", None)
        return dumped if kind is None else {**dumped, "kind": kind}
    return value


def request_key(request: Request) -> dict[str, object]:
    """What of a request enters its cache key (see :data:`KEYED_ALWAYS`).

    Example:
        >>> sorted(request_key(Request(prompt="hi"))) == sorted(KEYED_ALWAYS)
        True
    """
    dumped = request.model_dump(mode="json")
    for name, field in Request.model_fields.items():
        if name in KEYED_ALWAYS or name not in dumped:
            continue
        value = getattr(request, name)
        if value == field.get_default(call_default_factory=True):
            del dumped[name]
        else:
            dumped[name] = _keyed(value)
    return dumped


def cache_key(backend: str, model: str, request: Request, occurrence: int = 0) -> str:
    """Stable hash of who answers and what is asked.

    Args:
        backend: Backend name (``"openai"``, ``"local"``...).
        model: Model name.
        request: The request; ``call_site`` is not part of the key, nor any field added
            after the first recordings while it holds its default (:data:`KEYED_ALWAYS`).
        occurrence: Which repetition of the request this is: for sampling without a seed,
            of every ask; otherwise, of the asks after a reply that broke its constraint.

    Returns:
        A hex SHA-256 digest.

    Example:
        >>> a = cache_key("openai", "gpt-4", Request(prompt="hi", call_site="x"))
        >>> a == cache_key("openai", "gpt-4", Request(prompt="hi", call_site="y"))
        True
    """
    payload: dict[str, object] = {
        "backend": backend,
        "model": model,
        "request": request_key(request),
    }
    if occurrence:
        payload["occurrence"] = occurrence
    text = json.dumps(payload, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


class CacheStats(BaseModel):
    """Hits and misses of one :class:`CachedLLM`, and the size of its file."""

    model_config = ConfigDict(frozen=True)

    hits: int
    misses: int
    entries: int
    bytes: int
    bad: int = 0
    """Entries found unreadable (each counted as a miss) by this wrapper."""

    @property
    def hit_rate(self) -> float:
        """Share of lookups answered from the cache."""
        lookups = self.hits + self.misses
        return self.hits / lookups if lookups else 0.0


def _execute_when_free(conn: sqlite3.Connection, statement: str, deadline: float) -> None:
    """Run ``statement``, waiting while another process holds the file.

    Switching a new file to WAL needs an exclusive lock and SQLite reports "database is
    locked" at once, without its busy timeout, when several processes open the same new
    cache together (shards starting at the same moment); so wait and try again until
    ``deadline``.
    """
    pause = 0.005
    while True:
        try:
            conn.execute(statement)
            return
        except sqlite3.OperationalError as error:
            busy = "locked" in str(error) or "busy" in str(error)
            if not busy or time.monotonic() >= deadline:
                raise
        time.sleep(pause)
        pause = min(pause * 2, 0.1)


class ResponseStore:
    """The SQLite file behind :class:`CachedLLM`: one connection per thread and process.

    Args:
        path: The database file (created with its folder when missing).
        timeout: Seconds to wait for another writer before giving up.

    Raises:
        CacheFileError: When the file cannot be used (see the module notes).

    Example:
        >>> import tempfile, pathlib
        >>> store = ResponseStore(pathlib.Path(tempfile.mkdtemp()) / "c.sqlite")
        >>> store.get("nope") is None
        True
    """

    def __init__(self, path: str | os.PathLike[str], *, timeout: float = 60.0) -> None:
        self.path = Path(path)
        self.timeout = timeout
        self._local = threading.local()
        self.broken: str | None = None
        """Why the file stopped working during the run (it is then no longer used)."""
        check_header(self.path)
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            if self.path.is_file() and self.path.stat().st_size > 0:
                # checked read-only first: another program's database is never modified
                uri = self.path.resolve().as_uri() + "?mode=ro"
                with contextlib.closing(sqlite3.connect(uri, uri=True)) as conn:
                    check_database(conn, self.path)
            self._connect()
        except sqlite3.Error as error:
            raise CacheFileError(
                f"{self.path}: cannot be used as a response cache: it is damaged or truncated "
                f"({error}); {way_out(self.path)}"
            ) from error
        except OSError as error:
            raise CacheFileError(
                f"{self.path}: cannot be opened ({error.strerror or error}); {way_out(self.path)}"
            ) from error

    def _connect(self) -> sqlite3.Connection:
        conn: sqlite3.Connection | None = getattr(self._local, "conn", None)
        if conn is not None and self._local.pid == os.getpid():
            return conn
        conn = sqlite3.connect(self.path, timeout=self.timeout, isolation_level=None)
        deadline = time.monotonic() + self.timeout
        for statement in ("PRAGMA journal_mode=WAL", "PRAGMA synchronous=NORMAL", _SCHEMA):
            _execute_when_free(conn, statement, deadline)
        self._local.conn, self._local.pid = conn, os.getpid()
        return conn

    def _fail(self, error: BaseException) -> None:
        """Stop using the file for the rest of the run; say so once."""
        if self.broken is None:
            self.broken = str(error)
            _log.warning(
                "tablereason: warning: the response cache %s failed (%s); the run goes on "
                "without it (to fix: %s)",
                self.path,
                error,
                way_out(self.path),
            )

    def get(self, key: str) -> str | None:
        """The stored completion JSON for ``key``, or None (also once the file failed)."""
        if self.broken is not None:
            return None
        try:
            row = (
                self._connect()
                .execute("SELECT completion FROM responses WHERE key = ?", (key,))
                .fetchone()
            )
        except sqlite3.Error as error:
            self._fail(error)
            return None
        return None if row is None else str(row[0])

    def put(
        self,
        key: str,
        backend: str,
        model: str,
        request: str,
        completion: str,
        *,
        replace: bool = False,
    ) -> None:
        """Store a completion; an existing entry for ``key`` is kept (first writer wins).

        ``replace`` overwrites an existing entry (one found unreadable).
        """
        if self.broken is not None:
            return
        verb = "INSERT OR REPLACE" if replace else "INSERT OR IGNORE"
        try:
            self._connect().execute(
                f"{verb} INTO responses VALUES (?, ?, ?, ?, ?, ?)",
                (key, backend, model, request, completion, time.time()),
            )
        except sqlite3.Error as error:
            self._fail(error)

    def __len__(self) -> int:
        if self.broken is not None:
            return 0
        try:
            return int(self._connect().execute("SELECT COUNT(*) FROM responses").fetchone()[0])
        except sqlite3.Error as error:
            self._fail(error)
            return 0

    def size_bytes(self) -> int:
        """Bytes on disk, write-ahead log included."""
        return sum(
            p.stat().st_size
            for p in (self.path, self.path.with_name(self.path.name + "-wal"))
            if p.is_file()
        )


class CachedLLM(LLMWrapper):
    """Answers repeated requests from a persistent cache; records new ones.

    Requests with ``temperature > 0`` are keyed by their ``seed``; sampling without a
    seed is keyed by how many identical requests this wrapper has seen before (the
    k-th repetition replays the k-th recorded sample). In ``offline`` mode a miss raises
    :class:`~tablereason.llm.errors.CacheMissError` and the inner model is never
    called, so a recorded run replays exactly without a model. Hits come back with
    ``cached=True`` and otherwise identical to the recorded completion. A reply that
    broke its request's constraint is recorded as well, and a hit on it raises
    :class:`~tablereason.llm.errors.ConstraintViolationError` again, as the backend did;
    the same request asked again after it is the next entry (a re-ask reaches the model).

    Args:
        inner: The model to wrap (only its ``name`` and ``model`` are used offline).
        path: SQLite file, shared freely between threads and processes.
        offline: Never call the model; a miss is an error.

    Example:
        >>> import tempfile, pathlib
        >>> from tablereason.llm.backends.scripted import ScriptedLLM
        >>> path = pathlib.Path(tempfile.mkdtemp()) / "cache.sqlite"
        >>> llm = CachedLLM(ScriptedLLM(replies=["4"]), path)
        >>> llm.complete(Request(prompt="2+2=")).cached, llm.complete(Request(prompt="2+2=")).cached
        (False, True)
    """

    def __init__(self, inner: LLM, path: str | os.PathLike[str], *, offline: bool = False) -> None:
        super().__init__(inner)
        self.store = ResponseStore(path)
        self.offline = offline
        self._lock = threading.Lock()
        self._hits = 0
        self._misses = 0
        self._bad: set[str] = set()  # keys whose entry was unreadable (replaced when answered)
        self._seen: Counter[str] = Counter()
        self._broken: Counter[str] = Counter()  # replies that broke their constraint, per request

    def key(self, request: Request) -> str:
        """The cache key for ``request`` (counts repetitions, see :meth:`_keys`)."""
        return self._keys(request)[1]

    def _keys(self, request: Request) -> tuple[str, str]:
        """The request's own key and the key of this repetition of it.

        An unseeded sampled request is keyed by how many times it was asked before; any
        other by how many of its replies broke their constraint (an identical re-ask
        after a broken reply is the next entry, so it reaches the model, and a replay
        meets the broken reply first, then the re-ask's).
        """
        base = cache_key(self.name, self.model, request)
        with self._lock:
            if request.temperature > 0 and request.seed is None:
                occurrence = self._seen[base]
                self._seen[base] += 1
            else:
                occurrence = self._broken[base]
        return base, cache_key(self.name, self.model, request, occurrence)

    @contextlib.contextmanager
    def _counting_broken(self, base: str, request: Request) -> Iterator[None]:
        """Count a broken reply (recorded or new) to ``request``: its re-ask is the next entry."""
        try:
            yield
        except ConstraintViolationError:
            if not (request.temperature > 0 and request.seed is None):  # those count every ask
                with self._lock:
                    self._broken[base] += 1
            raise

    def _lookup(self, key: str, request: Request) -> Completion | None:
        raw = self.store.get(key)
        hit = None if raw is None else self._parse(key, raw)
        with self._lock:
            if hit is None:
                self._misses += 1
            else:
                self._hits += 1
        if hit is not None:
            return hit
        if self.offline:
            unreadable = " (its recorded entry is unreadable)" if key in self._bad else ""
            raise CacheMissError(
                f"offline: no recorded response from {self.name}/{self.model} for this request"
                f"{unreadable} (call site {request.call_site!r}, key {key[:12]}); rerun online "
                "with the same model and settings to record it"
            )
        return None

    def _parse(self, key: str, raw: str) -> Completion | None:
        """The completion an entry holds, or None (reported once) when it holds none."""
        try:
            completion = Completion.model_validate_json(raw)
        except (ValidationError, ValueError, RecursionError) as error:
            with self._lock:
                first = not self._bad
                self._bad.add(key)
            if first:
                _log.warning(
                    "tablereason: warning: the response cache %s holds unreadable entries "
                    "(first: key %s, %s); they count as misses and are replaced by new answers",
                    self.store.path,
                    key[:12],
                    str(error).splitlines()[0][:120],
                )
            return None
        return completion.model_copy(update={"cached": True})

    def _save(self, key: str, request: Request, completion: Completion) -> None:
        with self._lock:
            replace = key in self._bad
        self.store.put(
            key,
            self.name,
            self.model,
            request.model_dump_json(),
            completion.model_dump_json(),
            replace=replace,
        )

    def complete(self, request: Request) -> Completion:
        """Answer from the cache, or ask the model and record its answer.

        Raises:
            ConstraintViolationError: The reply (recorded or new) breaks the request's
                constraint; a new one is recorded first, so a replay raises it again.
        """
        base, key = self._keys(request)
        with self._counting_broken(base, request):
            hit = self._lookup(key, request)
            if hit is not None:
                return _checked(request, hit)
            try:
                completion = self.inner.complete(request)
            except ConstraintViolationError as error:
                self._save(key, request, error.completion)
                raise
        self._save(key, request, completion)
        return completion

    async def acomplete(self, request: Request) -> Completion:
        """Async twin of :meth:`complete`."""
        base, key = self._keys(request)
        with self._counting_broken(base, request):
            hit = self._lookup(key, request)
            if hit is not None:
                return _checked(request, hit)
            try:
                completion = await self.inner.acomplete(request)
            except ConstraintViolationError as error:
                await asyncio.to_thread(self._save, key, request, error.completion)
                raise
        await asyncio.to_thread(self._save, key, request, completion)
        return completion

    def stats(self) -> CacheStats:
        """Hits and misses of this wrapper, and entries and bytes of the file."""
        with self._lock:
            hits, misses, bad = self._hits, self._misses, len(self._bad)
        return CacheStats(
            hits=hits,
            misses=misses,
            entries=len(self.store),
            bytes=self.store.size_bytes(),
            bad=bad,
        )


def _checked(request: Request, hit: Completion) -> Completion:
    """A recorded reply, raised as the backend raised it when it breaks the constraint.

    Every backend checks a constrained reply after the call and raises
    :class:`ConstraintViolationError` for one that breaks it; the cache records that
    reply too, and checks it again here, so a replay takes the path the run took (the
    caller's re-ask) instead of missing the entry.
    """
    constraint = request.constraint
    if constraint is None:
        return hit
    broken = [i for i, c in enumerate(hit.choices) if not satisfies(constraint, c.text)]
    if not broken:
        return hit
    raise ConstraintViolationError(
        f"{hit.backend or 'model'} (recorded): reply {broken[0]} breaks its constraint "
        f"({describe(constraint)}): {hit.choices[broken[0]].text[:200]!r}",
        completion=hit,
        constraint=constraint,
    )
