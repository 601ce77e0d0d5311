"""Whole Chameleon runs with a scripted model: plans, fallbacks, traces, baselines."""

from __future__ import annotations

import json
from typing import Any

import pytest
from support.chameleon_replies import routed

from tablereason.datasets.example import Example
from tablereason.errors import ConfigurationError, LLMError
from tablereason.llm import Request, ScriptedLLM
from tablereason.methods.chameleon import (
    ChainOfThought,
    Chameleon,
    ProgramOfThought,
    modules_used,
    score,
)
from tablereason.sandbox import PythonSandbox
from tablereason.table import Table

COINS_PROGRAM = "coins = [76, 94, 86, 84, 80, 83, 82, 87]\nans = sum(coins) / len(coins)"


def test_tabmwp_planned_run(tabmwp_examples: dict[str, Example], box: PythonSandbox) -> None:
    llm = routed(
        planner=['["Knowledge_Retrieval", "Program_Generator", "Program_Verifier", '
                 '"Program_Executor", "Answer_Generator"]'],
        knowledge_retrieval=["- The mean is the sum divided by the count."],
        program_generator_and_verifier=["ans = ", COINS_PROGRAM],
    )  # fmt: skip
    prediction = Chameleon(llm, "tabmwp", sandbox=box).run(tabmwp_examples["16"])
    assert prediction.error is None and prediction.answer == "84"
    assert modules_used(prediction) == [
        "knowledge_retrieval", "program_generator_and_verifier", "program_executor",
        "answer_generator",
    ]  # fmt: skip
    plan_step = next(s for s in prediction.trace.steps if s.kind == "plan")
    assert plan_step.arguments["short"] == "KR,PG+PV,PE,AG" and plan_step.error is None
    assert "The mean is the sum" in llm.requests[2].as_text()  # knowledge reached the program
    assert prediction.trace.usage.requests == 4
    data = json.loads(prediction.trace.to_json())
    assert data["steps"][0]["table"]["header"] == ["Name", "Number of coins"]
    assert score("tabmwp", {"16": prediction}, [tabmwp_examples["16"]])["paper"].score == 1.0


@pytest.mark.parametrize("temperature", [None, 0.7])
def test_program_steps_record_the_temperature_they_were_sent_with(
    tabmwp_examples: dict[str, Example], box: PythonSandbox, temperature: float | None
) -> None:
    llm = routed(
        planner=['["Program_Generator", "Program_Verifier", "Program_Executor", '
                 '"Answer_Generator"]'],
        program_generator_and_verifier=["ans = ", COINS_PROGRAM],
    )  # fmt: skip
    options = {} if temperature is None else {"temperature": temperature, "seed": 2}
    prediction = Chameleon(llm, "tabmwp", sandbox=box, **options).run(tabmwp_examples["16"])
    programs = [s for s in prediction.trace.steps if s.name == "program_generator_and_verifier"]
    sent = [r.temperature for r in llm.requests if "program" in str(r.call_site)]
    assert len(programs) == 2 and [s.arguments["temperature"] for s in programs] == sent
    assert sent == ([0.0, 0.3] if temperature is None else [0.7, 0.7])


@pytest.mark.parametrize("reply", [
    "[program_executor, program_generator, answer_generator]",  # reordered
    "[calculator, answer_generator]",  # unknown
    "[]",  # empty
    "Use the program.",  # malformed
])  # fmt: skip
def test_bad_plans_fall_back_to_default(tabmwp_examples: dict[str, Example], box: PythonSandbox,
                                        reply: str) -> None:  # fmt: skip
    llm = routed(planner=[reply], program_generator_and_verifier=[COINS_PROGRAM])
    prediction = Chameleon(llm, "tabmwp", sandbox=box).run(tabmwp_examples["16"])
    assert prediction.answer == "84"
    assert modules_used(prediction) == [
        "program_generator_and_verifier", "program_executor", "answer_generator"]  # fmt: skip
    plan_step = prediction.trace.steps[1]
    assert plan_step.error and "default plan" in plan_step.error and plan_step.raw == [reply]


def test_table_and_question_convenience(box: PythonSandbox) -> None:
    table = Table.from_records(["Day", "Cars"], [["Mon", "12"], ["Tue", "9"]], caption="Cars")
    llm = routed(planner=["[solution_generator, answer_generator]"],
                 solution_generator=["12 - 9 = 3. The answer is 3."])  # fmt: skip
    prediction = Chameleon(llm, "tabmwp", sandbox=box).run(
        table, "How many more cars on Monday?", unit="cars"
    )
    assert prediction.answer == "3"
    assert "regarding Cars" in llm.requests[1].as_text()
    assert "(Unit: cars)" in llm.requests[1].as_text()
    with pytest.raises(ConfigurationError):
        Chameleon(llm, "tabmwp").run(table, "q", colour="red")


def test_model_failure_ends_run_with_error(tabmwp_examples: dict[str, Example]) -> None:
    llm = ScriptedLLM(replies=[LLMError("server down")])
    prediction = Chameleon(llm, "tabmwp").run(tabmwp_examples["16"])
    assert prediction.error == "server down" and prediction.answer == ""
    assert prediction.trace.steps[-1].kind == "error"


def test_settings_profiles_and_validation() -> None:
    llm = ScriptedLLM(replies=[])
    assert Chameleon(llm, profile="paper").settings.program.patience == 20
    assert Chameleon(llm, rl_cell_threshold=12).settings.rl_cell_threshold == 12
    with pytest.raises(ConfigurationError):
        Chameleon(llm, task="tabfact")
    with pytest.raises(ConfigurationError):
        Chameleon(llm, profile="fast")
    with pytest.raises(ConfigurationError):
        Chameleon(llm, plan=["program_executor", "program_generator", "answer_generator"])
    with pytest.raises(ConfigurationError):
        Chameleon(llm, task="scienceqa", tools={"calculator": object()})  # type: ignore[dict-item]
    config = Chameleon(llm).config()
    assert "chameleon/tabmwp_planner" in config["prompts"]


def test_scienceqa_full_chain(scienceqa_examples: dict[str, Example]) -> None:
    class Snippets:
        name, description = "Search", "fake"

        def __call__(self, text: str) -> str:
            return "Jupiter is a gas giant."

    llm = routed(
        planner=["['Query_Generator', 'Bing_Search', 'Image_Captioner', 'Text_Detector', "
                 "'Knowledge_Retrieval', 'Solution_Generator', 'Answer_Generator']"],
        query_generator=["what is jupiter made of"],
        knowledge_retrieval=["- Gas giants are made mainly of gas."],
        solution_generator=["Jupiter is the largest planet and is mostly gas. The answer is B."],
    )  # fmt: skip
    example = scienceqa_examples["78"]
    prediction = Chameleon(llm, "scienceqa", tools={"search": Snippets()}).run(example)
    assert prediction.error is None and prediction.answer == "false"
    solution_prompt = llm.requests[-1].as_text()
    for label in ("Search results: Jupiter", "Image caption: A screen shot",
                  "Detected text in the image: Planet", "Knowledge:\n- Gas giants"):  # fmt: skip
        assert label in solution_prompt
    assert "Metadata: {'has_image': True, 'grade': 6" in llm.requests[0].as_text()
    scores = score("scienceqa", {example.id: prediction}, [example])
    assert scores["default"].score == scores["paper"].score == 1.0


def test_scienceqa_invalid_plan_falls_back(scienceqa_examples: dict[str, Example]) -> None:
    llm = routed(planner=["['Solution_Generator', 'Knowledge_Retrieval', 'Answer_Generator']"],
                 solution_generator=["Knitting is learned. The answer is A."])  # fmt: skip
    prediction = Chameleon(llm, "scienceqa")(scienceqa_examples["93"])  # callable for runners
    assert modules_used(prediction) == ["solution_generator", "answer_generator"]
    assert prediction.answer == "acquired"


def test_baselines_both_tasks(
    tabmwp_examples: dict[str, Example], scienceqa_examples: dict[str, Example], box: PythonSandbox
) -> None:
    cot = routed(solution_generator=["672 / 8 = 84. The answer is 84."])
    assert ChainOfThought(cot, "tabmwp").run(tabmwp_examples["16"]).answer == "84"
    assert len(cot.requests) == 1  # no planner
    pot = routed(program_generator=[COINS_PROGRAM])
    prediction = ProgramOfThought(pot, "tabmwp", sandbox=box).run(tabmwp_examples["16"])
    assert prediction.answer == "84" and modules_used(prediction)[0] == "program_generator"
    sqa_cot = routed(solution_generator=["It is learned. The answer is A."])
    example = scienceqa_examples["93"]
    assert ChainOfThought(sqa_cot, "scienceqa").run(example).answer == "acquired"
    cot_prompt = sqa_cot.requests[0].as_text()
    assert "Context: Hint: People who can knit" in cot_prompt and "Metadata" not in cot_prompt
    sqa_pot = routed(program_generator_and_verifier=["print(1)", "ans = 'a'"])
    prediction = ProgramOfThought(sqa_pot, "scienceqa", sandbox=box).run(example)
    assert prediction.answer == "acquired" and len(sqa_pot.requests) == 2


def test_cot_caption_in_paper_profile(scienceqa_examples: dict[str, Example]) -> None:
    for profile, shown in (("paper", True), ("default", False)):
        llm = routed(solution_generator=["The answer is A."])
        ChainOfThought(llm, "scienceqa", profile).run(scienceqa_examples["23"])
        assert ("Image: A painting of a horse" in llm.requests[0].as_text()) == shown


def _plausible(request: Request) -> str:
    site = request.call_site.removeprefix("chameleon/")
    return {
        "planner": "['row_lookup', 'column_lookup', 'table_verbalizer', 'knowledge_retrieval', "
                   "'program_generator', 'program_verifier', 'program_executor', "
                   "'solution_generator', 'answer_generator']",
        "row_lookup": "1, 2", "column_lookup": "all", "table_verbalizer": "A table.",
        "knowledge_retrieval": "- Read carefully.", "solution_generator": "The answer is 4.",
        "program_generator_and_verifier": "ans = 4",
    }[site]  # fmt: skip


@pytest.mark.parametrize("profile", ["paper", "default"])
def test_every_fixture_example_runs(tabmwp_examples: dict[str, Example], box: PythonSandbox,
                                    profile: str) -> None:  # fmt: skip
    llm = ScriptedLLM(fn=_plausible)
    method = Chameleon(llm, "tabmwp", profile, sandbox=box, rl_cell_threshold=0,
                       cl_cell_threshold=0)  # fmt: skip
    predictions: dict[str, Any] = {}
    for example in tabmwp_examples.values():
        prediction = method.run(example)
        assert prediction.error is None
        json.loads(prediction.trace.to_json())
        predictions[example.id] = prediction
    result = score("tabmwp", predictions, list(tabmwp_examples.values()))
    assert result["paper"].n == len(tabmwp_examples)
