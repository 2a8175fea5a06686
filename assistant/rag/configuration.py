"""What produced an answer, and one hash over it: so two answers can be compared and a result reproduced.

Why: an answer recorded its model and prompt but not the encoder, search method, index or model file behind it,
and a timed-out answer not even its model. The configuration is known before the model is asked (nothing in it
depends on the call succeeding): the index's encoder (name, weight fingerprint, backend) and corpus digest, the
search (method, dense weight, second stage, field, k, and its filters when set), the prompt id and the model
(backend, name, file hash or server) with its sampling. `ask --json`, the chat's message details and the benchmark
caches carry it. The hash itself is the project's one configuration hash (assistant/settings.py): an answer built
by the pipeline builder (assistant/rag/assemble.py) carries its Settings' hash.
"""

from __future__ import annotations

from typing import Any

from assistant.settings import HASH_CHARS, configuration_hash
from retriever.reports.record import Field
from retriever.search.methods import Method

__all__ = ["HASH_CHARS", "configuration_hash", "retrieval_configuration"]


def retrieval_configuration(index: Any, *, field: Field, k: int, method: Method, filters: Any = None) -> dict[str, Any]:
    """The retrieval half: which index (its encoder and corpus) was searched, and how. Filters (SearchFilters) are
    named only when one is set, so an unfiltered answer's configuration and hash stay what they were."""
    manifest, searched = index.manifest, index.search_configuration
    stage = searched.second_stage
    stage = stage if stage is not None and stage.applies_to(field) else None
    chosen = {name: value for name, value in vars(filters).items() if value} if filters is not None else {}
    return {
        "encoder": {
            "name": manifest.encoder.name,
            "fingerprint": manifest.encoder.fingerprint,
            "backend": f"{manifest.encoder.backend}@{manifest.encoder.backend_version}",
        },
        "index": {"corpus_sha256": manifest.corpus_sha256, "reports": manifest.reports},
        "query_expansion": searched.expander().enabled,
        "search": {
            "method": method,
            "dense_weight": searched.dense_weight if method == "hybrid-weighted" else None,
            "second_stage": stage.name if stage else None,
            "second_stage_weight": stage.weight if stage else None,
            "field": field,
            "k": k,
        }
        | ({"filters": chosen} if chosen else {}),
    }
