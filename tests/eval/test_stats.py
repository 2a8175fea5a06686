"""Statistics against values computed by hand (formulas in the comments)."""

from __future__ import annotations

import pytest

from eval.common.stats import (
    bonferroni,
    chi_square,
    cohen_kappa,
    format_p,
    mcnemar,
    mcnemar_counts,
    mcnemar_sample_size,
    paired_permutation,
    wilson,
)


def test_wilson_interval_by_hand() -> None:
    # p = 0.8, z^2 = 3.8415: centre = (0.8 + 0.19207) / 1.38415 = 0.71683,
    # half = 1.96 * sqrt(0.016 + 0.0096037) / 1.38415 = 0.22658
    p = wilson(8, 10)
    assert p.value == pytest.approx(0.8)
    assert p.low == pytest.approx(0.4902, abs=1e-4)
    assert p.high == pytest.approx(0.9433, abs=1e-4)


def test_wilson_at_the_edges_stays_inside_0_1() -> None:
    zero = wilson(0, 10)  # upper = z^2/n / (1 + z^2/n) = 0.38415 / 1.38415
    assert zero.low == 0.0
    assert zero.high == pytest.approx(0.2775, abs=1e-4)
    full = wilson(10, 10)
    assert full.high == pytest.approx(1.0)
    assert full.low == pytest.approx(1 - 0.2775, abs=1e-4)
    assert wilson(0, 0).n == 0


def test_wilson_rejects_impossible_counts() -> None:
    with pytest.raises(ValueError):
        wilson(11, 10)


def test_mcnemar_exact_when_few_discordant_pairs() -> None:
    # b = 1, c = 6, n = 7: p = 2 * P(X <= 1 | Bin(7, 0.5)) = 2 * (1 + 7) / 128 = 0.125
    result = mcnemar_counts(1, 6)
    assert result.method == "exact binomial"
    assert result.p == pytest.approx(0.125)


def test_mcnemar_chi_square_with_continuity_correction_from_25_pairs() -> None:
    # b = 10, c = 25: (|10 - 25| - 1)^2 / 35 = 196 / 35 = 5.6; P(chi2_1 > 5.6) = 0.017961
    result = mcnemar_counts(10, 25)
    assert result.method.startswith("chi-square")
    assert result.statistic == pytest.approx(5.6)
    assert result.p == pytest.approx(0.017961, abs=1e-5)


def test_mcnemar_from_paired_verdicts_counts_the_discordant_pairs() -> None:
    a = [True, True, False, False, True]
    b = [True, False, True, True, True]
    result = mcnemar(a, b)
    assert (result.b, result.c) == (1, 2)
    assert result.p == pytest.approx(1.0)  # 2 * P(X <= 1 | Bin(3, .5)) = 2 * 4/8, capped at 1
    assert mcnemar([True], [True]).p == 1.0
    with pytest.raises(ValueError):
        mcnemar([True], [True, False])


def test_chi_square_yates_by_hand() -> None:
    # 30/50 vs 20/50: every expected count is 25; sum of (|o - e| - 0.5)^2 / e = 4 * 4.5^2 / 25 = 3.24
    result = chi_square(30, 50, 20, 50)
    assert result.statistic == pytest.approx(3.24)
    assert result.p == pytest.approx(0.071861, abs=1e-5)
    assert chi_square(0, 10, 0, 10).p == 1.0  # no successes anywhere: nothing to test


def test_bonferroni_multiplies_and_caps() -> None:
    assert bonferroni([0.01, 0.04, 0.5]) == pytest.approx([0.03, 0.12, 1.0])
    assert bonferroni([]) == []


def test_cohen_kappa_by_hand() -> None:
    # observed 3/4; chance = .5 * .25 + .5 * .75 = .5; kappa = (.75 - .5) / .5
    assert cohen_kappa([True, True, False, False], [True, False, False, False]) == pytest.approx(0.5)
    assert cohen_kappa([True, False], [True, False]) == 1.0
    with pytest.raises(ValueError):
        cohen_kappa([], [])


def test_p_values_print_as_journals_do() -> None:
    assert format_p(0.0004) == "< .001"
    assert format_p(0.04567) == "0.046"


def test_paired_permutation_exact_by_hand() -> None:
    # differences +0.1, +0.1, -0.1 (one zero dropped): |sum| = 0.1; of the 8 sign patterns, the sums are
    # +-0.3 (2 patterns) and +-0.1 (6 patterns): all 8 reach 0.1, so p = 1.
    result = paired_permutation([0.3, 0.2, 0.1, 0.5], [0.2, 0.1, 0.2, 0.5])
    assert result.p == pytest.approx(1.0)
    assert result.statistic == pytest.approx(0.025)
    # three differences of +0.1: only the all-plus and all-minus patterns reach |sum| = 0.3, p = 2/8.
    assert paired_permutation([0.2, 0.2, 0.2], [0.1, 0.1, 0.1]).p == pytest.approx(0.25)


def test_paired_permutation_identical_and_sampled() -> None:
    assert paired_permutation([0.5, 0.4], [0.5, 0.4]).p == 1.0
    a, b = [0.3] * 30, [0.2] * 30  # 30 equal gains: only 2 of 2^30 patterns reach it, p ~ 1e-5
    result = paired_permutation(a, b)
    assert result.p < 0.001 and "samples" in result.method
    assert paired_permutation(a, b).p == result.p  # seeded: the same p every run
    with pytest.raises(ValueError):
        paired_permutation([0.1], [0.1, 0.2])


def test_mcnemar_sample_size_by_hand() -> None:
    # diff 0.10, discordant 0.25, alpha 0.05, power 0.8: (1.95996 * 0.5 + 0.84162 * sqrt(0.24))^2 / 0.01
    # = (0.97998 + 0.41231)^2 / 0.01 = 1.93847 / 0.01 -> 194
    assert mcnemar_sample_size(0.10, 0.25) == 194
    # alpha 0.01: (2.57583 * 0.5 + 0.41231)^2 / 0.01 = 2.89042 / 0.01 -> 290
    assert mcnemar_sample_size(0.10, 0.25, alpha=0.01) == 290
    with pytest.raises(ValueError):
        mcnemar_sample_size(0.3, 0.2)  # more difference than discordant cases is impossible
