"""HotpotQA (distractor setting): multi-hop questions with ten context paragraphs.

Two layouts are read:

* IRCoT-style JSON lines (``shared/data/hotpotqa/dev_distractor.jsonl``): ``question_id``,
  ``question_text``, ``answers_objects[0]["spans"][0]``, ``contexts`` (``title``,
  ``paragraph_text``, ``is_supporting``) and an optional ``type``.
* The official JSON array (``hotpot_dev_distractor_v1.json``): ``_id``, ``question``,
  ``answer``, ``context`` (``[title, [sentences]]``), ``supporting_facts``
  (``[title, sentence_id]``), ``type``, ``level``. A paragraph's text is its sentences
  joined with one space, as in the IRCoT files.

Splits: ``dev`` (``dev_distractor.jsonl`` or ``hotpot_dev_distractor_v1.json``), ``train``
(``hotpot_train_v1.1.json``), ``dev_fullwiki`` (``hotpot_dev_fullwiki_v1.json``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tablereason.datasets.example import Example, Passage
from tablereason.datasets.loader import (
    DATASETS,
    DatasetFileError,
    DatasetSpec,
    iter_jsonl,
    read_json,
    require_fields,
)

HOW_TO_GET = (
    "Get hotpot_dev_distractor_v1.json from hotpotqa.github.io with "
    "tablereason.datasets.download('hotpotqa', data_dir), or point data_dir at a local copy."
)
_FILES = {
    "dev": ("dev_distractor.jsonl", "hotpot_dev_distractor_v1.json"),
    "train": ("train.jsonl", "hotpot_train_v1.1.json"),
    "dev_fullwiki": ("dev_fullwiki.jsonl", "hotpot_dev_fullwiki_v1.json"),
}
_IRCOT_FIELDS = ("question_id", "question_text", "answers_objects", "contexts")
_OFFICIAL_FIELDS = ("_id", "question", "answer", "context")


def _split_files(folder: Path, split: str) -> list[Path]:
    return [folder / name for name in _FILES.get(split, (f"{split}.jsonl", f"{split}.json"))]


def _from_ircot(record: Any, where: str) -> Example:
    expected = "an IRCoT-style HotpotQA record (" + ", ".join(_IRCOT_FIELDS) + ")"
    require_fields(record, _IRCOT_FIELDS, where=where, expected=expected)
    answers = record["answers_objects"]
    try:
        spans = [str(s) for s in answers[0]["spans"]]
        answer = spans[0]
        passages = [
            Passage(
                title=str(c["title"]),
                text=str(c["paragraph_text"]),
                is_supporting=bool(c.get("is_supporting", False)),
            )
            for c in record["contexts"]
        ]
    except (IndexError, KeyError, TypeError) as exc:
        raise DatasetFileError(
            f"{where}: answers_objects[0].spans[0] and contexts[].title/paragraph_text are "
            f"required ({exc!r})"
        ) from exc
    metadata: dict[str, Any] = {"type": record.get("type"), "level": record.get("level")}
    if len(spans) > 1:
        metadata["all_spans"] = spans
    return Example(
        dataset="hotpotqa",
        id=str(record["question_id"]),
        question=str(record["question_text"]),
        answer=answer,
        passages=passages,
        metadata=metadata,
    )


def _from_official(record: Any, where: str) -> Example:
    expected = "an official HotpotQA record (" + ", ".join(_OFFICIAL_FIELDS) + ")"
    require_fields(record, _OFFICIAL_FIELDS, where=where, expected=expected)
    facts = [tuple(f) for f in record.get("supporting_facts", [])]
    supporting_titles = {f[0] for f in facts}
    try:
        passages = [
            Passage(
                title=str(title),
                text=" ".join(str(s) for s in sentences),
                is_supporting=title in supporting_titles,
                sentences=[str(s) for s in sentences],
            )
            for title, sentences in record["context"]
        ]
    except (TypeError, ValueError) as exc:
        raise DatasetFileError(
            f"{where}: context must be a list of [title, [sentences]] pairs ({exc})"
        ) from exc
    return Example(
        dataset="hotpotqa",
        id=str(record["_id"]),
        question=str(record["question"]),
        answer=str(record["answer"]),
        passages=passages,
        metadata={
            "type": record.get("type"),
            "level": record.get("level"),
            "supporting_facts": [list(f) for f in facts],
        },
    )


def read_hotpotqa(folder: Path, split: str) -> list[Example]:
    """Read a HotpotQA split in either layout (chosen by the file's extension).

    Example:
        >>> exs = read_hotpotqa(Path("data/hotpotqa"), "dev")  # doctest: +SKIP
        >>> len(exs[0].passages)  # doctest: +SKIP
        10
    """
    path = SPEC.find_split_file(folder, split)
    if path.suffix == ".jsonl":
        records = iter_jsonl(path, expected="HotpotQA records", how_to_get=HOW_TO_GET)
        return [_from_ircot(record, f"{path} line {number}") for number, record in records]
    data = read_json(path, expected="a JSON array of HotpotQA records", how_to_get=HOW_TO_GET)
    if not isinstance(data, list):
        raise DatasetFileError(f"{str(path)!r}: expected a JSON array of HotpotQA records")
    return [_from_official(record, f"{path} item {i}") for i, record in enumerate(data)]


SPEC = DATASETS.register(
    "hotpotqa",
    DatasetSpec(
        name="hotpotqa",
        description="HotpotQA distractor: multi-hop questions over 10 paragraphs (EM / F1)",
        splits=("dev", "train", "dev_fullwiki"),
        default_split="dev",
        default_metric="hotpotqa_em",
        default_method="rewoo",
        reader=read_hotpotqa,
        split_files=_split_files,
        how_to_get=HOW_TO_GET,
    ),
)
