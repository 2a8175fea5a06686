"""Statistics for benchmark accuracies, as the RadSearch paper reports them.

- Wilson score 95% confidence interval for a proportion (sound at small n and near 0 or 1, unlike Wald).
- McNemar's test for two conditions graded on the same cases (paired): exact two-sided binomial test on the
  discordant pairs when there are fewer than 25 of them, else chi-square with continuity correction.
- Paired sign-flip permutation test for a per-query score (P@10) of two rankers on the same queries: exact when
  few queries differ, else a seeded Monte Carlo estimate (the same p on every run).
- Chi-square test (2x2, Yates continuity correction) for accuracies on independent case sets.
- Bonferroni adjustment when several comparisons are made.
- Sample size for McNemar's test (Connor 1987), to say before a run how many cases can show a given difference.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from scipy.stats import binom, chi2, norm

Z95 = 1.959963984540054
EXACT_BELOW = 25
#: Sign-flip test: enumerate all 2^n sign patterns up to this many non-zero differences, else sample.
EXACT_FLIPS_UP_TO = 16
MONTE_CARLO_FLIPS = 100_000


@dataclass(frozen=True)
class Proportion:
    """k of n with its Wilson interval."""

    k: int
    n: int
    low: float
    high: float

    @property
    def value(self) -> float:
        return self.k / self.n if self.n else 0.0


def wilson(k: int, n: int, z: float = Z95) -> Proportion:
    """Wilson score interval; (0, 0) for n = 0 because there is nothing to estimate."""
    if not 0 <= k <= n:
        raise ValueError(f"need 0 <= k <= n, got k={k}, n={n}")
    if n == 0:
        return Proportion(0, 0, 0.0, 0.0)
    p = k / n
    denominator = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denominator
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denominator
    return Proportion(k, n, max(0.0, centre - half), min(1.0, centre + half))


@dataclass(frozen=True)
class TestResult:
    """A test's statistic (None for the exact test), p-value and which test was used."""

    p: float
    method: str
    statistic: float | None = None
    b: int | None = None
    c: int | None = None


def mcnemar(a_correct: Sequence[bool], b_correct: Sequence[bool]) -> TestResult:
    """Paired comparison. b = cases only A got right, c = cases only B got right."""
    if len(a_correct) != len(b_correct):
        raise ValueError("McNemar needs the same cases under both conditions")
    b = sum(1 for x, y in zip(a_correct, b_correct, strict=True) if x and not y)
    c = sum(1 for x, y in zip(a_correct, b_correct, strict=True) if y and not x)
    return mcnemar_counts(b, c)


def mcnemar_counts(b: int, c: int) -> TestResult:
    """McNemar from the discordant counts."""
    n = b + c
    if n == 0:
        return TestResult(1.0, "exact binomial", None, b, c)
    if n < EXACT_BELOW:
        p = min(1.0, 2 * float(binom.cdf(min(b, c), n, 0.5)))
        return TestResult(p, "exact binomial", None, b, c)
    statistic = (abs(b - c) - 1) ** 2 / n
    return TestResult(float(chi2.sf(statistic, 1)), "chi-square, continuity corrected", statistic, b, c)


def mcnemar_sample_size(difference: float, discordant: float, alpha: float = 0.05, power: float = 0.8) -> int:
    """Cases needed for a two-sided McNemar test at `alpha` to detect a paired accuracy `difference` (B - A) with
    `power`, when a share `discordant` of the cases is answered right by exactly one condition (Connor 1987):
    n = (z_a/2 * sqrt(d) + z_b * sqrt(d - diff^2))^2 / diff^2. Why it matters: the discordant share, not the
    accuracies, decides the size; a small model that changes its answer on many cases needs more of them."""
    if not 0 < abs(difference) <= discordant <= 1:
        raise ValueError(f"need 0 < |difference| <= discordant share <= 1, got {difference}, {discordant}")
    z_alpha, z_beta = float(norm.ppf(1 - alpha / 2)), float(norm.ppf(power))
    root = z_alpha * math.sqrt(discordant) + z_beta * math.sqrt(discordant - difference**2)
    return math.ceil(root**2 / difference**2)


def paired_permutation(a: Sequence[float], b: Sequence[float], seed: int = 0) -> TestResult:
    """Two-sided paired test of mean(a - b) = 0: under the null each query's difference is as likely to have
    either sign, so p = share of sign patterns whose |mean| reaches the observed one. Zero differences carry no
    information and are dropped (as in McNemar). statistic = the observed mean difference over all queries."""
    if len(a) != len(b):
        raise ValueError("a paired test needs the same queries under both rankers")
    diffs = np.asarray(a, dtype=float) - np.asarray(b, dtype=float)
    observed = float(diffs.mean()) if len(diffs) else 0.0
    nonzero = diffs[np.abs(diffs) > 1e-12]
    n = len(nonzero)
    if n == 0:
        return TestResult(1.0, "sign-flip permutation, exact", observed)
    target = abs(nonzero.sum()) - 1e-9
    if n <= EXACT_FLIPS_UP_TO:
        patterns = ((np.arange(2**n)[:, None] >> np.arange(n)) & 1) * 2 - 1
        p = float(np.mean(np.abs(patterns @ nonzero) >= target))
        return TestResult(p, "sign-flip permutation, exact", observed)
    signs = np.random.default_rng(seed).choice((-1.0, 1.0), size=(MONTE_CARLO_FLIPS, n))
    # The observed pattern counts as one of the permutations, so p is never 0.
    p = (1 + int(np.sum(np.abs(signs @ nonzero) >= target))) / (MONTE_CARLO_FLIPS + 1)
    return TestResult(p, f"sign-flip permutation, {MONTE_CARLO_FLIPS:,} samples", observed)


def chi_square(k1: int, n1: int, k2: int, n2: int) -> TestResult:
    """2x2 chi-square with Yates correction for two independent proportions k1/n1 vs k2/n2."""
    table = [[k1, n1 - k1], [k2, n2 - k2]]
    total = n1 + n2
    rows = [n1, n2]
    cols = [k1 + k2, total - k1 - k2]
    if 0 in rows or 0 in cols:
        return TestResult(1.0, "chi-square, Yates corrected", 0.0)
    statistic = 0.0
    for i in range(2):
        for j in range(2):
            expected = rows[i] * cols[j] / total
            statistic += max(0.0, abs(table[i][j] - expected) - 0.5) ** 2 / expected
    return TestResult(float(chi2.sf(statistic, 1)), "chi-square, Yates corrected", statistic)


def bonferroni(pvalues: Sequence[float]) -> list[float]:
    """Each p-value times the number of comparisons, capped at 1."""
    m = len(pvalues)
    return [min(1.0, p * m) for p in pvalues]


def cohen_kappa(a: Sequence[bool], b: Sequence[bool]) -> float:
    """Agreement between two binary raters beyond chance (1 perfect, 0 chance level)."""
    if len(a) != len(b) or not a:
        raise ValueError("kappa needs two equally long, non-empty rating lists")
    n = len(a)
    observed = sum(x == y for x, y in zip(a, b, strict=True)) / n
    pa, pb = sum(a) / n, sum(b) / n
    expected = pa * pb + (1 - pa) * (1 - pb)
    return 1.0 if expected == 1 else (observed - expected) / (1 - expected)


def format_p(p: float) -> str:
    """P values as journals print them: < .001, else three decimals."""
    return "< .001" if p < 0.001 else f"{p:.3f}"


def share(flags: Sequence[bool]) -> dict[str, float]:
    """A proportion with its n and 95% Wilson interval, rounded for the results file."""
    interval = wilson(sum(flags), len(flags))
    return {
        "value": round(interval.value, 4),
        "n": len(flags),
        "ci95": [round(interval.low, 4), round(interval.high, 4)],
    }
