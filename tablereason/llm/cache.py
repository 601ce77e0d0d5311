"""A persistent response cache that doubles as a recording for offline replay.

Responses live in one SQLite file in WAL mode: many threads and several processes can
read and write it at once. The key is a stable hash of the backend name, the model and
the request (its JSON form, which leaves out ``call_site``).
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import sqlite3
import threading
import time
from collections import Counter
from pathlib import Path

from pydantic import BaseModel, ConfigDict

from tablereason.llm.base import LLM, Completion, Request
from tablereason.llm.errors import CacheMissError
from tablereason.llm.wrapping import LLMWrapper

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


def cache_key(backend: str, model: str, request: Request, occurrence: int = 0) -> str:
    """Stable hash of who answers and what is asked.

    Args:
        backend: Backend name (``"openai"``, ``"local"``...).
        model: Model name.
        request: The request; ``call_site`` is not part of the key.
        occurrence: For sampling without a seed, which repetition of the request this is.

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
        "request": request.model_dump(mode="json"),
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

    Example:
        >>> import tempfile, pathlib
        >>> store = ResponseStore(pathlib.Path(tempfile.mkdtemp()) / "c.sqlite")
        >>> store.get("nope") is None
        True
    """

    def __init__(self, path: str | os.PathLike[str], *, timeout: float = 60.0) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.timeout = timeout
        self._local = threading.local()
        self._connect()

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

    def get(self, key: str) -> str | None:
        """The stored completion JSON for ``key``, or None."""
        row = (
            self._connect()
            .execute("SELECT completion FROM responses WHERE key = ?", (key,))
            .fetchone()
        )
        return None if row is None else str(row[0])

    def put(self, key: str, backend: str, model: str, request: str, completion: str) -> None:
        """Store a completion; an existing entry for ``key`` is kept (first writer wins)."""
        self._connect().execute(
            "INSERT OR IGNORE INTO responses VALUES (?, ?, ?, ?, ?, ?)",
            (key, backend, model, request, completion, time.time()),
        )

    def __len__(self) -> int:
        return int(self._connect().execute("SELECT COUNT(*) FROM responses").fetchone()[0])

    def size_bytes(self) -> int:
        """Bytes on disk, write-ahead log included."""
        return sum(
            p.stat().st_size
            for p in (self.path, self.path.with_name(self.path.name + "-wal"))
            if p.exists()
        )


class CachedLLM(LLMWrapper):
    """Answers repeated requests from a persistent cache; records new ones.

    Requests with ``temperature > 0`` are keyed by their ``seed``; sampling without a
    seed is keyed by how many identical requests this wrapper has seen before (the
    k-th repetition replays the k-th recorded sample). In ``offline`` mode a miss raises
    :class:`~tablereason.llm.errors.CacheMissError` and the inner model is never
    called, so a recorded run replays exactly without a model. Hits come back with
    ``cached=True`` and otherwise identical to the recorded completion.

    Args:
        inner: The model to wrap (only its ``name`` and ``model`` are used offline).
        path: SQLite file, shared freely between threads and processes.
        offline: Never call the model; a miss is an error.

    Example:
        >>> import tempfile, pathlib
        >>> from tablereason.llm.scripted import ScriptedLLM
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
        self._seen: Counter[str] = Counter()

    def key(self, request: Request) -> str:
        """The cache key for ``request`` (counts unseeded sampling repetitions)."""
        occurrence = 0
        if request.temperature > 0 and request.seed is None:
            base = cache_key(self.name, self.model, request)
            with self._lock:
                occurrence = self._seen[base]
                self._seen[base] += 1
        return cache_key(self.name, self.model, request, occurrence)

    def _lookup(self, key: str, request: Request) -> Completion | None:
        raw = self.store.get(key)
        with self._lock:
            if raw is None:
                self._misses += 1
            else:
                self._hits += 1
        if raw is not None:
            return Completion.model_validate_json(raw).model_copy(update={"cached": True})
        if self.offline:
            raise CacheMissError(
                f"offline: no recorded response from {self.name}/{self.model} for this request "
                f"(call site {request.call_site!r}, key {key[:12]}); rerun online with the same "
                "model and settings to record it"
            )
        return None

    def _save(self, key: str, request: Request, completion: Completion) -> None:
        self.store.put(
            key, self.name, self.model, request.model_dump_json(), completion.model_dump_json()
        )

    def complete(self, request: Request) -> Completion:
        """Answer from the cache, or ask the model and record its answer."""
        key = self.key(request)
        hit = self._lookup(key, request)
        if hit is not None:
            return hit
        completion = self.inner.complete(request)
        self._save(key, request, completion)
        return completion

    async def acomplete(self, request: Request) -> Completion:
        """Async twin of :meth:`complete`."""
        key = self.key(request)
        hit = self._lookup(key, request)
        if hit is not None:
            return hit
        completion = await self.inner.acomplete(request)
        await asyncio.to_thread(self._save, key, request, completion)
        return completion

    def stats(self) -> CacheStats:
        """Hits and misses of this wrapper, and entries and bytes of the file."""
        with self._lock:
            hits, misses = self._hits, self._misses
        return CacheStats(
            hits=hits, misses=misses, entries=len(self.store), bytes=self.store.size_bytes()
        )
