r"""ScienceQA modules: query, search, caption, OCR, knowledge, solution and answer.

Evidence accumulates in ``cache.evidence`` as labelled blocks. Search, captioner and
OCR are :class:`~tablereason.tools.base.Tool` objects passed by role
(``"search"``, ``"captioner"``, ``"ocr"``). Offline defaults: the captioner and OCR
read the example's precomputed caption and EasyOCR result (``captions.json`` /
``ocrs.json``, loaded with the example); search is a
:class:`~tablereason.tools.local_search.LocalSearch` over the lectures of the
example's ScienceQA folder (:mod:`tablereason.tools.scienceqa_corpus`), leaving out
the question's own skill and lecture, or over the folder of text files named by the
``search_corpus`` setting. Live web search is a
:class:`~tablereason.tools.web_search.WebSearch` with a backend, given as the
``"search"`` tool; nothing reaches the network otherwise.

Example:
    >>> question_text("Which is a mammal?", "", ["frog", "dog"])
    'Which is a mammal?\n\nOptions: (A) frog (B) dog'
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from tablereason.methods.chameleon.answers import LETTERS, choose_scienceqa, has_answer
from tablereason.methods.chameleon.session import ChainRun
from tablereason.prompts.render import render
from tablereason.tools.base import Tool, invoke
from tablereason.tools.captioner import ImageCaptioner, ScienceQACaptions
from tablereason.tools.local_search import LocalSearch
from tablereason.tools.ocr import OCR, ScienceQAOCR
from tablereason.tools.scienceqa_corpus import folder_corpus, leave_out, scienceqa_corpus


def options_text(choices: list[str]) -> str:
    """``(A) first (B) second ...``.

    Example:
        >>> options_text(["yes", "no"])
        '(A) yes (B) no'
    """
    return " ".join(f"({LETTERS[i]}) {c}" for i, c in enumerate(choices))


def question_text(question: str, context: str, choices: list[str]) -> str:
    """Chameleon's ScienceQA question text: question, context (when any) and options."""
    parts = [question]
    if context.strip():
        parts.append(f"Context: {context.strip()}")
    parts.append(f"Options: {options_text(choices)}")
    return "\n\n".join(parts)


def metadata_text(metadata: dict[str, Any]) -> str:
    """The metadata dict as the prompts show it (its Python repr).

    The image's local path is left out: tools receive it, the model never needs it,
    and it would make prompts (and their cache keys) depend on where data lives.
    """
    return repr({k: v for k, v in metadata.items() if k != "image_file"})


def _evidence_block(run: ChainRun) -> str:
    return f"{run.cache.evidence}\n\n" if run.cache.evidence else ""


def _image_input(run: ChainRun) -> str:
    return str(run.cache.metadata.get("image_file") or run.cache.pid)


def _tool(run: ChainRun, role: str) -> Tool:
    if role in run.tools:
        return run.tools[role]
    cache = run.cache
    if role == "captioner":
        return ImageCaptioner(ScienceQACaptions(captions={cache.pid: cache.caption}))
    if role == "ocr":
        return OCR(ScienceQAOCR(texts={cache.pid: cache.ocr}), style=run.settings.ocr_format)
    return default_search(run)


def default_search(run: ChainRun) -> LocalSearch:
    """The offline search tool for one question (see the module notes).

    The corpus is built on the first search and cached in memory; the leave-out hides
    the question's skill, its lecture and near copies of it.
    """
    cache, settings = run.cache, run.settings
    hidden = leave_out(cache.metadata.get("skill"), cache.lecture)
    folder = settings.search_corpus
    options: dict[str, Any] = {
        "k": settings.search_count, "leave_out": hidden, "published": run.paper,
    }  # fmt: skip
    if folder:
        return LocalSearch(lambda: folder_corpus(folder), **options)
    data = cache.data_folder or None
    return LocalSearch(lambda: scienceqa_corpus(data), **options)


def _use_tool(run: ChainRun, module: str, role: str, text: str, label: str) -> None:
    step = run.step(module, kind="tool")
    tool = _tool(run, role)
    output = invoke(tool, text)
    step.arguments = {"tool": tool.name, "input": text, "output": output.text}
    step.usage = step.usage + output.usage
    run.record(module, text, output.text)
    if output.ok:
        run.cache.add_evidence(f"{label}{output.text}", glue=run.paper)
    else:
        step.error = output.error
    run.finish(step)


def _image_tool(run: ChainRun, module: str, role: str, label: str) -> None:
    """Run an image tool on the question's image; a question without one skips it."""
    if not run.cache.image:
        step = run.step(module, kind="tool")
        step.note = "skipped: the question has no image"
        run.record(module, None, None)
        return run.finish(step)
    _use_tool(run, module, role, _image_input(run), label)


def image_captioner(run: ChainRun) -> None:
    """Add the image caption (nothing when the question has no image or no caption)."""
    _image_tool(run, "image_captioner", "captioner", "Image caption: ")


def text_detector(run: ChainRun) -> None:
    """Add the text detected in the image."""
    _image_tool(run, "text_detector", "ocr", "Detected text in the image: ")


def search(run: ChainRun) -> None:
    """Search for the generated query (the question when no query was generated)."""
    query = run.cache.query or run.cache.question.split("\n\n")[0]
    label = "Bing search response: " if run.paper else "Search results: "
    _use_tool(run, "search", "search", query, label)


def query_generator(run: ChainRun) -> None:
    """Ask for a short search query."""
    cache = run.cache
    step = run.step("query_generator")
    prompt = render(
        "chameleon/scienceqa_query",
        question=cache.question, metadata=metadata_text(cache.metadata),
        evidence=_evidence_block(run),
    )  # fmt: skip
    reply = run.ask(step, prompt, prompt_name="scienceqa_query",
                    max_tokens=run.settings.query_max_tokens, stop=("\n",))  # fmt: skip
    first = reply.strip().splitlines()[0] if reply.strip() else ""
    cache.query = first.strip().strip("\"'").strip() or None
    step.arguments["query"] = cache.query
    run.record("query_generator", prompt, cache.query)
    run.finish(step)


def knowledge_retrieval(run: ChainRun) -> None:
    """Add background knowledge bullets to the evidence."""
    cache = run.cache
    step = run.step("knowledge_retrieval")
    prompt = render(
        "chameleon/scienceqa_knowledge",
        question=cache.question, metadata=metadata_text(cache.metadata),
        evidence=_evidence_block(run),
    )  # fmt: skip
    reply = run.ask(step, prompt, prompt_name="scienceqa_knowledge",
                    max_tokens=run.settings.knowledge_max_tokens,
                    stop=("\n\nQuestion:",))  # fmt: skip
    run.record("knowledge_retrieval", prompt, reply)
    if reply:
        cache.add_evidence(f"Knowledge:\n{reply}", glue=run.paper)
    run.finish(step)


def solution_generator(run: ChainRun) -> None:
    """Reason over the evidence and end with "The answer is X." (retried until it does)."""
    cache = run.cache
    prompt = render(
        "chameleon/scienceqa_solution",
        question=cache.question, metadata=metadata_text(cache.metadata),
        evidence=_evidence_block(run),
    )  # fmt: skip
    _solve(run, prompt, "scienceqa_solution")


def cot_solution_generator(run: ChainRun) -> None:
    """The chain-of-thought variant: question, hint (and caption) and options only."""
    cache = run.cache
    context = cache.hint.strip()
    if run.settings.cot_caption and cache.caption:
        context = f"{context} Image: {cache.caption}".strip()
    prompt = render(
        "chameleon/scienceqa_cot",
        question=cache.plain_question or cache.question,
        context=f"Context: {context}\n\n" if context else "",
        options=options_text(cache.choices or []),
    )
    _solve(run, prompt, "scienceqa_cot")


def _solve(run: ChainRun, prompt: str, name: str) -> None:
    settings = run.settings
    step = run.step("solution_generator")
    solution = ""
    for attempt in range(settings.sg_patience):
        solution = run.ask(step, prompt, prompt_name=name,
                           temperature=settings.program.temperature(attempt),
                           max_tokens=settings.solution_max_tokens,
                           stop=("\n\nQuestion:",))  # fmt: skip
        if has_answer(solution, task="scienceqa", paper=run.paper):
            break
    else:
        step.error = f"no stated answer after {settings.sg_patience} attempt(s)"
    run.cache.solution = solution
    step.arguments["attempts"] = len(step.raw)
    run.record("solution_generator", prompt, solution)
    run.finish(step)


def answer_generator(run: ChainRun) -> None:
    """Pick the option the solution states."""
    cache = run.cache
    step = run.step("answer_generator", kind="answer")
    answer = choose_scienceqa(cache.solution, cache.choices or [], paper=run.paper)
    cache.answer = cache.raw_answer = answer
    step.arguments = {"raw_answer": answer, "answer": answer}
    if not answer:
        step.error = "the solution names no option"
    run.record("answer_generator", cache.solution, answer)
    run.finish(step)


RUNNERS: dict[str, Callable[[ChainRun], None]] = {
    "query_generator": query_generator,
    "search": search,
    "image_captioner": image_captioner,
    "text_detector": text_detector,
    "knowledge_retrieval": knowledge_retrieval,
    "solution_generator": solution_generator,
    "answer_generator": answer_generator,
}
