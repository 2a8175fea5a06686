"""Scores of the robustness benchmarks: character error rate, code agreement at rank 1, 4-way discrimination."""

from __future__ import annotations

from collections.abc import Sequence

from eval.common.stats import share


def edit_distance(a: str, b: str) -> int:
    """Levenshtein distance (insertions, deletions, substitutions all cost 1)."""
    if len(a) < len(b):
        a, b = b, a
    previous = list(range(len(b) + 1))
    for i, char_a in enumerate(a, start=1):
        current = [i]
        for j, char_b in enumerate(b, start=1):
            current.append(min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (char_a != char_b)))
        previous = current
    return previous[-1]


def cer(hypothesis: str, reference: str) -> float:
    """Character error rate of the retrieved text against the true one: edit distance / reference length
    (0 = identical; can exceed 1 when the retrieved text is much longer)."""
    if not reference:
        return float(bool(hypothesis))
    return edit_distance(hypothesis, reference) / len(reference)


def category(code: str) -> str:
    """The 3-character ICD-10-CM category of a code (S72.001A -> S72)."""
    return code.split(".")[0][:3]


def code_scores(retrieved: Sequence[str | None], gold: Sequence[str], cers: Sequence[float]) -> dict[str, object]:
    """Exact code @1, same category @1 (None = nothing retrieved, a miss) and the mean CER."""
    exact = [r == g for r, g in zip(retrieved, gold, strict=True)]
    same_category = [r is not None and category(r) == category(g) for r, g in zip(retrieved, gold, strict=True)]
    return {
        "exact@1": share(exact),
        "category@1": share(same_category),
        "cer": round(sum(cers) / len(cers), 4) if cers else 0.0,
    }
