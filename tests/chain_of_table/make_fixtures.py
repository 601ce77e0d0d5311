"""Cut the small Chain-of-Table test fixtures from the benchmark data.

Run from the repository root (needs the data in $TABLEREASON_DATA_DIR or ../shared/data):

    .venv/bin/python tests/chain_of_table/make_fixtures.py

TabFact tables used by the prompt demos are excluded (see DEMO_TABLE_IDS).
"""

from __future__ import annotations

import csv
import json
import os
from pathlib import Path

from tablereason.methods.chain_of_table.demos import DEMO_TABLE_IDS

DATA = Path(
    os.environ.get("TABLEREASON_DATA_DIR")
    or os.environ.get("TABLEREASON_DATA")  # the name this script read first
    or Path(__file__).parents[3] / "shared" / "data"
)
OUT = Path(__file__).parents[1] / "fixtures" / "chain_of_table"
MAX_ROWS = 8


def tabfact(count: int = 6) -> list[dict[str, object]]:
    seen: set[str] = set()
    out = []
    for line in (DATA / "tabfact" / "test.jsonl").read_text().splitlines():
        record = json.loads(line)
        tid = record["table_id"]
        if tid in seen or tid in DEMO_TABLE_IDS:
            continue
        seen.add(tid)
        out.append(
            {
                "id": f"tabfact-{tid}",
                "question": record["statement"],
                "label": record["label"],
                "caption": record["table_caption"],
                "header": record["table_text"][0],
                "rows": record["table_text"][1 : MAX_ROWS + 1],
            }
        )
        if len(out) == count:
            break
    return out


def wikitq(count: int = 4) -> list[dict[str, object]]:
    from tablereason.table import Table

    out = []
    with open(DATA / "wikitq" / "data" / "test.tsv", encoding="utf-8") as handle:
        for row in csv.DictReader(handle, delimiter="\t", quoting=csv.QUOTE_NONE):
            table = Table.from_csv(DATA / "wikitq" / row["context"])
            out.append(
                {
                    "id": row["id"],
                    "question": row["utterance"],
                    "target": row["targetValue"],
                    "caption": None,
                    "header": table.columns,
                    "rows": table.rows(MAX_ROWS),
                }
            )
            if len(out) == count:
                break
    return out


def main() -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    for name, records in (("tabfact.jsonl", tabfact()), ("wikitq.jsonl", wikitq())):
        text = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records)
        (OUT / name).write_text(text, encoding="utf-8")
        print(f"wrote {len(records)} examples to {OUT / name}")


if __name__ == "__main__":
    main()
