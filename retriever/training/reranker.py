"""Train a cross-encoder re-ranker (retriever/search/rerank.py) on a site's findings -> impression pairs: no labels
needed.

    result = train_reranker(reports, "my-reranker", RerankConfig(base="radsearch-minilm-labelneg-2ep-256-avg2"))
    assistant search "..." --reranker my-reranker

Each training findings text is read with its own impression (label 1) and with impressions it must score lower
(label 0), one per kind of mistake a first-stage search makes:
- `other report`: the training impression BM25 ranks highest for the findings that is not its own
  (train_data.bm25_negatives);
- `polarity flipped`: the impression with its main finding negated or affirmed (negation_pairs.flip_polarity);
- `detail changed`: one side, severity word or measurement changed (detail_negatives.detail_negative);
- `unsupported sentence`: the impression with a sentence of another training impression added, one that affirms a
  finding the findings text never names (`unsupported_sentence`).
Binary cross-entropy on one logit. The model starts from an encoder's transformer (the fine-tuned report encoder
knows report language) with a new scoring head. Only the train split trains; the dev split's pairs get the same
negatives and score "dev pairwise accuracy" (own impression above each negative) before and after, per kind.
Checkpoints beside the models directory let `--resume` continue an interrupted run, as `assistant train` does.
"""

from __future__ import annotations

import json
import logging
import os
import platform
import shutil
import zlib
from collections import Counter
from collections.abc import Iterable
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from models.paths import models_dir
from retriever.negation.pairs import flip_polarity, polarity, sentences, term_in, term_spans
from retriever.reports.record import Report
from retriever.reports.splits import DEFAULT_SPLIT, SplitSpec, split_reports
from retriever.search.rerank import CARD_FILE
from retriever.training.data import PairSet, TrainingError, bm25_negatives, build_pairs
from retriever.training.negatives import detail_negative
from retriever.training.reranker_config import DEFAULT_RERANK_CONFIG, RerankConfig
from retriever.training.run import (
    CHECKPOINTS,
    EpochTimer,
    TrainResult,
    loss_history,
    output_path,
    prepare_checkpoints,
    save_model,
)

log = logging.getLogger(__name__)

NEGATIVE_KINDS = ("other report", "polarity flipped", "detail changed", "unsupported sentence")


@dataclass
class Examples:
    """(query, text, label) rows with the kind of each negative, in pair order."""

    queries: list[str] = field(default_factory=list)
    texts: list[str] = field(default_factory=list)
    labels: list[float] = field(default_factory=list)
    kinds: list[str] = field(default_factory=list)

    def add(self, query: str, text: str, kind: str) -> None:
        self.queries.append(query)
        self.texts.append(text)
        self.labels.append(1.0 if kind == "own" else 0.0)
        self.kinds.append(kind)

    def columns(self) -> dict[str, list[Any]]:
        return {"query": self.queries, "text": self.texts, "label": self.labels}


def finding_sentences(impressions: Iterable[str]) -> list[tuple[str, str]]:
    """(sentence, finding) for every distinct impression sentence that affirms one of `FINDING_TERMS` with no
    negation or hedge, in a stable order: the pool `unsupported_sentence` draws from."""
    pool: dict[str, str] = {}
    for impression in impressions:
        for sentence in sentences(impression):
            finding = term_in(sentence)
            if finding and "xxxx" not in sentence.lower() and polarity(sentence, finding) is False:
                pool.setdefault(sentence, finding)
    return sorted(pool.items())


def unsupported_sentence(findings: str, impression: str, pool: list[tuple[str, str]]) -> str | None:
    """The impression with a pool sentence appended whose finding neither the findings nor the impression names
    (picked by a hash of the impression, so a run is repeatable); None when every pool finding is named."""
    named = f"{findings} {impression}"
    fitting = [sentence for sentence, finding in pool if not term_spans(named, finding)]
    if not fitting:
        return None
    added = fitting[zlib.crc32(impression.encode("utf-8")) % len(fitting)]
    return f"{impression.rstrip()} {added}"


def build_examples(pairs: PairSet, pool: list[tuple[str, str]]) -> Examples:
    """Every pair's own impression and its negatives of `NEGATIVE_KINDS` (a kind no rule can make is left out)."""
    examples = Examples()
    for findings, own, lexical in zip(pairs.anchors, pairs.positives, bm25_negatives(pairs), strict=True):
        made = (lexical, flip_polarity(own), detail_negative(own), unsupported_sentence(findings, own, pool))
        examples.add(findings, own, "own")
        for kind, negative in zip(NEGATIVE_KINDS, made, strict=True):
            if negative and negative != own:
                examples.add(findings, negative, kind)
    return examples


def pairwise_accuracy(model: Any, examples: Examples, batch_size: int = 32) -> dict[str, float]:
    """Share of (own impression, negative) pairs of the same findings where the own one scores higher, per kind and
    over all: what re-ranking must get right."""
    scores = model.predict(
        list(zip(examples.queries, examples.texts, strict=True)), batch_size=batch_size, show_progress_bar=False
    )
    own: dict[str, float] = {}
    wins: dict[str, list[bool]] = {kind: [] for kind in NEGATIVE_KINDS}
    for query, kind, score in zip(examples.queries, examples.kinds, scores, strict=True):
        if kind == "own":
            own[query] = float(score)
        else:
            wins[kind].append(own[query] > float(score))
    every = [w for kind in NEGATIVE_KINDS for w in wins[kind]]
    result = {kind: round(sum(w) / len(w), 4) for kind, w in wins.items() if w}
    return result | ({"all": round(sum(every) / len(every), 4)} if every else {})


def train_reranker(
    reports: Iterable[Report],
    out_name: str,
    config: RerankConfig = DEFAULT_RERANK_CONFIG,
    *,
    split: SplitSpec = DEFAULT_SPLIT,
    overwrite: bool = False,
    resume: bool = False,
    models_root: Path | None = None,
    progress: bool = True,
) -> TrainResult:
    """Train a re-ranker from `config.base` on the train split of `reports`; save it as `models_root/out_name`."""
    root = models_root or models_dir()
    target = output_path(root, out_name, overwrite)
    groups = split_reports(list(reports), split)
    train_pairs, dev_pairs = build_pairs(groups["train"]), build_pairs(groups["dev"])
    if train_pairs.unique_positives < 2:
        raise TrainingError(
            f"{len(train_pairs)} training pairs with {train_pairs.unique_positives} distinct impression(s): a "
            "re-ranker needs reports with both findings and impression, and at least two different impressions"
        )
    pool = finding_sentences(train_pairs.positives)
    train, dev = build_examples(train_pairs, pool), build_examples(dev_pairs, pool)
    checkpoints = root / CHECKPOINTS / out_name
    run_key = {"reranker": asdict(config), "data": train_pairs.fingerprint(), "split": asdict(split)}
    resume_from = prepare_checkpoints(checkpoints, run_key, resume=resume, overwrite=overwrite)
    model, base, run = _fit(config, train, dev, checkpoints, resume_from, progress)
    card = {
        "name": out_name,
        "kind": "cross-encoder re-ranker",
        "base_model": {"ref": config.base, "location": str(base)},
        "created": datetime.now(UTC).isoformat(timespec="seconds"),
        "loss": "binary cross-entropy (own impression 1, negatives 0)",
        "hyperparameters": asdict(config),
        "split": asdict(split),
        "data": {
            "pairs": {"train": len(train_pairs), "dev": len(dev_pairs)},
            "examples": {"train": dict(Counter(train.kinds)), "dev": dict(Counter(dev.kinds))},
            "unsupported_sentence_pool": len(pool),
        },
        **run,
        "machine": {"cpu_count": os.cpu_count(), "platform": platform.platform()},
    }
    save_model(model, target, {CARD_FILE: json.dumps(card, indent=2) + "\n"}, overwrite=overwrite)
    shutil.rmtree(checkpoints, ignore_errors=True)
    return TrainResult(path=target, card=card)


def _fit(
    config: RerankConfig,
    train: Examples,
    dev: Examples,
    checkpoints: Path,
    resume_from: str | None,
    progress: bool,
) -> tuple[Any, Path | str, dict[str, Any]]:
    """The cross-encoder made from `config.base` (returned with its folder or hub id) and trained on `train`, and
    what its card says of the run: the dev pairwise accuracy before and after, the loss, the time and the steps."""
    from datasets import Dataset
    from sentence_transformers.cross_encoder import CrossEncoder
    from transformers import set_seed

    from models.resolve import resolve_encoder

    base, _ = resolve_encoder(config.base)
    # The scoring head is initialised at random when the model is made, before the trainer seeds anything: seeded
    # here, the same config and data give the same re-ranker whatever ran before in the process.
    set_seed(config.seed)
    model = CrossEncoder(str(base), num_labels=1, max_length=config.max_length, device="cpu")
    before = pairwise_accuracy(model, dev) if dev.queries else {}
    timer = EpochTimer()
    trainer = _trainer(model, Dataset.from_dict(train.columns()), config, checkpoints, timer, progress)
    trainer.train(resume_from_checkpoint=resume_from)
    after = pairwise_accuracy(model, dev) if dev.queries else {}
    return (
        model,
        base,
        {
            "dev_pairwise_accuracy": {"before": before, "after": after},
            "train_loss": loss_history(trainer.state.log_history),
            "train_seconds_per_epoch": timer.seconds,
            "steps": {
                "total": trainer.state.global_step,
                "this_run": timer.steps_run,
                "resumed": resume_from is not None,
            },
        },
    )


def _trainer(
    model: Any, dataset: Any, config: RerankConfig, checkpoints: Path, timer: EpochTimer, progress: bool
) -> Any:
    from sentence_transformers.cross_encoder import CrossEncoderTrainer, CrossEncoderTrainingArguments
    from sentence_transformers.cross_encoder.losses import BinaryCrossEntropyLoss

    args = CrossEncoderTrainingArguments(
        output_dir=str(checkpoints),
        num_train_epochs=config.epochs,
        max_steps=config.max_steps,
        per_device_train_batch_size=config.batch_size,
        learning_rate=config.lr,
        warmup_steps=config.warmup_ratio,  # a float < 1 is a ratio of all steps in transformers 5
        seed=config.seed,
        data_seed=config.seed,
        save_strategy="steps",
        save_steps=config.checkpoint_steps,
        save_total_limit=2,
        logging_steps=config.log_steps,
        report_to="none",
        disable_tqdm=not progress,
        dataloader_num_workers=0,
        dataloader_pin_memory=False,
    )
    return CrossEncoderTrainer(
        model=model, args=args, train_dataset=dataset, loss=BinaryCrossEntropyLoss(model), callbacks=[timer]
    )
