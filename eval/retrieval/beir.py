"""Free-text query retrieval in BEIR format: corpus.jsonl, queries.jsonl and graded qrels.tsv.

    corpus.jsonl   {"_id": "r1", "title": "", "text": "..."}
    queries.jsonl  {"_id": "q1", "text": "right pleural effusion"}
    qrels.tsv      query-id <TAB> corpus-id <TAB> score     (header line; score 0 = not relevant, higher = more)

Metrics as in the literature: P@10 (relevant = score >= 1), nDCG@10 (graded gains), MRR@10. A corpus can
also be given as Reports (the shared data, which is never copied into a corpus file in the repo).
"""

from __future__ import annotations

import csv
import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from eval.retrieval.findings_impression import Ranker

DEPTH = 10


@dataclass
class BeirSet:
    """Queries, graded relevance and (optionally) the corpus texts by id."""

    queries: dict[str, str]
    qrels: dict[str, dict[str, int]]
    corpus: dict[str, str]


def read_jsonl_texts(path: Path) -> dict[str, str]:
    """`_id` -> title + text for a BEIR corpus or queries file."""
    out: dict[str, str] = {}
    with Path(path).open(encoding="utf-8") as handle:
        for line in handle:
            if line.strip():
                row = json.loads(line)
                out[str(row["_id"])] = " ".join(p for p in (row.get("title", ""), row.get("text", "")) if p)
    return out


def read_qrels(path: Path) -> dict[str, dict[str, int]]:
    """query id -> {corpus id: score}; the header line is skipped."""
    qrels: dict[str, dict[str, int]] = {}
    with Path(path).open(encoding="utf-8", newline="") as handle:
        reader = csv.reader(handle, delimiter="\t")
        for row in reader:
            if len(row) < 3 or row[0] == "query-id":
                continue
            qrels.setdefault(row[0], {})[row[1]] = int(row[2])
    return qrels


def load(folder: Path, corpus: Mapping[str, str] | None = None) -> BeirSet:
    """A BEIR folder; `corpus` replaces corpus.jsonl (texts by id built from the caller's reports)."""
    folder = Path(folder)
    texts = dict(corpus) if corpus is not None else read_jsonl_texts(folder / "corpus.jsonl")
    return BeirSet(read_jsonl_texts(folder / "queries.jsonl"), read_qrels(folder / "qrels.tsv"), texts)


def ndcg(gains: Sequence[int], ideal: Sequence[int], k: int = DEPTH) -> float:
    """nDCG@k with gain = graded score and log2(rank + 1) discount."""

    def dcg(values: Sequence[int]) -> float:
        return sum(g / math.log2(rank + 1) for rank, g in enumerate(values[:k], start=1))

    best = dcg(sorted(ideal, reverse=True))
    return dcg(gains) / best if best else 0.0


def evaluate(data: BeirSet, ranker: Ranker, k: int = DEPTH) -> dict[str, float]:
    """P@k, nDCG@k and MRR@k over the queries that have at least one relevant document in the corpus."""
    ids = list(data.corpus)
    queries = [q for q in data.queries if any(s > 0 and d in data.corpus for d, s in data.qrels.get(q, {}).items())]
    if not queries or not ids:
        return {"queries": 0, f"p@{k}": 0.0, f"ndcg@{k}": 0.0, f"mrr@{k}": 0.0}
    ranked = ranker.rank([data.queries[q] for q in queries], [data.corpus[i] for i in ids], k, "report")
    precision = ndcg_total = mrr = 0.0
    for q, row in zip(queries, ranked, strict=True):
        judged = data.qrels.get(q, {})
        gains = [judged.get(ids[j], 0) for j in row]
        precision += sum(1 for g in gains if g > 0) / k
        ndcg_total += ndcg(gains, [s for d, s in judged.items() if d in data.corpus and s > 0], k)
        mrr += next((1 / rank for rank, g in enumerate(gains, start=1) if g > 0), 0.0)
    n = len(queries)
    return {
        "queries": n,
        f"p@{k}": round(precision / n, 4),
        f"ndcg@{k}": round(ndcg_total / n, 4),
        f"mrr@{k}": round(mrr / n, 4),
    }
