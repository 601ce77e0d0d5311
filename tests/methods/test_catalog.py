"""The method catalog and the one door: every method is built by name and run on an example."""

from __future__ import annotations

from typing import Any

import pytest

from tablereason.datasets import Example
from tablereason.errors import ConfigurationError, UnknownNameError
from tablereason.evaluate.runner import run_evaluation
from tablereason.llm import LLM, ScriptedLLM
from tablereason.methods import METHODS, Method, MethodSpec, TableMethod, build_method
from tablereason.methods import method_names as exported_names
from tablereason.methods.catalog import method_names
from tablereason.table import Table
from tablereason.tools import Calculator
from tablereason.trace import Prediction

TABLE = Table.from_records(["a"], [["1"]])
EXAMPLE = Example.from_table(TABLE, "what is a?", dataset="d", id="e1", metadata={"k": 1})

# Options that let every method be built without dataset files (ReWOO and ReAct read
# the HotpotQA paragraphs for their default tools).
OPTIONS: dict[str, dict[str, Any]] = {"rewoo": {"tools": [Calculator()]},
                                      "react": {"tools": [Calculator()]}}  # fmt: skip


def test_every_registered_method_is_a_method() -> None:
    assert exported_names() == method_names() == METHODS.names()
    assert method_names() == [
        "chain_of_table", "program_of_thought", "text_to_sql", "rewoo", "react",
        "chameleon", "chameleon_cot", "chameleon_pot", "self_consistency", "mix_sc",
        "table_critic",
    ]  # fmt: skip
    for name in method_names():
        spec = METHODS.get(name)
        assert isinstance(spec, MethodSpec)
        method = build_method(name, ScriptedLLM(replies=[]), **OPTIONS.get(name, {}))
        assert isinstance(method, Method), name
        assert isinstance(method.config()["method"], str), name


def test_the_task_and_data_folder_go_only_where_declared() -> None:
    declared = {n: (METHODS.get(n).takes_task, METHODS.get(n).takes_data_dir) for n in METHODS}
    assert declared == {
        "chain_of_table": (True, False), "program_of_thought": (True, False),
        "text_to_sql": (False, False), "rewoo": (True, True), "react": (True, True),
        "chameleon": (True, False), "chameleon_cot": (True, False),
        "chameleon_pot": (True, False), "self_consistency": (True, True), "mix_sc": (True, True),
        "table_critic": (True, True),
    }  # fmt: skip
    method = build_method("chain_of_table", ScriptedLLM(replies=[]), task="wikitq")
    assert method.config()["task"] == "wikitq"
    # the baselines take neither: a task and a data folder are simply not passed
    sql = build_method("text_to_sql", ScriptedLLM(replies=[]), task="wikitq", data_dir="/x")
    assert sql.config()["method"] == "text_to_sql"
    react = build_method("react", ScriptedLLM(replies=[]), task="scienceqa", **OPTIONS["react"])
    assert react.config()["task"] == "scienceqa"


class Plain(TableMethod):
    name = "plain"

    def __init__(self, llm: LLM, profile: str = "default") -> None:
        self.profile = profile

    def answer(self, table: Table, question: str, **options: Any) -> Prediction:
        return Prediction(answer=f"{self.profile} {table.shape} {question}")

    def config(self) -> dict[str, Any]:
        return {"method": self.name, "settings": {"profile": self.profile}}


def test_build_method_reports_unknown_names_and_options(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(METHODS._items, "plain", MethodSpec(Plain))
    plain = build_method("plain", ScriptedLLM(replies=[]), task="wikitq", data_dir="/x")
    assert plain.run(EXAMPLE).answer == "default (1, 1) what is a?"
    with pytest.raises(ConfigurationError, match="does not accept"):
        build_method("plain", ScriptedLLM(replies=[]), no_such=1)
    with pytest.raises(UnknownNameError, match="did you mean 'plain'"):
        build_method("plian", ScriptedLLM(replies=[]))
    # the message names the registered name, not the class behind it
    with pytest.raises(ConfigurationError, match="method 'text_to_sql' does not accept"):
        build_method("text_to_sql", ScriptedLLM(replies=[]), no_such=1)


@pytest.mark.parametrize("name", METHODS.names())
def test_a_misspelt_option_is_refused_by_every_method(name: str, tmp_path) -> None:
    # A setting that does not exist must never be dropped silently.
    with pytest.raises(ConfigurationError, match="no_such_setting"):
        build_method(
            name, ScriptedLLM(replies=[]), task=None, data_dir=str(tmp_path), no_such_setting=1
        )


def test_a_table_method_needs_a_table() -> None:
    no_table = Example(dataset="hotpotqa", id="h", question="q", answer="a")
    with pytest.raises(ConfigurationError, match="needs a table"):
        Plain(ScriptedLLM(replies=[])).run(no_table)
    assert Plain(ScriptedLLM(replies=[])).run(TABLE, "q").answer == "default (1, 1) q"


def test_tabfact_cleaned_statement_reaches_chain_of_table() -> None:
    llm = ScriptedLLM(fn=lambda request: " yes" if request.as_text().endswith(":") else "<END>")
    method = build_method("chain_of_table", llm, task="tabfact", profile="paper")
    example = EXAMPLE.model_copy(update={"metadata": {"cleaned_statement": "a is 1"}})
    assert method.run(example).answer == "yes"


def test_a_text_method_takes_the_example() -> None:
    replies = [" add them\n#E1 = Calculator[2 + 3]", "5"]
    rewoo = build_method("rewoo", ScriptedLLM(replies=replies), **OPTIONS["rewoo"])
    example = Example(dataset="hotpotqa", id="q1", question="What is 2 + 3?", answer="5")
    assert rewoo.run(example).answer == "5"


def test_the_runner_calls_run_on_a_method(tmp_path: Any) -> None:
    class Counted(Plain):
        calls = 0

        def answer(self, table: Table, question: str, **options: Any) -> Prediction:
            Counted.calls += 1
            return Prediction(answer="1")

    summary = run_evaluation(Counted(ScriptedLLM(replies=[])), [EXAMPLE], tmp_path / "r.jsonl",
                             progress=False)  # fmt: skip
    assert Counted.calls == 1 and summary.ran == 1 and summary.failed == 0


def test_the_baselines_refuse_unknown_options() -> None:
    for name in ("program_of_thought", "text_to_sql"):
        method = build_method(name, ScriptedLLM(replies=[]))
        assert isinstance(method, TableMethod)
        with pytest.raises(ConfigurationError, match="takes no options"):
            method.run(TABLE, "q", no_such=1)


def _distribution(root: Any, name: str, target: str) -> None:
    """A temporary installed distribution: a module and a ``.dist-info`` naming its method."""
    (root / "thirdparty_methods.py").write_text(
        "from tablereason.trace import Prediction\n"
        "class Echo:\n"
        "    name = 'echo'\n"
        "    takes_task = True\n"
        "    def __init__(self, llm, task='wikitq'):\n"
        "        self.task = task\n"
        "    def run(self, example):\n"
        "        return Prediction(answer=self.task + ': ' + example.question)\n"
        "    def config(self):\n"
        "        return {'method': 'echo'}\n",
        encoding="utf-8",
    )
    info = root / "thirdparty_methods-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: thirdparty-methods\nVersion: 1.0\n"
    )
    (info / "entry_points.txt").write_text(f"[tablereason.methods]\n{name} = {target}\n")


def _installed(root: Any, monkeypatch: pytest.MonkeyPatch, name: str) -> Any:
    """A new catalog with Chain-of-Table, and a distribution whose entry point is ``name``."""
    from tablereason.methods.catalog import MethodCatalog

    _distribution(root, name, "thirdparty_methods:Echo")
    monkeypatch.syspath_prepend(str(root))
    catalog = MethodCatalog()
    spec = MethodSpec("tablereason.methods.chain_of_table.method:ChainOfTable")
    catalog.register("chain_of_table", spec)
    return catalog


def test_a_method_of_another_distribution_joins_through_its_entry_point(
    tmp_path: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    import sys

    catalog = _installed(tmp_path, monkeypatch, "echo")
    assert catalog.names() == ["chain_of_table", "echo"]
    assert "thirdparty_methods" not in sys.modules  # registered, not loaded
    spec = catalog.get("echo")
    method = spec.build(ScriptedLLM(replies=[]), task="tabfact", registered_as="echo")
    assert method.run(EXAMPLE).answer == "tabfact: what is a?" and spec.takes_task
    # through the package's own catalog, by name, as ask and eval build it
    monkeypatch.setattr(METHODS, "_discovered", False)
    monkeypatch.setattr(METHODS, "_items", dict(METHODS._items))
    assert build_method("echo", ScriptedLLM(replies=[]), task="wikitq").run(EXAMPLE).answer == (
        "wikitq: what is a?"
    )


def test_an_entry_point_takes_no_built_in_name_and_a_broken_one_is_reported(
    tmp_path: Any, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    catalog = _installed(tmp_path, monkeypatch, "chain_of_table")
    assert catalog.get("chain_of_table").factory.__name__ == "ChainOfTable"
    assert "already registered" in caplog.text
    with pytest.raises(ConfigurationError, match="cannot be loaded"):
        _ = MethodSpec("thirdparty_methods:NoSuch").factory
    with pytest.raises(ConfigurationError, match="cannot be loaded"):
        MethodSpec("no_such_package.module:Thing").build(ScriptedLLM(replies=[]))


def test_a_method_declares_what_it_takes_itself() -> None:
    for name in METHODS:
        spec = METHODS.get(name)
        assert spec.takes_task == getattr(spec.factory, "takes_task", False), name
    assert [n for n in METHODS if METHODS.get(n).takes_several_tables] == [
        "program_of_thought", "text_to_sql", "rewoo", "react",  # the table agent takes several
    ]  # fmt: skip
