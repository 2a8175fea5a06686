"""The README.md model card of a fine-tuned encoder, rendered from its `radsearch_card.json`.

Written by the project rather than sentence-transformers' generator because that one quotes training examples,
and here training examples are patient reports. This card holds counts, settings and metrics only.
"""

from __future__ import annotations

from typing import Any


def _table(rows: list[tuple[str, Any]]) -> list[str]:
    return ["| | |", "|---|---|", *(f"| {key} | {value} |" for key, value in rows)]


def render_model_card(card: dict[str, Any]) -> str:
    """Markdown card: what the model is, what it was trained on (counts), how, and how well (dev split)."""
    data, hyper, dev = card["data"], card["hyperparameters"], card["dev_metrics"]
    lines = [
        f"# {card['name']}",
        "",
        f"Report encoder fine-tuned with `assistant train` (RadSearch method: findings -> impression contrastive "
        f"learning, {card['loss']}) from `{card['base_model']['name']}` on {card['created']}.",
        "",
        f"Use it with `assistant index CORPUS --encoder {card['name']}` or `load_encoder({card['name']!r})`.",
        "",
        "## Data",
        *_table(
            [
                ("reports read", data["reports"]),
                *((f"pairs, {split}", count) for split, count in data["pairs"].items()),
                ("distinct training impressions", data["unique_train_impressions"]),
                *((f"skipped: {reason}", count) for reason, count in sorted(data["skipped_by_reason"].items())),
                *((f"train reports from {source}", count) for source, count in sorted(data["sources"].items())),
            ]
        ),
        "",
        "## Training",
        *_table([(key, value) for key, value in hyper.items()]),
        f"| seconds per epoch | {', '.join(str(s) for s in card['train_seconds_per_epoch']) or 'n/a'} |",
        f"| device | {card['machine']['device']} ({card['machine']['cpu_count']} CPUs) |",
        "",
        "## Dev split (findings -> impression retrieval among the dev split's unique impressions)",
        "| | match@1 | match@5 | match@10 | MRR@10 |",
        "|---|---|---|---|---|",
    ]
    rows = [
        ("before training", dev["before"]),
        *((f"epoch {m['epoch']}", m) for m in dev["per_epoch"]),
        ("final", dev["after"]),
    ]
    for label, metrics in rows:
        if metrics:
            values = " | ".join(str(metrics.get(k, "")) for k in ("match@1", "match@5", "match@10", "mrr@10"))
            lines.append(f"| {label} | {values} |")
    return "\n".join(lines) + "\n"
