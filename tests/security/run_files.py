"""Run folders written by hand (a config line, then result records), for the hostile tests."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

CONFIG: dict[str, Any] = {
    "type": "config",
    "dataset": "wikitq",
    "split": "test",
    "method": "chain_of_table",
    "model": "scripted:scripted",
    "metric": "wikitq_accuracy",
    "extra": {"total": 2},
}


def trace(question: str, cell: str, answer: str) -> dict[str, Any]:
    """A two-step trace whose table holds ``cell``."""
    table = {"caption": None, "header": ["name", "value"], "rows": [[cell, "1"], ["b", "2"]]}
    return {
        "method": "chain_of_table",
        "question": question,
        "steps": [
            {"kind": "input", "name": "table", "table": table},
            {"kind": "answer", "name": "answer", "raw": [answer], "arguments": {"text": answer}},
        ],
    }


def record(example: str, **fields: Any) -> dict[str, Any]:
    """A result record with defaults for every field the report reads."""
    base: dict[str, Any] = {
        "type": "result",
        "id": example,
        "score": 1.0,
        "answer": ["a"],
        "gold": ["a"],
        "duration_s": 0.5,
        "prompt_tokens": 10,
        "completion_tokens": 2,
        "requests": 1,
    }
    return {**base, **fields}


def write_run(folder: Path, records: list[dict[str, Any]], **config: Any) -> Path:
    """Write ``folder/results.jsonl``; returns the folder."""
    folder.mkdir(parents=True, exist_ok=True)
    lines = [json.dumps({**CONFIG, **config})] + [json.dumps(r) for r in records]
    (folder / "results.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return folder
