"""The answer configuration is chosen from the screening results by a scripted rule."""

from __future__ import annotations

import pytest

from eval.diagnosis_default import choose

D = "hybrid-weighted:enc"


def _results(accuracies: dict[str, float]) -> dict:
    return {
        "conditions": list(accuracies),
        "n_cases": 40,
        "summary": {"accuracy": {name: {"overall": {"accuracy": a}} for name, a in accuracies.items()}},
    }


def test_the_most_accurate_llm_condition_with_the_default_method_wins() -> None:
    choice = choose(_results({
        "none": 0.30,
        f"tophit:{D}": 0.90,  # no LLM: not a configuration of the answer
        "enc[k=3]": 0.80,  # another method (dense)
        D: 0.40,
        f"{D}[report,k=3,prompt=diagnosis_candidates]": 0.50,
    }))
    assert (choice["k"], choice["field"], choice["prompt"]) == (3, "report", "diagnosis_candidates")
    assert choice["runner_up"] == {"condition": D, "accuracy": 0.40} and choice["no_retrieval_accuracy"] == 0.30


def test_ties_go_to_the_cheaper_prompt() -> None:
    tied = {f"{D}[report,k=3]": 0.5, f"{D}[k=3,prompt=diagnosis_candidates]": 0.5, f"{D}[findings,k=5]": 0.5}
    assert choose(_results(tied))["condition"] == f"{D}[k=3,prompt=diagnosis_candidates]"
    assert choose(_results({f"{D}[findings]": 0.5, D: 0.5}))["condition"] == D


def test_results_without_a_candidate_are_refused() -> None:
    with pytest.raises(ValueError, match="no LLM condition"):
        choose(_results({"none": 0.3, f"tophit:{D}": 0.4}))


def test_ask_and_chat_answer_with_the_screened_choice() -> None:
    """assistant/rag/answer_defaults.py is what the rule picks from the committed screening results."""
    from assistant.chat.service import ChatConfig, Request
    from assistant.rag import answer_defaults
    from assistant.rag.lc_retriever import ReportRetriever
    from eval.diagnosis_default import SCREEN_RESULTS, read_choice

    if not SCREEN_RESULTS.is_file():
        pytest.skip(f"{SCREEN_RESULTS} not committed yet (screening run in progress)")
    choice = read_choice()
    product = (answer_defaults.K, answer_defaults.FIELD, answer_defaults.PROMPT)
    screened = (choice["k"], choice["field"], choice["prompt"])
    assert product == screened, "copy `python -m eval.diagnosis_default`'s choice into assistant/rag/answer_defaults.py"
    assert (Request().k, Request().field, ChatConfig().default_k) == (choice["k"], choice["field"], choice["k"])
    assert ReportRetriever.model_fields["k"].default == choice["k"]
