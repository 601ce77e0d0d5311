"""Saved prefix states kept in a folder, so that a new process starts warm.

A :class:`~tablereason.llm.backends.prefix_states.PrefixStore` with a :class:`StateFolder`
writes each state it saves to a file and, for a prompt no state in memory serves, looks
among the files for one that does. A file belongs to one **key** (:func:`state_key`: the
model file's path, size and modification time, the context's settings and the llama.cpp
binding's version): a state is only restored into the model and settings that made it.

**A file** is ``<key>-<tokens digest>.state``: a magic line, a JSON header (the key, the
number of tokens and of data bytes, a SHA-256 of both), the tokens as 32-bit integers and
the serialised state. It is written to a temporary file in the same folder and renamed
into place, so a reader sees a whole file or none. A file that does not read back (cut
short, another format, another key, a checksum that does not match, unreadable) is
ignored, as a missing one is; nothing raises.

**Bounded**: after each write the folder's state files are deleted oldest first (by
modification time; a restore touches its file) until they take at most ``budget_bytes``.

Example:
    >>> import tempfile
    >>> folder = StateFolder(tempfile.mkdtemp(), "k" * 16, budget_bytes=10_000)
    >>> folder.save((1, 2, 3, 4), b"state")
    True
    >>> [tokens for tokens in StateFolder(folder.path, "k" * 16).tokens()]
    [(1, 2, 3, 4)]
    >>> StateFolder(folder.path, "k" * 16).load((1, 2, 3, 4))
    b'state'
    >>> StateFolder(folder.path, "other key").load((1, 2, 3, 4)) is None
    True
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import os
import tempfile
import threading
from collections.abc import Iterable
from pathlib import Path
from typing import Any

MAGIC = b"tablereason prefix state 1\n"
"""The first bytes of a state file (the format's version is in it)."""
SUFFIX = ".state"
DEFAULT_FOLDER_MB = 1024
"""Disk for saved states, in MB, unless the model is told otherwise."""
_HEADER_MAX = 4096
log = logging.getLogger(__name__)


def state_key(model_path: str | os.PathLike[str], **settings: Any) -> str:
    """The key of a model file and settings: states of one key restore only into it.

    Args:
        model_path: The GGUF file (its resolved path, size and modification time count).
        **settings: Whatever else decides the state's bytes (context size, batch, ...).

    Example:
        >>> import tempfile
        >>> path = Path(tempfile.mkdtemp()) / "m.gguf"
        >>> _ = path.write_bytes(b"GGUF")
        >>> state_key(path, n_batch=128) == state_key(path, n_batch=128)
        True
        >>> state_key(path, n_batch=128) == state_key(path, n_batch=64)
        False
    """
    path = Path(model_path).resolve()
    facts = os.stat(path)
    described = {
        "model": str(path),
        "size": facts.st_size,
        "mtime_ns": facts.st_mtime_ns,
        **{k: repr(v) for k, v in sorted(settings.items())},
    }
    text = json.dumps(described, sort_keys=True).encode()
    return hashlib.sha256(text).hexdigest()[:24]


def _digest(tokens: Iterable[int]) -> str:
    return hashlib.sha256(_token_bytes(tuple(tokens))).hexdigest()[:24]


def _token_bytes(tokens: tuple[int, ...]) -> bytes:
    array = bytearray()
    for token in tokens:
        array += int(token).to_bytes(4, "little", signed=True)
    return bytes(array)


class StateFolder:
    """The state files of one key in one folder, within a disk budget for the folder.

    Args:
        path: The folder (made when the first state is written).
        key: The model's and settings' key (:func:`state_key`).
        budget_bytes: The most the folder's state files may take together.
    """

    def __init__(
        self,
        path: str | os.PathLike[str],
        key: str,
        budget_bytes: int = DEFAULT_FOLDER_MB * 1_000_000,
    ) -> None:
        self.path = Path(path)
        self.key = key
        self.budget_bytes = max(0, int(budget_bytes))
        self._index: dict[tuple[int, ...], Path] | None = None
        self._lock = threading.Lock()
        self.ignored = 0
        """Files that did not read back (cut short, another format or key, a bad checksum)."""

    def _name(self, tokens: tuple[int, ...]) -> Path:
        return self.path / f"{self.key}-{_digest(tokens)}{SUFFIX}"

    def tokens(self) -> list[tuple[int, ...]]:
        """The token sequences this key's files hold (read once, then kept up to date)."""
        with self._lock:
            if self._index is None:
                self._index = {}
                for file in sorted(self.path.glob(f"{self.key}-*{SUFFIX}")):
                    read = self._read(file, header_only=True)
                    if read is not None:
                        self._index[read[0]] = file
            return list(self._index)

    def load(self, tokens: tuple[int, ...]) -> bytes | None:
        """The saved state of exactly ``tokens``; None when there is none or it does not read."""
        file = self._name(tuple(tokens))
        read = self._read(file, header_only=False)
        with self._lock:
            if read is None or read[0] != tuple(tokens):
                if self._index is not None:
                    self._index.pop(tuple(tokens), None)
                return None
        with contextlib.suppress(OSError):
            os.utime(file)  # recently used: evicted last
        return read[1]

    def _read(self, file: Path, *, header_only: bool) -> tuple[tuple[int, ...], bytes] | None:
        try:
            with file.open("rb") as handle:
                if handle.read(len(MAGIC)) != MAGIC:
                    raise ValueError("not a state file")
                header = json.loads(handle.readline(_HEADER_MAX))
                if header.get("key") != self.key:
                    raise ValueError("another model or settings")
                n, size = int(header["tokens"]), int(header["bytes"])
                raw = handle.read(4 * n)
                if len(raw) != 4 * n:
                    raise ValueError("cut short")
                tokens = tuple(
                    int.from_bytes(raw[i : i + 4], "little", signed=True)
                    for i in range(0, len(raw), 4)
                )
                if header_only:
                    if os.fstat(handle.fileno()).st_size != handle.tell() + size:
                        raise ValueError("cut short")
                    return tokens, b""
                data = handle.read(size + 1)
            if len(data) != size:
                raise ValueError("cut short")
            if hashlib.sha256(raw + data).hexdigest() != header.get("sha256"):
                raise ValueError("checksum")
            return tokens, data
        except (OSError, ValueError, KeyError, TypeError, AttributeError):
            if file.exists():
                self.ignored += 1
            return None

    def save(self, tokens: tuple[int, ...], data: bytes) -> bool:
        """Write the state of ``tokens`` (atomically), then keep the folder within its budget.

        Returns:
            False when it was not written: larger than the budget, or the folder cannot
            be written (no space, no permission).
        """
        tokens = tuple(tokens)
        raw = _token_bytes(tokens)
        header = {
            "key": self.key,
            "tokens": len(tokens),
            "bytes": len(data),
            "sha256": hashlib.sha256(raw + data).hexdigest(),
        }
        body = MAGIC + json.dumps(header).encode() + b"\n"
        if len(body) + len(raw) + len(data) > self.budget_bytes:
            return False
        target = self._name(tokens)
        temporary = None
        try:
            self.path.mkdir(parents=True, exist_ok=True)
            handle, temporary = tempfile.mkstemp(prefix=".partial-", dir=self.path)
            with os.fdopen(handle, "wb") as out:
                out.write(body)
                out.write(raw)
                out.write(data)
            os.replace(temporary, target)
            temporary = None
        except OSError as err:
            log.warning("prefix state not written to %s: %s", self.path, err)
            return False
        finally:
            if temporary is not None:
                Path(temporary).unlink(missing_ok=True)
        with self._lock:
            if self._index is not None:
                self._index[tokens] = target
        self._trim(keep=target)
        return True

    def _trim(self, keep: Path) -> None:
        """Delete the folder's oldest state files beyond the budget (never ``keep``)."""
        files = []
        for file in self.path.glob(f"*{SUFFIX}"):
            try:
                facts = file.stat()
            except OSError:
                continue
            files.append((facts.st_mtime_ns, facts.st_size, file))
        total = sum(size for _, size, _ in files)
        for _, size, file in sorted(files):
            if total <= self.budget_bytes:
                break
            if file == keep:
                continue
            try:
                file.unlink()
            except OSError:
                continue
            total -= size
            with self._lock:
                if self._index is not None:
                    self._index = {t: f for t, f in self._index.items() if f != file}
