"""The diagnosis benchmark's paper condition is the `paper` preset (models/presets/paper.json; issue 49)."""

from __future__ import annotations

from assistant.rag.modes import AnswerMode
from assistant.settings import Settings
from eval.diagnosis.benchmark import condition_settings
from eval.diagnosis.conditions import Condition, parse_conditions
from models.preset import named_preset


def test_a_bare_encoder_condition_answers_with_the_papers_setting() -> None:
    paper = named_preset("paper")
    (condition,) = parse_conditions(paper.encoder)
    assert (condition.field, condition.k, condition.prompt) == (
        paper.answer.field,
        paper.answer.k,
        paper.answer.prompts[paper.answer.mode],
    )
    assert condition.method == paper.default_search.method == "dense" and condition.rerank is None
    assert condition.name == paper.encoder  # the cached answers' key is unchanged
    built = condition_settings(Settings(), condition)
    assert AnswerMode(built.answer.mode) is AnswerMode.FREE_TEXT and built.search.method == "dense"
    assert (built.answer.k, built.answer.field, built.search.reranker) == (1, "impression", None)


def test_the_paper_preset_is_an_overlay_of_the_tuned_values() -> None:
    tuned, paper = named_preset("default"), named_preset("paper")
    assert paper.answer.llm == tuned.answer.llm and paper.encoder == tuned.encoder
    assert (paper.answer.mode, paper.answer.field, paper.answer.k) == ("free-text", "impression", 1)
    assert paper.default_search.second_stage is None and tuned.default_search.second_stage == "support"
    assert Condition("x").field == paper.answer.field
