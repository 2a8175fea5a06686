"""Negated-hit rate on a tiny hand-made corpus: what counts as a negated hit, and the rate computed by hand."""

from __future__ import annotations

from pathlib import Path

import pytest

from eval.finding_mentions import OPENI_FINDINGS, Status, mention_status, mentions
from eval.negated_hits import (
    Query,
    findings_queries,
    index_search,
    judge,
    label_queries,
    main,
    negated_hit_rate,
    sparse,
)
from retriever.negation import is_negated
from retriever.report import Report
from retriever.splits import split_of

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
    assert sparse(rows, ["rules"]) == {"negated": {"rules": {"0": [[1, "r2"], [3, "r4"]]}}, "short": {"0": 5}}


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


def test_real_index_bm25_and_encoder(minilm) -> None:
    """Through the product's ReportIndex: every effusion report outranks the brain MRI, so @5 is 2 of 5 whatever
    the order within them."""
    from retriever.index import ReportIndex

    index = ReportIndex.build(CORPUS, minilm, ("impression",))
    query = label_queries()[[q.finding.label for q in label_queries()].index("Effusion")]
    for method in ("bm25", "dense", "hybrid", "hybrid-weighted"):
        rows = judge([query], index_search(index, "impression"), method, "impression", {"rules": is_negated})
        assert rows[0]["rates"]["rules"]["@5"] == pytest.approx(0.4), method
        assert {hit for _, hit in rows[0]["negated"]["rules"]} == NEGATED_ONLY


def test_main_skips_without_shared_data(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--data", str(tmp_path / "absent"), "--out", str(tmp_path / "out")]) == 0
    assert "skipped" in capsys.readouterr().out
    assert not (tmp_path / "out.json").exists()
