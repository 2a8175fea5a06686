"""Average the weights of encoders fine-tuned from one base: a uniform "model soup" (Wortsman et al., ICML 2022).

Why: two runs of one training recipe that differ only in their seed differ on the dev split by a query here and
there, and on sources of 13 and 34 dev queries one query decides a target (eval/results/encoder_choice_dev.md:
the label-negatives recipe cleared the negation target with both seeds, and each seed lost a different retrieval
target on one query). Fine-tunes of one base stay in one basin of the loss, so their weight average is a model of
the same size and speed that behaves like the recipe rather than like one draw of it; it costs no training.

Only encoders of the same architecture and tokenizer, fine-tuned from the same base, can be averaged: anything
else is refused with what differs. The average is written like a trained model (models directory, atomic rename,
a `radsearch_card.json` naming its parts and their training settings, a README card without report text).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from retriever.training.data import TrainingError
from retriever.training.run import TrainResult, output_path, save_model
from retriever.training.train import CARD_FILE


def average_encoders(
    parts: Sequence[str], out_name: str, *, models_root: Path | None = None, overwrite: bool = False
) -> TrainResult:
    """Save the uniform weight average of the encoders `parts` (names or folders) as `models_root/out_name`."""
    from models.paths import models_dir
    from retriever.encoders.encoder import load_encoder

    if len(parts) < 2:
        raise TrainingError("averaging needs at least two encoders")
    if len(set(parts)) < len(parts):
        raise TrainingError(f"an encoder is named twice among {', '.join(parts)}")
    root = models_root or models_dir()
    target = output_path(root, out_name, overwrite)
    encoders = [load_encoder(part) for part in parts]
    for part, encoder in zip(parts, encoders, strict=True):
        if Path(encoder.location).resolve() == target.resolve():
            raise TrainingError(f"--out {out_name} is one of the parts ({part}): name the average something else")
    cards = [_card(Path(encoder.location)) for encoder in encoders]
    models = [encoder.model for encoder in encoders]
    states = [model.state_dict() for model in models]
    _check_compatible(parts, models, states, cards)
    averaged = {}
    for key, first in states[0].items():
        if first.is_floating_point():
            averaged[key] = (sum(state[key].float() for state in states) / len(states)).to(first.dtype)
        else:  # integer buffers (position ids) are equal in every part: _check_compatible compared them
            averaged[key] = first
    model = models[0]
    model.load_state_dict(averaged)
    card = {
        "name": out_name,
        "base_model": cards[0]["base_model"],  # _check_compatible made sure the first part has one
        "created": datetime.now(UTC).isoformat(timespec="seconds"),
        "loss": f"uniform weight average of {len(parts)} fine-tuned encoders (model soup)",
        "averaged_from": [
            {
                "name": part,
                "location": encoder.location,
                "loss": card.get("loss"),
                "hyperparameters": card.get("hyperparameters"),
                "dev_metrics": card.get("dev_metrics", {}).get("after"),
            }
            for part, encoder, card in zip(parts, encoders, cards, strict=True)
        ],
        "max_seq_length": model.max_seq_length,
    }
    files = {CARD_FILE: json.dumps(card, indent=2) + "\n", "README.md": render_average_card(card)}
    save_model(model, target, files, overwrite=overwrite)
    return TrainResult(path=target, card=card)


def _card(folder: Path) -> dict[str, Any]:
    """The part's training card, {} for an encoder not trained here (a registry model averages with nothing)."""
    path = folder / CARD_FILE
    return json.loads(path.read_text(encoding="utf-8")) if path.is_file() else {}


def _check_compatible(
    parts: Sequence[str], models: Sequence[Any], states: Sequence[dict[str, Any]], cards: Sequence[dict[str, Any]]
) -> None:
    """TrainingError naming the first difference that makes a weight average meaningless (`states`: the models'
    state dicts)."""
    first_name, first_model, first_card = parts[0], models[0], cards[0]
    base = first_card.get("base_model", {}).get("name")
    if base is None:
        raise TrainingError(
            f"{first_name} has no training card ({CARD_FILE}): only encoders fine-tuned with "
            "`assistant train` from one base can be averaged"
        )
    reference = states[0]
    for name, model, state, card in zip(parts[1:], models[1:], states[1:], cards[1:], strict=True):
        other_base = card.get("base_model", {}).get("name")
        if other_base != base:
            raise TrainingError(
                f"{name} was fine-tuned from {other_base or 'an unknown base'}, {first_name} from "
                f"{base}: only fine-tunes of one base can be averaged"
            )
        if state.keys() != reference.keys() or any(state[k].shape != reference[k].shape for k in reference):
            raise TrainingError(f"{name} and {first_name} have different layers: they cannot be averaged")
        if any(not reference[k].is_floating_point() and not reference[k].equal(state[k]) for k in reference):
            raise TrainingError(f"{name} and {first_name} differ in a fixed (integer) buffer: not one architecture")
        if model.tokenizer.get_vocab() != first_model.tokenizer.get_vocab():
            raise TrainingError(f"{name} and {first_name} have different tokenizers: they cannot be averaged")
        if model.max_seq_length != first_model.max_seq_length:
            raise TrainingError(
                f"{name} reads {model.max_seq_length} tokens, {first_name} "
                f"{first_model.max_seq_length}: average encoders trained at one --max-seq-length"
            )


def render_average_card(card: dict[str, Any]) -> str:
    """Markdown card of an averaged encoder: its parts and how each was trained (no training examples)."""
    lines = [
        f"# {card['name']}",
        "",
        f"Made with `assistant average` on {card['created']}: the {card['loss']} fine-tuned from "
        f"`{card['base_model'].get('name')}`. Reads {card['max_seq_length']} tokens.",
        "",
        f"Use it with `assistant index CORPUS --encoder {card['name']}` or `load_encoder({card['name']!r})`.",
        "",
        "| part | loss | seed | dev match@5 of the part |",
        "|---|---|---|---|",
    ]
    for part in card["averaged_from"]:
        seed = (part.get("hyperparameters") or {}).get("seed", "?")
        match = (part.get("dev_metrics") or {}).get("match@5", "n/a")
        lines.append(f"| {part['name']} | {part.get('loss') or '?'} | {seed} | {match} |")
    return "\n".join(lines) + "\n"
