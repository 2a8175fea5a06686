"""The diagnosis benchmark: cases x retrieval conditions x one LLM backend -> graded accuracy with statistics.

    python -m eval.diagnosis.build_cases                              # cases from the shared data (once)
    python -m eval.diagnosis.benchmark --conditions none,mpnet,radsearch-minilm
    python -m eval.diagnosis.benchmark --cases my_cases.jsonl --corpus my_reports.csv --conditions none,bm25,minilm \\
        --backend openai --workers 8 --name my_site          # your own data against a vLLM server
    python -m eval.diagnosis.benchmark --ray HOST:PORT ...   # the model calls on every node of a Ray cluster

Each prediction goes through the product's own pipeline (`assistant.rag.pipeline.RagPipeline`, prompts from `prompts/`)
and is cached by (case, condition, model, prompt version), so an interrupted run resumes and a rerun only grades.
The retrieval corpus never holds a case's own report: reports whose id is a case id are removed before indexing.
Server backends are queried from a thread pool; the embedded model answers one case at a time (it is one
llama.cpp context, and two would only share the same cores). With `--ray ADDRESS` every CPU or GPU of a Ray cluster
answers at once (eval/diagnosis/ray_llm.py); retrieval and the cache stay here, so the rows are the same.
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from assistant.rag.answer_defaults import MAX_K, NORAG_PROMPT
from assistant.rag.assemble import build_pipeline
from assistant.rag.lc_retriever import documents_to_hits
from assistant.rag.modes import AnswerMode, mode_of_prompt
from assistant.rag.pipeline import ANSWER_MAX_TOKENS, RagPipeline
from assistant.settings import Settings
from eval.common.prediction_cache import LEGACY_MAX_TOKENS, PredictionCache, cache_key
from eval.common.shared_data import RESULTS, SHARED_DATA, add_out_option, eval_home
from eval.diagnosis.cases import Case, read_cases
from eval.diagnosis.conditions import (
    DEFAULT_PROMPT,
    EVIDENCE,
    Condition,
    load_or_build_index,
    parse_conditions,
    retrieval_corpus,
)
from retriever.reports.record import FIELDS
from retriever.search.hit import Hit

DEFAULT_CONDITIONS = "none,mpnet,radsearch-minilm"
BLOCK = 10
#: What the answers of the evidence differential alone record as their model.
NO_MODEL = "no LLM (evidence differential)"
#: What `assistant ask` allows an answer: the benchmark measures what users get (a limit of 32 tokens, used until
#: 2026-11-27, cut the differential: "Small Bowel In"; eval.common.prediction_cache keys answers by their limit).
BENCHMARK_MAX_TOKENS = ANSWER_MAX_TOKENS


@dataclass
class RunConfig:
    """Everything that decides which predictions a run makes."""

    cases: list[Case]
    conditions: list[Condition]
    corpus: list[Any] = field(default_factory=list)
    max_tokens: int = BENCHMARK_MAX_TOKENS
    workers: int = 4
    cache_path: Path = field(default_factory=lambda: eval_home() / "predictions.jsonl")
    index_cache: Path = field(default_factory=lambda: eval_home() / "indexes")
    #: (i, n): ask only the cases at positions i, i + n, i + 2n, ... (n processes share one cache; see --shard).
    shard: tuple[int, int] = (0, 1)
    #: Filled by `predict`: condition -> encoder name and weights fingerprint of the index it searched.
    encoders: dict[str, str] = field(default_factory=dict)
    #: The settings the run starts from (the environment's); each condition is these with its own values.
    settings: Settings = field(default_factory=Settings)


def _retriever(condition: Condition, config: RunConfig, corpus: list[Any]):
    """The product's LangChain retriever for one condition (None for the no-retrieval baseline)."""
    if not condition.retrieval:
        return None
    from assistant.rag.lc_retriever import ReportRetriever

    index = load_or_build_index(corpus, condition.encoder, (condition.field,), config.index_cache)
    built = index.manifest.encoder
    config.encoders[condition.name] = f"{built.name} ({built.fingerprint[:12]})"
    stage = None
    if condition.rerank:
        from eval.retrieval.findings_impression import reranker_for

        stage = reranker_for(condition.rerank)
        if not stage.applies_to(condition.field):
            raise ValueError(
                f"{condition.name}: the {condition.rerank} second stage does not re-score "
                f"{condition.field} searches (it reads {', '.join(stage.fields or ())} only)"
            )
    # the settings' expansion, like every product search; the condition's second stage
    searched = index.with_search(query_expander=config.settings.search.expander(), second_stage=stage)
    return ReportRetriever(index=searched, field=condition.field, k=condition.k, method=condition.method)


def _retrieved_rows(hits: list[Hit]) -> list[dict[str, Any]]:
    """What a prediction keeps of its retrieved reports: id and score."""
    return [{"id": h.report.id, "score": round(h.score, 4)} for h in hits]


def _prediction(case: Case, condition: Condition, model_id: str, answer: Any) -> dict[str, Any]:
    """What is kept of one Answer: enough to grade, audit the retrieval and time the run (no case text)."""
    retrieved = _retrieved_rows(answer.retrieved)
    return {
        "case_id": case.id,
        "condition": condition.name,
        "model_id": answer.model_id or model_id,
        "prompt_id": answer.prompt_id,
        "diagnosis": answer.diagnosis,
        "differential": answer.differential,
        "cited": answer.cited_report_ids,
        "retrieved": retrieved,
        "own_report_retrieved": any(r["id"] == case.id for r in retrieved),
        "parse_mode": answer.parse_mode,
        "degraded_kind": answer.degraded_kind,
        "timings": {k: round(v, 3) for k, v in answer.timings.items()},
        "usage": answer.usage,
        "configuration": answer.configuration,  # what produced it (assistant/rag/configuration.py), and its hash
        "configuration_hash": answer.configuration_hash,
        "evidence": answer.evidence,
        "grounding": answer.grounding,
    }


def _top_hit_prediction(case: Case, condition: Condition, retriever: Any) -> dict[str, Any]:
    """The no-LLM baseline: the first positive sentence of the top hit's impression, as a case's reference
    diagnosis is made (eval/diagnosis/build_cases.py), so neither side is graded on a longer text than the other."""
    from eval.diagnosis.build_cases import first_positive_item

    start = time.monotonic()
    hits = documents_to_hits(retriever.invoke(case.findings))
    impression = hits[0].report.impression if hits else ""
    retrieved = _retrieved_rows(hits)
    return {
        "case_id": case.id,
        "condition": condition.name,
        "model_id": "no LLM (top hit)",
        "prompt_id": "",
        "diagnosis": first_positive_item(impression) or impression or None,
        "differential": [],
        "cited": [r["id"] for r in retrieved[:1]],
        "retrieved": retrieved,
        "own_report_retrieved": any(r["id"] == case.id for r in retrieved),
        "parse_mode": None,
        "degraded_kind": None,
        "timings": {"total": round(time.monotonic() - start, 3)},
        "usage": {},
    }


def _retrieved_the_same(row: dict[str, Any], case: Case, pipeline: RagPipeline) -> bool:
    """Whether a cached answer was given the reports the retriever returns now, and the same evidence differential
    (changed negation rules read the same reports otherwise), for a question read alike (one today's reader answers
    "no abnormality described" is asked again: no model is asked for it). The cache key names the encoder, not its
    weights: a model retrained from the same recipe on another CPU retrieves a few cases differently, and those
    answers are asked again rather than graded as if they had seen today's reports."""
    retriever = pipeline.retriever
    if retriever is None:
        return True
    from retriever.search.query import clean_query

    hits = documents_to_hits(retriever.invoke(clean_query(case.findings)))
    if [h.report.id for h in hits] != [r["id"] for r in row.get("retrieved", [])]:
        return False
    from assistant.rag.question import read_question  # the same reports, read under today's rules?
    from assistant.rag.votes import evidence_for

    question = read_question(clean_query(case.findings))
    if question.purely_negative != (row.get("degraded_kind") == "no_abnormality"):
        return False  # today's reader answers this question "no abnormality described", or no longer does
    if not (row.get("evidence") or {}).get("candidates"):
        return True
    evidence = evidence_for(question, hits, pipeline.evidence_weighting)
    return [c.diagnosis for c in evidence.candidates] == [c["diagnosis"] for c in row["evidence"]["candidates"]]


def condition_settings(settings: Settings, condition: Condition) -> Settings:
    """`settings` with a condition's answer mode, field, k, prompt, search method, second stage and weighting (none:
    the product's default weighting): the pipeline builder makes each condition's pipeline from them."""
    if condition.spec.startswith(EVIDENCE):
        mode = AnswerMode.EVIDENCE
    else:
        mode = mode_of_prompt(condition.answer_prompt) if condition.retrieval else AnswerMode.NO_RETRIEVAL
    return settings.with_flags(
        mode=mode,
        k=condition.k,
        field=condition.field,
        method=condition.method if condition.retrieval else None,
        prompt=condition.answer_prompt if mode.asks_model else None,
        reranker=condition.rerank or "off",
        evidence_weighting=condition.weighting,
    )


def condition_pipeline(
    condition: str, cases_path: Path, split: str | None
) -> tuple[list[Case], list[Any], RagPipeline]:
    """The cases of `split` (all when None), the shared corpus without any case's report, and the pipeline of one
    condition that asks no model over it: what the evidence studies (strength, ranking, differential items) answer."""
    from retriever.reports.splits import split_of

    cases = read_cases(cases_path)
    corpus = retrieval_corpus(_corpus([], SHARED_DATA)[0], {c.id for c in cases})
    cases = [c for c in cases if split is None or split_of(c.id) == split]
    chosen = parse_conditions(condition)[0]
    config = RunConfig(cases, [chosen], corpus)
    return cases, corpus, _pipeline(config, chosen, None, _retriever(chosen, config, corpus))


def _pipeline(config: RunConfig, condition: Condition, llm: Any, retriever: Any) -> RagPipeline:
    """A condition's pipeline, made by the product's pipeline builder."""
    settings = condition_settings(config.settings, condition)
    return build_pipeline(settings, llm, retriever, max_tokens=condition.max_tokens or config.max_tokens)


def _cached(
    cache: PredictionCache, case: Case, condition: Condition, model_id: str, prompt_id: str, max_tokens: int
) -> dict[str, Any] | None:
    """The cached answer of (case, condition), also from a cache written before token limits were recorded (rows
    named without `tokens=N`, all asked at LEGACY_MAX_TOKENS), renamed to the condition."""
    row = cache.get(cache_key(case.id, condition.name, model_id, prompt_id, max_tokens))
    if row is None and max_tokens == LEGACY_MAX_TOKENS and condition.legacy_name != condition.name:
        legacy = cache.get(cache_key(case.id, condition.legacy_name, model_id, prompt_id, max_tokens))
        row = {**legacy, "condition": condition.name} if legacy else None
    return row


def _log(message: str) -> None:
    print(message, flush=True)  # progress of a long run shows up at once in a redirected log


def predict(config: RunConfig, llm: Any, *, concurrent: bool, log: Callable[[str], None] = _log) -> list[dict]:
    """Every (case, condition) prediction, from the cache where present. Backend outages and timeouts are
    returned but not cached, so a resumed run asks again.

    Order: blocks of BLOCK cases, each block under every condition in turn. Within a block, consecutive
    calls share the condition's system prompt, which llama.cpp keeps evaluated (prefix reuse), and a run stopped
    early still leaves whole blocks of complete pairs for the paired statistics."""
    cache = PredictionCache(config.cache_path)
    model_id = llm.model_id
    corpus = retrieval_corpus(config.corpus, {c.id for c in config.cases})
    if any(c.retrieval for c in config.conditions) and not corpus:
        raise ValueError("retrieval conditions need a corpus (--corpus, or the shared data folder)")
    rows: dict[tuple[str, str], dict] = {}
    for condition in (c for c in config.conditions if not c.uses_llm):
        retriever = _retriever(condition, config, corpus)
        if condition.spec.startswith(EVIDENCE):  # the product's answer without a model, as `ask` gives it
            evidence = _pipeline(config, condition, llm, retriever)
            rows |= {
                (case.id, condition.name): _prediction(case, condition, NO_MODEL, evidence.invoke(case.findings))
                for case in config.cases
            }
        else:
            rows |= {
                (case.id, condition.name): _top_hit_prediction(case, condition, retriever) for case in config.cases
            }
    pipelines = {
        c.name: _pipeline(config, c, llm, _retriever(c, config, corpus)) for c in config.conditions if c.uses_llm
    }
    todo: list[tuple[Case, Condition]] = []
    stale = 0
    index, count = config.shard
    for start in range(0, len(config.cases), BLOCK):
        for condition in (c for c in config.conditions if c.uses_llm):
            for position, case in enumerate(config.cases[start : start + BLOCK], start=start):
                if position % count != index:
                    continue
                pipeline = pipelines[condition.name]
                row = _cached(cache, case, condition, model_id, pipeline.prompt_id, pipeline.max_tokens)
                if row is not None and _retrieved_the_same(row, case, pipeline):
                    rows[(case.id, condition.name)] = row
                else:
                    stale += row is not None
                    todo.append((case, condition))
    answered_without_llm = sum(not c.uses_llm for c in config.conditions) * len(config.cases)
    log(
        f"{len(rows) - answered_without_llm} predictions cached, {len(todo)} to ask {model_id}"
        + (f" ({stale} cached with other retrieved reports than the index gives now)" if stale else "")
    )

    def ask(item: tuple[Case, Condition]) -> dict[str, Any]:
        case, condition = item
        row = _prediction(case, condition, model_id, pipelines[condition.name].invoke(case.findings))
        row["max_tokens"] = pipelines[condition.name].max_tokens
        if row["degraded_kind"] not in ("backend_unavailable", "timeout"):
            cache.put(row)
        return row

    started = time.monotonic()
    if concurrent and len(todo) > 1:
        with ThreadPoolExecutor(max_workers=config.workers) as pool:
            done = list(pool.map(ask, todo))
    else:
        done = []
        for number, item in enumerate(todo, start=1):
            done.append(ask(item))
            if number % 10 == 0 or number == len(todo):
                log(f"  {number}/{len(todo)} ({(time.monotonic() - started) / number:.1f} s/prediction)")
    rows |= {(r["case_id"], r["condition"]): r for r in done}
    impressions = {r.id: r.impression for r in corpus}
    findings = {case.id: case.findings for case in config.cases}
    for row in rows.values():
        row["self_contradicted"] = self_contradicted(row, findings[row["case_id"]], impressions)
    return [rows[(case.id, c.name)] for case in config.cases for c in config.conditions if (case.id, c.name) in rows]


def self_contradicted(row: dict[str, Any], findings: str, impressions: dict[str, str]) -> bool:
    """Whether an answer's diagnosis is ruled out by the findings it answers or by every report it cites that
    mentions it (assistant/rag/grounding.py): the answers the product must never show."""
    from assistant.rag.grounding import contradiction

    if not row.get("diagnosis"):
        return False
    cited = [impressions[i] for i in row.get("cited") or [] if i in impressions]
    return contradiction(row["diagnosis"], findings, cited) is not None


def default_condition() -> Condition:
    """The configuration `assistant ask` answers with (search method and encoder, field, k, prompt, the evidence
    weighting, and the second stage if it re-scores that field) as a condition. The weighting is named, so the
    condition keeps its name (and its cached answers) when the product's default weighting changes."""
    from assistant.rag.answer_defaults import FIELD, MODE, PROMPT, K
    from assistant.rag.weighting import WEIGHTING
    from eval.retrieval.benchmark import product_default
    from eval.retrieval.findings_impression import reranker_for
    from retriever.search.methods import DEFAULT_SECOND_STAGE

    applies = DEFAULT_SECOND_STAGE is not None and reranker_for(DEFAULT_SECOND_STAGE).applies_to(FIELD)
    rerank = DEFAULT_SECOND_STAGE if applies else None
    if MODE is AnswerMode.EVIDENCE:  # no model: the evidence differential answers
        return Condition(EVIDENCE + product_default(), FIELD, K, rerank=rerank, weighting=WEIGHTING)
    return Condition(product_default(), FIELD, K, PROMPT, rerank=rerank, weighting=WEIGHTING)


def baselines(default: Condition, conditions: Sequence[Condition]) -> dict[str, str]:
    """Retriever spec -> condition name of the run's conditions the default is compared with: no retrieval, and
    every other retriever given the reports the default's way (same field, k and prompt; for a default that asks no
    model, the other retrievers' evidence differentials), so only retrieval differs. The no-retrieval baseline is the
    one asked with the product's no-retrieval prompt."""
    same_use = (default.field, default.k, default.prompt, default.uses_llm, default.weighting)

    def comparable(c: Condition) -> bool:
        if not c.retrieval:
            return c.answer_prompt == NORAG_PROMPT
        evidence = c.spec.startswith(EVIDENCE)
        return (c.uses_llm or evidence) and (c.field, c.k, c.prompt, c.uses_llm, c.weighting) == same_use

    return {
        (c.spec.removeprefix(EVIDENCE) if c.retrieval else "none"): c.name
        for c in conditions
        if c != default and comparable(c)
    }


def _corpus(paths: Sequence[str], data: Path) -> tuple[list[Any], list[str]]:
    """Reports to retrieve from: the given corpora, else the shared data (if present)."""
    from eval.common.shared_data import CORPORA
    from retriever.reports.ingest import ingest

    specs = list(paths) or ([str(data / c) for c in CORPORA] if data.is_dir() else [])
    return (ingest(specs).reports if specs else []), specs


def _within(low: int, high: int | None = None) -> Callable[[str], int]:
    """An argparse type: an integer in [low, high], else a usage error (exit 2) naming the range."""

    def parse(text: str) -> int:
        value = int(text)
        if value < low or (high is not None and value > high):
            raise argparse.ArgumentTypeError(f"{value} is not in {low}..{'' if high is None else high}")
        return value

    return parse


def _shard(text: str) -> tuple[int, int]:
    """`I/N` with 0 <= I < N, for --shard."""
    index, _, count = text.partition("/")
    if not (index.isdigit() and count.isdigit() and int(index) < int(count)):
        raise argparse.ArgumentTypeError(f"expected I/N with 0 <= I < N, e.g. 0/2, not {text!r}")
    return int(index), int(count)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m eval.diagnosis.benchmark",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--cases", type=Path, default=eval_home() / "cases" / "shared_heldout.jsonl")
    parser.add_argument("--corpus", action="append", default=[], help="report corpus to retrieve from (repeatable)")
    parser.add_argument("--data", type=Path, default=SHARED_DATA, help="shared data folder (default corpus)")
    parser.add_argument("--conditions", default=DEFAULT_CONDITIONS, help="comma-separated: none, bm25, encoders")
    parser.add_argument("--field", default="impression", choices=FIELDS, help="field retrieved reports are matched on")
    parser.add_argument("-k", type=_within(1, MAX_K), default=1, help="reports given to the LLM (1 = the paper)")
    parser.add_argument(
        "--prompt",
        default=DEFAULT_PROMPT,
        help="RAG prompt (prompts/NAME.txt): diagnosis_rag "
        "(the report as context, the paper) or diagnosis_candidates (ranked impressions)",
    )
    parser.add_argument("--backend", default=None, help="embedded or openai (default: RADSEARCH_LLM_* settings)")
    parser.add_argument("--model", default=None, help="embedded: qwen1.5b|smollm2|FILE.gguf; openai: model name")
    parser.add_argument("--max-tokens", type=_within(8), default=BENCHMARK_MAX_TOKENS)
    parser.add_argument("--workers", type=_within(1), default=4, help="concurrent requests (server backends only)")
    parser.add_argument("--limit", type=_within(0), default=0, help="only the first N cases (0 = all)")
    parser.add_argument(
        "--split",
        choices=("dev", "test"),
        default=None,
        help="only the cases whose report is in this split (retriever.reports.splits): choose on dev, "
        "confirm on test; default every case",
    )
    parser.add_argument(
        "--shard",
        type=_shard,
        default=(0, 1),
        help="I/N: ask only every N-th case from the I-th (0-based), filling --cache without writing results; run N "
        "such processes on one cache (e.g. two 1-thread llama.cpp processes on 2 cores), then once without --shard "
        "to write the results from the cache",
    )
    parser.add_argument(
        "--ray",
        metavar="ADDRESS",
        default=None,
        help="ask the model on a Ray cluster (local, auto or the head's HOST:PORT): one worker per CPU or GPU, each "
        "loading the backend the RADSEARCH_LLM_* settings name on its node (needs pip install '.[ray]')",
    )
    parser.add_argument("--cache", type=Path, default=eval_home() / "predictions.jsonl")
    add_out_option(parser, RESULTS)
    parser.add_argument("--name", default="diagnosis", help="stem of the result files in --out")
    parser.add_argument("--icd", choices=("on", "off"), default="on", help="ICD-10-CM category criterion")
    args = parser.parse_args(argv)
    return run(args, " ".join(["python -m eval.diagnosis.benchmark", *(argv if argv is not None else sys.argv[1:])]))


def run(args: argparse.Namespace, command: str) -> int:
    """Predict, grade and report; shared by `python -m eval.diagnosis.benchmark` and `assistant bench`."""
    from assistant.llm_factory import make_llm
    from models.paths import DataPaths

    if not args.cases.is_file():
        print(f"no cases file at {args.cases}: build one with `python -m eval.diagnosis.build_cases` or pass --cases")
        return 2
    cases = read_cases(args.cases)
    conditions = parse_conditions(args.conditions, args.field, args.k, args.prompt)
    corpus, corpus_specs = _corpus(args.corpus, args.data)
    # Every case of the file is kept out of the corpus, also with --limit: the corpus (and its cached index)
    # is then the same whichever prefix of the cases is run.
    corpus = retrieval_corpus(corpus, {c.id for c in cases})
    if args.split:
        from retriever.reports.splits import split_of

        cases = [c for c in cases if split_of(c.id) == args.split]
    if args.limit:
        cases = cases[: args.limit]
    product = Settings.from_env(os.environ).with_flags(backend=args.backend, model=args.model)
    settings = product.llm
    config = RunConfig(
        cases, conditions, corpus, args.max_tokens, args.workers, args.cache, shard=args.shard, settings=product
    )
    started = time.monotonic()
    if args.ray:
        from eval.diagnosis.ray_llm import cluster_llm
        from retriever.encoders.cluster.connection import ClusterError

        try:
            with cluster_llm(args.ray, settings) as llm:
                rows = predict(replace(config, workers=llm.workers), llm, concurrent=True)
        except ClusterError as exc:
            print(f"--ray {args.ray}: {exc}", file=sys.stderr)
            return 3
    else:
        llm = make_llm(settings, DataPaths.from_env(os.environ))
        rows = predict(config, llm, concurrent=settings.backend == "openai")
    if args.shard[1] > 1:
        print(f"shard {args.shard[0]}/{args.shard[1]} answered; results are written by a run without --shard")
        return 0
    from eval.diagnosis.grading import Grader
    from eval.diagnosis.report import write_report
    from eval.diagnosis.results import RunMeta

    grader = Grader.default(icd=args.icd == "on")
    meta = RunMeta(
        command=command,
        cases_file=args.cases.name,
        corpus=[Path(s).name for s in corpus_specs],
        corpus_reports=len(corpus),
        backend=settings.backend,
        structured_output=settings.structured,
        llm_threads=1 if args.ray and settings.backend == "embedded" else settings.n_threads,
        ray=args.ray,
        encoders=config.encoders,
        max_tokens=args.max_tokens,
        field=args.field,
        k=args.k,
        prompt=args.prompt,
        wall_seconds=round(time.monotonic() - started, 1),
        python=platform.python_version(),
    )
    default = default_condition()
    paths = write_report(
        cases,
        [c.name for c in conditions],
        rows,
        grader,
        meta,
        args.out,
        args.name,
        default=default.name if default in conditions else None,
        baselines=baselines(default, conditions),
    )
    print("wrote " + ", ".join(str(p) for p in paths))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
