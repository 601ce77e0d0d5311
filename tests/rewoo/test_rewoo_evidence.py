from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from tablereason.methods.rewoo.evidence import content_words, focus, sentences, worker_log
from tablereason.methods.rewoo.parse import PlanStep

PARAGRAPH = (
    "Shirley Temple: Shirley Temple Black was an American actress, singer and dancer. "
    "She began her film career in 1932 at the age of three. "
    "As an adult, she was named United States ambassador to Ghana and to Czechoslovakia. "
    "She also served as Chief of Protocol of the United States. "
    "She died in 2014 at her home in Woodside, California."
)


def test_short_evidence_is_unchanged_apart_from_spacing() -> None:
    assert focus("Greene  King\nbrewery", "anything", 300) == "Greene King brewery"
    assert focus(PARAGRAPH, "anything", None) == PARAGRAPH


def test_long_evidence_keeps_the_subject_and_the_sentence_that_answers() -> None:
    out = focus(PARAGRAPH, "Where was Shirley Temple ambassador?", 200)
    assert out == (
        "Shirley Temple: Shirley Temple Black was an American actress, singer and dancer. ... "
        "As an adult, she was named United States ambassador to Ghana and to Czechoslovakia. ..."
    )


def test_best_sentences_first_then_the_rest_in_their_original_order() -> None:
    # "Chief of Protocol" shares 4 words, the ambassador and Woodside sentences 2 each:
    # the best one and the earlier of the others fit in 250 characters.
    out = focus(PARAGRAPH, "Chief of Protocol United States; died in Woodside", 250)
    assert len(out) <= 250
    assert out == (
        "Shirley Temple: Shirley Temple Black was an American actress, singer and dancer. ... "
        "As an adult, she was named United States ambassador to Ghana and to Czechoslovakia. "
        "She also served as Chief of Protocol of the United States. ..."
    )


def test_unrelated_query_keeps_only_the_first_sentence() -> None:
    out = focus(PARAGRAPH, "zebra", 200)
    first = "Shirley Temple: Shirley Temple Black was an American actress, singer and dancer."
    assert out == first + " ..."


def test_first_sentence_longer_than_the_limit_is_cut_at_a_word() -> None:
    text = "word " * 100 + "end."
    out = focus(text, "word", 60)
    assert len(out) <= 60 and out.endswith(" ...") and "wor ..." not in out


@settings(max_examples=200, deadline=None)
@given(
    text=st.lists(
        st.text(alphabet="abc XYZ.?!\n", min_size=0, max_size=60), min_size=0, max_size=12
    ).map(" ".join),
    query=st.text(alphabet="abc XYZ", max_size=20),
    limit=st.integers(min_value=40, max_value=300),
)
def test_focus_never_exceeds_its_limit(text: str, query: str, limit: int) -> None:
    out = focus(text, query, limit)
    assert len(out) <= limit
    if len(" ".join(text.split())) <= limit:
        assert out == " ".join(text.split())


def test_sentences_and_content_words() -> None:
    assert sentences("It rains. Oslo is wet! Is it 3.5 km? yes.") == [
        "It rains.",
        "Oslo is wet!",
        "Is it 3.5 km? yes.",
    ]
    assert content_words("Who is the owner of the Hungry Horse? Given context:") == {
        "owner",
        "hungry",
        "horse",
    }


def test_worker_log_focuses_each_step_on_the_question_and_its_plan() -> None:
    steps = [
        PlanStep(var="#E1", plan="Look up Shirley Temple.", tool="Wikipedia"),
        PlanStep(var="#E2", plan="Read her position.", tool="LLM"),
        PlanStep(var="#E3", plan="Never ran.", tool="LLM"),
    ]
    evidence = {"#E1": PARAGRAPH, "#E2": "Chief of Protocol"}
    log = worker_log(steps, evidence, "Question: Where did she serve as Chief of Protocol?", 160)
    lines = log.splitlines()
    assert lines[:2] == [
        "Plan: Look up Shirley Temple.",
        "Evidence: Shirley Temple: Shirley Temple Black was an American actress, singer and "
        "dancer. ... She also served as Chief of Protocol of the United States. ...",
    ]
    assert lines[2:] == [
        "Plan: Read her position.",
        "Evidence: Chief of Protocol",
        "Plan: Never ran.",
        "Evidence: No evidence found",
    ]
    assert worker_log([], {}, "q", 100) == "(No plan could be read, so there is no evidence.)\n"
