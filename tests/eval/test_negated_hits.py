"""Negated-hit rate on a tiny hand-made corpus: what counts as a negated hit, and the rate computed by hand."""

from __future__ import annotations

from pathlib import Path

import pytest

from eval.negation.finding_mentions import Status, mention_status
from eval.negation.negated_hits import (
    Query,
    findings_queries,
    index_search,
    judge,
    label_queries,
    main,
    negated_hit_rate,
    render,
    sparse,
)
from eval.negation.results import HitRate, MethodRates, NegatedHits, SparseHits
from retriever.negation.pairs import mentions
from retriever.negation.rules import is_negated
from retriever.reports.findings import OPENI_FINDINGS
from retriever.reports.record import Report
from retriever.reports.splits import split_of

EFFUSION = next(f for f in OPENI_FINDINGS if f.label == "Effusion")

#: Five reports that mention a pleural effusion (three affirm it, two only rule it out) and one that does not.
CORPUS = [
    Report("r1", impression="Small left pleural effusion with basilar atelectasis.", source="openi"),
    Report("r2", impression="No pleural effusion or pneumothorax.", source="openi"),
    Report("r3", impression="No pneumothorax. Moderate right pleural effusion.", source="openi"),
    Report("r4", impression="There is no pleural effusion.", source="openi"),
    Report("r5", impression="No left effusion, small right effusion.", source="openi"),
    Report("r6", impression="Normal MRI of the brain without acute intracranial abnormality.", source="openi"),
]
NEGATED_ONLY = {"r2", "r4"}


@pytest.mark.parametrize(
    ("text", "status"),
    [
        ("No pleural effusion.", Status.NEGATED),
        ("No pleural effusion. Small effusion on the right.", Status.AFFIRMED),  # one affirmed mention is enough
        ("No left effusion, small right effusion.", Status.AFFIRMED),  # second mention judged after the first
        ("Pleural effusion is not seen.", Status.NEGATED),
        ("Normal chest.", Status.ABSENT),
        ("Effusions have resolved and there is no pleural fluid.", Status.NEGATED),
    ],
)
def test_mention_status(text: str, status: Status) -> None:
    assert mention_status(text, EFFUSION, is_negated) is status


def test_overlapping_terms_are_one_mention() -> None:
    assert mentions("Small pleural effusion.", EFFUSION.terms) == [("Small pleural effusion.", "pleural effusion")]


def test_rate_by_hand() -> None:
    statuses = [Status.NEGATED, Status.AFFIRMED, Status.NEGATED, Status.ABSENT, Status.AFFIRMED, Status.NEGATED]
    assert negated_hit_rate(statuses, 5) == pytest.approx(2 / 5)
    assert negated_hit_rate(statuses, 10) == pytest.approx(3 / 6)  # only six came back
    assert negated_hit_rate(statuses, 1) == 1.0
    assert negated_hit_rate([], 5) == 0.0


def test_judge_leaves_the_query_report_out_and_counts_negated_hits() -> None:
    def search(text: str, method: str, k: int) -> list[Report]:
        return CORPUS[:k]

    query = Query("findings", "openi", "Small left pleural effusion.", EFFUSION, exclude="r1")
    rows = judge([query], search, "bm25", "impression", {"rules": is_negated})
    # hits r2..r6 (r1 is the query's own report): r2 and r4 only negate the effusion -> 2 of 5
    assert rows[0]["rates"]["rules"] == {"@5": pytest.approx(0.4), "@10": pytest.approx(0.4)}
    assert rows[0]["negated"]["rules"] == [[1, "r2"], [3, "r4"]]  # ranks among the hits left
    assert sparse(rows, ["rules"]) == SparseHits(negated={"rules": {"0": [[1, "r2"], [3, "r4"]]}}, short={"0": 5})


def _test_split_id(prefix: str, start: int = 0) -> str:
    return next(f"{prefix}:{i}" for i in range(start, 10_000) if split_of(f"{prefix}:{i}") == "test")


def test_findings_queries_need_test_split_a_label_and_an_affirmed_mention() -> None:
    test_id = _test_split_id("openi")
    other_test_id = _test_split_id("openi", int(test_id.split(":")[1]) + 1)
    train_id = next(f"openi:{i}" for i in range(10_000) if split_of(f"openi:{i}") == "train")
    reports = [
        Report(test_id, findings="Small left pleural effusion.", labels=("Effusion",), source="openi"),
        Report(other_test_id, findings="No pleural effusion.", labels=("Effusion",), source="openi"),
        Report(train_id, findings="Small left pleural effusion.", labels=("Effusion",), source="openi"),
        Report(_test_split_id("mtsamples"), findings="Small left pleural effusion.", source="mtsamples"),
    ]
    queries = findings_queries(reports, is_negated)
    assert [(q.exclude, q.finding.label) for q in queries] == [(test_id, "Effusion")]


def test_label_queries_cover_both_label_sets() -> None:
    queries = label_queries()
    assert sum(q.source == "openi" for q in queries) == 14
    assert sum(q.source == "ctrate" for q in queries) == 18
    assert any(q.text == "pleural effusion" for q in queries)


def test_real_index_no_method_ranks_a_report_ruling_the_finding_out_above_one_affirming_it(minilm) -> None:
    """Through the product's ReportIndex, every method: for "pleural effusion" the two reports that plainly affirm it
    come first and the two that only rule it out last and marked (BM25 does not return them: their negated words are
    other terms). r5 ("No left effusion, small right effusion.") is mixed, and NegEx's six-word window reaches past
    its comma, so the search reads it as negated too; the metric's judge does not."""
    from retriever.index.report_index import ReportIndex

    index = ReportIndex.build(CORPUS, minilm, ("impression",))
    query = label_queries()[[q.finding.label for q in label_queries()].index("Effusion")]
    for method in ("bm25", "dense", "hybrid", "hybrid-weighted"):
        hits = index.search(query.text, k=6, method=method)
        assert {h.report.id for h in hits[:2]} == {"r1", "r3"}, method
        assert all(h.contradicts for h in hits if h.report.id in NEGATED_ONLY), method
        assert not any(h.contradicts for h in hits if h.report.id in {"r1", "r3", "r6"}), method
        rows = judge([query], index_search(index, "impression"), method, "impression", {"rules": is_negated})
        negated = {hit for _, hit in rows[0]["negated"]["rules"]}
        assert negated == set() if method == "bm25" else negated <= NEGATED_ONLY, method


def test_hand_made_corpus_affirmed_and_negated_queries_rank_the_matching_polarity_first(minilm) -> None:
    """Issue 17's ranking bar, per method: an affirmative query ranks every affirming report above every report that
    only rules the finding out, a negated query the reverse; mixed reports may fall anywhere."""
    from retriever.index.report_index import ReportIndex

    corpus = [
        Report("a1", impression="Large left pneumothorax with mediastinal shift.", source="fixture"),
        Report("a2", impression="Small apical pneumothorax, stable.", source="fixture"),
        Report("a3", impression="Right pneumothorax has increased in size.", source="fixture"),
        Report("n1", impression="No pneumothorax.", source="fixture"),
        Report("n2", impression="There is no evidence of pneumothorax or pleural effusion.", source="fixture"),
        Report("n3", impression="Pneumothorax is not seen after chest tube removal.", source="fixture"),
        Report("n4", impression="Previously noted right pneumothorax appears resolved.", source="fixture"),
        Report("n5", impression="The apical pneumothorax is no longer seen.", source="fixture"),
        Report("m1", impression="No left pneumothorax. Small right pneumothorax.", source="fixture"),
        Report("x1", impression="Mild cardiomegaly.", source="fixture"),
    ]
    affirmed, negated = {"a1", "a2", "a3"}, {"n1", "n2", "n3", "n4", "n5"}
    index = ReportIndex.build(corpus, minilm, ("impression",))
    for method in ("bm25", "dense", "hybrid", "hybrid-weighted"):
        for query, first, last in (("pneumothorax", affirmed, negated), ("no pneumothorax", negated, affirmed)):
            ranked = [h.report.id for h in index.search(query, k=len(corpus), method=method)]
            position = {rid: ranked.index(rid) if rid in ranked else len(ranked) for rid in first | last}
            assert max(position[r] for r in first) < min(position[r] for r in last), (method, query, ranked)


def test_main_skips_without_shared_data(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--data", str(tmp_path / "absent"), "--out", str(tmp_path / "out")]) == 0
    assert "skipped" in capsys.readouterr().out
    assert not (tmp_path / "out.json").exists()


def test_report_marks_the_default_as_searched_with_its_second_stage_and_checks_it() -> None:
    def row(method: str, default: bool, rate: float) -> MethodRates:
        summary = {"either": {"findings/all": HitRate(10, {"@5": rate, "@10": rate})}}
        return MethodRates(method, "" if method == "bm25" else "enc", default, summary, SparseHits({}, {}))

    payload = NegatedHits(
        command="python -m eval.negation.negated_hits",
        created="now",
        machine="m",
        corpus_reports=3,
        field="impression",
        queries={"findings": 10},
        query_list=[],
        default_method="hybrid-weighted",
        second_stage="support",
        detectors=["either"],
        skipped_encoders={},
        seconds={},
        examples=[],
        results=[
            row("bm25", False, 0.09),
            row("hybrid-weighted", False, 0.05),
            row("hybrid-weighted+rerank=support", True, 0.01),
        ],
    )
    text = render(payload)
    assert "Default as searched: `hybrid-weighted` with the `support` second stage" in text
    assert "| **hybrid-weighted+rerank=support** | enc | 1.0% | 1.0% |" in text
    assert "| hybrid-weighted | enc | 5.0% | 5.0% |" in text
    # the bar is checked on the default as searched only: 1.0% <= 2% and <= 9.0% / 3
    assert [line for line in text.splitlines() if line.startswith("- target")] == [
        "- target (findings/all, @5): `hybrid-weighted+rerank=support` + enc 1.0% vs BM25 9.0% (bar: ≤ 2% and ≤ 3.0%): "
        "met"
    ]
