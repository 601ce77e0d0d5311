"""Open a rendered trace page in headless Chromium and check that its tables render.

Needs Debian's ``chromium`` package (``apt-get install -y chromium``, done by .ci/run);
skipped without it, except under CI (``CI`` set), where it fails.
The browser runs headless, offline, with a fresh profile; the page loads nothing else.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import struct
import subprocess
from pathlib import Path

import pytest

from tablereason.trace import Prediction

# Measures the laid-out page and writes what it found into the DOM as JSON.
PROBE = """
<script>
const data = [...document.querySelectorAll("table.data")].map(t => {
  const box = t.getBoundingClientRect();
  const dropped = t.querySelector("tr.dropped td");
  return {
    width: box.width, height: box.height, rows: t.querySelectorAll("tbody tr").length,
    header: [...t.querySelectorAll("thead th")].map(th => th.textContent),
    dropped: dropped ? getComputedStyle(dropped).backgroundColor : null,
    struck: dropped ? getComputedStyle(dropped).textDecorationLine : null,
  };
});
const details = document.querySelector("section.step details");
const marked = [...document.querySelectorAll("table.data")].map(
  t => [...t.querySelectorAll("td.evidence")].map(td => td.textContent));
const first = document.querySelector("td.evidence");
const out = document.createElement("pre");
out.id = "probe";
out.textContent = JSON.stringify({tables: data, detailsOpen: details.open,
  rawVisible: details.querySelector("pre").checkVisibility(), marked: marked,
  evidenceColour: first ? getComputedStyle(first).backgroundColor : null});
document.body.appendChild(out);
</script>
"""


def chromium() -> str:
    for name in ("chromium", "chromium-browser", "google-chrome"):
        found = shutil.which(name)
        if found:
            return found
    reason = "headless Chromium not found: apt-get install -y chromium (.ci/run does)"
    if os.environ.get("CI"):  # CI installs it, so there it must run
        pytest.fail(f"{reason}; CI is set", pytrace=False)
    pytest.skip(reason)


def run_chromium(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    command = [
        chromium(),
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--no-first-run",
        "--disable-extensions",
        f"--user-data-dir={tmp_path / 'profile'}",
        *args,
    ]
    return subprocess.run(command, capture_output=True, text=True, timeout=90, cwd=tmp_path)


def test_trace_page_renders_its_tables_in_chromium(
    taymyr_prediction: Prediction, tmp_path: Path
) -> None:
    page = taymyr_prediction.to_html()
    probe = tmp_path / "probe.html"
    probe.write_text(page.replace("</body>", PROBE + "</body>"), encoding="utf-8")
    done = run_chromium(tmp_path, "--dump-dom", probe.as_uri())
    assert done.returncode == 0, done.stderr[-2000:]
    found = re.search(r'<pre id="probe">(.*?)</pre>', done.stdout, re.S)
    assert found, "the probe did not run: " + done.stdout[-500:]
    result = json.loads(found.group(1).replace("&amp;", "&").replace("&lt;", "<"))
    tables = result["tables"]
    assert len(tables) == 6
    assert all(t["width"] > 100 and t["height"] > 40 for t in tables)
    assert [t["rows"] for t in tables] == [21, 21, 1, 1, 1, 1]
    assert tables[0]["header"][:4] == [
        "#",
        "Column 1",
        "Average population (x 1000)",
        "Live births",
    ]
    assert tables[0]["height"] > 10 * tables[2]["height"] / 2  # 21 rows are much taller than 1
    assert tables[1]["dropped"] == "rgb(251, 227, 225)" and tables[1]["struck"] == "line-through"
    assert result["detailsOpen"] is False and result["rawVisible"] is False  # raw output on demand
    # The answer's evidence, 1985 in Column 1, is marked in every table that holds it.
    assert result["marked"] == [["1985"]] * 6
    assert result["evidenceColour"] == "rgb(255, 241, 168)"

    shot = tmp_path / "trace.png"
    target = tmp_path / "trace.html"
    target.write_text(page, encoding="utf-8")
    done = run_chromium(
        tmp_path, "--window-size=1280,2000", f"--screenshot={shot}", target.as_uri()
    )
    assert done.returncode == 0, done.stderr[-2000:]
    data = shot.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    width, height = struct.unpack(">II", data[16:24])
    assert (width, height) == (1280, 2000)
    assert len(data) > 50_000  # a page full of tables, not a blank image
