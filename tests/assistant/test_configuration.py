"""Every answer carries what produced it and one hash over it (issue 42): equal settings give equal hashes, a
changed dense weight, method or model another."""

from __future__ import annotations

import pytest
from llm_fixtures import build_index

import prompts
from assistant.llm.llamacpp_backend import LlamaCppBackend
from assistant.llm.openai_backend import OpenAIBackend
from assistant.rag.configuration import configuration_hash, retrieval_configuration
from assistant.rag.lc_retriever import ReportRetriever
from assistant.rag.pipeline import RagPipeline
from retriever.index.report_index import ReportIndex


@pytest.fixture(scope="module")
def index(tmp_path_factory: pytest.TempPathFactory, minilm) -> ReportIndex:
    return ReportIndex.load(build_index(tmp_path_factory.mktemp("configuration") / "index", minilm), minilm)


def _pipeline(index: ReportIndex, **search: object) -> RagPipeline:
    llm = OpenAIBackend("http://127.0.0.1:9/v1", "served-model", timeout_s=1.0, max_retries=0)
    return RagPipeline(llm, ReportRetriever(index=index, **search), prompt="diagnosis_evidence")


def test_the_configuration_names_encoder_index_search_prompt_and_model(index: ReportIndex) -> None:
    configuration = _pipeline(index, field="findings", k=2, method="hybrid-weighted").configuration()
    retrieval = configuration["retrieval"]
    assert retrieval["encoder"]["name"] == "minilm" and retrieval["encoder"]["fingerprint"] == (
        index.manifest.encoder.fingerprint
    )
    assert retrieval["index"]["corpus_sha256"] == index.manifest.corpus_sha256
    assert retrieval["search"] == {
        "method": "hybrid-weighted",
        "dense_weight": index.search_configuration.dense_weight,
        "second_stage": None,
        "second_stage_weight": None,
        "field": "findings",
        "k": 2,
    }
    assert configuration["prompt"] == prompts.load("diagnosis_evidence").id
    assert configuration["llm"]["model"] == "served-model" and configuration["llm"]["temperature"] == 0.0


def test_equal_settings_give_equal_hashes_and_a_changed_dense_weight_another(index: ReportIndex) -> None:
    first = configuration_hash(_pipeline(index, method="hybrid-weighted").configuration())
    assert configuration_hash(_pipeline(index, method="hybrid-weighted").configuration()) == first
    assert configuration_hash(_pipeline(index, method="hybrid").configuration()) != first
    lighter = index.with_search(dense_weight=index.search_configuration.dense_weight - 0.1)
    assert configuration_hash(_pipeline(lighter, method="hybrid-weighted").configuration()) != first


def test_a_degraded_answer_still_carries_its_configuration_and_model(index: ReportIndex) -> None:
    answer = _pipeline(index).invoke("Blunting of the right costophrenic angle")
    assert answer.degraded and answer.model_id == "served-model"
    assert answer.configuration_hash == configuration_hash(answer.configuration)
    assert answer.configuration["retrieval"]["encoder"]["name"] == "minilm"


def test_the_embedded_model_is_identified_by_its_file_hash_without_loading_it() -> None:
    from models.gguf import MODELS

    identity = LlamaCppBackend("qwen1.5b").identity()
    assert identity["model"] == MODELS["qwen1.5b"].model_id
    assert identity["sha256"] in (MODELS["qwen1.5b"].sha256, "unavailable")


def test_the_retrieval_half_records_the_second_stage_that_applies(index: ReportIndex) -> None:
    from retriever.search.support import SupportCheck

    staged = index.with_search(second_stage=SupportCheck(weight=0.5))
    on_impressions = retrieval_configuration(staged, field="impression", k=1, method="hybrid")["search"]
    on_reports = retrieval_configuration(staged, field="report", k=1, method="hybrid")["search"]
    assert (on_impressions["second_stage"], on_impressions["second_stage_weight"]) == ("support", 0.5)
    assert on_reports["second_stage"] is None


def test_a_hash_is_short_and_stable_across_key_order() -> None:
    assert configuration_hash({"a": 1, "b": [1, 2]}) == configuration_hash({"b": [1, 2], "a": 1})
    assert len(configuration_hash({})) == 16


def test_an_answer_that_asks_no_model_names_none(index: ReportIndex) -> None:
    configuration = RagPipeline(
        OpenAIBackend("http://127.0.0.1:9/v1", "m", timeout_s=1.0, max_retries=0),
        ReportRetriever(index=index),
        prompt="evidence",
    ).configuration()
    assert configuration["prompt"] == "evidence" and configuration["llm"] is None


def test_the_langchain_retriever_takes_only_the_fields_and_methods_a_hit_can_have(index: ReportIndex) -> None:
    """Field and method are the hit's Literals (issue 38): a misspelt one is refused when the retriever is made."""
    for wrong in ({"field": "impressions"}, {"method": "hybird"}):
        with pytest.raises(ValueError, match="literal_error"):
            ReportRetriever(index=index, **wrong)
