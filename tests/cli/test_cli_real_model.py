"""The README's first command with the embedded model (slow: runs Gemma 3 270M)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from support.taymyr import EXAMPLE, QUESTION


@pytest.mark.real_model
@pytest.mark.slow
def test_ask_with_the_embedded_model_offline() -> None:
    script = Path(sys.executable).parent / "tablereason"
    env = {k: v for k, v in os.environ.items() if not k.startswith("OPENAI_")}
    done = subprocess.run(
        [str(script), "ask", str(EXAMPLE), QUESTION, "--model", "local", "--json"],
        capture_output=True,
        text=True,
        env=env,
        timeout=1200,
    )
    assert done.returncode in (0, 5), done.stderr[-2000:]
    payload = json.loads(done.stdout)
    steps = payload["trace"]["steps"]
    assert steps[0]["kind"] == "input" and len(steps[0]["table"]["rows"]) == 21
    assert any(s["kind"] == "plan" and s["raw"] for s in steps)  # the model was asked
    assert payload["trace"]["usage"]["requests"] >= 2
