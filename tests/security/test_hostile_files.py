"""Files a user hands load_table, ask and the CLI: each bad one is a clear TableParseError.

Every refusal names the file and says what to do; nothing else escapes (no RecursionError,
UnicodeDecodeError, pandas or zipfile error). Text in other encodings is decoded, not
refused. The CLI turns each refusal into exit code 3 (bad input, docs/cli.md) with one
line on stderr and no traceback.
"""

from __future__ import annotations

import codecs
import gzip
import json
import os
import random
import sqlite3
import subprocess
import sys
import time
import zipfile
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from xlsx_files import sheet_xml, write_streamed_part, write_xlsx

from tablereason.api import load_table
from tablereason.cli import EXIT_INPUT, main
from tablereason.errors import TableParseError
from tablereason.table import Table
from tablereason.table.io import readers, workbooks

RNG = random.Random(15)


def garbage(n: int, *, low: int = 0) -> bytes:
    return bytes(RNG.randrange(low, 256) for _ in range(n))


def real_xlsx(path: Path) -> Path:
    return write_xlsx(path, sheet_xml([["city", "people"], ["Oslo", "0.7"], ["Rome", "2.8"]]))


def sqlite_file(path: Path) -> bytes:
    db = path.with_suffix(".db")
    conn = sqlite3.connect(db)
    conn.execute("CREATE TABLE t (a)")
    conn.commit()
    conn.close()
    return db.read_bytes()


# name, bytes (or a function of the folder giving them), what the message must say
REFUSED: list[tuple[str, Callable[[Path], bytes], str]] = [
    ("garbage.csv", lambda d: garbage(3000), "NUL bytes"),
    ("garbage-no-nul.csv", lambda d: garbage(3000, low=1), "control characters"),
    ("small-garbage.csv", lambda d: garbage(200, low=1), "control characters"),
    ("garbage.tsv", lambda d: garbage(5000), "NUL bytes"),
    ("garbage.json", lambda d: garbage(3000), "NUL bytes"),
    ("garbage.jsonl", lambda d: garbage(3000, low=1), "control characters"),
    ("garbage.txt", lambda d: garbage(100_000), "NUL bytes"),
    ("nuls.csv", lambda d: b"\x00" * 4096, "NUL bytes"),
    ("image.csv", lambda d: b"\x89PNG\r\n\x1a\n" + garbage(500), "PNG image"),
    ("doc.csv", lambda d: b"%PDF-1.7\n" + garbage(500), "PDF document"),
    ("archive.csv", lambda d: gzip.compress(b"a,b\n1,2\n"), "gzip"),
    ("db.csv", sqlite_file, "SQLite database"),
    ("workbook.csv", lambda d: real_xlsx(d / "w.xlsx").read_bytes(), "give it the .xlsx suffix"),
    ("program.csv", lambda d: Path(sys.executable).resolve().read_bytes()[:4096], "executable"),
    ("old-office.csv", lambda d: b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + garbage(500), ".xls"),
    ("deep.json", lambda d: b"[" * 100_000 + b"]" * 100_000, "nested too deeply"),
    (
        "deep-cell.json",
        lambda d: b'[{"a": ' + b"[" * 50_000 + b"]" * 50_000 + b"}]",
        "nested too deeply",
    ),
    ("deep-object.json", lambda d: b'{"a":' * 60_000 + b"1" + b"}" * 60_000, "nested too deeply"),
    ("deep-line.jsonl", lambda d: b'{"a": 1}\n' + b"[" * 80_000 + b"]" * 80_000, "nested"),
    ("not-json.json", lambda d: b"{not json", "not valid JSON"),
    ("number.json", lambda d: b"42", "expected a list of records"),
    ("null.json", lambda d: b"null", "expected a list of records"),
    ("empty-list.json", lambda d: b"[]", "expected a list of records"),
    ("mixed-list.json", lambda d: b'[{"a": 1}, [1, 2]]', "expected a list of records"),
    ("bad-columns.json", lambda d: b'{"columns": "a", "data": [[1]]}', "header must be a list"),
    ("bad-data.json", lambda d: b'{"columns": ["a"], "data": 5}', "expected a list"),
    ("bad-line.jsonl", lambda d: b'{"a": 1}\n{"a": \n', "line 2 is not valid JSON"),
    ("mixed-lines.jsonl", lambda d: b'{"a": 1}\n[1, 2]\n', "line 2 is list"),
    ("scalar-lines.jsonl", lambda d: b'{"a": 1}\n"x"\n', "line 2 is str"),
    ("empty.jsonl", lambda d: b"\n\n", "the file is empty"),
    ("empty.csv", lambda d: b"", "the file is empty"),
    ("only-sep.csv", lambda d: b"sep=;\r\n", "the file is empty"),
    ("wide.csv", lambda d: b",".join([b"x"] * 20_001) + b"\n", "fields, more than"),
    ("big-field.csv", lambda d: b'a\n"' + b"x" * 200_000 + b'"\n', "field larger than"),
    ("text.xlsx", lambda d: b"a,b\n1,2\n", "not an Excel workbook"),
    ("empty.xlsx", lambda d: b"", "not an Excel workbook"),
    ("truncated.xlsx", lambda d: real_xlsx(d / "w.xlsx").read_bytes()[:700], "damaged"),
    ("cut-end.xlsx", lambda d: real_xlsx(d / "w.xlsx").read_bytes()[:-30], "damaged"),
    ("zip-header.xlsx", lambda d: b"PK\x03\x04" + b"\x00" * 100, "not an Excel workbook"),
    ("encrypted.xlsx", lambda d: b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + garbage(900), "damaged"),
]


def _zip_of(parts: dict[str, bytes]) -> bytes:
    import io

    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for name, data in parts.items():
            archive.writestr(name, data)
    return buffer.getvalue()


def _corrupted(d: Path) -> bytes:
    data = bytearray(
        write_xlsx(
            d / "big.xlsx", sheet_xml([[f"v{i}-{j}" for j in range(8)] for i in range(400)])
        ).read_bytes()
    )
    start = data.index(b"xl/worksheets/sheet1.xml") + 40  # inside the deflated sheet
    for i in range(start, start + 200):
        data[i] ^= 0x5A
    return bytes(data)


REFUSED_XLSX: list[tuple[str, Callable[[Path], bytes], str]] = [
    ("other-zip.xlsx", lambda d: _zip_of({"hello.txt": b"hi"}), "damaged"),
    ("no-sheet-part.xlsx", lambda d: _zip_of({"[Content_Types].xml": b"<Types/>"}), "damaged"),
    ("corrupted.xlsx", _corrupted, "damaged"),
    (
        "bad-sheet-xml.xlsx",
        lambda d: write_xlsx(d / "b.xlsx", "<worksheet><sheetData><row>").read_bytes(),
        "damaged",
    ),
    (
        "declared-huge.xlsx",
        lambda d: write_xlsx(
            d / "h.xlsx", sheet_xml([["a"]], dimension="A1:XFD1048576")
        ).read_bytes(),
        "declares 1,048,576 rows x 16,384 columns",
    ),
    (
        "wide-row.xlsx",
        lambda d: write_xlsx(
            d / "w.xlsx",
            sheet_xml([["x"]])[: -len("</sheetData></worksheet>")]
            + '<row r="2"><c r="XFD2" t="inlineStr"><is><t>far</t></is></c></row>'
            + "</sheetData></worksheet>",
        ).read_bytes(),
        "a row has 16,384 cells",
    ),
]


def _run(path: Path) -> TableParseError:
    with pytest.raises(TableParseError) as caught:
        load_table(path)
    return caught.value


@pytest.mark.parametrize(("name", "make", "says"), REFUSED, ids=[c[0] for c in REFUSED])
def test_bad_files_are_refused_clearly(tmp_path: Path, name: str, make, says: str) -> None:
    path = tmp_path / name
    path.write_bytes(make(tmp_path))
    error = _run(path)
    assert str(path) in str(error)
    assert says in str(error)


@pytest.mark.parametrize(("name", "make", "says"), REFUSED_XLSX, ids=[c[0] for c in REFUSED_XLSX])
def test_bad_workbooks_are_refused_clearly(tmp_path: Path, name: str, make, says: str) -> None:
    pytest.importorskip("openpyxl")
    path = tmp_path / name
    path.write_bytes(make(tmp_path))
    error = _run(path)
    assert str(path) in str(error) and says in str(error)


def test_paths_that_are_not_files(tmp_path: Path) -> None:
    assert "no such file" in str(_run(tmp_path / "missing.csv"))
    assert "is a folder" in str(_run(tmp_path))
    fifo = tmp_path / "pipe.csv"
    os.mkfifo(fifo)
    assert "not a regular file" in str(_run(fifo))  # would block forever if opened
    assert "not a regular file" in str(_run(Path("/dev/zero")))  # would never end
    unreadable = tmp_path / "locked.csv"
    unreadable.write_text("a\n1\n")
    unreadable.chmod(0)
    if os.access(unreadable, os.R_OK):  # root reads anything
        return
    assert "cannot be read" in str(_run(unreadable))


# --- other encodings are decoded, not refused --------------------------------------------


TEXT = "Cité,Prix,Note\nNîmes,3,5\nZürich,4,ok\n"
EXPECTED = [["Cité", "Prix", "Note"], ["Nîmes", "3", "5"], ["Zürich", "4", "ok"]]


@pytest.mark.parametrize(
    "encoded",
    [
        TEXT.encode("utf-8"),
        codecs.BOM_UTF8 + TEXT.encode("utf-8"),
        TEXT.encode("utf-16"),  # with the platform's byte-order mark
        codecs.BOM_UTF16_LE + TEXT.encode("utf-16-le"),
        codecs.BOM_UTF16_BE + TEXT.encode("utf-16-be"),
        TEXT.encode("utf-16-le"),  # no mark
        TEXT.encode("utf-16-be"),
        TEXT.encode("utf-32"),
        codecs.BOM_UTF32_BE + TEXT.encode("utf-32-be"),
        TEXT.encode("cp1252"),
        TEXT.replace("\n", "\r\n").encode("utf-16"),
    ],
    ids=lambda b: repr(b[:6]),
)
def test_text_encodings_are_decoded(tmp_path: Path, encoded: bytes) -> None:
    path = tmp_path / "t.csv"
    path.write_bytes(encoded)
    assert load_table(path).to_records() == EXPECTED


def test_utf16_tsv_from_excel_unicode_text(tmp_path: Path) -> None:
    path = tmp_path / "t.txt"  # Excel's "Unicode text": UTF-16 with a mark, tab-separated
    path.write_bytes(TEXT.replace(",", "\t").replace("\n", "\r\n").encode("utf-16"))
    assert load_table(path).to_records() == EXPECTED


@pytest.mark.parametrize("codec", ["latin-1", "cp1252", "utf-16", "utf-8-sig", "utf-32"])
def test_json_in_other_encodings(tmp_path: Path, codec: str) -> None:
    records = [{"Cité": "Nîmes", "Prix": 3}, {"Cité": "Zürich", "Prix": 4}]
    path = tmp_path / "t.json"
    path.write_bytes(json.dumps(records, ensure_ascii=False).encode(codec))
    assert load_table(path).to_records() == [["Cité", "Prix"], ["Nîmes", "3"], ["Zürich", "4"]]
    lines = tmp_path / "t.jsonl"
    lines.write_bytes("\n".join(json.dumps(r, ensure_ascii=False) for r in records).encode(codec))
    assert load_table(lines).to_records() == [["Cité", "Prix"], ["Nîmes", "3"], ["Zürich", "4"]]


def test_a_bad_byte_far_into_a_utf8_file_reads_the_file_as_windows_1252(tmp_path: Path) -> None:
    path = tmp_path / "t.csv"
    body = "".join(f"{i},x\n" for i in range(20_000))  # longer than the 64 KiB sample
    path.write_bytes(b"n,v\n" + body.encode() + b"20000,caf\xe9\n")
    assert load_table(path).rows()[-1] == ["20000", "café"]


def test_a_few_control_characters_keep_a_file_a_table(tmp_path: Path) -> None:
    path = tmp_path / "t.csv"
    path.write_text("name,colour\n\x1b[31mred\x1b[0m,\x07bell\n", encoding="utf-8")
    assert load_table(path).rows() == [["\x1b[31mred\x1b[0m", "\x07bell"]]


def test_json_lines_of_rows_and_wide_records(tmp_path: Path) -> None:
    path = tmp_path / "rows.jsonl"
    path.write_text('["a", "b"]\n[1, 2]\n\n[3]\n', encoding="utf-8")
    assert load_table(path).to_records() == [["a", "b"], ["1", "2"], ["3", ""]]
    wide = tmp_path / "wide.jsonl"
    wide.write_text(json.dumps({f"k{i}": i for i in range(readers.MAX_COLUMNS + 1)}) + "\n")
    assert "more than" in str(_run(wide))


def test_json_document_over_the_limit_points_to_json_lines(tmp_path, monkeypatch) -> None:
    monkeypatch.setattr(readers, "MAX_JSON_BYTES", 100)
    path = tmp_path / "t.json"
    path.write_text(json.dumps([{"a": "x" * 50}, {"a": "y" * 50}]), encoding="utf-8")
    assert "JSON lines" in str(_run(path))


# --- workbooks ----------------------------------------------------------------------------


def test_a_workbook_reads_as_excel_shows_it(tmp_path: Path) -> None:
    openpyxl = pytest.importorskip("openpyxl")
    import datetime as dt

    book = openpyxl.Workbook()
    sheet = book.active
    sheet.append([])  # a blank first row is skipped
    sheet.append(["year", "births", "ok", "date", "note"])
    sheet.append([1985, 1104.0, True, dt.datetime(1985, 3, 1), None])
    sheet.append([])  # a blank row inside the table is kept
    sheet.append([1986, 2.5, False, dt.datetime(1986, 3, 1, 9, 30), "x"])
    sheet.append([])  # trailing blank rows are not
    path = tmp_path / "t.xlsx"
    book.save(path)
    assert load_table(path).to_records() == [
        ["year", "births", "ok", "date", "note"],
        ["1985", "1104", "TRUE", "1985-03-01", ""],
        ["", "", "", "", ""],
        ["1986", "2.5", "FALSE", "1986-03-01 09:30:00", "x"],
    ]


def test_a_hand_made_workbook_reads(tmp_path: Path) -> None:
    pytest.importorskip("openpyxl")
    path = real_xlsx(tmp_path / "t.xlsx")
    assert load_table(path).to_records() == [["city", "people"], ["Oslo", "0.7"], ["Rome", "2.8"]]


def test_zip_bomb_is_refused_before_it_is_expanded(tmp_path: Path) -> None:
    # 400 MiB of one repeated cell, deflated to well under 1 MiB: refused by its directory
    path = write_streamed_part(
        tmp_path / "bomb.xlsx", "xl/sharedStrings.xml", b"<si><t>boom</t></si>" * 52_429, 400
    )
    assert path.stat().st_size < 2_000_000
    start = time.perf_counter()
    error = _run(path)
    assert time.perf_counter() - start < 2.0
    assert "expand to 400 MiB" in str(error) and "limit 128 MiB" in str(error)


def test_highly_compressed_part_is_refused_under_the_size_limit(tmp_path: Path) -> None:
    path = write_streamed_part(
        tmp_path / "r.xlsx", "xl/worksheets/sheet2.xml", b"<row/>" * 1000, 2000
    )
    start = time.perf_counter()
    error = _run(path)
    assert time.perf_counter() - start < 1.0
    assert "expands" in str(error) and "zip bomb" in str(error)


def test_cells_read_are_held_to_the_limit(tmp_path: Path, monkeypatch) -> None:
    pytest.importorskip("openpyxl")
    monkeypatch.setattr(workbooks, "MAX_CELLS", 1000)
    # no <dimension>: the declared size cannot catch it, the count while reading does
    path = write_xlsx(tmp_path / "c.xlsx", sheet_xml([[str(i), "x"] for i in range(600)]))
    assert "more than 1,000 cells" in str(_run(path))


def test_size_and_part_limits(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setattr(workbooks, "MAX_UNCOMPRESSED_BYTES", 64 * 1024)
    noise = os.urandom(50_000).hex().encode()  # incompressible: only the size limit applies
    path = write_xlsx(tmp_path / "s.xlsx", sheet_xml([["a"]]), extra={"xl/media/n.bin": noise})
    assert "limit 0 MiB" in str(_run(path)) or "expand to" in str(_run(path))
    monkeypatch.setattr(workbooks, "MAX_PARTS", 5)
    many = write_xlsx(tmp_path / "p.xlsx", sheet_xml([["a"]]), extra={"x1": "", "x2": ""})
    assert "parts (limit 5)" in str(_run(many))


# --- properties ---------------------------------------------------------------------------


@settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    data=st.binary(max_size=3000),
    suffix=st.sampled_from([".csv", ".tsv", ".json", ".jsonl", ".xlsx", ".txt"]),
)
def test_any_bytes_give_a_table_or_a_table_parse_error(
    tmp_path: Path, data: bytes, suffix: str
) -> None:
    path = tmp_path / f"any{suffix}"
    path.write_bytes(data)
    try:
        table = load_table(path)
    except TableParseError as error:
        assert str(path) in str(error)
    else:
        assert isinstance(table, Table)


cell_text = st.text(
    # no backslash: a backslash before a quote makes the reader take WikiTQ's escapes
    alphabet=st.characters(blacklist_categories=("Cs", "Cc"), blacklist_characters="\ufeff\\"),
    max_size=12,
)


@settings(
    max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    header=st.lists(
        cell_text.filter(lambda s: s.strip() != ""), min_size=1, max_size=4, unique=True
    ),
    body=st.lists(st.lists(cell_text, min_size=4, max_size=4), max_size=6),
    codec=st.sampled_from(["utf-8", "utf-8-sig", "utf-16", "utf-32"]),
)
def test_csv_round_trips_in_every_unicode_encoding(tmp_path, header, body, codec) -> None:
    import csv
    import io

    rows = [row[: len(header)] for row in body]
    buffer = io.StringIO()
    csv.writer(buffer, quoting=csv.QUOTE_ALL).writerows([header, *rows])
    path = tmp_path / "t.csv"
    path.write_bytes(buffer.getvalue().encode(codec))
    table = load_table(path, delimiter=",")
    assert table.labels == header
    assert table.rows() == rows


# --- the command line ---------------------------------------------------------------------


CLI_CASES = ["garbage.csv", "deep.json", "truncated.xlsx", "empty.csv", "bad-line.jsonl"]


@pytest.mark.parametrize("name", CLI_CASES)
def test_cli_ask_refuses_with_exit_code_3_and_one_line(tmp_path, capsys, name: str) -> None:
    make = next(m for n, m, _ in REFUSED if n == name)
    path = tmp_path / name
    path.write_bytes(make(tmp_path))
    # no model is configured: the file is read before any model is looked for
    assert main(["ask", str(path), "what?", "--model", "no-such-model"]) == EXIT_INPUT
    err = capsys.readouterr().err
    assert err.startswith("tablereason: error: ") and str(path) in err
    assert "Traceback" not in err and err.count("\n") == 1


def test_cli_process_prints_no_traceback(tmp_path: Path) -> None:
    path = tmp_path / "deep.json"
    path.write_bytes(b"[" * 100_000 + b"]" * 100_000)
    out = subprocess.run(
        [sys.executable, "-m", "tablereason.cli", "ask", str(path), "what?"],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert out.returncode == EXIT_INPUT
    assert "Traceback" not in out.stderr and "nested too deeply" in out.stderr
