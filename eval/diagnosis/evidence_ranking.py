"""How the evidence differential ranks its concepts: the share of the voting weight alone, or the share against how
common the concept is in the whole archive, an appearance's share at half, a bonus for what the question's own
findings affirm (issue 48).

    python -m eval.diagnosis.evidence_ranking --split dev --name evidence_ranking_dev

Why: counted by concept, broad findings that half the archive affirms ("opacity", "scarring", "atelectasis") gather
the votes of all their synonyms and outrank the specific diagnosis a few close reports affirm. A concept's base rate
(the share of the archive's reports whose conclusion affirms it) says how little its presence among the similar
reports tells. Each case is retrieved once with the product's pipeline for the condition (no model); its evidence is
then ranked under each rule and graded as the benchmark grades (top-1 and recall@5, ICD criterion off).
"""

from __future__ import annotations

import argparse
import math
import sys
from collections import Counter
from collections.abc import Callable
from pathlib import Path

from eval.common.shared_data import RESULTS, eval_home, write_results
from eval.diagnosis.results import RankingResults

CONDITION = "evidence:hybrid-weighted:radsearch[report,k=40,weighting=similarity:0.5]"
#: Rules: (candidate's share, the concept's base rate, whether it is an appearance: a concept of kind "appearance",
#: opacity, lesion, mass, nodule..., whether the question's findings affirm it) -> ranking key, higher first.
RULES: dict[str, Callable[[float, float, bool, bool], tuple[float, ...]]] = {
    "share": lambda share, base, vague, named: (share,),
    "share-minus-base": lambda share, base, vague, named: (share - base,),
    "share-times-idf": lambda share, base, vague, named: (share * math.log(1 / base),),
    "share-times-sqrt-idf": lambda share, base, vague, named: (share * math.sqrt(math.log(1 / base)),),
    "lift-log": lambda share, base, vague, named: (share * math.log(1 + share / base),),
    "nonspecific-last": lambda share, base, vague, named: (not vague, share),
    "nonspecific-half": lambda share, base, vague, named: (share * (0.5 if vague else 1.0),),
}
#: What a candidate the question affirms gains (docs/decisions/2026-11-29-question-affirms.md), over nonspecific-half.
QUESTION_BONUSES = (0.05, 0.10, 0.15, 0.20, 0.30)
for _bonus in QUESTION_BONUSES:
    RULES[f"nonspecific-half, question names +{_bonus:g}"] = lambda share, base, vague, named, b=_bonus: (
        share * (0.5 if vague else 1.0) + (b if named else 0.0),
    )
#: The product's rule with every near-duplicate voting in full (assistant/rag/near_duplicates.py switched off).
EVERY_COPY = "the product's rule, every near-duplicate votes"
#: The rule the product applies (assistant/rag/evidence.py, APPEARANCE): what the dev runs chose; the question's
#: bonus won dev cases and lost test ones (docs/decisions/2026-11-29-question-affirms.md).
PRODUCT_RULE = "nonspecific-half"
RULES[EVERY_COPY] = RULES[PRODUCT_RULE]


def base_rates(conclusions: list[str]) -> tuple[Counter[str], int]:
    """How many of the conclusions affirm each concept (by id), and how many there are."""
    from assistant.rag.evidence import affirmed_diagnoses

    counts: Counter[str] = Counter()
    for text in conclusions:
        counts.update(concept.id for concept, _ in affirmed_diagnoses(text))
    return counts, len(conclusions)


def measure(condition: str, cases_path: Path, split: str | None) -> tuple[int, int, dict[str, list[int]]]:
    """The number of cases, of cases where near-duplicates affirm a candidate, and top-1 and recall@5 of each
    ranking rule over the cases."""
    from assistant.rag.lc_retriever import documents_to_hits
    from assistant.rag.question import NO_ABNORMALITY, read_question
    from assistant.rag.votes import evidence_for
    from eval.diagnosis.benchmark import condition_pipeline
    from eval.diagnosis.grading import Grader
    from retriever.concepts import affirmed_concepts, default_vocabulary
    from retriever.search.query import clean_query

    cases, corpus, pipeline = condition_pipeline(condition, cases_path, split)
    counts, total = base_rates([r.conclusion for r in corpus])
    grader = Grader.default(icd=False)
    kinds = {i: c.kind for i, c in default_vocabulary().concepts.items()}
    right = {rule: [0, 0] for rule in RULES}
    copies = 0
    for case in cases:
        query = clean_query(case.findings)
        question = read_question(query)
        named = {concept.id for concept in affirmed_concepts(query)}  # what the question's findings affirm
        hits = documents_to_hits(pipeline.retriever.invoke(query))
        evidence = evidence_for(question, hits, pipeline.evidence_weighting, limit=100)
        alone = evidence_for(question, hits, pipeline.evidence_weighting, limit=100, share_near_duplicates=False)
        copies += any(c.texts < c.count for c in evidence.candidates)
        for rule, key in RULES.items():
            ranked = sorted(
                (alone if rule == EVERY_COPY else evidence).candidates,
                key=lambda c: key(
                    c.score,
                    max(counts[c.concept], 1) / total,
                    kinds.get(c.concept) == "appearance",
                    c.concept in named,
                ),
                reverse=True,
            )
            names = [NO_ABNORMALITY] if question.purely_negative else [c.diagnosis for c in ranked[:5]]
            grades = [grader.grade(name, case.references()).correct for name in names]
            right[rule][0] += bool(grades and grades[0])
            right[rule][1] += any(grades)
    return len(cases), copies, {rule: list(counts) for rule, counts in right.items()}


def render(result: RankingResults) -> str:
    n = result.cases
    lines = [
        f"# Evidence ranking rules ({result.split}, {n} cases)",
        "",
        f"Condition `{result.condition}`; written by `{result.command}`. The product's rule: `{result.product_rule}`.",
        f"Cases where near-duplicate reports affirm a candidate: {result.near_duplicate_cases}.",
        "",
        "| rule | top-1 | recall@5 |",
        "|---|---|---|",
    ]
    for rule, (top1, top5) in result.rules.items():
        lines.append(f"| {rule} | {top1}/{n} ({100 * top1 / n:.1f}%) | {top5}/{n} ({100 * top5 / n:.1f}%) |")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--condition", default=CONDITION)
    parser.add_argument("--cases", type=Path, default=eval_home() / "cases" / "shared_heldout.jsonl")
    parser.add_argument("--split", choices=("dev", "test"), default="dev")
    parser.add_argument("--out", type=Path, default=RESULTS)
    parser.add_argument("--name", default="evidence_ranking_dev")
    args = parser.parse_args(argv)
    cases, copies, rules = measure(args.condition, args.cases, args.split)
    command = " ".join(["python -m eval.diagnosis.evidence_ranking", *(argv if argv is not None else sys.argv[1:])])
    record = RankingResults(cases, args.condition, args.split, command, PRODUCT_RULE, rules, copies)
    print(write_results(args.out / args.name, record, render))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
