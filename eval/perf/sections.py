"""The sections of the performance results files (performance.json, ingest.json, ray_build.json) as typed records.

Why: a section is written by one benchmark and read by the report (eval.perf.report, the ingest and Ray reports), by
a benchmark resuming its parts (eval.perf.ingest) and by one timing another (eval.perf.llama_build reads
ask_latency's); `section_type` names the record of every section, so eval.perf.results.store builds it before
writing (a benchmark that changes its section's shape must change its record) and readers get it typed. Each
section carries when, how and under what load it was measured (`Section`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from eval.common.records import Record, key, optional, rest


@dataclass
class Section(Record):
    """When, how and under what load a section was measured (eval.perf.results.store adds these)."""

    measured: str
    command: str
    threads: int
    load_average_at_end: list[float]
    #: Sections stored before provenance was recorded lack it.
    provenance: dict[str, Any] | None = field(default=None, kw_only=True)


@dataclass
class Percentiles(Record):
    p50_ms: float
    p99_ms: float


# -------------------------------------------------------------------------------------------------- embedding
@dataclass
class EmbeddingRow(Record):
    """One encoder and backend at one thread count: throughput and quality against torch."""

    encoder: str
    threads: int
    backend: str
    batch_size: int
    reports_per_s: float
    load_s: float
    cosine_to_torch_min: float
    cosine_to_torch_mean: float
    n: int
    match_at_5: float = key("match@5")
    mrr_at_10: float = key("mrr@10")
    speedup: float
    match_at_5_delta: float = key("match@5_delta")
    equal_quality: bool


@dataclass
class Embedding(Section):
    texts: int
    test_reports: int
    quality_tolerance: float
    thread_counts: list[int]
    rows: list[EmbeddingRow]


# ----------------------------------------------------------------------------------------------------- search
@dataclass
class QueryLatency(Record):
    """One query set on one index: search alone, encoding plus search, and recall@10 against exact search."""

    search: Percentiles
    encode_plus_search: Percentiles
    recall_at_10: float = key("recall@10")


@dataclass
class SearchRow(Record):
    """One index kind and setting at one size."""

    vectors: int
    kind: str
    setting: dict[str, int]
    build_s: float
    bytes_per_vector: float
    mb_per_million: float
    #: Query set (`findings`, `short`) -> latency.
    latency: dict[str, QueryLatency] = rest()


@dataclass
class Search(Section):
    encoder: str
    dims: int
    real_vectors: int
    queries: dict[str, int]
    query_encode: dict[str, Percentiles]
    #: Mean nearest-neighbour cosine of the real vectors and of the synthetic corpus by size.
    nn_cosine_mean: dict[str, float]
    rows: list[SearchRow]


# ----------------------------------------------------------------------------------------------------- answer
@dataclass
class BackendLatency(Record):
    """The project's answer against the raw backend call on the same questions."""

    model: str
    structured: str
    project_ttft_s: float
    project_total_s: float
    raw_ttft_s: float
    raw_total_s: float
    overhead: float
    runs: int
    server_start_s: float | None = optional()


@dataclass
class Answer(Section):
    queries: int
    max_tokens: int
    k: int
    field: str
    embedded: BackendLatency | None = optional()
    vllm: BackendLatency | None = optional()
    #: Why vLLM was not measured, when it was not.
    vllm_error: str | None = optional()


# -------------------------------------------------------------------------------------------------- coldstart
@dataclass
class AskStart(Record):
    """One `assistant ask` process, its wall time split."""

    model: str
    wall_s: float
    pipeline_s: float
    retrieval_s: float
    llm_s: float
    model_load_and_prompt_s: float
    startup_s: float


@dataclass
class Coldstart(Section):
    heavy_imports_of_cli: list[str]
    help_s: float
    search_s: float
    index: str
    heavy_imports_of_search: list[str] | None = optional()
    #: Sections written before the torch-free query path lack the comparison with the model's path.
    search_model_path_s: float | None = optional()
    heavy_imports_of_search_model_path: list[str] | None = optional()
    ask: AskStart | None = optional()


# ------------------------------------------------------------------------------------------------ concurrency
@dataclass
class ConcurrencyRun(Record):
    workers: int
    cases: int
    answered: int
    wall_s: float
    cases_per_minute: float


@dataclass
class Concurrency(Section):
    backend: str
    server_start_s: float
    condition: str
    max_tokens: int
    runs: list[ConcurrencyRun]
    speedup: float


# ---------------------------------------------------------------------------------------------------- fusions
@dataclass
class FusionNode(Record):
    threads: int
    node: str
    ms_per_call: float
    ns_per_element: float
    max_abs_difference: float


@dataclass
class FusionSession(Record):
    threads: int
    session: str
    reports_per_s: float
    skip_layer_norm_nodes: int
    layer_norm_nodes: int
    cosine_to_shipped_min: float
    speedup_over_fused: float
    #: Share of the kernel time per op type (ONNX Runtime's profiler).
    kernel_time_shares: dict[str, float] | None = optional()


@dataclass
class Fusions(Section):
    encoder: str
    texts: int
    node_shape: list[int]
    thread_counts: list[int]
    nodes: list[FusionNode]
    model: list[FusionSession]


# ------------------------------------------------------------------------------------------------ ask latency
@dataclass
class TimedAnswer(Record):
    ttft_s: float
    total_s: float
    #: Where the prompt's prefix came from (`none`, `disk`, ...).
    prefix: str


@dataclass
class AskLatency(Section):
    """`assistant ask` with a fresh context per question, without and with the saved system-prompt state."""

    queries: int
    model: str
    model_load_s: float
    cold_ttft_s: float
    cold_total_s: float
    saved_prefix_ttft_s: float
    saved_prefix_total_s: float
    prefix_sources: dict[str, list[str]]
    runs: dict[str, list[TimedAnswer]]
    #: Sections measured before 2026-11-27 asked with the paper's prompt and lack it.
    prompt: str | None = optional()


# ------------------------------------------------------------------------------------------------ llama build
@dataclass
class LlamaBuild(Record):
    cmake_args: str
    cpu_features: str
    rounds: int
    cold_ttft_s: float
    cold_total_s: float
    saved_prefix_ttft_s: float
    saved_prefix_total_s: float


@dataclass
class LlamaBuilds(Section):
    version: str
    model: str
    queries: int
    builds: dict[str, LlamaBuild]


# ----------------------------------------------------------------------------------------------- second stage
@dataclass
class StageTiming(Record):
    field: str
    stage: str
    median_ms: float
    p95_ms: float
    queries: int


@dataclass
class SecondStage(Section):
    queries: int
    hits_per_query: int
    corpus: int
    rows: list[StageTiming]
    not_measured: list[str] | None = optional()


# ------------------------------------------------------------------------------------------------ ask vs chat
@dataclass
class SideBySide(Record):
    """Medians of `ask` (with `assistant serve` running, since 2026-11-27; a new process alone before), of `ask
    --no-server` (`ask_alone`, absent from runs before the server existed), of the chat's handler and of the chat in
    a browser (`chat_browser`) under one load, and every run (`exit` for ask's processes)."""

    ask_reports_s: float
    ask_ttft_s: float
    ask_total_s: float
    chat_reports_s: float
    chat_ttft_s: float
    chat_total_s: float
    runs: dict[str, list[dict[str, float]]]
    ask_alone_reports_s: float | None = optional()
    ask_alone_ttft_s: float | None = optional()
    ask_alone_total_s: float | None = optional()
    #: The chat in Chromium, timed by the page (eval/perf/chat_browser.py; absent from runs before 2026-11-27 night).
    chat_browser_ttft_s: float | None = optional()
    chat_browser_total_s: float | None = optional()


@dataclass
class AskVsChat(Section):
    queries: int
    index: str
    prompt: str
    model: str
    load_processes: int
    conditions: dict[str, SideBySide]
    #: The sides measured (the browser's is left out where Playwright or Chromium is missing).
    sides: list[str] | None = optional()


# ----------------------------------------------------------------------------------------------------- ingest
@dataclass
class Stamped(Record):
    """A part of an ingest run, with its own time and load (parts stored before they were stamped lack both)."""

    measured: str | None = field(default=None, kw_only=True)
    load_average: list[float] | None = field(default=None, kw_only=True)


@dataclass
class VectorsPart(Stamped):
    vectors: int
    added: int
    kind: str
    base_build_s: float
    add_s: float
    rebuild_s: float
    add_share_of_rebuild: float
    removed: int
    remove_s: float
    recall_at_10_after_add: float = key("recall@10_after_add")
    recall_at_10_rebuilt: float = key("recall@10_rebuilt")


@dataclass
class Bm25Part(Stamped):
    texts: int
    build_s: float
    us_per_text: float
    #: Runs before the update was measured lack both.
    added: int | None = optional()
    update_s: float | None = optional()


@dataclass
class StreamingPart(Stamped):
    reports: int
    index_type: str
    read_s: float
    total_s: float
    peak_rss_mb: float
    #: The kill-and-resume check, when the run made it.
    encoder_calls: int | None = optional()
    killed_with_chunks: int | None = optional()
    resumed_encoder_calls: int | None = optional()
    resumed_chunks_encoded: int | None = optional()
    resumed_total_s: float | None = optional()
    resumed_peak_rss_mb: float | None = optional()
    resumed_equals_uninterrupted: bool | None = optional()


@dataclass
class DriftLevel(Record):
    level: float
    ratio: float
    check_s: float
    recall_at_10_after_add: float = key("recall@10_after_add")
    recall_at_10_retrained: float = key("recall@10_retrained")
    recall_at_10_after_add_scaled_nprobe: float = key("recall@10_after_add_scaled_nprobe")
    recall_at_10_retrained_scaled_nprobe: float = key("recall@10_retrained_scaled_nprobe")


@dataclass
class DriftPart(Stamped):
    real: int
    vectors: int
    batch: int
    lists: int
    scaled_nprobe: int
    build_s: float
    baseline: float
    levels: list[DriftLevel]


@dataclass
class WholeUpdate(Record):
    update_s: float
    rebuild_s: float
    update_share: float


@dataclass
class Ingest(Section):
    load_average_at_start: list[float]
    encoder: str
    encode_ms_per_text: float
    vectors: VectorsPart
    bm25: Bm25Part
    streaming_build: StreamingPart
    whole_update: WholeUpdate
    drift: DriftPart | None = optional()


# -------------------------------------------------------------------------------------------------- ray build
@dataclass
class RayArm(Record):
    arm: str
    reports: int
    seconds: float
    reports_per_s: float
    load_average_before: list[float]
    load_average_after: list[float]
    #: The shard merge's share of the sharded arm's seconds.
    merge_s: float | None = optional()


@dataclass
class RayOverhead(Record):
    reports: int
    single_s: float
    ray_s: float
    overhead_s: float
    load_average: list[float]


@dataclass
class RayBuild(Section):
    load_average_at_start: list[float]
    corpus_reports: int
    arms: list[RayArm]
    ray_overhead: RayOverhead | None = optional()


# ------------------------------------------------------------------------------------------- index throughput
@dataclass
class ThroughputRound(Record):
    arm: str
    round: int
    seconds: float
    reports_per_s: float
    load_average_before: list[float]
    load_average_after: list[float]


@dataclass
class IndexThroughput(Section):
    load_average_at_start: list[float]
    corpus_reports: int
    #: The commit compared with ("" = this checkout alone).
    baseline: str
    rounds: list[ThroughputRound]
    #: Arm -> its median round's reports per second.
    reports_per_s: dict[str, float]
    linking_ms_per_report: float
    #: Reading the vocabulary, once per build.
    vocabulary_s: float
    #: This checkout's reports/s over the baseline's (absent without a baseline).
    ratio: float | None = optional()


#: Section name (without `_quick` and an ingest size) -> its record.
SECTIONS: dict[str, type[Section]] = {
    "embedding": Embedding,
    "search": Search,
    "answer": Answer,
    "coldstart": Coldstart,
    "concurrency": Concurrency,
    "fusions": Fusions,
    "ask_latency": AskLatency,
    "ask_latency_llm": AskLatency,
    "llama_build": LlamaBuilds,
    "second_stage": SecondStage,
    "ask_vs_chat": AskVsChat,
    "ingest": Ingest,
    "ray_build": RayBuild,
    "index_throughput": IndexThroughput,
}


def section_type(name: str) -> type[Section]:
    """The record of a section by its stored name (`embedding_quick`, `ingest_100000`)."""
    base = re.sub(r"_\d+$", "", name.removesuffix("_quick"))
    if base not in SECTIONS:
        raise ValueError(f"performance section {name!r} has no record: declare one in eval/perf/sections.py")
    return SECTIONS[base]
