"""The model layer's options on the command line.

``--constrain``, ``--server-kind``, ``--n-ctx``, ``--threads``, and ``--base-url`` without
``--model`` (the server is asked which model it serves).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from support.scripted_server import ScriptedServer, taymyr_reply
from support.taymyr import EXAMPLE, QUESTION

from tablereason.cli import EXIT_MODEL, EXIT_OK, EXIT_USAGE, main
from tablereason.llm import LocalLlama, ScriptedLLM, UnconstrainedLLM


@pytest.fixture(autouse=True)
def no_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "OPENAI_MODEL", "TABLEREASON_SERVER_KIND"):
        monkeypatch.delenv(name, raising=False)


def _resolved(monkeypatch: pytest.MonkeyPatch) -> list[dict[str, Any]]:
    """Record what ``ask`` passes to the model layer, and answer with a script.

    ``ask`` builds the bare backend (``base_llm``: server kind, embedded settings) and then
    stacks the wrappers on it (``resolve_llm``: constraints on or off); one record per run
    holds what both were given.
    """
    import tablereason.llm.resolve as resolve

    seen: list[dict[str, Any]] = []

    def bare(model: Any = None, **kwargs: Any) -> Any:
        seen.append({"model": model, **kwargs})
        return ScriptedLLM(fn=lambda r: taymyr_reply(r.as_text()))

    def stacked(model: Any, **kwargs: Any) -> Any:
        seen[-1]["constrain"] = kwargs.get("constrain", "auto")
        return model

    monkeypatch.setattr(resolve, "base_llm", bare)
    monkeypatch.setattr(resolve, "resolve_llm", stacked)
    return seen


def test_the_options_reach_the_model_layer_in_ask(monkeypatch: pytest.MonkeyPatch) -> None:
    seen = _resolved(monkeypatch)
    argv = ["ask", str(EXAMPLE), QUESTION, "--answer-only"]
    assert main(argv) == EXIT_OK
    assert main([*argv, "--constrain", "off", "--server-kind", "vllm"]) == EXIT_OK
    assert main([*argv, "--model", "local", "--n-ctx", "4096", "--threads", "2"]) == EXIT_OK
    settings = [{k: s[k] for k in ("constrain", "server_kind", "n_ctx", "threads")} for s in seen]
    assert settings == [
        {"constrain": "auto", "server_kind": None, "n_ctx": None, "threads": None},
        {"constrain": "off", "server_kind": "vllm", "n_ctx": None, "threads": None},
        {"constrain": "auto", "server_kind": None, "n_ctx": 4096, "threads": 2},
    ]


def test_the_options_reach_the_model_layer_in_eval(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    specs: list[Any] = []

    def fake_run(spec: Any, **kwargs: Any) -> Any:
        specs.append(spec)
        raise KeyboardInterrupt  # the spec is what this test is about

    monkeypatch.setattr("tablereason.evaluate.benchmark.run_benchmark", fake_run)
    base = ["eval", "--dataset", "wikitq", "--out", str(tmp_path / "run")]
    base += ["--data-dir", str(tmp_path)]
    main([*base, "--constrain", "off", "--server-kind", "llama.cpp", "--n-ctx", "2048"])
    main([*base, "--threads", "1"])
    first, second = specs
    assert (first.constrain, first.server_kind, first.n_ctx, first.threads) == (
        "off",
        "llama.cpp",
        2048,
        None,
    )
    assert (second.constrain, second.server_kind, second.threads) == ("auto", None, 1)


def test_eval_builds_its_model_with_them(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    from tablereason.evaluate.benchmark import BenchmarkSpec
    from tablereason.llm.resolve import resolve_llm

    spec = BenchmarkSpec(dataset="wikitq", out=str(tmp_path), model="local", n_ctx=1024, threads=1)
    llm = resolve_llm(spec.model, n_ctx=spec.n_ctx, threads=spec.threads)
    while hasattr(llm, "inner"):
        llm = llm.inner
    assert isinstance(llm, LocalLlama) and (llm.n_ctx, llm.n_threads) == (1024, 1)
    off = resolve_llm(
        ScriptedLLM(replies=[]),
        constrain=BenchmarkSpec(dataset="wikitq", out="x", constrain="off").constrain,
    )
    assert isinstance(off, UnconstrainedLLM)


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--n-ctx", "0"], "--n-ctx: must be at least 1"),
        (["--threads", "two"], "--threads: not a whole number"),
        (["--constrain", "on"], "invalid choice: 'on'"),
    ],
)
def test_bad_values_are_usage_errors(
    extra: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as info:
        main(["ask", str(EXAMPLE), QUESTION, *extra])
    assert info.value.code == 2 and message in capsys.readouterr().err


def test_an_unknown_server_kind_lists_the_kinds(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["ask", str(EXAMPLE), QUESTION, "--base-url", "http://127.0.0.1:9/v1", "--model", "m"]
    assert main([*argv, "--server-kind", "vlm"]) == EXIT_USAGE
    err = capsys.readouterr().err
    assert "unknown server kind 'vlm'" in err and "vllm, llama.cpp" in err


def test_embedded_settings_with_a_server_are_usage_errors(
    capsys: pytest.CaptureFixture[str],
) -> None:
    argv = ["ask", str(EXAMPLE), QUESTION, "--base-url", "http://127.0.0.1:9/v1", "--model", "m"]
    assert main([*argv, "--n-ctx", "4096"]) == EXIT_USAGE
    assert "--n-ctx and --threads set the embedded model" in capsys.readouterr().err


# -- --base-url without --model ---------------------------------------------------------------


def _served(*models: str) -> ScriptedServer:
    listing = {"object": "list", "data": [{"id": m, "owned_by": "someone"} for m in models]}
    return ScriptedServer(taymyr_reply, routes={"/v1/models": listing})


def test_base_url_without_model_uses_the_one_the_server_serves(
    capsys: pytest.CaptureFixture[str],
) -> None:
    with _served("qwen2.5-0.5b") as server:
        code = main(["ask", str(EXAMPLE), QUESTION, "--base-url", server.url, "--answer-only"])
        assert code == EXIT_OK
        assert capsys.readouterr().out.strip() == "1985"
        assert {b["model"] for b in server.bodies} == {"qwen2.5-0.5b"}


def test_base_url_serving_several_models_says_which_to_choose(
    capsys: pytest.CaptureFixture[str],
) -> None:
    with _served("qwen2.5-0.5b", "llama-3.2-1b") as server:
        code = main(["ask", str(EXAMPLE), QUESTION, "--base-url", server.url])
        assert server.bodies == []  # no question was sent
    err = capsys.readouterr().err
    assert code == EXIT_USAGE
    assert "serves 2 models (qwen2.5-0.5b, llama-3.2-1b): choose one with --model" in err


def test_an_unreachable_server_names_no_model_nobody_asked_for(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code = main(["ask", str(EXAMPLE), QUESTION, "--base-url", "http://127.0.0.1:9/v1"])
    out = capsys.readouterr()
    assert code == EXIT_MODEL
    assert "cannot ask the server at http://127.0.0.1:9/v1 which models it serves" in out.err
    assert "gpt-4o-mini" not in out.out + out.err and "gpt" not in out.err
