"""A restored prefix state gives the completion a fresh evaluation gives, on the suite's prompts.

The prompts are the golden prompts of the methods (Chain-of-Table in both profiles,
Chameleon, ReWOO): each is cut into its beginning (instructions and worked examples) and
its question part (from its last table, else its last paragraph), and every beginning is
asked with its own question part and with two others, the kinds interleaved, as a run
asks them. The model that reuses prompt beginnings must answer each exactly as a model
that evaluates every prompt from its first token: on the batch-aware stand-in for every
golden prompt (default run), and on the real Gemma 3 270M for a few kinds (slow).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from llama_stand_in import StandInLlama, install

from tablereason.llm import LocalLlama, Request

TESTS = Path(__file__).parents[1]
GOLDEN = sorted(
    p
    for d in ("chain_of_table", "chameleon", "rewoo")
    for p in (TESTS / d / "golden").glob("*.txt")
)


def cut(text: str) -> tuple[str, str]:
    """A prompt's beginning and its question part (from the last table or paragraph)."""
    at = text.rfind("\n/*")
    if at <= 0:
        at = text.rstrip().rfind("\n\n")
    return (text[:at], text[at:]) if at > 0 else (text, "")


def asked(paths: list[Path]) -> list[tuple[str, str]]:
    """(call site, prompt): each beginning with its own and two other question parts,
    in rounds over the kinds."""
    parts = [cut(p.read_text(encoding="utf-8")) for p in paths]
    rounds = []
    for shift in (0, 1, 2):
        rounds.append(
            [
                (path.stem, head + parts[(i + shift) % len(parts)][1])
                for i, (path, (head, _)) in enumerate(zip(paths, parts, strict=True))
            ]
        )
    return [request for one_round in rounds for request in one_round]


def compare(reusing: LocalLlama, fresh: LocalLlama, prompts: list[tuple[str, str]]) -> list[str]:
    """The call sites whose reply differed between the two models."""
    differ = []
    for site, prompt in prompts:
        request = Request(prompt=prompt, call_site=site, max_tokens=16, stop=("\n\n",))
        if reusing.complete(request).text != fresh.complete(request).text:
            differ.append(site)
    return differ


def test_the_golden_prompts_are_all_there() -> None:
    kinds = {p.parent.parent.name for p in GOLDEN}
    assert kinds == {"chain_of_table", "chameleon", "rewoo"} and len(GOLDEN) > 40


@pytest.mark.parametrize("n_batch", [128, 32, 7])
def test_reuse_answers_every_golden_prompt_as_a_fresh_evaluation(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, n_batch: int
) -> None:
    install(monkeypatch)
    model = tmp_path / "tiny.gguf"
    model.write_bytes(b"GGUF")
    reusing = LocalLlama(model, n_ctx=16384, n_threads=1, n_batch=n_batch, state_budget_mb=2)
    fresh = LocalLlama(model, n_ctx=16384, n_threads=1, n_batch=n_batch, reuse=False)
    assert compare(reusing, fresh, asked(GOLDEN)) == []
    stats = reusing.reuse_stats()
    assert stats.from_states > len(GOLDEN) // 2  # the third round restores most kinds
    assert stats.tokens_evaluated < 0.8 * stats.tokens_sent
    assert reusing.prefixes is not None and reusing.prefixes.stats().bytes_held <= 2_000_000
    assert StandInLlama.instances  # the stand-in answered, not a real model


REAL_KINDS = [
    "chain_of_table/golden/efficient_tabfact_plan.txt",
    "chain_of_table/golden/efficient_wikitq_plan.txt",  # the same call site's other task
    "chain_of_table/golden/efficient_tabfact_final_query.txt",
    "chameleon/golden/tabmwp__planner.txt",
]
"""The kinds asked of the real model (three planners share one call site)."""


def real_site(stem: str) -> str:
    """The call site of a golden prompt in the real-model test."""
    return "plan" if "plan" in stem else stem


@pytest.mark.slow
@pytest.mark.real_model
def test_on_the_real_model_reuse_answers_as_a_fresh_evaluation() -> None:
    """Exact from the context; from restored states at most one reply of the twelve differs.

    Measured (docs/benchmarks/llm.md, section 5): every prompt started from the context
    or from nothing gave the fresh reply; of three started from a restored prefix state
    one did not (a near tie between two tokens), though the same state restored alone in
    a new context gives the fresh reply, and 35 restores over 21 benchmark questions gave
    the fresh completions. The bound is the issue's (at most 1 in 24 questions).
    """
    pytest.importorskip(
        "llama_cpp", reason="needs the local extra: pip install 'tablereason[local]'"
    )
    prompts = [(real_site(stem), p) for stem, p in asked([TESTS / k for k in REAL_KINDS])]
    reusing = LocalLlama(n_ctx=8192, n_threads=1)
    fresh = LocalLlama(n_ctx=8192, n_threads=1, reuse=False)
    differ = {"states": 0, "other": 0}
    for site, prompt in prompts:
        request = Request(prompt=prompt, call_site=site, max_tokens=16, stop=("\n\n",))
        restored = reusing.reuse_stats().from_states
        same = reusing.complete(request).text == fresh.complete(request).text
        source = "states" if reusing.reuse_stats().from_states > restored else "other"
        differ[source] += not same
    assert differ["other"] == 0
    assert differ["states"] <= 1
    stats = reusing.reuse_stats()
    assert stats.from_states >= 3 and stats.tokens_evaluated < 0.8 * stats.tokens_sent


@pytest.mark.slow
@pytest.mark.real_model
def test_on_the_real_model_a_state_from_disk_answers_as_a_fresh_evaluation(
    tmp_path: Path,
) -> None:
    """A process saves the TabFact planner's beginning to a folder; a new model restores it
    from there for its first prompt and answers as a model that evaluates it whole."""
    pytest.importorskip(
        "llama_cpp", reason="needs the local extra: pip install 'tablereason[local]'"
    )
    # the TabFact planner's beginning with three questions (its own and two other kinds')
    kinds = [TESTS / k for k in REAL_KINDS]
    asked_all = asked(kinds)
    prompts = [p for stem, p in asked_all if stem == kinds[0].stem]
    assert len(prompts) == 3 and len(set(prompts)) == 3
    other = next(p for stem, p in asked_all if stem == kinds[2].stem)  # a final query
    first = LocalLlama(n_ctx=8192, n_threads=1, state_dir=tmp_path)
    # a prompt of another call site between the two planner prompts takes the context, so
    # the second planner prompt finds its beginning only in the store and saves it there
    for site, prompt in (("plan", prompts[0]), (kinds[2].stem, other), ("plan", prompts[1])):
        first.complete(Request(prompt=prompt, call_site=site, max_tokens=16, stop=("\n\n",)))
    assert first.prefixes is not None and first.prefixes.stats().written == 1
    del first
    request = Request(prompt=prompts[2], call_site="plan", max_tokens=16, stop=("\n\n",))
    second = LocalLlama(n_ctx=8192, n_threads=1, state_dir=tmp_path)
    got = second.complete(request).text
    assert second.reuse_stats().from_states == 1
    assert second.prefixes is not None and second.prefixes.stats().loaded == 1
    assert got == LocalLlama(n_ctx=8192, n_threads=1, reuse=False).complete(request).text
