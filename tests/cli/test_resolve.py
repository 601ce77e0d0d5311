"""Model specs and method dispatch shared by ask, eval and the command line."""

from __future__ import annotations

from pathlib import Path

import pytest

from tablereason.datasets import Example
from tablereason.errors import ConfigurationError
from tablereason.llm import LocalLlama, OpenAIChat, ScriptedLLM
from tablereason.resolve import base_llm, build_method, run_example, takes_table
from tablereason.table import Table
from tablereason.trace import Prediction

TABLE = Table.from_records(["a"], [["1"]])
EXAMPLE = Example.from_table(TABLE, "what is a?", dataset="d", id="e1", metadata={"k": 1})


class ByTable:
    def run(self, table: Table, question: str) -> Prediction:
        return Prediction(answer=f"table {table.shape} {question}")


class ByExample:
    def run(self, example: Example) -> Prediction:
        return Prediction(answer=f"example {example.id} {example.metadata['k']}")


class ByQuestion:
    def run(self, question: str) -> str:
        return f"question {question}"


class WithRunExample(ByTable):
    def run_example(self, example: Example) -> Prediction:
        return Prediction(answer="run_example")


def test_run_example_dispatches_on_the_method_signature() -> None:
    assert run_example(ByTable(), EXAMPLE).answer == "table (1, 1) what is a?"
    assert run_example(ByExample(), EXAMPLE).answer == "example e1 1"
    assert run_example(ByQuestion(), EXAMPLE).answer == "question what is a?"
    assert run_example(WithRunExample(), EXAMPLE).answer == "run_example"
    assert [takes_table(m) for m in (ByTable(), ByExample(), WithRunExample())] == [
        True,
        False,
        False,
    ]
    no_table = Example(dataset="hotpotqa", id="h", question="q", answer="a")
    with pytest.raises(ConfigurationError, match="needs a table"):
        run_example(ByTable(), no_table)


def test_tabfact_cleaned_statement_reaches_chain_of_table() -> None:
    llm = ScriptedLLM(fn=lambda request: " yes" if request.as_text().endswith(":") else "<END>")
    method = build_method("chain_of_table", llm, task="tabfact", profile="paper")
    example = EXAMPLE.model_copy(update={"metadata": {"cleaned_statement": "a is 1"}})
    assert run_example(method, example).answer == "yes"


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


def test_build_method_passes_task_only_where_taken(monkeypatch: pytest.MonkeyPatch) -> None:
    from tablereason.methods import METHODS

    class Plain:
        def __init__(self, llm: object, profile: str = "default") -> None:
            self.profile = profile

    monkeypatch.setitem(METHODS._items, "plain", Plain)
    assert build_method("plain", ScriptedLLM(replies=[]), task="wikitq").profile == "default"
    with pytest.raises(ConfigurationError, match="does not accept"):
        build_method("plain", ScriptedLLM(replies=[]), no_such=1)
    method = build_method("chain_of_table", ScriptedLLM(replies=[]), task="wikitq")
    assert method.task == "wikitq"
