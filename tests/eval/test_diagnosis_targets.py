"""The diagnosis report judges the default configuration by issue 16's bars, in the committed table itself."""

from __future__ import annotations

from dataclasses import replace

import pytest
from diagnosis_runs import diagnosis_run, verdict

from eval.diagnosis.benchmark import baselines
from eval.diagnosis.conditions import Condition, parse_conditions
from eval.diagnosis.report import check_targets, render, summarize
from eval.diagnosis.results import Summary, Verdict

N = 40


def _verdicts(correct_cases: int) -> list[Verdict]:
    """N verdicts, the first `correct_cases` right (so the conditions' right answers nest)."""
    return [verdict(str(i), i < correct_cases) for i in range(N)]


GRADED = {
    "none": _verdicts(6),
    "bm25[report]": _verdicts(18),
    "mpnet[report]": _verdicts(16),
    "hybrid-weighted:enc[report]": _verdicts(20),
}


def _summary() -> Summary:
    return summarize([], GRADED, ["exact"])


def test_targets_need_both_the_points_and_the_p_value() -> None:
    rows = {
        r.baseline: r
        for r in check_targets(
            _summary(),
            "hybrid-weighted:enc[report]",
            {"none": "none", "bm25": "bm25[report]", "mpnet": "mpnet[report]"},
        )
    }
    # 20/40 vs 6/40: +35 points, 14 discordant pairs all for the default: exact p = 2 * 0.5**14.
    assert rows["none"].difference == pytest.approx(0.35)
    assert rows["none"].p == pytest.approx(2 * 0.5**14)
    assert rows["none"].met is True
    # 20/40 vs 18/40: +5 points is the bar, but 2 discordant pairs give p = 0.5: missed.
    assert rows["bm25[report]"].difference == pytest.approx(0.05)
    assert rows["bm25[report]"].p == pytest.approx(0.5)
    assert rows["bm25[report]"].met is False
    # mpnet has no bar: reported only.
    assert rows["mpnet[report]"].met is None
    # Power (Connor 1987), n = (z_a/2 sqrt(d) + z_b sqrt(d - diff^2))^2 / diff^2 with the run's discordant share d:
    # 15 points at p < 0.01 with d = 14/40: (2.5758 * 0.5916 + 0.8416 * 0.5612)^2 / 0.0225 = 178.8 -> 179 cases;
    # 5 points at p < 0.05 with d = 2/40: (1.9600 * 0.2236 + 0.8416 * 0.2179)^2 / 0.0025 = 154.6 -> 155
    assert (rows["none"].discordant, rows["none"].cases_needed) == (0.35, 179)
    assert (rows["bm25[report]"].discordant, rows["bm25[report]"].cases_needed) == (0.05, 155)
    assert rows["mpnet[report]"].cases_needed is None


def test_no_case_count_can_show_a_target_larger_than_the_discordant_share() -> None:
    # 20/40 vs 18/40 disagree on 2 cases (5%): a 15-point bar against them cannot be shown by more cases
    rows = check_targets(_summary(), "hybrid-weighted:enc[report]", {"none": "bm25[report]"})
    assert rows[0].needed_difference == 0.15 and rows[0].cases_needed is None


def test_a_missed_target_is_written_in_the_table() -> None:
    default = "hybrid-weighted:enc[report]"
    targets = check_targets(_summary(), default, {"none": "none", "bm25": "bm25[report]"})
    text = render(diagnosis_run(GRADED, default_condition=default, targets=targets))
    assert "| bm25[report] | +5.0 | 0.5" in text and "**no (missed)**" in text
    assert "| **no (missed)** | 5.0% | 155 |" in text and "this run has 40." in text
    assert "| none | +35.0 |" in text and ">= +15 points, p < 0.01 | yes |" in text


def test_baselines_are_the_other_retrievers_used_the_default_s_way() -> None:
    conditions = parse_conditions(
        "none[prompt=diagnosis_brief_norag],none,bm25,bm25[report],mpnet[report],mpnet[report,k=3],hybrid-weighted:enc[report],"
        "tophit:hybrid-weighted:enc[report]"
    )
    default = Condition("hybrid-weighted:enc", "report", 1, "diagnosis_rag")
    assert baselines(default, conditions) == {"none": "none", "bm25": "bm25[report]", "mpnet": "mpnet[report]"}


def test_the_top_hit_ceiling_counts_cases_either_side_gets_right() -> None:
    """none right on cases 0-5, the top hit on 3-11: either on 0-11 = 12/40; the section says so beside the default."""
    from eval.diagnosis.report import top_hit_ceiling

    default = "hybrid-weighted:enc[report]"
    top_hit = [replace(row, correct=3 <= i < 12) for i, row in enumerate(_verdicts(0))]
    graded = {"none": _verdicts(6), default: _verdicts(10), "tophit:" + default: top_hit}
    ceiling = top_hit_ceiling(graded, default, "none")
    assert ceiling is not None and (ceiling.k, ceiling.n, ceiling.accuracy) == (12, N, 0.3)
    assert top_hit_ceiling({k: v for k, v in graded.items() if k != "none"}, default, "none") is None
    text = render(diagnosis_run(graded, default_condition=default, targets=[], ceiling=ceiling))
    assert "a perfect choice between the two: 30.0 (12/40)" in text and "+15.0 points over no retrieval" in text
    assert "reaches 25.0." in text
