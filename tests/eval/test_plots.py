"""Benchmark plots stay readable with the long condition names the diagnosis benchmark uses."""

from __future__ import annotations

from pathlib import Path

from eval.common.plots import _wrapped, accuracy_bars


def test_long_condition_names_are_broken_into_short_lines() -> None:
    lines = _wrapped("tophit:hybrid-weighted:radsearch-minilm-negmargin-2ep[report]").splitlines()
    assert lines == ["tophit:", "hybrid-weighted:", "radsearch-minilm-negmargin-2ep", "[report]"]
    assert _wrapped("none") == "none"


def test_accuracy_bars_writes_a_png(tmp_path: Path) -> None:
    path = accuracy_bars({"none": (0.3, 0.25, 0.36), "bm25[report]": (0.36, 0.31, 0.42)}, "t", tmp_path / "a.png")
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
