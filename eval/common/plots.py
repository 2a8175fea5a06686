"""PNG plots for the benchmark reports (matplotlib, headless)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402 - the backend must be chosen first


def _wrapped(name: str) -> str:
    """A condition name on several lines, broken after each ':' and before options in brackets, so that long names
    ("tophit:hybrid-weighted:ENCODER[report]") do not run into their neighbours under the bars."""
    return name.replace(":", ":\n").replace("[", "\n[")


def accuracy_bars(values: Mapping[str, tuple[float, float, float]], title: str, path: Path) -> Path:
    """One bar per condition: accuracy with its 95% CI as an error bar. values: name -> (acc, low, high)."""
    names = list(values)
    acc = [values[n][0] * 100 for n in names]
    low = [max(0.0, (values[n][0] - values[n][1]) * 100) for n in names]
    high = [max(0.0, (values[n][2] - values[n][0]) * 100) for n in names]
    fig, ax = plt.subplots(figsize=(max(4.0, 1.6 * len(names) + 1.5), 4.2))
    ax.bar([_wrapped(n) for n in names], acc, yerr=[low, high], capsize=6, color="#4C78A8")
    for x, (value, above) in enumerate(zip(acc, high, strict=True)):
        ax.text(x, value + above + 1, f"{value:.1f}", ha="center", va="bottom", fontsize=9)
    ax.tick_params(axis="x", labelsize=7)
    ax.set_ylabel("accuracy (%) with 95% CI")
    ax.set_ylim(0, 100)
    ax.set_title(title, fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path


def match_curves(
    curves: Mapping[str, Mapping[int, float]], title: str, path: Path, ks: Sequence[int] = (1, 5, 10)
) -> Path:
    """match@k against k, one line per retriever. curves: name -> {k: value in [0, 1]}."""
    fig, ax = plt.subplots(figsize=(5.2, 3.6))
    for name, points in curves.items():
        xs = [k for k in ks if k in points]
        ax.plot(xs, [points[k] * 100 for k in xs], marker="o", label=name)
    ax.set_xlabel("k")
    ax.set_xticks(list(ks))
    ax.set_ylabel("match@k (%)")
    ax.set_ylim(0, 100)
    ax.set_title(title, fontsize=10)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path
