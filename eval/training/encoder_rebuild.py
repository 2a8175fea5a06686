"""Rebuild the shipped encoder from the preset's recipe and check it against the shipped one on the dev split.

    python -m eval.training.encoder_rebuild                     # train by the recipe, package, compare (`make encoder`)
    python -m eval.training.encoder_rebuild --from NAME         # package an encoder trained already, compare
    python -m eval.training.encoder_rebuild --from NAME --ship  # ... and make it the shipped one (models/radsearch/)

The recipe is the preset's (models/preset.json: base, data, training options, seeds; several seeds are averaged,
`assistant average`). The rebuilt encoder is packaged as the shipped one is (retriever/encoders/shipped.py: float16
weights) into the models directory, then both are scored on the dev split (findings -> impression match@5 per
source, dense search with the int8 export made from the packaged weights, as indexes run them). The check passes
when the pooled match@5 of the two differ by at most TOLERANCE: training on another CPU or library build can move
a query or two, never more. `--ship` replaces models/radsearch/ (only when a rule changed the default: docs/decisions/).
Writes eval/results/encoder_rebuild.{json,md}. Needs ../shared/data.
"""

from __future__ import annotations

import argparse
import json
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from eval.common.shared_data import RESULTS, SHARED_DATA, add_out_option, load_shared, write_results
from eval.training.results import EncoderRebuild
from models.preset import PRESET
from models.registry import ENCODERS
from models.resolve import shipped_folder

#: Largest difference in pooled dev match@5 between the rebuilt and the shipped encoder that passes.
TOLERANCE = 0.02
#: Each source's licence and what it means for the weights (data/README of the shared collections).
SOURCES = {
    "openi": ("Indiana University chest X-ray reports (NLM Open-i)", "research and education use"),
    "ctrate": ("CT-RATE chest CT reports (translated to English)", "CC BY-NC-SA 4.0"),
    "mtsamples": ("MTSamples imaging transcriptions", "CC0 1.0"),
    "medpix": ("MedPix 2.0 teaching cases (NLM)", "free for education and research"),
}
TERMS = (
    "Trained on data under CC BY-NC-SA 4.0 (CT-RATE) and on collections released for research and education (Open-i, "
    "MedPix): the weights are shared under CC BY-NC-SA 4.0, for non-commercial research and education, with "
    "attribution to the four sources; derivatives (an encoder fine-tuned from this one) carry the same terms. Not a "
    "medical device; decision support and teaching only."
)


def train_by_recipe(recipe: dict[str, Any], name: str, ingested: Any) -> str:
    """Train the recipe's seeds on `ingested` (the shared data read once) and average them when there are several;
    the trained model's name."""
    from retriever.training.average import average_encoders
    from retriever.training.train import TrainConfig, train_encoder

    parts = []
    for seed in recipe["seeds"]:
        part = f"{name}-s{seed}" if len(recipe["seeds"]) > 1 else name
        config = TrainConfig(base=recipe["base"], seed=seed, **recipe["train"])
        train_encoder(ingested.reports, part, config, skipped=ingested.reasons(), overwrite=True)
        parts.append(part)
    if len(parts) > 1:
        average_encoders(parts, name, overwrite=True)
    return name


def dev_match(encoder_ref: str, dev: list[Any]) -> dict[str, float]:
    """Findings -> impression match@5 of the `dev` reports per source and pooled, dense search over the int8 export."""
    from eval.retrieval.findings_impression import findings_to_impression, make_ranker

    ranker = make_ranker(encoder_ref, backend="onnx-int8")
    by_source: dict[str, list[Any]] = {}
    for report in dev:
        by_source.setdefault(report.source, []).append(report)
    scores = {
        source: findings_to_impression(reports, ranker)["all"]["match@5"]
        for source, reports in sorted(by_source.items())
    }
    return scores | {"pooled": findings_to_impression(dev, ranker)["all"]["match@5"]}


def card(trained_card: dict[str, Any], recipe: dict[str, Any], dev: dict[str, float]) -> dict[str, Any]:
    """The shipped model's card.json (the file checksums are added when it is packaged)."""
    return {
        "name": PRESET.encoder,
        "trained_from": trained_card.get("name", ""),
        "created": datetime.now(UTC).isoformat(timespec="seconds"),
        "base_model": trained_card.get("base_model", {}).get("name", recipe["base"]),
        "recipe": recipe,
        "training": {
            key: trained_card.get(key)
            for key in ("loss", "hyperparameters", "data", "split", "train_seconds_per_epoch", "averaged_from")
        },
        "dev_match_at_5": dev,
        "sources": {key: {"name": name, "licence": licence} for key, (name, licence) in SOURCES.items()},
        "terms": TERMS,
        "decision": PRESET.encoder_chosen_by,
    }


def render_card(payload: dict[str, Any]) -> str:
    """README.md of the shipped folder: what it is, the data and their terms, the recipe, the dev figures."""
    train = payload["recipe"]["train"]
    options = ", ".join(f"{k}={v}" for k, v in train.items())
    lines = [
        f"# {payload['name']}: the RadSearch encoder shipped with RadSearch Assistant",
        "",
        f"A sentence encoder (384-d) fine-tuned from `{payload['base_model']}` on findings -> impression pairs of the "
        "train split of four public report collections, with the RadSearch contrastive recipe plus BM25 and negation "
        "hard negatives. `assistant index` builds with it when no `--encoder` is given; `assistant train --base "
        f"{payload['name']}` fine-tunes it further on a site's own reports.",
        "",
        "Files: `model/` (sentence-transformers, float16 weights, loaded back into float32; the int8 ONNX export "
        "indexes run is made from them on first use and cached), `SHA256SUMS` (checked before use), `card.json` "
        "(this card, machine-readable).",
        "",
        "## Data and terms",
        "",
        "| source | licence |",
        "|---|---|",
        *[f"| {s['name']} | {s['licence']} |" for s in payload["sources"].values()],
        "",
        payload["terms"],
        "",
        "## Recipe",
        "",
        f"Base `{payload['recipe']['base']}`, seeds {payload['recipe']['seeds']}, {options}; the train split of "
        f"{', '.join(payload['recipe']['data'])} (80/10/10 by a salted hash of the report id, "
        "retriever/reports/splits.py). "
        "Rebuild it with `make encoder` (eval/training/encoder_rebuild.py). Why this recipe: "
        f"{payload['decision']}.",
        "",
        "## Dev split, findings -> impression match@5 (dense search, int8 export of the float32 model trained)",
        "",
        "| " + " | ".join(payload["dev_match_at_5"]) + " |",
        "|" + "---:|" * len(payload["dev_match_at_5"]),
        "| " + " | ".join(f"{v:.3f}" for v in payload["dev_match_at_5"].values()) + " |",
        "",
        "Test-split figures of the product's default search with it: eval/results/retrieval.md.",
    ]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--from", dest="trained", default=None, help="an encoder trained already (skip training)")
    parser.add_argument("--ship", action="store_true", help="replace models/radsearch/ with the rebuilt encoder")
    parser.add_argument("--data", type=Path, default=SHARED_DATA)
    add_out_option(parser, RESULTS)
    args = parser.parse_args(argv)
    if not args.data.is_dir():
        print(f"shared data folder {args.data} is absent: nothing to train on", file=sys.stderr)
        return 2
    from models.paths import models_dir
    from retriever.encoders.shipped import package_encoder
    from retriever.reports.splits import split_reports
    from retriever.training.train import CARD_FILE

    recipe = PRESET.recipe
    ingested = load_shared(args.data)  # read once: training and every dev score use it
    dev_reports = split_reports(ingested.reports)["dev"]
    trained = args.trained or train_by_recipe(recipe, f"{PRESET.encoder}-rebuild", ingested)
    from models.resolve import resolve_encoder

    trained_folder = Path(resolve_encoder(trained)[0])
    trained_card = json.loads((trained_folder / CARD_FILE).read_text(encoding="utf-8"))
    dev = dev_match(str(trained_folder), dev_reports)
    payload = card(trained_card, recipe, dev)
    target = shipped_folder(ENCODERS[PRESET.encoder]) if args.ship else models_dir() / f"{PRESET.encoder}-rebuilt"
    package_encoder(trained_folder, target, payload, render_card(payload))
    rebuilt = dev_match(str(target / "model"), dev_reports)
    # Against the shipped encoder; when replacing it, against the float32 model it was packaged from.
    reference = dev if args.ship else dev_match(PRESET.encoder, dev_reports)
    difference = abs(rebuilt["pooled"] - reference["pooled"])
    result = EncoderRebuild(
        created=datetime.now(UTC).isoformat(timespec="seconds"),
        command="python -m eval.training.encoder_rebuild " + " ".join(argv if argv is not None else sys.argv[1:]),
        trained=trained,
        packaged=str(target),
        shipped=args.ship,
        dev_match_at_5={"rebuilt": rebuilt, "shipped": reference, "trained_float32": dev},
        pooled_difference=round(difference, 4),
        tolerance=TOLERANCE,
        passed=difference <= TOLERANCE,
    )
    print(write_results(args.out / "encoder_rebuild", result, render, indent=2))
    return 0 if result.passed else 1


def render(result: EncoderRebuild) -> str:
    rows = result.dev_match_at_5
    sources = list(rows["rebuilt"])
    lines = [
        "# Shipped encoder rebuilt from its recipe (dev split)",
        "",
        f"`{result.command}` on {result.created}: trained `{result.trained}`, packaged to "
        f"`{result.packaged}`{' (shipped)' if result.shipped else ''}.",
        "",
        "| findings -> impression match@5 | " + " | ".join(sources) + " |",
        "|---|" + "---:|" * len(sources),
        *[
            f"| {name} | " + " | ".join(f"{rows[name][s]:.3f}" for s in sources) + " |"
            for name in ("shipped", "rebuilt", "trained_float32")
        ],
        "",
        f"Pooled difference {result.pooled_difference:.3f} (tolerance {result.tolerance}): "
        f"{'passed' if result.passed else 'FAILED'}.",
    ]
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    raise SystemExit(main())
