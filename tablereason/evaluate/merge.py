"""Merge the shard result files of one run into a single result file, checked.

A run split with ``--shard i/n`` (or ``--shards n``) leaves one result file per
shard, by default ``<run>/shards/results-i-of-n.jsonl``. :func:`merge_shards` checks
that the files belong together before it writes anything: the same run configuration
(dataset, split, method, profile, model, seed, prompt hashes, metric, number of
examples), one file per shard of the same split into ``n``, every shard present and
complete, and no example twice. The merged file has the format of an unsharded run,
so ``tablereason report`` and :func:`~tablereason.evaluate.report.summarize` read it.

Example:
    >>> merged = merge_shards(find_shard_files("runs/wikitq"),  # doctest: +SKIP
    ...                       "runs/wikitq/results.jsonl")
    >>> merged.records, merged.complete  # doctest: +SKIP
    (4344, True)
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tablereason.errors import ConfigurationError
from tablereason.evaluate.results import (
    IDENTITY_KEYS,
    RESULTS_FILE,
    SHARD_FILE,
    SHARDS_DIR,
    ResultFileError,
    RunConfig,
    open_results,
    read_results,
    shard_file_name,
)

COMPARED_KEYS = (*(k for k in IDENTITY_KEYS if k != "shard"), "metric")
"""Configuration fields that must be equal in every shard of one run."""


def find_shard_files(folder: str | os.PathLike[str]) -> list[Path]:
    """The shard result files of a run folder (``<folder>/shards/``) or a shards folder.

    Raises:
        ResultFileError: When there are none, or the folder holds shards of several
            splits (``...-of-3`` and ``...-of-4``).

    Example:
        >>> find_shard_files("runs/wikitq")  # doctest: +SKIP
        [PosixPath('runs/wikitq/shards/results-0-of-2.jsonl'), ...]
    """
    root = Path(folder)
    if not root.is_dir():
        raise ResultFileError(f"{str(root)!r} is not a folder; give a run folder or shard files")
    where = root / SHARDS_DIR if (root / SHARDS_DIR).is_dir() else root
    found: dict[int, list[tuple[int, Path]]] = {}
    for path in where.iterdir():
        match = SHARD_FILE.fullmatch(path.name)
        if match and path.is_file():
            index, count = int(match[1]), int(match[2])
            found.setdefault(count, []).append((index, path))
    if not found:
        raise ResultFileError(
            f"no shard files (results-i-of-n.jsonl) in {str(where)!r}; give the folder passed "
            "to `tablereason eval --shard i/n --out`, or the shard files themselves"
        )
    if len(found) > 1:
        splits = ", ".join(f"{len(v)} of {k}" for k, v in sorted(found.items()))
        raise ResultFileError(
            f"{str(where)!r} holds shards of several splits ({splits}); give the files of one "
            "split, e.g. results-*-of-4.jsonl"
        )
    return [path for _, path in sorted(next(iter(found.values())))]


def merge_inputs(inputs: Sequence[str | os.PathLike[str]]) -> tuple[list[Path], Path | None]:
    """The shard files named by ``inputs`` and where their merge goes by default.

    ``inputs`` is one run folder (or its ``shards/`` folder), or shard files. The
    default merged file is the run folder's ``results.jsonl``; it is ``None`` for files
    that are not in a run's ``shards/`` folder.

    Raises:
        ResultFileError: When a folder holds no shard files, or is given with others.

    Example:
        >>> paths, out = merge_inputs(["runs/wikitq"])  # doctest: +SKIP
        >>> out  # doctest: +SKIP
        PosixPath('runs/wikitq/results.jsonl')
    """
    given = [Path(p) for p in inputs]
    if not given:
        raise ConfigurationError("give a run folder or the shard files to merge")
    if any(p.is_dir() for p in given):
        if len(given) > 1:
            raise ResultFileError("give one run folder, or shard files, not both or several")
        folder = given[0]
        paths = find_shard_files(folder)
        run = folder.parent if folder.name == SHARDS_DIR and paths[0].parent == folder else folder
        return paths, run / RESULTS_FILE
    for path in given:
        if not path.is_file():
            raise ResultFileError(f"no such shard file: {str(path)!r}")
    parents = {p.resolve().parent for p in given}
    if len(parents) == 1 and next(iter(parents)).name == SHARDS_DIR:
        return given, next(iter(parents)).parent / RESULTS_FILE
    return given, None


@dataclass
class ShardFile:
    """One shard file as read for merging.

    Attributes:
        path: The file.
        config: Its run configuration.
        records: Its result records, in file order.
        index: Shard number ``i`` (an unsharded file is shard ``0`` of ``1``).
        count: Number of shards ``n``.
        expected: Results a complete shard holds, when the file records the run's size.
    """

    path: Path
    config: RunConfig
    records: list[dict[str, Any]]
    index: int
    count: int
    expected: int | None

    @property
    def label(self) -> str:
        """``"i/n"``."""
        return f"{self.index}/{self.count}"


@dataclass
class MergedRun:
    """What :func:`merge_shards` wrote.

    Attributes:
        path: The merged result file.
        config: Its run configuration.
        shards: The shards merged, by shard number.
        count: Number of shards the run was split into.
        records: Result records written.
        total: Examples in the whole run, when the shard files record it.
        problems: Missing or incomplete shards (empty for a complete merge).
    """

    path: Path
    config: RunConfig
    shards: list[ShardFile]
    count: int
    records: int
    total: int | None
    problems: list[str] = field(default_factory=list)

    @property
    def complete(self) -> bool:
        """Whether every example of the run has exactly one result."""
        return not self.problems


def _read(path: Path) -> ShardFile:
    config, records, _ = read_results(path)
    index, count = 0, 1
    if config.shard is not None:
        index, count = (int(p) for p in config.shard.split("/"))
    total = config.extra.get("total")
    expected = len(range(index, int(total), count)) if isinstance(total, int) else None
    return ShardFile(path, config, records, index, count, expected)


def _compared(config: RunConfig) -> dict[str, Any]:
    data = config.model_dump()
    values = {k: data[k] for k in COMPARED_KEYS}
    values["number of examples"] = config.extra.get("total")
    return values


def _differences(reference: RunConfig, other: RunConfig) -> list[str]:
    mine, theirs = _compared(reference), _compared(other)
    found = []
    for key, value in mine.items():
        if key == "prompt_hashes":
            for prompt in sorted(set(value) | set(theirs[key])):
                if value.get(prompt) != theirs[key].get(prompt):
                    found.append(f"prompt_hashes[{prompt!r}]")
        elif value != theirs[key]:
            found.append(f"{key} ({value!r} vs {theirs[key]!r})")
    return found


def check_shards(paths: Sequence[str | os.PathLike[str]]) -> tuple[list[ShardFile], list[str]]:
    """Read shard files and check that they are shards of one run.

    Args:
        paths: The shard result files.

    Returns:
        ``(shards, problems)``: the shards by shard number, and what keeps them from
        covering every example of the run exactly once (missing shards, shards with
        fewer results than examples); no problems means the merge is complete.

    Raises:
        ResultFileError: When the files come from different runs (naming the differing
            field), split the run differently, repeat a shard, hold an example twice, or
            hold more results than their shard has examples.
    """
    if not paths:
        raise ConfigurationError("merging needs at least one shard result file")
    shards = [_read(Path(p)) for p in paths]
    first = shards[0]
    for shard in shards[1:]:
        differs = _differences(first.config, shard.config)
        if differs:
            raise ResultFileError(
                f"{shard.path} is from a different run than {first.path}: it differs in "
                f"{', '.join(differs)}; only shards of one run can be merged"
            )
    counts = {s.count for s in shards}
    if len(counts) > 1:
        layout = ", ".join(f"{s.path} is shard {s.label}" for s in shards)
        raise ResultFileError(f"the files split the run differently ({layout}); not merged")
    by_index: dict[int, ShardFile] = {}
    for shard in sorted(shards, key=lambda s: s.index):
        if shard.index in by_index:
            raise ResultFileError(
                f"shard {shard.label} appears twice ({by_index[shard.index].path} and "
                f"{shard.path}); give each shard once"
            )
        by_index[shard.index] = shard
    seen: dict[str, Path] = {}
    for shard in by_index.values():
        for record in shard.records:
            key = str(record["id"])
            if key in seen:
                raise ResultFileError(
                    f"example {key!r} is in both {seen[key]} and {shard.path}; not merged"
                )
            seen[key] = shard.path
    count = first.count
    problems = []
    for index in range(count):
        present = by_index.get(index)
        if present is None:
            where = first.path.parent / shard_file_name(index, count)
            problems.append(f"shard {index}/{count} is missing (no {where})")
        elif present.expected is not None and len(present.records) != present.expected:
            have, want = len(present.records), present.expected
            if have > want:
                raise ResultFileError(
                    f"{present.path} holds {have} results but shard {present.label} of "
                    f"{first.config.extra.get('total')} examples has {want}; was it continued "
                    "with a larger --limit? Use a fresh --out folder for a larger run"
                )
            problems.append(f"shard {present.label} is incomplete: {have} of {want} results")
    return list(by_index.values()), problems


def check_merge_target(out: str | os.PathLike[str]) -> None:
    """Refuse to replace a file that is not an earlier merge (an unsharded run's results).

    Raises:
        ConfigurationError: When ``out`` exists and is not a merged result file.

    Example:
        >>> check_merge_target("runs/new/results.jsonl")  # doctest: +SKIP
    """
    target = Path(out)
    if not target.exists():
        return
    try:
        config = read_results(target)[0]
    except ResultFileError:
        config = None
    if config is None or config.shard is not None or "merged_from" not in config.extra:
        raise ConfigurationError(
            f"{target} exists and is not a merge of shards (it may hold an unsharded run); "
            "merge into another file (--out), or move it aside first"
        )


def merge_shards(
    paths: Sequence[str | os.PathLike[str]],
    out: str | os.PathLike[str],
    *,
    allow_partial: bool = False,
) -> MergedRun:
    """Check shard files (see :func:`check_shards`) and merge them into ``out``.

    The merged file replaces ``out`` at once (written beside it, then renamed), so a
    failed merge leaves an existing ``out`` as it was.

    Args:
        paths: The shard result files.
        out: The merged result file.
        allow_partial: Merge even when shards are missing or incomplete; the examples
            without a result then count as wrong in reports.

    Returns:
        A :class:`MergedRun`; its ``problems`` list what a partial merge lacks.

    Raises:
        ResultFileError: When the files do not belong together (see :func:`check_shards`),
            or, without ``allow_partial``, when shards are missing or incomplete.
        ConfigurationError: When ``out`` is one of the shard files.

    Example:
        >>> merge_shards(["s/results-0-of-2.jsonl", "s/results-1-of-2.jsonl"],  # doctest: +SKIP
        ...              "merged.jsonl").records
        12
    """
    target = Path(out)
    if any(target.resolve() == Path(p).resolve() for p in paths):
        raise ConfigurationError(f"the merged file {target} is one of the shard files; pick --out")
    check_merge_target(target)
    shards, problems = check_shards(paths)
    if problems and not allow_partial:
        raise ResultFileError(
            "the shards do not cover the run: "
            + "; ".join(problems)
            + ". Finish them by rerunning the same `tablereason eval ... --shard i/n` command "
            "(it resumes), or merge what there is with --allow-partial (missing examples count "
            "as wrong)"
        )
    first = shards[0].config
    config = first.model_copy(
        update={
            "shard": None,
            "extra": {
                **first.extra,
                "merged_from": [str(s.path) for s in shards],
                "shards": [s.label for s in shards],
                "complete": not problems,
            },
        }
    )
    partial = target.with_name(target.name + ".partial")
    if partial.exists():
        partial.unlink()
    written = 0
    with open_results(partial, config, sync_interval_s=60.0) as writer:
        for shard in shards:
            for record in shard.records:
                writer.write(record)
                written += 1
    os.replace(partial, target)
    total = first.extra.get("total")
    return MergedRun(
        path=target,
        config=config,
        shards=shards,
        count=shards[0].count,
        records=written,
        total=total if isinstance(total, int) else None,
        problems=problems,
    )
