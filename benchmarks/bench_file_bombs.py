"""How long ``load_table`` takes to refuse each kind of hostile file, at the default limits.

Run:  python benchmarks/bench_file_bombs.py [--repeat 3] [--skip-cells]

Builds each file in a temporary folder (workbooks by hand with zipfile), then times
``load_table`` on it until the ``TableParseError`` (median of ``--repeat`` runs) and
prints a Markdown table with the file's size and the first words of the message. The
cell-count case (a sheet without a declared size, read until it passes ``MAX_CELLS``)
is the slowest by design and can be skipped.
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import sys
import tempfile
import time
import zipfile
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "security"))

from xlsx_files import (
    CONTENT_TYPES,
    ROOT_RELS,
    SHEET_HEAD,
    WORKBOOK,
    WORKBOOK_RELS,
    sheet_xml,
    write_streamed_part,
    write_xlsx,
)

from tablereason.api import load_table
from tablereason.errors import TableParseError
from tablereason.table.io import workbooks


def zip_bomb(folder: Path) -> Path:
    """400 MiB of one repeated string, deflated to about 1 MB."""
    return write_streamed_part(
        folder / "bomb.xlsx", "xl/sharedStrings.xml", b"<si><t>boom</t></si>" * 52_429, 400
    )


def ratio_bomb(folder: Path) -> Path:
    """100 MiB (under the size limit) that deflates about 700 times."""
    return write_streamed_part(
        folder / "ratio.xlsx", "xl/worksheets/sheet2.xml", b"<row/>" * 174_763, 100
    )


def declared_bomb(folder: Path) -> Path:
    """A tiny sheet that declares 1,048,576 x 16,384 cells (openpyxl would pad every row)."""
    return write_xlsx(folder / "declared.xlsx", sheet_xml([["a"]], dimension="A1:XFD1048576"))


def wide_row(folder: Path) -> Path:
    """A row whose one cell sits in the last column (16,384 cells once padded)."""
    sheet = sheet_xml([["x"]]).replace(
        "</sheetData>",
        '<row r="2"><c r="XFD2" t="inlineStr"><is><t>far</t></is></c></row></sheetData>',
    )
    return write_xlsx(folder / "wide.xlsx", sheet)


def cell_bomb(folder: Path) -> Path:
    """No declared size; just over MAX_CELLS small numeric cells, under the size limit."""
    rng = random.Random(3)
    columns = 20
    rows = workbooks.MAX_CELLS // columns + 10
    path = folder / "cells.xlsx"
    parts = {
        "[Content_Types].xml": CONTENT_TYPES,
        "_rels/.rels": ROOT_RELS,
        "xl/workbook.xml": WORKBOOK,
        "xl/_rels/workbook.xml.rels": WORKBOOK_RELS,
    }
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, text in parts.items():
            archive.writestr(name, text)
        with archive.open("xl/worksheets/sheet1.xml", "w", force_zip64=True) as handle:
            handle.write(f"{SHEET_HEAD}<sheetData>".encode())
            for _ in range(rows):  # no coordinates: the smallest cells a sheet can hold
                cells = "".join(f"<c><v>{rng.randrange(1000)}</v></c>" for _ in range(columns))
                handle.write(f"<row>{cells}</row>".encode())
            handle.write(b"</sheetData></worksheet>")
    return path


def deep_json(folder: Path) -> Path:
    path = folder / "deep.json"
    path.write_bytes(b"[" * 1_000_000 + b"]" * 1_000_000)
    return path


def huge_json(folder: Path) -> Path:
    path = folder / "huge.json"
    with path.open("wb") as handle:  # sparse: refused by its size before it is read
        handle.truncate(300 * 2**20)
    return path


def binary(folder: Path) -> Path:
    path = folder / "garbage.csv"
    path.write_bytes(os.urandom(200 * 2**20))
    return path


def one_long_line(folder: Path) -> Path:
    path = folder / "line.csv"
    path.write_bytes(b"a\n" + b"x" * (200 * 2**20))
    return path


def wide_csv(folder: Path) -> Path:
    path = folder / "wide.csv"
    path.write_bytes(b",".join([b"x"] * 1_000_000) + b"\n")
    return path


CASES: dict[str, Callable[[Path], Path]] = {
    "xlsx zip bomb (400 MiB declared)": zip_bomb,
    "xlsx part deflated 686x (100 MiB)": ratio_bomb,
    "xlsx declaring 17 billion cells": declared_bomb,
    "xlsx row of 16,384 cells": wide_row,
    "JSON nested 1,000,000 deep": deep_json,
    "JSON document of 300 MiB": huge_json,
    "200 MiB of random bytes as .csv": binary,
    "CSV line of 200 MiB": one_long_line,
    "CSV line of 1,000,000 fields": wide_csv,
    "xlsx of 2,000,010 cells, no declared size": cell_bomb,
}


def refuse_seconds(path: Path, repeat: int) -> tuple[float, str]:
    times, message = [], ""
    for _ in range(repeat):
        start = time.perf_counter()
        try:
            load_table(path)
        except TableParseError as error:
            message = str(error)
        else:
            raise SystemExit(f"{path} was not refused")
        times.append(time.perf_counter() - start)
    return statistics.median(times), message


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--skip-cells", action="store_true", help="skip the slow cell-count case")
    parser.add_argument("--only", help="run only the cases whose name contains this")
    args = parser.parse_args()
    print("| file | size | refused in | message |")
    print("|---|---|---|---|")
    with tempfile.TemporaryDirectory() as tmp:
        for name, make in CASES.items():
            if (args.skip_cells and make is cell_bomb) or (args.only and args.only not in name):
                continue
            folder = Path(tmp) / make.__name__
            folder.mkdir()
            path = make(folder)
            size = path.stat().st_blocks * 512  # on disk (the 300 MiB JSON is sparse)
            repeat = 1 if make is cell_bomb else args.repeat
            seconds, message = refuse_seconds(path, repeat)
            words = message.split(": ", 1)[1][:70]
            print(
                f"| {name} | {size / 1e6:,.2f} MB | {seconds * 1000:,.0f} ms | {words} … |",
                flush=True,
            )


if __name__ == "__main__":
    main()
