"""Contrastive fine-tuning of a report encoder on findings -> impression pairs (the RadSearch method).

    result = train_encoder(reports, "my-radsearch", TrainConfig(base="minilm"))
    load_encoder("my-radsearch")   # also: assistant index CORPUS --encoder my-radsearch

Reports are split by id (retriever.reports.splits): only the train split is trained on, the dev split scores each
epoch (findings -> impression match@k, MRR@10), the test split is left for benchmarks. The model goes to a
temporary folder first and is renamed into the models directory, so a crash never leaves a half-written model
under its name. Checkpoints live beside it under `.checkpoints/NAME` until the run finishes, so `--resume` can
continue an interrupted run.
"""

from __future__ import annotations

import json
import logging
import os
import platform
import shutil
from collections import Counter
from collections.abc import Iterable
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from datasets import Dataset, DatasetDict
from sentence_transformers import SentenceTransformerTrainer, SentenceTransformerTrainingArguments
from sentence_transformers.base.sampler import BatchSamplers
from sentence_transformers.sentence_transformer.evaluation import InformationRetrievalEvaluator

from models.paths import models_dir
from retriever.encoders.encoder import Encoder, load_encoder
from retriever.reports.record import Report
from retriever.reports.splits import DEFAULT_SPLIT, SplitSpec, split_reports
from retriever.training.config import DEFAULT_CONFIG, TrainConfig
from retriever.training.data import (
    NEGATION_TERMS,
    PairSet,
    TrainingError,
    build_pairs,
    check_contrastive,
    training_sets,
)
from retriever.training.losses import MarginTermLoss, make_loss
from retriever.training.model_card import render_model_card
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

CARD_FILE = "radsearch_card.json"


def train_encoder(
    reports: Iterable[Report],
    out_name: str,
    config: TrainConfig = DEFAULT_CONFIG,
    *,
    split: SplitSpec = DEFAULT_SPLIT,
    skipped: Counter[str] | None = None,
    overwrite: bool = False,
    resume: bool = False,
    models_root: Path | None = None,
    progress: bool = True,
) -> TrainResult:
    """Fine-tune `config.base` on the train split of `reports` and save it as `models_root/out_name`.

    `skipped` carries reports already rejected upstream (by ingestion), so the card counts every report not
    used.
    """
    root = models_root or models_dir()
    target = output_path(root, out_name, overwrite)
    groups = split_reports(list(reports), split)
    all_pairs = build_pairs(r for group in groups.values() for r in group)
    train_pairs, dev_pairs = build_pairs(groups["train"]), build_pairs(groups["dev"])
    batch_size = _batch_size(train_pairs, config)
    sets = _training_sets(train_pairs, groups["train"], config, batch_size)
    checkpoints = root / CHECKPOINTS / out_name
    run_key = {"config": asdict(config), "data": train_pairs.fingerprint(), "split": asdict(split)}
    resume_from = prepare_checkpoints(checkpoints, run_key, resume=resume, overwrite=overwrite)

    encoder = load_encoder(config.base, max_seq_length=config.max_seq_length)
    model = encoder.model
    evaluator = dev_evaluator(dev_pairs)
    before = _dev_scores(evaluator, model)
    timer = EpochTimer()
    trainer = _trainer(model, sets, evaluator, config, batch_size, checkpoints, timer, progress)
    trainer.train(resume_from_checkpoint=resume_from)
    model.max_seq_length = max(config.max_seq_length, config.inference_max_seq_length)
    after = _dev_scores(evaluator, model)
    run = _Run(trainer, timer, resume_from is not None, before, after, _loss_classes(trainer.loss, sets))
    data = _data_counts(groups, all_pairs, train_pairs, dev_pairs, sets, skipped or Counter())
    card = _card(out_name, config, split, batch_size, encoder, data, run)
    files = {CARD_FILE: json.dumps(card, indent=2) + "\n", "README.md": render_model_card(card)}
    save_model(model, target, files, overwrite=overwrite)
    shutil.rmtree(checkpoints, ignore_errors=True)
    return TrainResult(path=target, card=card)


def _batch_size(train_pairs: PairSet, config: TrainConfig) -> int:
    """The batch size the pairs allow: in-batch negatives must be other impressions, so a batch holds no more pairs
    than there are distinct impressions (a warning says when that is fewer than asked)."""
    batch_size = check_contrastive(train_pairs, config.batch_size)
    if batch_size < config.batch_size:
        log.warning(
            "only %d distinct training impressions (%d pairs): batch size reduced from %d to %d",
            train_pairs.unique_positives,
            len(train_pairs),
            config.batch_size,
            batch_size,
        )
    return batch_size


def _training_sets(
    train_pairs: PairSet, reports: list[Report], config: TrainConfig, batch_size: int
) -> dict[str, dict[str, list[str]]]:
    """The training sets (plain pairs, or pairs with the hard negatives `config` asks for); TrainingError for the
    near-duplicate mask with hard negatives, which works on plain pairs only."""
    hard_negatives = (config.bm25_negatives, config.negation_negatives, config.detail_negatives, config.label_negatives)
    if config.mask_near_duplicates and any(hard_negatives):
        raise TrainingError("--mask-near-duplicates works on plain pairs: it cannot be combined with hard negatives")
    return training_sets(
        train_pairs,
        reports,
        bm25=config.bm25_negatives,
        negation=config.negation_negatives,
        detail=config.detail_negatives,
        labels=config.label_negatives,
        min_rows=batch_size,
    )


@dataclass(frozen=True)
class _Run:
    """A finished training run, as its card reports it: the trainer (loss, log), its timer, the dev scores, the
    loss class each training set trained with."""

    trainer: Any
    timer: EpochTimer
    resumed: bool
    before: dict[str, float]
    after: dict[str, float]
    loss_per_set: dict[str, str]


def _data_counts(
    groups: dict[str, list[Report]],
    all_pairs: PairSet,
    train_pairs: PairSet,
    dev_pairs: PairSet,
    sets: dict[str, dict[str, list[str]]],
    skipped: Counter[str],
) -> dict[str, Any]:
    """The card's account of the data: every report (those `skipped` upstream too), the pairs of each split, the
    training sets and the reasons reports were not used."""
    return {
        "reports": sum(len(g) for g in groups.values()) + sum(skipped.values()),
        "pairs": {
            "train": len(train_pairs),
            "dev": len(dev_pairs),
            "test (held out)": len(all_pairs) - len(train_pairs) - len(dev_pairs),
        },
        "unique_train_impressions": train_pairs.unique_positives,
        "training_sets": {name: len(columns["anchor"]) for name, columns in sets.items()},
        "skipped_by_reason": dict(skipped + all_pairs.skipped),
        "sources": dict(Counter(r.source for r in groups["train"])),
    }


def _card(
    out_name: str,
    config: TrainConfig,
    split: SplitSpec,
    batch_size: int,
    encoder: Encoder,
    data: dict[str, Any],
    run: _Run,
) -> dict[str, Any]:
    """The model card (radsearch_card.json, rendered as README.md): what was trained from what, on which data, with
    which scores, on which machine."""
    trainer, timer = run.trainer, run.timer
    return {
        "name": out_name,
        "base_model": {"ref": config.base, "name": encoder.name, "location": encoder.location},
        "created": datetime.now(UTC).isoformat(timespec="seconds"),
        "loss": config.loss_name,
        "loss_per_set": run.loss_per_set,
        "hyperparameters": asdict(config) | {"batch_size_used": batch_size},
        "split": asdict(split),
        "data": data,
        "dev_metrics": {
            "before": run.before,
            "after": run.after,
            "per_epoch": _epoch_metrics(trainer.state.log_history),
        },
        "train_loss": loss_history(trainer.state.log_history),
        "masked_negatives": _masked_share(trainer.loss),
        "train_seconds_per_epoch": timer.seconds,
        "steps": {
            "total": trainer.state.global_step,
            "this_run": timer.steps_run,
            "first": timer.first_step,
            "resumed": run.resumed,
        },
        "machine": {
            "cpu_count": os.cpu_count(),
            "platform": platform.platform(),
            "device": str(encoder.model.device),
        },
    }


def dev_evaluator(pairs: PairSet, name: str = "dev") -> InformationRetrievalEvaluator | None:
    """Findings -> impression retrieval on held-out pairs: queries = findings, corpus = unique impressions, a
    hit
    when the report's own impression text comes back. None when there are too few pairs to rank anything."""
    if pairs.unique_positives < 2:
        log.warning("dev split has %d distinct impressions: no dev evaluation", pairs.unique_positives)
        return None
    corpus_ids = {text: f"i{n}" for n, text in enumerate(dict.fromkeys(pairs.positives))}
    return InformationRetrievalEvaluator(
        queries=dict(zip(pairs.ids, pairs.anchors, strict=True)),
        corpus={cid: text for text, cid in corpus_ids.items()},
        relevant_docs={qid: {corpus_ids[p]} for qid, p in zip(pairs.ids, pairs.positives, strict=True)},
        accuracy_at_k=[1, 5, 10],
        mrr_at_k=[10],
        ndcg_at_k=[10],
        precision_recall_at_k=[10],
        map_at_k=[10],
        name=name,
        write_csv=False,
        score_functions=None,
    )


_METRICS = {
    "cosine_accuracy@1": "match@1",
    "cosine_accuracy@5": "match@5",
    "cosine_accuracy@10": "match@10",
    "cosine_mrr@10": "mrr@10",
}


def _pick(scores: dict[str, float], prefix: str) -> dict[str, float]:
    """The four headline metrics out of an evaluator's or trainer's dict, under their literature names."""
    return {short: round(float(scores[prefix + key]), 4) for key, short in _METRICS.items() if prefix + key in scores}


def _dev_scores(evaluator: Any, model: Any) -> dict[str, float]:
    return _pick(evaluator(model), "dev_") if evaluator is not None else {}


def _epoch_metrics(history: list[dict[str, Any]]) -> list[dict[str, float]]:
    """Dev metrics the trainer logged at the end of each epoch."""
    return [
        {"epoch": round(row["epoch"], 2)} | _pick(row, "eval_dev_")
        for row in history
        if "eval_dev_cosine_accuracy@5" in row
    ]


def _loss_classes(loss: Any, sets: dict[str, Any]) -> dict[str, str]:
    """Training set -> class of the loss it trained with (the trainer holds one loss, or one per set)."""
    per_set = dict(loss.items()) if hasattr(loss, "items") else dict.fromkeys(sets, loss)
    return {name: type(module).__name__ for name, module in per_set.items()}


def _masked_share(loss: Any) -> float | None:
    """Share of in-batch negatives the near-duplicate mask removed (None for the other losses)."""
    negatives = getattr(loss, "negatives", 0)
    return round(loss.masked / negatives, 4) if negatives else None


def _trainer(
    model: Any,
    sets: dict[str, dict[str, list[str]]],
    evaluator: Any,
    config: TrainConfig,
    batch_size: int,
    checkpoints: Path,
    timer: EpochTimer,
    progress: bool,
) -> Any:
    loss = make_loss(
        model,
        mask_near_duplicates=config.mask_near_duplicates,
        duplicate_threshold=config.duplicate_threshold,
        cached=config.cached,
        mini_batch_size=config.mini_batch_size,
        symmetric=config.symmetric,
    )
    args = SentenceTransformerTrainingArguments(
        output_dir=str(checkpoints),
        num_train_epochs=config.epochs,
        max_steps=config.max_steps,
        per_device_train_batch_size=batch_size,
        learning_rate=config.lr,
        warmup_steps=config.warmup_ratio,  # a float < 1 is a ratio of all steps in transformers 5
        seed=config.seed,
        data_seed=config.seed,
        batch_sampler=BatchSamplers.NO_DUPLICATES,
        eval_strategy="epoch" if evaluator is not None else "no",
        save_strategy="steps",
        save_steps=config.checkpoint_steps,
        save_total_limit=2,
        logging_steps=config.log_steps,
        report_to="none",
        disable_tqdm=not progress,
        dataloader_num_workers=0,
        dataloader_pin_memory=False,  # pinning only helps a GPU and warns on CPU
    )
    if config.negation_margin > 0 and NEGATION_TERMS in sets:
        loss = {name: loss for name in sets} | {NEGATION_TERMS: MarginTermLoss(model, config.negation_margin)}
    datasets = {name: Dataset.from_dict(columns) for name, columns in sets.items()}
    dataset = next(iter(datasets.values())) if len(datasets) == 1 else DatasetDict(datasets)
    return SentenceTransformerTrainer(
        model=model, args=args, train_dataset=dataset, loss=loss, evaluator=evaluator, callbacks=[timer]
    )
