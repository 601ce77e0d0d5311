"""The result file of an evaluation run: JSON lines, crash-safe and resumable.

Line 1 is the run configuration (``{"type": "config", ...}``); every further line is
one example's result (``{"type": "result", "id": ..., ...}``). Records are appended
and fsynced one at a time, so a run killed at any moment (even ``kill -9``) leaves a
file whose complete lines are all valid; at most the last line is torn, and
:func:`open_results` drops it before appending again.

This module also owns the names of the files in a run folder (:data:`RESULTS_FILE`,
:data:`CACHE_FILE`, :data:`SHARDS_DIR`, :data:`REPORT_FILE`, :data:`PAGES_DIR`), so the
runner, the merge, the report and the command line agree on them.
"""

from __future__ import annotations

import json
import os
import re
import threading
import time
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field, ValidationError

from tablereason.errors import ConfigurationError
from tablereason.evaluate.result_lines import ResultFileError, check_record, parse_line

RESULTS_FILE = "results.jsonl"
"""The run folder's result file: an unsharded run's results, or the merge of its shards."""
CACHE_FILE = "responses.sqlite"
"""The run folder's response cache, so that a rerun replays answers."""
SHARDS_DIR = "shards"
"""The run folder's subfolder that holds one result file per shard."""
SHARD_FILE = re.compile(r"results-(\d+)-of-(\d+)\.jsonl")
"""The name of a shard's result file (see :func:`shard_file_name`)."""
REPORT_FILE = "report.html"
"""The run folder's summary page."""
PAGES_DIR = "examples"
"""The run folder's subfolder that holds one trace page per example."""

IDENTITY_KEYS = ("dataset", "split", "method", "profile", "model", "seed", "shard", "prompt_hashes")


class RunConfig(BaseModel):
    """What a run is: written as the first line of its result file.

    A rerun may continue a file only when the identity fields (dataset, split, method,
    profile, model, seed, shard, prompt hashes) are equal.
    """

    dataset: str = ""
    split: str = ""
    method: str = ""
    profile: str | None = None
    model: str | None = None
    seed: int | None = None
    prompt_hashes: dict[str, str] = Field(default_factory=dict)
    metric: str | None = None
    limit: int | None = None
    concurrency: int = 1
    shard: str | None = None
    library_version: str = ""
    extra: dict[str, Any] = Field(default_factory=dict)

    def identity(self) -> dict[str, Any]:
        """The fields that must match for a rerun to continue the same file."""
        data = self.model_dump()
        return {k: data[k] for k in IDENTITY_KEYS}


def prompt_hashes(described: dict[str, Any]) -> dict[str, str]:
    """Every prompt hash in a method's ``config()``, its inner methods' included.

    A composed method (self-consistency, Mix-SC, the critic) lists its own prompts at the
    top and each inner method's under ``inner``; a run's identity holds them all, so a
    resumed run refuses a results file written with other prompts at any depth.

    Examples:
        >>> prompt_hashes({"prompts": {"critic/judge": "a1"},
        ...                "inner": {"prompts": {"chain_of_table/efficient/plan": "b2"}}})
        {'critic/judge': 'a1', 'chain_of_table/efficient/plan': 'b2'}
    """
    found: dict[str, str] = {}

    def walk(node: object) -> None:
        if isinstance(node, dict):
            for key, value in node.items():
                if key == "prompts" and isinstance(value, dict):
                    found.update({str(k): str(v) for k, v in value.items()})
                else:
                    walk(value)

    walk(described)
    return found


def shard_file_name(index: int, count: int) -> str:
    """The file name of shard ``index`` of ``count`` in a run's :data:`SHARDS_DIR` folder.

    Example:
        >>> shard_file_name(2, 4)
        'results-2-of-4.jsonl'
        >>> SHARD_FILE.fullmatch(shard_file_name(2, 4)).groups()
        ('2', '4')
    """
    return f"results-{index}-of-{count}.jsonl"


def find_results(path: str | os.PathLike[str]) -> Path:
    """The result file of a run folder (or the file itself).

    Raises:
        ResultFileError: When there is none.

    Example:
        >>> find_results("runs/wikitq")  # doctest: +SKIP
        PosixPath('runs/wikitq/results.jsonl')
    """
    target = Path(path)
    if target.is_file():
        return target
    candidate = target / RESULTS_FILE
    if candidate.is_file():
        return candidate
    raise ResultFileError(
        f"no {RESULTS_FILE} in {str(target)!r}; give the folder passed to `tablereason eval "
        "--out` (or a result file)"
    )


def read_results(path: str | os.PathLike[str]) -> tuple[RunConfig, list[dict[str, Any]], int]:
    """Read a result file, tolerating a torn last line.

    Returns:
        ``(config, records, good_bytes)``: the run configuration, every complete result
        record in file order, and the byte length of the intact prefix of the file.

    Raises:
        ResultFileError: When the first line is not a valid config record, or a line other
            than the last one is not valid JSON, is nested too deeply or is a result record
            of the wrong shape (see :func:`~tablereason.evaluate.result_lines.check_record`);
            the message names the file and the line.

    Example:
        >>> config, records, _ = read_results("runs/wikitq.jsonl")  # doctest: +SKIP
    """
    data = Path(path).read_bytes()
    lines = data.split(b"\n")
    # Everything after the last newline is an incomplete write (possibly empty).
    complete, tail = lines[:-1], lines[-1]
    good = len(data) - len(tail)
    parsed: list[dict[str, Any]] = []
    for number, raw in enumerate(complete, start=1):
        parsed.append(parse_line(raw, path, number))
    if not parsed or parsed[0].get("type") != "config":
        raise ResultFileError(
            f"{path}: the first line is not a run configuration; is this a tablereason result "
            "file? Use another output path."
        )
    config = _config(parsed[0], path)
    records = []
    for number, record in enumerate(parsed[1:], start=2):
        if record.get("type") == "result":
            check_record(record, path, number)
            records.append(record)
    return config, records, good


def _config(data: dict[str, Any], path: str | os.PathLike[str]) -> RunConfig:
    try:
        config = RunConfig.model_validate({k: v for k, v in data.items() if k != "type"})
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in e['loc']) or 'the line'}: {e['msg']}" for e in exc.errors()
        )
        raise ResultFileError(
            f"{path}: line 1: the run configuration is malformed ({problems[:300]}); the file "
            "was edited or not written by tablereason: fix that line, or use another output path"
        ) from exc
    total = config.extra.get("total")
    if total is not None and (isinstance(total, bool) or not isinstance(total, int)):
        raise ResultFileError(
            f"{path}: line 1: the run configuration's extra.total must be a whole number, got "
            f"{total!r:.40}; fix that line, or use another output path"
        )
    return config


class ResultWriter:
    """Appends result records to a file, one fsynced line at a time (thread-safe).

    Every line reaches the operating system before :meth:`write` returns, so killing
    the process (even ``kill -9``) loses nothing. ``sync_interval_s`` > 0 batches the
    ``fsync`` calls (at most one per interval, and one on close): only a machine crash
    or power loss within the interval can then lose the latest lines, and a rerun
    simply runs those examples again.
    """

    def __init__(
        self, path: Path, done: dict[str, dict[str, Any]], *, sync_interval_s: float = 0.0
    ) -> None:
        self.path = path
        self.done = done
        self.sync_interval_s = sync_interval_s
        self._lock = threading.Lock()
        self._handle = path.open("ab")
        self._last_sync = 0.0

    def write(self, record: dict[str, Any]) -> None:
        """Append one record and make it durable before returning."""
        line = (json.dumps(record, ensure_ascii=False, default=str) + "\n").encode("utf-8")
        with self._lock:
            self._handle.write(line)
            self._handle.flush()
            now = time.monotonic()
            if self.sync_interval_s <= 0 or now - self._last_sync >= self.sync_interval_s:
                os.fsync(self._handle.fileno())
                self._last_sync = now
            self.done[str(record["id"])] = record

    def close(self) -> None:
        """Make every line durable and close the file."""
        with self._lock:
            if not self._handle.closed:
                self._handle.flush()
                os.fsync(self._handle.fileno())
                self._handle.close()

    def __enter__(self) -> ResultWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def open_results(
    path: str | os.PathLike[str], config: RunConfig, *, sync_interval_s: float = 0.0
) -> ResultWriter:
    """Open ``path`` for a run: create it with ``config``, or continue it after a crash.

    When the file exists its configuration must have the same identity as ``config``;
    a torn last line is cut off, and the records already there are available as
    ``writer.done`` (by example id).

    Raises:
        ConfigurationError: When the file belongs to a different run.
        ResultFileError: When the file is damaged.
    """
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    if target.is_symlink() and target.parent.resolve() not in target.resolve().parents:
        raise ResultFileError(
            f"{target} is a symlink to {os.readlink(target)}, outside its folder; results are "
            "never written through it: remove the link, or use another output path"
        )
    if not target.exists() or target.stat().st_size == 0:
        header = json.dumps({"type": "config", **config.model_dump()}, ensure_ascii=False)
        with target.open("wb") as handle:
            handle.write((header + "\n").encode("utf-8"))
            handle.flush()
            os.fsync(handle.fileno())
        return ResultWriter(target, {}, sync_interval_s=sync_interval_s)
    old, records, good = read_results(target)
    if old.identity() != config.identity():
        diff = {
            k: (old.identity()[k], v)
            for k, v in config.identity().items()
            if old.identity()[k] != v
        }
        raise ConfigurationError(
            f"{target} holds a different run (differs in {diff}, as (file, now)); use another "
            "output path, or delete the file to start over."
        )
    if good < target.stat().st_size:
        with target.open("r+b") as handle:
            handle.truncate(good)
            handle.flush()
            os.fsync(handle.fileno())
    return ResultWriter(target, {str(r["id"]): r for r in records}, sync_interval_s=sync_interval_s)
