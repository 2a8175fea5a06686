"""`make demo`'s question (issue 42): on the shipped demo reports, indexed with the shipped encoder, the question finds
a report that affirms the answer, and the embedded model answers it (slow: the 1.5B model)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
QUERY = re.search(r"^DEMO_QUERY \?= (.+)$", (REPO / "Makefile").read_text(encoding="utf-8"), re.MULTILINE).group(1)
ANSWER = "pneumonia"


@pytest.fixture(scope="module")
def demo_index(tmp_path_factory: pytest.TempPathFactory):
    from retriever.encoders.encoder import load_encoder
    from retriever.index.report_index import ReportIndex
    from retriever.reports.ingest import Exclusions, ingest

    reports = ingest(["demo"], Exclusions(require_findings=False, require_impression=False)).reports
    folder = tmp_path_factory.mktemp("demo") / "index"
    ReportIndex.build(reports, load_encoder("radsearch", backend="onnx-int8")).save(folder)
    return ReportIndex.load(folder)


def test_the_demo_question_finds_a_report_that_affirms_the_answer(demo_index) -> None:
    from assistant.settings import Settings
    from models.preset import PRESET

    searched = demo_index.with_search(second_stage=Settings().search.load_reranker())
    (top,) = searched.search(QUERY, PRESET.answer.field, 1, method=PRESET.default_search.method)
    assert ANSWER in top.report.impression.lower() and not top.contradicts


@pytest.mark.slow
def test_the_embedded_model_answers_the_demo_question(demo_index) -> None:
    from assistant.llm.llamacpp_backend import LlamaCppBackend
    from assistant.rag.lc_retriever import ReportRetriever
    from assistant.rag.pipeline import RagPipeline
    from models.gguf import GGUFNotAvailable, resolve

    try:
        resolve("qwen1.5b")
    except GGUFNotAvailable as exc:
        pytest.skip(str(exc))
    llm = LlamaCppBackend("qwen1.5b", timeout_s=600)
    for prompt in ("evidence", "diagnosis_evidence"):  # the default (no model), then the model choosing, as make demo
        answer = RagPipeline(llm, ReportRetriever(index=demo_index), prompt=prompt).invoke(QUERY)
        assert not answer.degraded and ANSWER in (answer.diagnosis or "").lower(), (prompt, answer.diagnosis)
        assert answer.cited_report_ids and not answer.grounding
