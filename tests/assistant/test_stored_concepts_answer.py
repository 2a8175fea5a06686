"""Answers from stored concepts are the answers of linking at answer time (issue 48): on the demo index, built as
`make demo` builds it, every question gets the same diagnosis, candidates, counts, support and order whether the
evidence adds up the concepts the index stored or links each retrieved conclusion itself (an index built before
concepts were stored)."""

from __future__ import annotations

import re
import shutil
import sqlite3
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from assistant.llm.base import LLMResult, Message
from assistant.rag.assemble import build_pipeline
from assistant.rag.lc_retriever import ReportRetriever, documents_to_hits, hit_to_document
from assistant.rag.question import read_question
from assistant.rag.votes import evidence_for
from assistant.settings import Settings
from retriever.index.folder import STORE_FILE, write_manifest
from retriever.index.manifest import Manifest
from retriever.index.report_index import ReportIndex
from retriever.reports.record import checked_field

pytestmark = pytest.mark.models  # builds the demo index with the shipped encoder

REPO = Path(__file__).resolve().parents[2]
#: The issue's own questions beside the README's examples and the demo reports' findings.
QUESTIONS = [
    "Cardiomegaly with interstitial edema.",
    "No pneumothorax.",
    "Right lower lobe consolidation with air bronchograms. No pleural effusion or pneumothorax.",
    "Blunting of the right costophrenic angle.",
    "Acute subdural hematoma along the left convexity.",
]


class NoModel:
    """Fault injection: the evidence answers without a model, so any call to this one fails the test."""

    model_id = "none"
    context_window = 4096

    def count_tokens(self, text: str) -> int:
        return len(text)

    def identity(self) -> dict[str, str]:
        return {"backend": "none", "model": self.model_id}

    def complete(self, messages: Sequence[Message], **kwargs: object) -> LLMResult:
        raise AssertionError("the evidence answer asked a model")

    def stream(self, messages: Sequence[Message], **kwargs: object):  # pragma: no cover - never called
        raise AssertionError("the evidence answer asked a model")


@pytest.fixture(scope="module")
def indexes(tmp_path_factory: pytest.TempPathFactory) -> tuple[ReportIndex, ReportIndex, list[str]]:
    """The demo index with stored concepts, the same index as an older program wrote it (no concepts table, no
    concept_rules), and the questions: the README's, the issue's and the findings (else the beginning of the text) of
    every fifth demo report."""
    from retriever.encoders.encoder import load_encoder
    from retriever.reports.ingest import Exclusions, ingest

    reports = ingest(["demo"], Exclusions(require_findings=False, require_impression=False)).reports
    root = tmp_path_factory.mktemp("demo")
    encoder = load_encoder("radsearch", backend="onnx-int8")
    ReportIndex.build(reports, encoder).save(root / "stored")
    shutil.copytree(root / "stored", root / "older")
    with sqlite3.connect(root / "older" / STORE_FILE) as db:
        db.execute("DROP TABLE concepts")
    db.close()
    manifest = Manifest.read(root / "older")
    manifest.concept_rules = ""
    write_manifest(root / "older", manifest)
    readme = re.findall(r'^assistant ask "([^".][^"]*)"', (REPO / "README.md").read_text(encoding="utf-8"), re.M)
    findings = [(r.findings or r.full_text)[:800] for r in reports[::5]]
    settings = Settings.from_env({})
    load = [ReportIndex.load(root / name, encoder, search=settings.search.configure) for name in ("stored", "older")]
    return load[0], load[1], [*readme, *QUESTIONS, *findings]


def _answer(index: ReportIndex, question: str) -> dict[str, Any]:
    """The default `ask` answer's parts that rest on the evidence, and whether its hits carried stored concepts."""
    settings = Settings.from_env({})
    retriever = ReportRetriever(index=index, field=checked_field(settings.answer.field), k=settings.answer.k)
    pipeline = build_pipeline(settings, NoModel(), retriever)
    assert pipeline.evidence_only
    answer = pipeline.invoke(question)
    hits = answer.retrieved
    evidence = evidence_for(read_question(answer.query), hits)
    return {
        "diagnosis": answer.diagnosis,
        "differential": answer.differential,
        "evidence": answer.evidence,
        "support": [evidence.support(c) for c in evidence.candidates],
        "hits": [h.report.id for h in hits],
        "stored": {h.concepts is not None for h in hits},
    }


def test_stored_and_answer_time_concepts_give_identical_answers(indexes) -> None:
    stored, older, questions = indexes
    assert stored.concepts_stored and not older.concepts_stored
    assert len(questions) > 60
    differing, answered = [], 0
    for question in questions:
        with_stored, linked_now = _answer(stored, question), _answer(older, question)
        assert with_stored.pop("stored") == {True} and linked_now.pop("stored") <= {False}
        if with_stored != linked_now:
            differing.append(question)
        answered += bool(with_stored["evidence"].get("candidates"))
    assert differing == []
    assert answered > len(questions) // 2  # the comparison is of real differentials, not of empty ones


def test_stored_concepts_survive_the_retriever_s_documents(indexes) -> None:
    """The pipeline reads hits back from LangChain Documents: the stored concepts travel in their metadata."""
    stored, _, questions = indexes
    hits = stored.search(questions[0], "findings", 10)
    assert any(h.concepts for h in hits)
    assert [h.concepts for h in documents_to_hits([hit_to_document(h) for h in hits])] == [h.concepts for h in hits]
