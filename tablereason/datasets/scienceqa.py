"""ScienceQA: multiple-choice science questions, with Chameleon's captions and OCR.

Folder layout (ScienceQA's ``data/scienceqa`` plus chameleon-llm's extras)::

    problems.json        {pid: problem}; answer is the 0-based index of the right choice
    pid_splits.json      {split: [pids]}
    captions.json        {"captions": {pid: caption}}   (image problems)
    ocrs.json            {"texts": {pid: "[(bbox, text, conf), ...]"}}
    images/<split>/<pid>/image.png

The gold ``answer`` is the text of the right choice; ``context`` is the hint.
``metadata`` keeps the answer index, subject, grade (``"grade4"``) and its number,
topic, category, skill, task, image name and path, caption, OCR text (the Python
repr string, as Chameleon stores it), lecture and solution, and the folder the
problem was read from (``data_folder``, where Chameleon's offline search finds its
lecture corpus).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tablereason.datasets.example import Example
from tablereason.datasets.loader import (
    DATASETS,
    DatasetFileError,
    DatasetSpec,
    read_json,
    require_fields,
)

HOW_TO_GET = (
    "Get problems.json and pid_splits.json from github.com/lupantech/ScienceQA (data/scienceqa/) "
    "and captions.json and ocrs.json from github.com/lupantech/chameleon-llm (data/scienceqa/) "
    "with tablereason.datasets.download('scienceqa', data_dir), or point data_dir at a local copy."
)
_FIELDS = ("question", "choices", "answer", "hint", "image", "grade", "subject")


def _side_table(folder: Path, name: str, key: str, expected: str) -> dict[str, Any]:
    data = read_json(folder / name, expected=expected, how_to_get=HOW_TO_GET)
    if not isinstance(data, dict) or not isinstance(data.get(key), dict):
        raise DatasetFileError(f"{str(folder / name)!r}: expected {expected}")
    table: dict[str, Any] = data[key]
    return table


def read_scienceqa(folder: Path, split: str) -> list[Example]:
    """Read the problems listed under ``split`` in ``pid_splits.json``.

    Example:
        >>> exs = read_scienceqa(Path("data/scienceqa"), "test")  # doctest: +SKIP
        >>> exs[0].choices[exs[0].metadata["answer_index"]] == exs[0].answer  # doctest: +SKIP
        True
    """
    splits = read_json(
        folder / "pid_splits.json", expected="{split: [pids]}", how_to_get=HOW_TO_GET
    )
    if not isinstance(splits, dict):
        raise DatasetFileError(f"{str(folder / 'pid_splits.json')!r}: expected {{split: [pids]}}")
    if split not in splits:
        raise DatasetFileError(
            f"{str(folder / 'pid_splits.json')!r} has no split {split!r}; it lists: "
            f"{', '.join(splits)}"
        )
    problems = read_json(folder / "problems.json", expected="{pid: problem}", how_to_get=HOW_TO_GET)
    captions = _side_table(folder, "captions.json", "captions", '{"captions": {pid: caption}}')
    ocrs = _side_table(folder, "ocrs.json", "texts", '{"texts": {pid: ocr}}')
    examples = []
    data_folder = str(folder.resolve())
    for pid in splits[split]:
        pid = str(pid)
        if pid not in problems:
            raise DatasetFileError(
                f"pid_splits.json lists problem {pid} under {split!r} but problems.json lacks it; "
                "the two files must come from the same release."
            )
        record = problems[pid]
        where = f"{folder / 'problems.json'} problem {pid}"
        require_fields(record, _FIELDS, where=where, expected="a ScienceQA problem")
        choices = [str(c) for c in record["choices"]]
        index = record["answer"]
        if not isinstance(index, int) or not 0 <= index < len(choices):
            raise DatasetFileError(f"{where}: answer {index!r} is not a valid choice index")
        image = record["image"]
        image_path = ""
        if image:
            image_path = str(folder / "images" / str(record.get("split") or split) / pid / image)
        grade = str(record["grade"])
        examples.append(
            Example(
                dataset="scienceqa",
                id=pid,
                question=record["question"],
                answer=choices[index],
                choices=choices,
                context=record["hint"] or "",
                metadata={
                    "answer_index": index,
                    "subject": record["subject"],
                    "grade": grade,
                    "grade_number": int(grade.removeprefix("grade") or 0),
                    "topic": record.get("topic"),
                    "category": record.get("category"),
                    "skill": record.get("skill"),
                    "task": record.get("task"),
                    "image": image,
                    "image_file": image_path,
                    "caption": captions.get(pid, ""),
                    "ocr": ocrs.get(pid, "[]"),
                    "lecture": record.get("lecture", ""),
                    "solution": record.get("solution", ""),
                    "split": record.get("split", split),
                    "data_folder": data_folder,
                },
            )
        )
    return examples


def _split_files(folder: Path, split: str) -> list[Path]:
    return [folder / "pid_splits.json"]


def _local_splits(folder: Path) -> list[str]:
    path = folder / "pid_splits.json"
    if not (path.is_file() and (folder / "problems.json").is_file()):
        return []
    try:
        splits = read_json(path, expected="{split: [pids]}")
    except DatasetFileError:
        return []
    return [s for s in SPEC.splits if isinstance(splits, dict) and s in splits]


SPEC = DATASETS.register(
    "scienceqa",
    DatasetSpec(
        name="scienceqa",
        description="ScienceQA: multiple-choice science questions (choice accuracy)",
        splits=("test", "val", "train", "minitest", "minival", "minitrain", "trainval"),
        default_split="test",
        default_metric="scienceqa_accuracy",
        default_method="chameleon",
        reader=read_scienceqa,
        split_files=_split_files,
        how_to_get=HOW_TO_GET,
        split_lister=_local_splits,
    ),
)
