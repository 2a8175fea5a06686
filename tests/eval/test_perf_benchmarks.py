"""Smoke runs of every performance benchmark at tiny sizes: each writes its section, and the report renders it.

No timing is asserted (the machine is shared); these fail when a benchmark script breaks. Results go to a
temporary file, never to eval/results/performance.json.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from llm_fixtures import build_index, require_embedded_smollm2

from eval.perf.results import read


@pytest.fixture(scope="module")
def results_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("perf") / "performance.json"


@pytest.fixture()
def private_models_cache(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    """ONNX exports are cached under the models directory: not the user's. Registry models resolve from packages."""
    home = tmp_path_factory.getbasetemp() / "perf-home"
    monkeypatch.setenv("RADSEARCH_HOME", str(home))


def _section(results_file: Path, name: str) -> Any:
    """A smoke run's section, as its record (eval.perf.sections)."""
    return read(results_file).sections[f"{name}_quick"]


def test_embedding_benchmark(shared_data: Path, results_file: Path, private_models_cache: None) -> None:
    from eval.perf import embedding

    args = ["--quick", "--encoders", "minilm", "--threads", "2", "--results", str(results_file)]
    assert embedding.main(args) == 0
    section = _section(results_file, "embedding")
    assert section.thread_counts == [1, 2]
    assert [(r.threads, r.backend) for r in section.rows] == [
        (threads, backend) for threads in (1, 2) for backend in ("torch", "onnx", "onnx-int8")
    ]
    assert all(r.reports_per_s > 0 and 0 <= r.match_at_5 <= 1 for r in section.rows)
    assert all(r.cosine_to_torch_min > 0.999 for r in section.rows if r.backend == "onnx")
    # speedups are against torch at the same thread count
    by = {(r.threads, r.backend): r for r in section.rows}
    for threads in (1, 2):
        expected = by[threads, "onnx-int8"].reports_per_s / by[threads, "torch"].reports_per_s
        assert by[threads, "onnx-int8"].speedup == pytest.approx(expected, abs=0.01)


def test_fusions_benchmark(shared_data: Path, results_file: Path, private_models_cache: None) -> None:
    """Both sides really differ in the node that ran: the shipped session has no SkipLayerNormalization, the other
    has one per layer norm; their vectors agree."""
    from eval.perf import fusions, report

    args = ["--quick", "--threads", "1", "--texts", "4", "--calls", "2", "--results", str(results_file)]
    assert fusions.main(args) == 0
    section = _section(results_file, "fusions")
    assert [r.node for r in section.nodes] == ["SkipLayerNormalization", "Add + LayerNormalization"]
    assert all(r.ms_per_call > 0 and r.max_abs_difference < 1e-4 for r in section.nodes)
    shipped, fused = section.model
    assert shipped.skip_layer_norm_nodes == 0 and shipped.layer_norm_nodes == 12  # MiniLM-L6: 2 per layer
    assert fused.skip_layer_norm_nodes == 12 and fused.layer_norm_nodes == 0
    # The same maths in another float order; the activations' dynamic int8 quantization turns the difference into
    # int8 rounding noise (0.998 seen), far above the int8 model's own distance to torch (0.98).
    assert shipped.cosine_to_shipped_min == 1.0 and fused.cosine_to_shipped_min > 0.99
    assert "SkipLayerNormalization" in fused.kernel_time_shares
    assert "SkipLayerNormalization" not in shipped.kernel_time_shares and shipped.kernel_time_shares
    assert "## Fusion left out" in report.render(read(results_file))


def test_search_benchmark(shared_data: Path, results_file: Path, private_models_cache: None) -> None:
    from eval.perf import search

    args = ["--quick", "--sizes", "1500", "--queries", "5", "--kinds", "flat,ivfpq", "--results", str(results_file)]
    assert search.main(args) == 0
    rows = _section(results_file, "search").rows
    assert {r.kind for r in rows} == {"flat", "ivfpq"}
    flat = next(r for r in rows if r.kind == "flat")
    assert flat.latency["findings"].recall_at_10 == 1.0 and flat.latency["short"].encode_plus_search.p50_ms > 0


def test_second_stage_benchmark(shared_data: Path, results_file: Path) -> None:
    from eval.perf import report, second_stage

    assert second_stage.main(["--quick", "--results", str(results_file)]) == 0
    section = _section(results_file, "second_stage")
    assert (section.rows[0].field, section.rows[0].stage) == ("impression", "support check")
    assert {r.field for r in section.rows} == {"impression", "report"} and section.hits_per_query == 20
    assert {"support check", "support check, single terms"} <= {r.stage for r in section.rows}
    assert all(r.median_ms > 0 and r.queries == section.queries > 0 for r in section.rows)
    assert "## Second stage" in report.render(read(results_file))


def test_answer_benchmark(shared_data: Path, results_file: Path, private_models_cache: None) -> None:
    require_embedded_smollm2()
    from eval.perf import answer

    args = ["--quick", "--backends", "embedded", "--model", "smollm2", "--queries", "1", "--max-tokens", "8"]
    assert answer.main([*args, "--results", str(results_file)]) == 0
    embedded = _section(results_file, "answer").embedded
    assert embedded.raw_total_s > 0 and embedded.project_total_s > 0 and embedded.overhead is not None


def test_coldstart_benchmark(minilm, results_file: Path, tmp_path: Path) -> None:
    from eval.perf import coldstart

    index = build_index(tmp_path / "index", minilm)
    args = ["--quick", "--skip-ask", "--repeats", "1", "--index", str(index), "--results", str(results_file)]
    assert coldstart.main(args) == 0
    section = _section(results_file, "coldstart")
    assert section.help_s > 0 and section.search_s > 0
    assert section.heavy_imports_of_cli == []  # `assistant --help` stays light


def test_index_throughput_benchmark(shared_data: Path, results_file: Path) -> None:
    """Both arms build with `assistant index` (the baseline from a `git archive` of a commit); the report states the
    issue-48 target from their ratio."""
    from eval.perf import index_throughput, report

    assert index_throughput.main(["--quick", "--baseline", "HEAD", "--results", str(results_file)]) == 0
    section = _section(results_file, "index_throughput")
    assert [r.arm for r in section.rounds] == ["baseline HEAD", "this checkout"] and section.corpus_reports > 0
    assert section.ratio is not None and section.ratio > 0 and section.linking_ms_per_report > 0
    assert "indexing throughput >= 80% of HEAD's" in report.render(read(results_file))


def test_report_renders_every_section(results_file: Path) -> None:
    from eval.perf import report

    if not results_file.is_file():
        pytest.skip("no benchmark above ran (no shared data)")
    text = report.write(results_file).read_text()
    assert text.startswith("# Performance") and "## Targets" in text
    for name, title in (("embedding", "## Embedding"), ("search", "## Search"), ("coldstart", "## Cold start")):
        if f"{name}_quick" in read(results_file).sections:
            assert title in text


@pytest.mark.slow
def test_concurrency_benchmark(shared_data: Path, results_file: Path) -> None:
    from eval.perf import concurrency
    from eval.perf.vllm_server import missing

    if reason := missing():
        pytest.skip(reason)
    args = ["--quick", "--cases", "2", "--workers", "2", "--max-tokens", "8", "--results", str(results_file)]
    assert concurrency.main(args) == 0
    runs = _section(results_file, "concurrency").runs
    assert [r.workers for r in runs] == [1, 2] and all(r.answered == 2 for r in runs)


class _CallRecorder:
    """Stands in for an encoder to record how the embedding benchmark calls it (sizes, batch size)."""

    def __init__(self) -> None:
        self.calls: list[tuple[int, int]] = []

    def encode(self, texts: list[str], batch_size: int = 32):
        import numpy as np

        self.calls.append((len(texts), batch_size))
        return np.ones((len(texts), 2), dtype=np.float32)


def test_embedding_throughput_encodes_the_whole_list_per_call_in_rotating_rounds() -> None:
    """Slicing the list would add padding to torch's bigger batches and flatter the fast path: every timed call
    must get all texts, with the backend's own batch size."""
    from eval.perf.embedding import ROUNDS, throughput

    texts = [f"report {i} " * (i + 1) for i in range(10)]
    torch_like, fast_like = _CallRecorder(), _CallRecorder()
    timed = throughput({"torch": (torch_like, 32), "onnx": (fast_like, 8)}, texts)
    assert torch_like.calls == [(4, 32)] + [(10, 32)] * ROUNDS  # warm-up, then the whole list each round
    assert fast_like.calls == [(4, 8)] + [(10, 8)] * ROUNDS
    assert timed["torch"][0].shape == (10, 2) and timed["onnx"][1] > 0


@pytest.mark.slow
def test_llama_build_benchmark_measures_each_build_in_its_own_process(
    shared_data: Path, results_file: Path, private_models_cache: None, tmp_path: Path
) -> None:
    """Two "builds" that are the venv's own llama.cpp installed under two CMake strings (nothing is compiled):
    each is measured through eval.perf.ask_latency in a process importing it, and the report shows both."""
    require_embedded_smollm2()
    import importlib.util
    import shutil

    from eval.perf import llama_build, report

    installed = Path(importlib.util.find_spec("llama_cpp").origin).parent
    for args in ("-DA=1", "-DB=1"):
        shutil.copytree(installed, llama_build.folder_for(args) / "llama_cpp")
    argv = ["--quick", "--build", "one=-DA=1", "--build", "two=-DB=1", "--model", "smollm2", "--threads", "1",
            "--results", str(results_file)]  # fmt: skip
    assert llama_build.main(argv) == 0
    builds = _section(results_file, "llama_build").builds
    assert set(builds) == {"one", "two"} and builds["two"].cmake_args == "-DB=1"
    for build in builds.values():
        assert build.rounds == 1 and build.saved_prefix_ttft_s > 0 and "AVX" in build.cpu_features
    text = report.render(read(results_file))
    assert "## llama.cpp build" in text and "| two | `-DB=1` |" in text
