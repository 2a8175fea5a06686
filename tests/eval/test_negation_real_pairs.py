"""The real-sentence negation test (eval.negation.real_pairs, its pairs by retriever.negation.label_pairs): which
sentences count, how pairs are matched, and Δcos by hand on fixed vectors. Reports written for these tests."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from eval.negation.encoder_pairs import pair_gaps
from eval.negation.real_pairs import TARGET, held_out, mean_ci, new_text, render, summarize, verdict
from eval.negation.results import FindingGap, Pair, RealPairGap, RealPairs, RealPairsVerdict
from retriever.negation.label_pairs import collect, judge, label_sentence_pairs
from retriever.negation.pairs import NegationPair, match
from retriever.reports.findings import OWNERS
from retriever.reports.record import Report
from retriever.reports.splits import split_of

OPENI = OWNERS["openi"]


@pytest.mark.parametrize(
    ("sentence", "expected"),
    [
        ("Small left pleural effusion.", ("pleural effusion", False)),
        ("There is no pleural effusion.", ("pleural effusion", True)),
        ("Pneumothorax is not seen.", ("pneumothorax", True)),
        ("No pleural effusion or pneumothorax.", None),  # two findings
        ("Small left pleural effusion, no pneumothorax.", None),  # two findings, one negated
        ("Pleural effusion was not detected.", ("pleural effusion", True)),  # a post-negation
        ("Pleural effusion is not large.", None),  # a negation word no rule applies to it: never an affirmed half
        ("No change in the small left pleural effusion.", None),  # affirmed by the rules, but "no" stays a doubt
        ("Pneumonia cannot be excluded.", None),  # hedged
        ("Right XXXX pleural effusion.", None),  # de-identified
        ("Nodule in the right thyroid lobe.", None),  # not a chest finding
        ("The heart is normal in size.", None),  # no finding term
        ("Small left pleural effusion " + "and the heart and mediastinum are stable " * 4 + "today.", None),  # 33 words
    ],
)
def test_a_sentence_counts_with_one_finding_mention_and_no_doubt(sentence: str, expected: tuple | None) -> None:
    judged = judge(sentence, OPENI)
    assert (judged and (judged[0].query, judged[1])) == expected


def _report(i: int, findings: str, source: str = "openi") -> Report:
    return Report(id=f"{source}:t{i}", findings=findings, impression="", source=source)


REPORTS = [
    _report(1, "Small left pleural effusion. No pneumothorax."),
    _report(2, "No pleural effusion. Heart size is normal."),
    _report(3, "There is no pleural effusion."),
    _report(4, "Small left pleural effusion."),  # the same sentence as report 1: one entry, both reports
    _report(5, "Moderate right pleural effusion. There is no pleural effusion on the left."),
    _report(6, "Right upper lobe pneumonia."),
    _report(7, "Large left pleural effusion.", source="medpix"),  # no label list for this source: not used
]


def test_sentences_are_deduplicated_and_remember_their_reports() -> None:
    found = collect(REPORTS)
    effusion = found["pleural effusion"]
    assert effusion[False]["small left pleural effusion."].reports == {"openi:t1", "openi:t4"}
    assert sorted(s.text for s in effusion[False].values()) == [
        "Moderate right pleural effusion.",
        "Small left pleural effusion.",
    ]
    assert sorted(s.text for s in effusion[True].values()) == [
        "No pleural effusion.",
        "There is no pleural effusion on the left.",
        "There is no pleural effusion.",
    ]
    assert not found["pneumothorax"][False] and list(found["pneumothorax"][True]) == ["no pneumothorax."]
    assert "pneumonia" in found and all("Large" not in s.text for side in effusion.values() for s in side.values())


def test_pairs_are_one_to_one_from_other_reports_and_fixed_by_the_seed() -> None:
    pairs = label_sentence_pairs(REPORTS, "real", seed=3)
    assert len(pairs) == 2 and all(p.query == "pleural effusion" and p.origin == "real" for p in pairs)
    assert len({p.affirmed for p in pairs}) == 2 and len({p.negated for p in pairs}) == 2
    found = collect(REPORTS)["pleural effusion"]
    for p in pairs:
        affirmed = next(s for s in found[False].values() if s.text == p.affirmed)
        negated = next(s for s in found[True].values() if s.text == p.negated)
        assert negated.reports - affirmed.reports
    assert label_sentence_pairs(REPORTS, "real", seed=3) == pairs
    reshuffled = {tuple(label_sentence_pairs(REPORTS, "real", seed=s)) for s in range(20)}
    assert reshuffled != {tuple(pairs)}  # the seed matters


def test_a_negated_sentence_only_in_the_affirmed_ones_report_is_not_its_partner() -> None:
    only = [_report(1, "Moderate right pleural effusion. There is no pleural effusion on the left.")]
    assert label_sentence_pairs(only) == []
    assert len(label_sentence_pairs([*only, _report(2, "No pleural effusion.")])) == 1


def test_held_out_keeps_only_the_splits_asked_for() -> None:
    ids = {split_of(f"openi:{i}"): f"openi:{i}" for i in range(200)}
    reports = [Report(id=ids[s], findings="Small left pleural effusion.", impression="") for s in ("train", "test")]
    assert [r.id for r in held_out(reports, ("dev", "test"))] == [ids["test"]]
    assert held_out(reports, ("dev",)) == []


class FixedEncoder:
    """Unit vectors given by hand, one per text."""

    def __init__(self, vectors: dict[str, list[float]]) -> None:
        self.vectors = {t: np.asarray(v, dtype=np.float32) / np.linalg.norm(v) for t, v in vectors.items()}

    def encode(self, texts: list[str], batch_size: int = 32) -> np.ndarray:
        return np.stack([self.vectors[t] for t in texts])


def test_new_text_drops_pairs_with_a_sentence_written_in_a_train_report() -> None:
    pairs = [
        NegationPair("pleural effusion", "Small left pleural effusion.", "No pleural effusion was detected.", "t"),
        NegationPair("pneumothorax", "Large right pneumothorax.", "No pneumothorax.", "t"),
        NegationPair("consolidation", "Focal consolidation.", "Lungs are clear without consolidation.", "t"),
    ]
    train = [
        _report(1, "Heart size normal.  NO PLEURAL   effusion was detected."),  # case and spacing folded
        _report(2, "Large right pneumothorax, now smaller."),  # another sentence: not the same text
        Report(id="r:3", findings="", impression="Focal  consolidation.", source="ctrate"),  # impressions count
    ]
    assert new_text(pairs, train) == [pairs[1]]
    assert new_text(pairs, []) == pairs


def test_delta_cos_by_hand_on_two_pairs() -> None:
    encoder = FixedEncoder(
        {
            "effusion": [1, 0, 0],
            "Small left effusion.": [0.8, 0.6, 0],  # cos 0.8 with the query
            "No effusion.": [0.6, 0, 0.8],  # cos 0.6
            "nodule": [0, 1, 0],
            "A nodule.": [0, 1, 0],  # cos 1.0
            "No nodules.": [0, 0.6, 0.8],  # cos 0.6
        }
    )
    pairs = [
        NegationPair("effusion", "Small left effusion.", "No effusion.", "real"),
        NegationPair("nodule", "A nodule.", "No nodules.", "real"),
    ]
    gaps = pair_gaps(encoder, pairs)
    assert gaps == pytest.approx([0.2, 0.4], abs=1e-6)
    summary = summarize(gaps)
    half = 12.7062047 * np.std([0.2, 0.4], ddof=1) / np.sqrt(2)  # t(0.975, 1 degree of freedom)
    assert summary["pairs"] == 2 and summary["affirmed_closer"] == 1.0
    assert summary["delta_cos"] == pytest.approx(0.3, abs=1e-6)
    assert (summary["ci_low"], summary["ci_high"]) == pytest.approx((0.3 - half, 0.3 + half), abs=1e-5)


def test_mean_ci_of_one_value_is_that_value() -> None:
    assert mean_ci([0.5]) == (0.5, 0.5, 0.5)
    with pytest.raises(ValueError):
        mean_ci([])


def test_verdict_and_page_say_whether_the_default_meets_the_target() -> None:
    pairs = [NegationPair("effusion", "Small left effusion.", "No effusion.", "real dev+test")]
    by_finding = {"effusion": FindingGap(pairs=2, delta_cos=0.31)}
    row = RealPairGap("enc", "real dev+test", **summarize([0.30, 0.32]), by_finding=by_finding)
    v = verdict([row], encoder="enc")
    assert v.measured and not v.meets_target and v.short_by == pytest.approx(TARGET - 0.31)
    assert verdict([row], encoder="other") == RealPairsVerdict("other", measured=False)
    examples = {"real dev+test": [Pair.of(p) for p in pairs]}
    payload = RealPairs("t", "m", "c", 17, TARGET, v, [row], {}, {}, examples)
    page = render(payload)
    assert f"misses the target by {TARGET - 0.31:.3f}" in page and "| effusion | 2 | 0.310 |" in page
    assert verdict([replace(row, delta_cos=0.5)], encoder="enc").meets_target


def test_match_is_empty_without_both_polarities() -> None:
    assert match(collect([_report(1, "Small left pleural effusion.")])) == []
