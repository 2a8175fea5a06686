"""The rule that picks the default encoder recipe on dev (eval/training/encoder_choice.py), and the default kept equal
to it."""

from __future__ import annotations

import json

import pytest

from eval.common.shared_data import RESULTS
from eval.negation.results import RealPairs
from eval.retrieval.benchmark import CHOICE_RESULTS, DEFAULT_MODEL
from eval.retrieval.results import RetrievalResults
from eval.robustness.results import RobustnessResults
from eval.training.encoder_choice import (
    NEGATION_DEV,
    ROBUSTNESS_DEV,
    EncoderChoice,
    Scored,
    choose,
    score,
    shipped_source,
    training_runs,
)


def _scored(
    model: str,
    rows: int = 20,
    negation: float = 0.5,
    errors: float = 0.7,
    drop: float = 0.01,
    match: float = 0.48,
    abbreviated: float = 0.47,
) -> Scored:
    return Scored(model, rows, 24, negation, errors, drop, match, abbreviated)


def test_targets_count_each_bar_once() -> None:
    assert _scored("a").targets_met == 20 + 1 + 0 + 1
    assert _scored("a", negation=0.44, errors=0.85, drop=0.03).targets_met == 20 + 0 + 1 + 0
    assert _scored("a").targets == 27


def test_more_targets_win_over_better_scores() -> None:
    better_scores = _scored("b", rows=19, match=0.9, errors=0.84)
    assert choose([better_scores, _scored("a")], current="b").model == "a"


def test_a_tie_in_targets_goes_to_the_higher_mean_then_to_the_current_default() -> None:
    assert choose([_scored("a"), _scored("b", errors=0.75)], current="a").model == "b"
    assert choose([_scored("a"), _scored("b")], current="b").model == "b"
    assert choose([_scored("a"), _scored("b")], current="a").model == "a"


@pytest.mark.models
def test_the_benchmarks_default_encoder_is_the_one_the_committed_dev_results_choose() -> None:
    """Like the retrieval method's default: a new recipe becomes the default only through the dev rule."""
    committed = EncoderChoice.read(RESULTS / "encoder_choice_dev.json")
    retrieval = RetrievalResults.read(CHOICE_RESULTS)
    robustness = RobustnessResults.read(ROBUSTNESS_DEV)
    negation = RealPairs.read(NEGATION_DEV)
    rescored = [score(c.model, retrieval, robustness, negation) for c in committed.candidates]
    assert rescored == committed.candidates
    assert choose(rescored, shipped_source()).model == committed.chosen == shipped_source()
    assert committed.shipped_as == DEFAULT_MODEL


def test_only_recipes_rebuildable_in_one_session_compete() -> None:
    assert training_runs("radsearch-minilm-labelneg-2ep-256-avg2") == 2 and training_runs("x-s43") == 1
    averaged = _scored("m-avg2", errors=0.99)
    assert choose([averaged, _scored("m-s43")]).model == "m-s43"
    assert choose([averaged, _scored("m-s43")], max_runs=2).model == "m-avg2"
    import pytest

    with pytest.raises(ValueError, match="no candidate trains"):
        choose([averaged])


def test_a_candidate_missing_from_a_dev_results_file_is_named_with_the_command_to_run(tmp_path, capsys) -> None:
    import pytest

    from eval.training.encoder_choice import main

    robustness = tmp_path / "robustness_dev.json"
    robustness.write_text(json.dumps(RobustnessResults("robustness_dev", "now", "c", "0", split="dev").to_json()))
    with pytest.raises(SystemExit) as stopped:
        main(["--candidates", shipped_source(), "--robustness", str(robustness), "--out", str(tmp_path)])
    assert stopped.value.code == 2
    assert "run eval.robustness --split dev" in capsys.readouterr().err
    assert not (tmp_path / "encoder_choice_dev.json").exists()
