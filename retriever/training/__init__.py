"""Training: pairs and hard negatives, contrastive losses, the encoder and re-ranker trainers, model averaging
and cards."""
