"""The default offline search corpus for ScienceQA: the dataset's own lectures.

What the corpus holds: every distinct non-empty ``lecture`` of the problems of the
corpus splits, one text per distinct lecture, titled by the skill(s) it was written
for. The corpus splits are ``train`` when the folder's ``pid_splits.json`` lists it
(the full ScienceQA release), otherwise every problem in ``problems.json`` (the
test-only developer copy in ``shared/data/scienceqa``).

Why that is fair: a lecture is background written per skill, and the same lecture is
shared by every problem of its skill, in every split. So a question never reads the
corpus unfiltered: :func:`leave_out` hides every lecture of the question's skill, the
question's own lecture, and every near copy of it (word-set overlap of at least
:data:`~tablereason.tools.local_search.NEAR_COPY`, which catches the same lecture
filed under a renamed skill). What is left is background written for other skills;
no problem's solution is ever in the corpus.

The corpus is built on first use and kept in memory per folder (and file version),
so later questions and later runs in the same process reuse it.

Example:
    >>> problems = {"1": {"lecture": "Magnets can attract or repel.", "skill": "Magnets"},
    ...             "2": {"lecture": "Plants need sunlight to make food.", "skill": "Plants"}}
    >>> corpus = LocalCorpus(lecture_texts(problems, problems))
    >>> [p.title for p in corpus.search("do magnets attract")]
    ['Magnets']
    >>> corpus.search("do magnets attract", leave_out=leave_out("Magnets", ""))
    []
"""

from __future__ import annotations

import functools
import os
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from tablereason.datasets.loader import read_json
from tablereason.errors import DatasetError
from tablereason.tools.captioner import scienceqa_folder
from tablereason.tools.local_search import CorpusText, LeaveOut, LocalCorpus

#: Splits read when present; otherwise every problem of the folder.
TRAIN_SPLITS = ("train",)


def lecture_texts(
    problems: Mapping[str, Mapping[str, Any]], pids: Iterable[str]
) -> list[CorpusText]:
    """One :class:`CorpusText` per problem with a lecture (merged later by text).

    Example:
        >>> [t.title for t in lecture_texts({"1": {"lecture": "Magnets pull.",
        ...                                          "skill": "Magnets"}}, ["1"])]
        ['Magnets']
    """
    out = []
    for pid in pids:
        record = problems.get(str(pid))
        if not isinstance(record, Mapping):
            continue
        lecture = str(record.get("lecture") or "")
        if not lecture.strip():
            continue
        skill = str(record.get("skill") or record.get("topic") or "lecture")
        out.append(CorpusText(title=skill, text=lecture, skills=(skill,), sources=(str(pid),)))
    return out


def leave_out(skill: str | None, lecture: str | None) -> LeaveOut:
    """The leave-out for a question with this skill and lecture (see the module notes).

    Example:
        >>> leave_out("Use guide words", "").skill
        'Use guide words'
    """
    return LeaveOut(skill=skill or None, text=lecture or "")


def _folder(data_dir: str | os.PathLike[str] | None) -> Path:
    folder = scienceqa_folder(data_dir)
    if not (folder / "problems.json").is_file():
        raise DatasetError(
            f"no ScienceQA problems.json under {str(folder)!r}, so there is no offline search "
            "corpus; point data_dir (or $TABLEREASON_DATA_DIR) at the data, set search_corpus "
            "to a folder of text files, or pass a search tool"
        )
    return folder


def _stamp(path: Path) -> tuple[int, int]:
    info = path.stat()
    return info.st_mtime_ns, info.st_size


def scienceqa_corpus(
    data_dir: str | os.PathLike[str] | None = None, splits: Iterable[str] | None = None
) -> LocalCorpus:
    """The lecture corpus of the ScienceQA folder under ``data_dir`` (cached in memory).

    Args:
        data_dir: The data root or the ScienceQA folder; ``$TABLEREASON_DATA_DIR`` when None.
        splits: Splits to read; :data:`TRAIN_SPLITS` when the folder has them, else all
            problems.

    Raises:
        DatasetError: When the folder or its ``problems.json`` is missing or unreadable.
    """
    folder = _folder(data_dir).resolve()
    problems = folder / "problems.json"
    split_file = folder / "pid_splits.json"
    stamps = (_stamp(problems), _stamp(split_file) if split_file.is_file() else (0, 0))
    return _build(str(folder), stamps, tuple(splits) if splits is not None else None)


@functools.lru_cache(maxsize=8)
def _build(
    folder: str,
    stamps: tuple[tuple[int, int], tuple[int, int]],
    splits: tuple[str, ...] | None,
) -> LocalCorpus:
    root = Path(folder)
    problems = read_json(root / "problems.json", expected="{pid: problem}")
    if not isinstance(problems, dict):
        raise DatasetError(f"{str(root / 'problems.json')!r}: expected {{pid: problem}}")
    listed: dict[str, Any] = {}
    if (root / "pid_splits.json").is_file():
        found = read_json(root / "pid_splits.json", expected="{split: [pids]}")
        listed = found if isinstance(found, dict) else {}
    chosen = list(splits) if splits is not None else [s for s in TRAIN_SPLITS if s in listed]
    missing = [s for s in chosen if s not in listed]
    if missing:
        raise DatasetError(
            f"{str(root / 'pid_splits.json')!r} has no split {missing[0]!r}; it lists: "
            f"{', '.join(listed) or 'nothing'}"
        )
    if chosen:
        pids = [str(p) for s in chosen for p in listed[s]]
        where = f"split(s) {', '.join(chosen)}"
    else:
        pids, where = list(problems), "all problems"
    texts = lecture_texts(problems, pids)
    corpus = LocalCorpus(texts)
    corpus.description = (
        f"{len(corpus)} distinct ScienceQA lectures ({where} of {folder}), "
        "leaving out each question's skill, lecture and near copies"
    )
    return corpus


@functools.lru_cache(maxsize=8)
def _folder_corpus(folder: str, stamp: tuple[int, int]) -> LocalCorpus:
    return LocalCorpus.from_folder(folder)


def folder_corpus(folder: str | os.PathLike[str]) -> LocalCorpus:
    """The corpus of a folder of text files, cached in memory until a file is added or changed.

    Raises:
        DatasetError: If the folder does not exist or holds no text file.
    """
    root = Path(folder).resolve()
    files = [p.stat() for p in root.rglob("*") if p.is_file()] if root.is_dir() else []
    stamp = (len(files), max((f.st_mtime_ns for f in files), default=0))
    return _folder_corpus(str(root), stamp)
