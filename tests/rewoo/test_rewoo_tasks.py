from __future__ import annotations

import pytest

from tablereason.datasets import Example
from tablereason.errors import ConfigurationError
from tablereason.methods.tool_tasks import (
    DEMO_IDS,
    check_task,
    choose_option,
    clean_answer,
    final_answer,
    question_text,
)
from tablereason.prompts.render import template


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("\n  Paris.\nmore", "Paris"),
        ("Answer: Bury St Edmunds", "Bury St Edmunds"),
        ("The answer is 1994.", "1994"),
        ("answer", "answer"),
        ("Answers vary", "Answers vary"),
        ("", ""),
        ("U.S.", "U.S"),
        ("Wait...", "Wait..."),
    ],
)
def test_clean_answer(raw: str, expected: str) -> None:
    assert clean_answer(raw) == expected


@pytest.mark.parametrize(
    ("answer", "expected"),
    [
        ("whale", "whale"),
        ("WHALE", "whale"),
        ("B", "whale"),
        ("(b)", "whale"),
        ("B. whale", "whale"),
        ("a whale", "whale"),
        ("A", "shark"),
        ("the shark, of course", "shark"),
        ("whales", "whale"),
        ("(E)", "whale"),  # no option E: the most similar option
    ],
)
def test_choose_option(answer: str, expected: str) -> None:
    assert choose_option(answer, ["shark", "whale"]) == expected


def test_question_text_for_both_tasks() -> None:
    ex = Example(
        dataset="scienceqa", id="1", question="Which is a mammal?", answer="whale",
        choices=["shark", "whale"], context="Look at the picture.",
        metadata={"image_file": "/data/images/test/1/image.png"},
    )  # fmt: skip
    assert question_text(ex, "scienceqa") == (
        "Question: Which is a mammal?\nContext: Look at the picture.\n"
        "Options: (A) shark (B) whale\nImage: /data/images/test/1/image.png"
    )
    assert question_text(ex, "hotpotqa") == "Question: Which is a mammal?"
    assert final_answer("(B)", ex, "scienceqa") == "whale"
    assert final_answer("(B)", ex, "hotpotqa") == "(B)"
    with pytest.raises(ConfigurationError):
        check_task("tabmwp")


def test_demo_questions_are_reserved_and_used() -> None:
    assert len(DEMO_IDS["hotpotqa"]) == 4
    demos = template("rewoo/demos_hotpotqa")
    assert demos.count("Question:") == 2 and "Hungry Horse" in demos
    paper = template("rewoo/paper_demos_hotpotqa")
    assert paper.count("Question:") == 4 and "Hungry Horse" in paper
