"""Benchmark conditions: how (or whether) the LLM is given retrieved reports.

A condition is written as a short spec: `none` (the no-retrieval baseline), `bm25`, an encoder reference
(`minilm`, `mpnet`, a fine-tuned model name such as `radsearch-minilm`, a folder or a hub id), or a fused search
method over an encoder (`hybrid:radsearch-minilm`, `hybrid-weighted:radsearch-minilm`). `tophit:SPEC` answers
without any LLM, with the first positive sentence of the top hit's impression: what the LLM adds is measured
against it. Options in brackets set the matched field, the number of reports and the prompt of one condition:
`hybrid-weighted:radsearch-minilm[report,k=3,prompt=diagnosis_candidates]` (defaults: impression, k=1 and
diagnosis_rag, the paper's setting, or the run's --field/-k/--prompt). `none` takes only a prompt,
`none[prompt=diagnosis_brief_norag]`, else the product's no-retrieval prompt (NORAG_PROMPT), so a new answer format
can be compared with and without retrieval. `rerank=NAME` re-scores the top hits with a second stage as
`assistant ask --reranker NAME` does (`support`, the product's default stage, or a trained cross-encoder; a
condition without it searches with the first stage alone). `weighting=sqrt` (or rank, uniform, similarity:T) sets
how the evidence differential weighs a report, else the product's default. Retrieval runs through the product's
own path (`ReportIndex` + `ReportRetriever`), over a corpus from which the cases' own reports have been removed, so no
case can be answered by reading its own report.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING

from assistant.rag.answer_defaults import NORAG_PROMPT
from assistant.rag.weighting import WEIGHTINGS, Weighting, weighting_named
from models.preset import named_preset
from retriever.reports.record import Field, Report
from retriever.search.methods import Method, split_fused_spec

if TYPE_CHECKING:
    from retriever.encoders.encoder import Encoder
    from retriever.index.report_index import ReportIndex

#: The encoder whose index the BM25 condition searches lexically (BM25 is built beside every index).
BM25_HOST_ENCODER = "minilm"
#: The paper's setting (models/presets/paper.json): a condition's field, k and prompt unless it says otherwise.
PAPER = named_preset("paper")
DEFAULT_PROMPT = PAPER.answer.prompts["free-text"]
#: The no-LLM baseline's prefix.
TOP_HIT = "tophit:"
#: The no-LLM evidence differential's prefix: its first candidate is the answer, its first five the differential.
EVIDENCE = "evidence:"
NO_LLM = (TOP_HIT, EVIDENCE)
#: The report fields (retriever.reports.record.Field) in the order a condition names them and a tie between
#: conditions goes by (eval.diagnosis.default): the paper's field first.
FIELDS: tuple[Field, ...] = ("impression", "findings", "report")
_SPEC = re.compile(r"\s*([^,\[\]]+?)\s*(?:\[([^\]]*)\])?\s*(?:,|$)")


@dataclass(frozen=True)
class Condition:
    """One arm of the benchmark. `field`, `k` and `prompt` follow the paper (impression, top-1, the report as
    context) unless set."""

    spec: str
    field: Field = PAPER.answer.field  # type: ignore[assignment]
    k: int = PAPER.answer.k
    prompt: str = DEFAULT_PROMPT
    #: A second stage (eval.retrieval.findings_impression.reranker_for reference) the search re-scores its top hits
    #: with, or None.
    rerank: str | None = None
    #: The answer's token limit when it differs from the run's (`tokens=32`: a baseline answered at another limit).
    max_tokens: int | None = None
    #: How the evidence differential weighs a report (assistant.rag.weighting.WEIGHTINGS) when it differs
    #: from the product's default (None).
    weighting: Weighting | None = None

    @property
    def retrieval(self) -> bool:
        return self.spec != "none"

    @property
    def answer_prompt(self) -> str:
        """The prompt the LLM is asked with: the condition's own, or for `none` without one the no-retrieval
        prompt."""
        return NORAG_PROMPT if not self.retrieval and self.prompt == DEFAULT_PROMPT else self.prompt

    @property
    def uses_llm(self) -> bool:
        """False for the no-LLM answers: the top hit's impression, or the evidence differential of the top k."""
        return not self.spec.startswith(NO_LLM)

    @property
    def _retriever_spec(self) -> str:
        return self.spec.removeprefix(TOP_HIT).removeprefix(EVIDENCE)

    @property
    def method(self) -> Method:
        spec = self._retriever_spec
        return "bm25" if spec == "bm25" else split_fused_spec(spec)[0]

    @property
    def encoder(self) -> str:
        spec = self._retriever_spec
        return BM25_HOST_ENCODER if spec == "bm25" else split_fused_spec(spec)[1]

    @property
    def name(self) -> str:
        """Label in results and cache keys; field, k and prompt only appear when they differ from the defaults."""
        tokens = [f"tokens={self.max_tokens}"] if self.max_tokens else []
        if not self.retrieval:
            options = ([f"prompt={self.prompt}"] if self.prompt != DEFAULT_PROMPT else []) + tokens
            return f"none[{','.join(options)}]" if options else "none"
        options = [self.field] if self.field != PAPER.answer.field else []
        options += (
            [f"k={self.k}"] if self.k != PAPER.answer.k and (self.uses_llm or self.spec.startswith(EVIDENCE)) else []
        )
        options += [f"prompt={self.prompt}"] if self.prompt != DEFAULT_PROMPT and self.uses_llm else []
        options += [f"rerank={self.rerank}"] if self.rerank else []
        options += [f"weighting={self.weighting}"] if self.weighting else []
        options += tokens
        return f"{self.spec}[{','.join(options)}]" if options else self.spec

    @property
    def legacy_name(self) -> str:
        """The name without its token limit: how caches written before limits were recorded name its answers."""
        return replace(self, max_tokens=None).name


def parse_conditions(
    text: str, field: Field = Condition.field, k: int = Condition.k, prompt: str = DEFAULT_PROMPT
) -> list[Condition]:
    """`none,mpnet,radsearch-minilm[findings,k=3]` -> Conditions, in order, without repeats; the arguments are the
    defaults that bracketed options override. Raises ValueError naming a bad option."""
    conditions: list[Condition] = []
    for match in _SPEC.finditer(text):
        spec, options = match[1].strip(), match[2]
        if not spec:
            continue
        spec = spec.lower() if spec.lower() in ("none", "bm25") else spec
        condition = Condition(spec, field, k, prompt) if spec != "none" else Condition(spec)
        for option in filter(None, (o.strip() for o in (options or "").split(","))):
            condition = _with_option(condition, option)
        if not condition.uses_llm:  # no prompt; the top hit alone has no k either
            k = condition.k if spec.startswith(EVIDENCE) else 1
            condition = replace(condition, k=k, prompt=DEFAULT_PROMPT)
        if not condition.retrieval and (condition.field, condition.k, condition.rerank) != (
            PAPER.answer.field,
            PAPER.answer.k,
            None,
        ):
            raise ValueError(f"`none` retrieves nothing: only prompt=NAME applies, not {match[2]!r}")
        if condition not in conditions:
            conditions.append(condition)
    if not conditions:
        raise ValueError("no conditions given (e.g. none,mpnet,bm25)")
    return conditions


def _with_option(condition: Condition, option: str) -> Condition:
    key, sep, value = option.partition("=")
    if not sep and key in FIELDS:
        return replace(condition, field=key)
    if key == "k" and value.isdigit() and int(value) >= 1:
        return replace(condition, k=int(value))
    if key == "prompt" and value:
        return replace(condition, prompt=value)
    if key == "rerank" and value and condition.retrieval:
        return replace(condition, rerank=value)
    if key == "tokens" and value.isdigit() and int(value) >= 8:
        return replace(condition, max_tokens=int(value))
    if key == "weighting" and condition.retrieval:
        return replace(condition, weighting=weighting_named(value))
    raise ValueError(
        f"bad condition option {option!r} in {condition.spec!r}: use one of {', '.join(FIELDS)}, k=N, "
        f"prompt=NAME, rerank=NAME, tokens=N, weighting={'|'.join(WEIGHTINGS)}"
    )


def corpus_key(reports: Sequence[Report]) -> str:
    """Short digest of the corpus ids, so a cached index is only reused for exactly the same reports."""
    digest = hashlib.sha256(json.dumps(sorted(r.id for r in reports)).encode())
    return digest.hexdigest()[:16]


def retrieval_corpus(reports: Sequence[Report], excluded_ids: set[str]) -> list[Report]:
    """The reports the LLM may be shown: everything except the cases' own reports."""
    return [r for r in reports if r.id not in excluded_ids]


def load_current(folder: Path, encoder: Encoder) -> ReportIndex:
    """The index saved in `folder`, its BM25 side tokenized anew first if that was done under older negation rules
    (a benchmark's cached index must score as today's program does). IndexLoadError as ReportIndex.load."""
    from retriever.index.report_index import ReportIndex
    from retriever.index.update import update_index

    index = ReportIndex.load(folder, encoder)
    if index.manifest.current_lexical_rules:
        return index
    update_index(folder, [], encoder=encoder, retokenize=True)
    return ReportIndex.load(folder, encoder)


def load_or_build_index(reports: list[Report], encoder_ref: str, fields: tuple[str, ...], cache: Path):
    """A `ReportIndex` over `reports` for `encoder_ref`, built once and reused from `cache` afterwards (its BM25
    tokenized anew first if it was tokenized under older negation rules, so results always reflect today's)."""
    from retriever.encoders.encoder import load_encoder
    from retriever.index.errors import IndexLoadError
    from retriever.index.report_index import ReportIndex

    safe = "".join(c if c.isalnum() or c in "-_." else "_" for c in encoder_ref)[-60:]
    folder = cache / f"{safe}-{'-'.join(fields)}-{corpus_key(reports)}"
    encoder = load_encoder(encoder_ref)
    if (folder / "manifest.json").is_file():
        try:
            return load_current(folder, encoder)
        except IndexLoadError:
            pass  # a different model under the same name (retrained): rebuild below
    index = ReportIndex.build(reports, encoder, fields, batch_size=32, progress=True)
    index.save(folder)
    return index
