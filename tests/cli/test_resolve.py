"""Model specs shared by ask, eval and the command line (``tablereason.llm.resolve``)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tablereason.errors import ConfigurationError
from tablereason.llm import LocalLlama, OpenAIChat
from tablereason.llm.resolve import base_llm


def test_model_specs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    assert isinstance(base_llm("local"), LocalLlama)
    assert isinstance(base_llm(quiet=True), LocalLlama)
    remote = base_llm("qwen", base_url="http://127.0.0.1:9/v1")
    assert isinstance(remote, OpenAIChat) and remote.model == "qwen"
    assert isinstance(base_llm("gpt-4o-mini"), OpenAIChat)
    model = tmp_path / "tiny.gguf"
    model.write_bytes(b"")
    assert base_llm(str(model)).model == "tiny"
    with pytest.raises(ConfigurationError, match="does not exist"):
        base_llm(str(tmp_path / "missing.gguf"))


def test_the_llm_package_exports_model_selection() -> None:
    import tablereason.llm as llm
    import tablereason.llm.resolve as resolve

    assert llm.base_llm is resolve.base_llm and llm.resolve_llm is resolve.resolve_llm
    assert llm.LOCAL_MODEL == "local"
