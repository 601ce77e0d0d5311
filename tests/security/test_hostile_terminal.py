"""Cells and model output reach the terminal with their control characters escaped.

A cell, a header, an example id or a model reply holding ESC/CSI sequences, BEL, a
carriage return or a bidirectional override must be shown as escapes (``\\x1b``) by
``tablereason ask``, ``show``, ``report`` and the error line, never written raw.
"""

from __future__ import annotations

import io
import json
import re
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from run_files import record, trace, write_run

import tablereason.llm.resolve as resolve
from tablereason.cli import EXIT_INPUT, EXIT_OK, main
from tablereason.llm import ScriptedLLM
from tablereason.trace.console import print_trace
from tablereason.trace.terminal import visible, visible_json

# What a hostile cell or reply may hold: clear screen, set the title, recolour, 8-bit CSI,
# hyperlink (OSC 8), bell, backspace, carriage return, NEL, DEL, bidi override and isolate.
PAYLOADS = {
    "clear": "\x1b[2J\x1b[H",
    "title": "\x1b]0;pwned\x07",
    "colour": "\x1b[31mred\x1b[0m",
    "csi8": "\x9b2J",
    "link": "\x1b]8;;http://x\x1b\\click\x1b]8;;\x1b\\",
    "bell": "\x07",
    "backspace": "abc\x08\x08\x08xyz",
    "return": "fine\rEVIL",
    "nel": "a\x85b",
    "del": "a\x7fb",
    "override": "abc\u202edcba",
    "isolate": "x\u2066y\u2069",
    "nul": "a\x00b",
    "line-separator": "a\u2028b",
}
RAW = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028-\u202e\u2066-\u2069]")


def raw_controls(text: str) -> list[str]:
    """Control characters in printed text, ignoring colour codes the printer wrote itself."""
    own = re.sub("\x1b\\[[0-9;]*m", "", text)  # SGR sequences rich writes on a terminal
    return RAW.findall(own.replace("\r\n", "\n"))


@pytest.mark.parametrize("name", PAYLOADS)
def test_visible_escapes_every_payload(name: str) -> None:
    shown = visible(PAYLOADS[name])
    assert not RAW.findall(shown)
    assert not RAW.findall(visible(PAYLOADS[name], lines=True))


def test_visible_keeps_ordinary_text() -> None:
    text = "Zürich 中文 🎉 עברית\u200f ok | 1,104"
    assert visible(text) == text
    assert visible("a\nb\tc", lines=True) == "a\nb\tc"
    assert visible("a\nb") == "a\\nb"
    assert visible("\x1b") == "\\x1b" and visible("\u202e") == "\\u202e"


@given(st.text())
def test_visible_never_leaves_a_control_character(text: str) -> None:
    assert not RAW.findall(visible(text))
    assert not RAW.findall(visible(text, lines=True).replace("\n", "").replace("\t", ""))


@given(st.recursive(st.text(), lambda inner: st.lists(inner, max_size=3), max_leaves=8))
def test_visible_json_means_the_same(value: object) -> None:
    text = visible_json(json.dumps(value, ensure_ascii=False))
    assert json.loads(text) == value
    assert not RAW.findall(text)


def hostile_trace(payload: str) -> dict:
    table = {"caption": payload, "header": ["name" + payload, "v"], "rows": [[payload, "1"]]}
    changed = {"caption": None, "header": ["name" + payload], "rows": [[payload]]}
    return {
        "question": "what? " + payload,
        "steps": [
            {"kind": "input", "name": "table", "table": table},
            {"kind": "plan", "name": "f_" + payload, "duration_s": 0.1},
            {
                "kind": "operation",
                "name": "select_column" + payload,
                "arguments": {"columns": [payload], payload: 1},
                "note": "note " + payload,
                "error": "error " + payload,
                "table": changed,
            },
        ],
    }


class FakeTerminal(io.StringIO):
    def isatty(self) -> bool:
        return True


@pytest.mark.parametrize("plain", [True, False])
@pytest.mark.parametrize("name", PAYLOADS)
def test_trace_printing_escapes_cells_names_and_replies(name: str, plain: bool) -> None:
    payload = PAYLOADS[name]
    out = FakeTerminal()
    print_trace(
        hostile_trace(payload), file=out, answer=["x" + payload], error=payload, plain=plain
    )
    text = out.getvalue()
    assert (RAW.findall(text) if plain else raw_controls(text)) == []
    assert payload not in text
    assert visible(payload) in text  # shown, escaped


def scripted(answer: str) -> ScriptedLLM:
    def reply(request) -> str:
        return " <END>" if "Function Chain" in request.as_text() else " " + answer

    return ScriptedLLM(fn=reply)


@pytest.fixture
def hostile_csv(tmp_path: Path) -> Path:
    path = tmp_path / "t.csv"
    cells = [PAYLOADS[k] for k in ("clear", "title", "csi8", "override", "return")]
    rows = "\n".join(f'"{c}",{i}' for i, c in enumerate(cells))
    path.write_text(f'"name{PAYLOADS["colour"]}",n\n{rows}\n', encoding="utf-8")
    return path


@pytest.mark.parametrize("output", [[], ["--answer-only"], ["--json"]])
def test_cli_ask_output_has_no_raw_control_characters(
    hostile_csv: Path, monkeypatch, capsys, output: list[str]
) -> None:
    answer = PAYLOADS["title"] + PAYLOADS["csi8"]
    monkeypatch.setattr(resolve, "resolve_llm", lambda *a, **k: scripted(answer))
    code = main(["ask", str(hostile_csv), "which? " + PAYLOADS["bell"], *output])
    assert code == EXIT_OK
    out = capsys.readouterr().out
    assert raw_controls(out) == []
    if output == ["--json"]:
        payload = json.loads(out)
        assert payload["answer"] == [answer]  # the same value, escaped in the text only
        cells = payload["trace"]["steps"][0]["table"]["rows"]
        assert cells[2][0] == PAYLOADS["csi8"]
    else:
        assert "\\x1b]0;pwned\\x07" in out


def hostile_run(folder: Path) -> Path:
    p = PAYLOADS
    return write_run(
        folder,
        [
            record(
                "nt-0" + p["clear"],
                error="failed " + p["title"],
                answer=[p["csi8"]],
                gold=[p["bell"]],
                trace=trace("q " + p["override"], p["colour"], p["return"]),
            ),
            record("nt-1", trace=trace("q", p["link"], "a")),
        ],
        dataset="wikitq" + p["clear"],
        model="m" + p["title"],
    )


def test_show_escapes_ids_errors_and_config(tmp_path: Path, capsys) -> None:
    run = hostile_run(tmp_path / "run")
    assert main(["show", str(run)]) == EXIT_OK
    out = capsys.readouterr().out
    assert raw_controls(out) == [] and "nt-0\\x1b[2J" in out
    assert main(["show", str(run), "--example", "nt-0" + PAYLOADS["clear"]]) == EXIT_OK
    out = capsys.readouterr().out
    assert raw_controls(out) == [] and "\\x1b[31mred" in out and "\\u202e" in out
    assert main(["show", str(run), "--example", "nt-1"]) == EXIT_OK
    assert raw_controls(capsys.readouterr().out) == []


def test_report_escapes_its_summary(tmp_path: Path, capsys) -> None:
    run = hostile_run(tmp_path / "run")
    assert main(["report", str(run)]) == EXIT_OK
    out = capsys.readouterr().out
    assert raw_controls(out) == [] and "wikitq\\x1b[2J" in out


def test_error_messages_escape_what_they_quote(tmp_path: Path, capsys) -> None:
    name = tmp_path / ("missing" + PAYLOADS["title"] + ".csv")
    assert main(["ask", str(name), "q"]) == EXIT_INPUT
    err = capsys.readouterr().err
    assert raw_controls(err) == [] and "\\x1b]0;pwned\\x07" in err


def test_cli_ask_reads_with_the_given_delimiter(tmp_path: Path, monkeypatch, capsys) -> None:
    path = tmp_path / "t.txt"
    path.write_text("a;b|c\n1;2|3\n", encoding="utf-8")  # guessed: ";"; asked: "|"
    monkeypatch.setattr(resolve, "resolve_llm", lambda *a, **k: scripted("x"))
    assert main(["ask", str(path), "q", "--delimiter", "|", "--json"]) == EXIT_OK
    steps = json.loads(capsys.readouterr().out)["trace"]["steps"]
    assert steps[0]["table"]["header"] == ["a;b", "c"]
