"""Negation test: does an encoder tell "pleural effusion" from "no pleural effusion"?

For sentence pairs that differ only in negation, Δcos = cos(query, affirmed sentence) - cos(query, negated
sentence), averaged per encoder; the query is the finding a resident would type. A model blind to negation
scores about 0; the literature reports 0.42 for a negation-trained SBERT.

Pairs come from (1) held-out (test-split) Open-i findings sentences that mention a finding term, negated or
affirmed by the project's rules (retriever/negation/rules.py), and (2) the NegEx annotated test set's short sentences
(concept + Affirmed/Negated label, the opposite made by rule). Both skip cleanly when ../shared/data is absent.
eval.negation.real_pairs measures the same Δcos on pairs whose both halves are real report sentences, with these
pairs beside them.

    python -m eval.negation.encoder_pairs --encoders minilm mpnet [PATH ...]
"""

from __future__ import annotations

import argparse
import csv
import platform
import re
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import TYPE_CHECKING

import numpy as np

from eval.common.shared_data import RESULTS, SHARED_DATA, add_out_option, write_results
from eval.negation.results import EncoderPairs, Pair, PairGap
from retriever.negation.pairs import NegationPair, pair_for, sentence_pairs
from retriever.reports.ingest import ingest
from retriever.reports.splits import split_reports

if TYPE_CHECKING:
    from retriever.encoders.encoder import Encoder


def openi_pairs(limit: int) -> list[NegationPair]:
    """Pairs from held-out Open-i findings sentences (test split only: training never saw them)."""
    reports = split_reports(ingest([str(SHARED_DATA / "openi")]).reports)["test"]
    return sentence_pairs((r.findings for r in reports), "openi")[:limit]


def negex_pairs(limit: int) -> list[NegationPair]:
    """Pairs from the NegEx annotated sentences (short ones, concept present verbatim)."""
    path = SHARED_DATA / "negex" / "negex_Annotations-1-120.txt"
    pairs: list[NegationPair] = []
    with path.open(encoding="utf-8", errors="replace") as handle:
        for row in csv.DictReader(handle, delimiter="\t"):
            concept = re.sub(r"\s+", " ", row["Concept"]).strip().lower()
            sentence = re.sub(r"\s+", " ", row["Sentence"].strip('"')).strip()
            if not concept or len(sentence) > 200 or concept not in sentence.lower():
                continue
            pair = pair_for(sentence, concept, "negex")
            if pair:
                pairs.append(pair)
    return pairs[:limit]


def pair_gaps(encoder: Encoder, pairs: Sequence[NegationPair]) -> np.ndarray:
    """Δcos of each pair: cos(query, affirmed) - cos(query, negated) (the encoder's vectors are unit length)."""
    q = encoder.encode([p.query for p in pairs], batch_size=64)
    a = encoder.encode([p.affirmed for p in pairs], batch_size=64)
    n = encoder.encode([p.negated for p in pairs], batch_size=64)
    return (q * a).sum(1) - (q * n).sum(1)


def delta_cos(encoder_ref: str, origin: str, pairs: list[NegationPair]) -> PairGap:
    """Mean Δcos and the share of pairs where the affirmed sentence is closer, for one encoder."""
    from retriever.encoders.encoder import load_encoder

    gaps = pair_gaps(load_encoder(encoder_ref), pairs)
    return PairGap(encoder_ref, origin, float(gaps.mean()), float((gaps > 0).mean()), len(pairs))


def render(payload: EncoderPairs) -> str:
    """The Markdown report: one row per encoder and origin, then a few example pairs."""
    lines = [
        "# Negation test: Δcos = cos(query, affirmed) − cos(query, negated)",
        "",
        f"Command: `{payload.command}` ({payload.created}). Target for the default encoder: Δcos ≥ 0.3.",
        "",
        "| encoder | pairs from | pairs | mean Δcos | affirmed closer |",
        "|---|---|---:|---:|---:|",
    ]
    lines += [
        f"| {r.encoder} | {r.origin} | {r.pairs} | {r.delta_cos:.3f} | {r.affirmed_closer:.1%} |"
        for r in payload.results
    ]
    lines += ["", "Examples (query / affirmed / negated):", ""]
    lines += [f"- `{p.query}` / {p.affirmed} / {p.negated}" for s in payload.examples.values() for p in s[:3]]
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--encoders", nargs="+", default=["minilm", "mpnet"])
    parser.add_argument("--limit", type=int, default=600, help="pairs per origin")
    add_out_option(parser, RESULTS / "negation")
    args = parser.parse_args()
    if not SHARED_DATA.is_dir():
        raise SystemExit(f"shared data {SHARED_DATA} is absent: nothing to measure")
    pairs = {"openi": openi_pairs(args.limit), "negex": negex_pairs(args.limit)}
    rows = []
    for ref in args.encoders:
        for origin, subset in pairs.items():
            rows.append(delta_cos(ref, origin, subset))
            print(rows[-1])
    payload = EncoderPairs(
        created=datetime.now(UTC).isoformat(timespec="seconds"),
        machine=f"{platform.machine()}, {platform.processor() or 'cpu'}, python {platform.python_version()}",
        command="python -m eval.negation.encoder_pairs --encoders " + " ".join(args.encoders),
        results=rows,
        examples={o: [Pair.of(p) for p in s[:5]] for o, s in pairs.items()},
    )
    write_results(args.out, payload, render, indent=2)
    print(f"wrote {args.out}.json and .md; mean pairs {np.mean([len(s) for s in pairs.values()]):.0f}")


if __name__ == "__main__":
    main()
