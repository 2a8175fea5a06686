"""The sentence-transformers ONNX comparison's verdict and report (the measurement itself needs a second venv)."""

from __future__ import annotations

from eval.perf import st_onnx
from eval.perf.st_onnx import LibraryVerdict, OnnxPath


def _row(path: str, rate: float, cosine: float) -> OnnxPath:
    return OnnxPath(path, rate, ready_s=1.0, batch=32, cosine_to_torch_mean=cosine, cosine_to_torch_min=cosine)


def test_the_library_is_within_only_at_equal_quality_and_90_percent_speed() -> None:
    rows = [
        _row("project onnx", 100, 0.9999),
        _row("project onnx-int8", 200, 0.995),
        _row("library onnx", 95, 0.9999),
        _row("library onnx-int8", 300, 0.95),
    ]
    verdict = st_onnx.verdict(rows, 0.99)
    assert verdict["onnx"] == LibraryVerdict(0.95, equal_quality=True, library_within=True)
    assert verdict["onnx-int8"] == LibraryVerdict(1.5, equal_quality=False, library_within=False)
    rows[2].reports_per_s = 85
    assert not st_onnx.verdict(rows, 0.99)["onnx"].library_within


def test_timed_rounds_encode_every_text_with_every_path() -> None:
    calls: list[tuple[str, int]] = []

    def path(name: str):
        def encode(texts: list[str]) -> list[list[float]]:
            calls.append((name, len(texts)))
            return [[1.0, 0.0]] * len(texts)

        return encode

    timed = st_onnx.timed_rounds({"a": path("a"), "b": path("b")}, ["x"] * 10, rounds=2)
    assert set(timed) == {"a", "b"} and all(v.shape == (10, 2) and rate > 0 for v, rate in timed.values())
    assert calls == [("a", 4), ("b", 4), ("a", 10), ("b", 10), ("b", 10), ("a", 10)]  # warm-up, then rotating
