from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tablereason.errors import ConfigurationError, LLMError, UnknownNameError
from tablereason.llm import ScriptedLLM, Usage
from tablereason.table import Table
from tablereason.tools import (
    OCR,
    TOOLS,
    BaseTool,
    Calculator,
    DocStore,
    Document,
    FailingTool,
    ImageCaptioner,
    LLMTool,
    ScienceQACaptions,
    ScienceQAOCR,
    TableTool,
    Tool,
    ToolContext,
    WebSearch,
    build_tools,
    describe,
    image_id,
    invoke,
    is_no_evidence,
    parse_easyocr,
)
from tablereason.trace import Prediction, Trace, TraceStep

# ------------------------------------------------------------------------ contract


def test_every_registered_tool_builds_and_follows_the_protocol(fixture_data: Path) -> None:
    store = DocStore([Document(title="Oslo", paragraphs=("Oslo is in Norway.",))])
    table = Table.from_records(["city"], [["Oslo"]])
    ctx = ToolContext(
        llm=ScriptedLLM(fn=lambda r: "fine"),
        docstore=store,
        data_dir=fixture_data,
        tables={"cities": table},
    )
    tools = build_tools(TOOLS.names(), ctx)
    assert [t.name for t in tools] == [
        "Wikipedia",
        "Lookup",
        "LLM",
        "Calculator",
        "Table",
        "SQL",
        "Python",
        "ImageCaptioner",
        "OCR",
        "Search",
    ]
    for tool in tools:
        assert isinstance(tool, Tool)
        assert len(tool.description) > 20
        assert is_no_evidence(tool(""))
    assert tools[0].explorer is tools[1].explorer  # type: ignore[attr-defined]
    lines = describe(tools).splitlines()
    assert lines[0].startswith("Wikipedia[input]: ") and len(lines) == 10


def test_unknown_tool_name_suggests_the_closest() -> None:
    with pytest.raises(UnknownNameError, match="calculator"):
        build_tools(["calculater"])


def test_tools_needing_a_model_say_so() -> None:
    with pytest.raises(ConfigurationError, match="needs a model"):
        build_tools(["llm"], ToolContext())


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(text=st.text(max_size=40))
def test_no_tool_raises_on_arbitrary_input(fixture_data: Path, text: str) -> None:
    store = DocStore([Document(title="Oslo", paragraphs=("Oslo is in Norway.",))])
    ctx = ToolContext(
        llm=ScriptedLLM(fn=lambda r: LLMError("down")),
        docstore=store,
        data_dir=fixture_data,
        tables={"t": Table.from_records(["a"], [["1"]])},
    )
    for tool in build_tools(TOOLS.names(), ctx):
        assert isinstance(tool(text), str)


class _Boom:
    name = "Boom"
    description = "raises despite the contract"

    def __call__(self, text: str) -> str:
        raise RuntimeError("kaput")


def test_invoke_turns_exceptions_and_failure_text_into_outputs() -> None:
    out = invoke(_Boom(), "x")
    assert not out.ok and is_no_evidence(out.text) and "kaput" in out.text
    out = invoke(WebSearch(), "x")
    assert not out.ok and out.usage.requests == 0
    assert invoke(Calculator(), "6*7").text == "42"


def test_base_tool_catches_unexpected_errors() -> None:
    class Broken(BaseTool):
        name, description = "Broken", "always breaks"

        def run(self, text: str) -> tuple[str, Usage]:
            raise KeyError("missing")

    out = Broken().call("x")
    assert out.error is not None and "KeyError" in out.text


def test_failing_tool_keeps_name_and_description() -> None:
    calc = Calculator()
    failing = FailingTool(calc)
    assert (failing.name, failing.description) == (calc.name, calc.description)
    assert failing("1+1") == "No evidence found: Calculator is unavailable"
    assert FailingTool(calc, "forced failure")("1") == "No evidence found: forced failure"


# ------------------------------------------------------------------------ LLM tool


def test_llm_tool_keeps_first_line_and_reports_usage() -> None:
    llm = ScriptedLLM(replies=["\n  Paris \nbecause ...", "", LLMError("server down")])
    tool = LLMTool(llm)
    out = tool.call("What is the capital of France?")
    assert out.text == "Paris"
    assert out.usage.requests == 1 and out.usage.completion_tokens == 3
    request = llm.requests[0]
    assert request.call_site == "tools/llm" and request.temperature == 0
    assert request.prompt is not None and request.prompt.endswith(
        "Q: What is the capital of France?\nA:"
    )
    empty = tool.call("q")
    assert not empty.ok and empty.usage.requests == 1
    down = tool.call("q")
    assert not down.ok and "server down" in down.text


# ------------------------------------------------------------------------ Table tool


class _FakeReasoner:
    def __init__(self, answer: str | list[str], error: str | None = None) -> None:
        self.answer, self.error = answer, error
        self.calls: list[tuple[Table, str]] = []

    def run(self, table: Table, question: str) -> Prediction:
        self.calls.append((table, question))
        trace = Trace(steps=[TraceStep(kind="answer", name="x", usage=Usage(prompt_tokens=5))])
        return Prediction(answer=self.answer, trace=trace, error=self.error)


def test_table_tool_routes_to_the_named_table() -> None:
    a = Table.from_records(["x"], [["1"]])
    b = Table.from_records(["y"], [["2"]])
    reasoner = _FakeReasoner(["2", "3"])
    tool = TableTool(None, {"a": a, "b": b}, reasoner=reasoner)
    out = tool.call("b: what is y?")
    assert out.text == "2, 3" and out.usage.prompt_tokens == 5
    assert reasoner.calls[0][0] is b and reasoner.calls[0][1] == "what is y?"
    assert "say which table" in tool("c: what?")
    assert "Tables: a, b." in tool.description


def test_table_tool_single_table_and_failures() -> None:
    t = Table.from_records(["x"], [["1"]])
    assert TableTool(None, {"t": t}, reasoner=_FakeReasoner("1"))("how many rows?") == "1"
    failed = TableTool(None, {"t": t}, reasoner=_FakeReasoner("", error="bad")).call("q?")
    assert not failed.ok and failed.usage.prompt_tokens == 5
    assert is_no_evidence(TableTool(None, {}, reasoner=_FakeReasoner("1"))("q?"))
    with pytest.raises(ConfigurationError):
        TableTool(None, {"t": t})


def test_table_tool_defaults_to_chain_of_table() -> None:
    from tablereason.methods.chain_of_table import ChainOfTable

    tool = TableTool(ScriptedLLM(replies=[]), {"t": Table.from_records(["x"], [["1"]])})
    assert isinstance(tool.reasoner, ChainOfTable) and tool.reasoner.task == "wikitq"


# ------------------------------------------------------------------ captioner, OCR


def test_image_id_reads_paths_and_ids() -> None:
    assert image_id("/x/scienceqa/images/test/1002/image.png") == "1002"
    assert image_id("images\\test\\5\\image.PNG") == "5"
    assert image_id("'23'") == "23"
    assert image_id("pid=42") == "42"
    assert image_id("the picture") is None


def test_scienceqa_captions_by_path(fixture_data: Path) -> None:
    tool = ImageCaptioner(ScienceQACaptions(fixture_data))
    path = fixture_data / "scienceqa" / "images" / "test" / "5" / "image.png"
    assert path.is_file()
    assert tool(str(path)) == "A large white kite is in the air."
    assert tool("5") == "A large white kite is in the air."
    assert "no caption" in tool("999999")
    assert "not an image path" in tool("a kite")


def test_scienceqa_ocr_by_path(fixture_data: Path) -> None:
    tool = OCR(ScienceQAOCR(fixture_data))
    out = tool(str(fixture_data / "scienceqa" / "images" / "test" / "23" / "image.png"))
    assert out.startswith("'grizzly bear' at (411, 19); 'barren-ground' at (511, 177)")
    assert OCR(ScienceQAOCR(fixture_data), style="texts")("23").startswith(
        "grizzly bear, barren-ground, Arctic fox"
    )
    assert "no text detected" in tool("5")  # its OCR list is empty


def test_ocr_parser_is_literal_only() -> None:
    assert parse_easyocr("[]") == []
    with pytest.raises(ValueError):
        parse_easyocr("__import__('os')")
    boxes = parse_easyocr("[([[1, 2]], 'a', 0.5), 'junk', ([[3, 4], [5, 6]], 'b', 1)]")
    assert [b.text for b in boxes] == ["a", "b"]
    bad = OCR(ScienceQAOCR(texts={"1": "not python ("}))("1")
    assert "unreadable" in bad


def test_web_search_has_no_default_network() -> None:
    assert "not configured" in WebSearch()("anything")

    class Canned:
        def search(self, query: str, k: int) -> list[str]:
            return ["first", "second"] if query == "q" else []

    assert WebSearch(Canned(), k=2)("q") == "first second"
    assert "found nothing" in WebSearch(Canned())("other")
