"""Contrastive losses for findings -> impression training: plain, cached, symmetric, and near-duplicate
masked.

Why masking: report archives are full of impressions that say the same thing in different words ("No acute
cardiopulmonary abnormality." / "No acute cardiopulmonary disease."). The no-duplicates batch sampler only
keeps *identical* impressions apart; near-duplicates still meet in a batch, and plain MNRL then pushes a
findings text away from an impression that is just as correct as its own (a false negative). The masked loss
drops an in-batch negative whose impression embedding is closer than a threshold to the anchor's own
impression (the RadIR idea).
"""

from __future__ import annotations

from typing import Any

import torch
import torch.nn.functional as F
from sentence_transformers import SentenceTransformer
from sentence_transformers.base.losses.merged_forward import embed_columns
from sentence_transformers.sentence_transformer.losses import (
    CachedMultipleNegativesRankingLoss,
    MultipleNegativesRankingLoss,
    TripletDistanceMetric,
    TripletLoss,
)
from sentence_transformers.util import cos_sim
from torch import Tensor, nn

#: MNRL's scale (1 / temperature); the sentence-transformers default, used by the paper.
SCALE = 20.0


class NearDuplicateMaskedMNRL(MultipleNegativesRankingLoss):
    """MNRL on (findings, impression) pairs that ignores in-batch impressions near-identical to the positive.

    Similarity is measured with the model being trained, without gradient, so the mask follows the model's own
    notion of "same meaning". `masked` / `negatives` count what was dropped, for the model card. Known limit,
    measured with untuned MiniLM: "No acute cardiopulmonary disease." vs "...abnormality." score 0.92, but so do
    laterality flips ("Right/Left lower lobe pneumonia.": 0.98), which the mask then wrongly spares from
    being negatives; the benchmark measures the net effect.
    """

    def __init__(self, model: SentenceTransformer, threshold: float = 0.9, symmetric: bool = False) -> None:
        directions = ("query_to_doc", "doc_to_query") if symmetric else ("query_to_doc",)
        super().__init__(
            model,
            scale=SCALE,
            directions=directions,
            partition_mode="per_direction" if symmetric else "joint",
        )
        if not -1.0 < threshold <= 1.0:
            raise ValueError(f"near-duplicate threshold must be a cosine in (-1, 1], got {threshold}")
        self.threshold = threshold
        self.symmetric = symmetric
        self.masked = 0
        self.negatives = 0

    def compute_loss_from_embeddings(self, embeddings: list[Tensor], labels: Tensor) -> Tensor:
        if len(embeddings) != 2:
            raise ValueError("near-duplicate masking takes (anchor, positive) pairs, not explicit negatives")
        anchors, positives = embeddings
        scores = cos_sim(anchors, positives) * self.scale
        with torch.no_grad():
            near = cos_sim(positives, positives) > self.threshold
            near.fill_diagonal_(False)
        self.masked += int(near.sum())
        self.negatives += near.numel() - near.size(0)
        target = torch.arange(scores.size(0), device=scores.device)
        loss = F.cross_entropy(scores.masked_fill(near, float("-inf")), target)
        if self.symmetric:
            loss = (loss + F.cross_entropy(scores.T.masked_fill(near, float("-inf")), target)) / 2
        return loss

    def get_config_dict(self) -> dict[str, Any]:
        return {**super().get_config_dict(), "near_duplicate_threshold": self.threshold}


def make_loss(
    model: SentenceTransformer,
    *,
    mask_near_duplicates: bool,
    duplicate_threshold: float,
    cached: bool,
    mini_batch_size: int,
    symmetric: bool,
) -> nn.Module:
    """The loss for a combination of training options (cached + masked is refused: the cached loss embeds in
    mini-batches and never holds the whole batch's impressions at once, which the mask needs)."""
    if mask_near_duplicates and cached:
        raise ValueError("--mask-near-duplicates cannot be combined with --cached; choose one")
    if mask_near_duplicates:
        return NearDuplicateMaskedMNRL(model, threshold=duplicate_threshold, symmetric=symmetric)
    directions = ("query_to_doc", "doc_to_query") if symmetric else ("query_to_doc",)
    partition = "per_direction" if symmetric else "joint"
    if cached:
        return CachedMultipleNegativesRankingLoss(
            model,
            scale=SCALE,
            mini_batch_size=mini_batch_size,
            directions=directions,
            partition_mode=partition,
        )
    return MultipleNegativesRankingLoss(model, scale=SCALE, directions=directions, partition_mode=partition)


class MarginTermLoss(nn.Module):
    """MNRL plus a cosine triplet margin, for (query term, affirmed sentence, negated sentence) triplets.

    MNRL keeps a term near sentences about it and away from other terms' sentences; at scale 20 it stops separating
    the affirmed from the negated sentence once they are ~0.2 apart in cosine (the negated one's softmax weight is
    then e^-4 of the affirmed one's). The margin term asks for cos(term, affirmed) - cos(term, negated) >= margin
    on every triplet, which is the gap a negation-aware search needs.
    """

    def __init__(self, model: SentenceTransformer, margin: float) -> None:
        super().__init__()
        if not 0.0 < margin <= 2.0:
            raise ValueError(f"negation margin must be a cosine gap in (0, 2], got {margin}")
        self.model = model
        self.margin = margin
        self.ranking = MultipleNegativesRankingLoss(model, scale=SCALE)
        self.triplet = TripletLoss(model, distance_metric=TripletDistanceMetric.COSINE, triplet_margin=margin)

    def forward(self, sentence_features: list[dict[str, Tensor]], labels: Tensor | None) -> Tensor:
        embeddings = embed_columns(self.model, sentence_features)  # once, for both terms
        return self.ranking.compute_loss_from_embeddings(
            embeddings, labels
        ) + self.triplet.compute_loss_from_embeddings(embeddings, labels)

    def get_config_dict(self) -> dict[str, Any]:
        return {"scale": SCALE, "triplet_margin": self.margin, "distance": "cosine"}
