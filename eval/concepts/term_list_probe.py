"""How the linker reads each term of a list of radiology diagnoses and findings (eval/concepts/radiology_term_list.txt).

    python -m eval.concepts.term_list_probe   # eval/results/term_list_probe.{json,md}

Why: the linker's errors on unseen impression items were thought to be the long tail of names. A list written from a
radiology curriculum, not from any labelled item, says how many common names the vocabulary already reads as their
own concept, and which it reads as another (docs/decisions/2026-11-29-linker-vocabulary-from-a-list.md).
"""

from __future__ import annotations

import sys
from pathlib import Path

from eval.common.shared_data import RESULTS, write_results
from eval.concepts.results import TermListProbe

TERMS = Path(__file__).with_name("radiology_term_list.txt")


def probe(path: Path = TERMS) -> tuple[int, int, dict[str, list[str]]]:
    """The number of terms, of those read as their own concept, and what each other one is read as."""
    from retriever.concepts import affirmed_in

    terms = [t.strip() for t in path.read_text(encoding="utf-8").splitlines() if t.strip() and not t.startswith("#")]
    others: dict[str, list[str]] = {}
    for term in terms:
        names = list(dict.fromkeys(c.name for c in affirmed_in(term)))
        if term.lower() not in names:
            others[term] = names
    return len(terms), len(terms) - len(others), others


def render(result: TermListProbe) -> str:
    lines = [
        f"# The linker on a list of {result.terms} radiology terms",
        "",
        f"Written by `{result.command}`. Read as the concept of their own name: {result.own_name} of {result.terms}.",
        "The others, and what the linker reads in each (a grouping by design, or a gap):",
        "",
        "| term | read as |",
        "|---|---|",
        *(f"| {term} | {', '.join(names) or '(nothing)'} |" for term, names in result.others.items()),
    ]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    terms, own, others = probe()
    command = " ".join(["python -m eval.concepts.term_list_probe", *(argv if argv is not None else sys.argv[1:])])
    print(write_results(RESULTS / "term_list_probe", TermListProbe(terms, own, others, command), render))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
