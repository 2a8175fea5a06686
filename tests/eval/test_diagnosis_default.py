"""The answer configuration is chosen from the screening results by a scripted rule."""

from __future__ import annotations

import pytest
from diagnosis_runs import accuracy_run as _results

from eval.diagnosis.default import choose

D = "hybrid-weighted:enc"


def test_the_most_accurate_llm_condition_with_the_default_method_wins() -> None:
    choice = choose(
        _results(
            {
                "none": 0.30,
                f"tophit:{D}": 0.90,  # no LLM: not a configuration of the answer
                "enc[k=3]": 0.80,  # another method (dense)
                D: 0.40,
                f"{D}[report,k=3,prompt=diagnosis_candidates]": 0.50,
            }
        )
    )
    assert (choice["k"], choice["field"], choice["prompt"]) == (3, "report", "diagnosis_candidates")
    assert choice["runner_up"] == {"condition": D, "accuracy": 0.40} and choice["no_retrieval_accuracy"] == 0.30


def test_ties_go_to_the_cheaper_prompt() -> None:
    tied = {f"{D}[report,k=3]": 0.5, f"{D}[k=3,prompt=diagnosis_candidates]": 0.5, f"{D}[findings,k=5]": 0.5}
    assert choose(_results(tied))["condition"] == f"{D}[k=3,prompt=diagnosis_candidates]"
    assert choose(_results({f"{D}[findings]": 0.5, D: 0.5}))["condition"] == D


def test_results_without_a_candidate_are_refused() -> None:
    with pytest.raises(ValueError, match="no LLM condition"):
        choose(_results({"none": 0.3, f"tophit:{D}": 0.4}))


def test_ask_and_chat_answer_with_the_arm_the_dev_cases_chose() -> None:
    """The preset's answer configuration is what the rule picks from the committed dev results (issue 37)."""
    from assistant.chat.service import ChatConfig, Request
    from assistant.rag import answer_defaults
    from assistant.rag.lc_retriever import ReportRetriever
    from eval.diagnosis.default import DEV_ARMS, choose_arm, dev_accuracy

    if not all(path.is_file() for path in DEV_ARMS):
        pytest.skip("the dev arms' results are not committed")
    choice = choose_arm(*dev_accuracy())
    from assistant.rag.evidence import WEIGHTING

    product = (answer_defaults.K, answer_defaults.FIELD, answer_defaults.PROMPT, WEIGHTING)  # PROMPT: the mode's
    chosen = (choice["k"], choice["field"], choice["prompt"], choice["weighting"])
    assert product == chosen, "run `python -m eval.diagnosis.default --adopt`"
    assert (Request().k, Request().field, ChatConfig().default_k) == (choice["k"], choice["field"], choice["k"])
    assert ReportRetriever.model_fields["k"].default == choice["k"]


def test_the_arm_rule_prefers_accuracy_then_the_cheaper_arm() -> None:
    from eval.diagnosis.default import choose_arm

    arms = {
        f"evidence:{D}[report,k=20]": 0.5,
        f"{D}[report,k=20,prompt=diagnosis_evidence]": 0.5,
        f"{D}[report]": 0.4,
        "none": 0.3,
        f"tophit:{D}[report]": 0.9,
    }
    assert choose_arm(arms, 10)["prompt"] == "evidence"  # a tie: no model is cheaper
    arms[f"{D}[report,k=20,prompt=diagnosis_evidence]"] = 0.51
    choice = choose_arm(arms, 10)
    assert (choice["prompt"], choice["k"], choice["field"]) == ("diagnosis_evidence", 20, "report")
    assert choice["weighting"] == "rank"  # named without one: run when 1/rank was the only weighting


def test_the_arm_rule_reads_the_evidence_weighting_and_prefers_the_earlier_one_on_ties() -> None:
    from eval.diagnosis.default import choose_arm

    weightings = ("uniform", "similarity:0.2", "sqrt", "rank", "similarity:1.0")
    sweep = {f"evidence:{D}[report,k=40,weighting={w}]": 0.5 for w in weightings}
    assert choose_arm(sweep, 10)["weighting"] == "sqrt"  # a tie: the default before (2026-11-28)
    sweep[f"evidence:{D}[report,k=40,weighting=sqrt]"] = 0.4
    assert choose_arm(sweep, 10)["weighting"] == "rank"
    sweep = {f"evidence:{D}[report,k=40,weighting=similarity:{t}]": 0.5 for t in ("0.2", "1.0", "0.5")}
    assert choose_arm(sweep, 10)["weighting"] == "similarity:1.0"  # then the gentlest similarity weighting
    sweep[f"evidence:{D}[report,k=40,weighting=similarity:0.2]"] = 0.52
    assert (choose_arm(sweep, 10)["weighting"], choose_arm(sweep, 10)["k"]) == ("similarity:0.2", 40)
