"""How an index is searched, fixed when the index is built or loaded: `ReportIndex.load(folder, search=...)`.

Why one frozen object: the second stage, the dense weight and the query expander used to be set on an index after it
was loaded, by each caller in its own order, so two callers could search one index differently and a forgotten
assignment went unnoticed. Now the index is given its configuration once (or makes it from the search card in its
manifest, models/preset.py SearchCard) and `ReportIndex.with_search` gives another view of the same loaded index
for a benchmark that compares configurations.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from typing import TYPE_CHECKING

from models.preset import SearchPreset
from retriever.search.methods import Method, checked_method

if TYPE_CHECKING:
    from retriever.index.manifest import Manifest
    from retriever.search.abbreviations import QueryExpander
    from retriever.search.rerank import SecondStage


@dataclass(frozen=True)
class SearchConfiguration:
    """The method a search uses when it names none, hybrid-weighted's dense share, the second stage that re-scores
    the first stage's top hits (None: none) and the query expander (None: the built-in tables)."""

    method: Method
    dense_weight: float
    second_stage: SecondStage | None = None
    query_expander: QueryExpander | None = None

    @classmethod
    def first_stage(cls, values: SearchPreset) -> SearchConfiguration:
        """`values`' method and dense weight, no second stage, the built-in expansion: what an index given no
        configuration is searched with (a second stage is a model or check its caller chooses to load)."""
        return cls(checked_method(values.method), values.dense_weight)

    def expander(self) -> QueryExpander:
        """The expander a query goes through (the built-in tables unless one was given)."""
        from retriever.search.abbreviations import default_expander

        return self.query_expander or default_expander()


#: What `ReportIndex.load` takes besides a configuration: how to make one from the loaded manifest (its search card,
#: its encoder), as the product's settings do (assistant/settings.py, SearchSettings.configure).
Configure = Callable[["Manifest"], SearchConfiguration]


@cache
def second_stage_named(name: str, weight: float) -> SecondStage:
    """The second stage `name` (`support`, or a trained re-ranker's name or folder, with `@WEIGHT` or else
    `weight`), loaded once per process: every index a chat serves shares one re-ranker model, as it always did.
    ModelNotAvailable when the name is not a trained re-ranker."""
    from retriever.search import support
    from retriever.search.rerank import RERANK_WEIGHT, Reranker, split_weight

    folder, given = split_weight(name)
    if folder == support.NAME:
        return support.SupportCheck(weight=given or weight)
    return Reranker(folder, weight=given or RERANK_WEIGHT)
