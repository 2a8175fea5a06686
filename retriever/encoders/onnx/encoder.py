"""The fast CPU encoder backends, `onnx` and `onnx-int8`: a model's ONNX export, cached by its weights, run by ONNX
Runtime.

Why: on CPU, torch's eager forward pass is the indexing bottleneck; the fused export
(retriever/encoders/onnx/export.py), int8 weights (retriever/encoders/onnx/quantize.py) and length-sorted micro-batches
(retriever/encoders/onnx/runner.py) are measured against sentence-transformers' default torch encode on a quiet 2-core
AVX2 machine without VNNI: eval/results/performance.md. `onnx` is float32, numerically the torch model; `onnx-int8` has
int8 weights (retrieval quality measured by eval/perf/embedding.py).

The export is made locally from the offline weights on first use and cached under the models directory by weight
fingerprint and EXPORT_VERSION, with a record of its files' hashes (retriever/encoders/onnx/record.py): an export
whose files differ from the record is never run, but made again from the weights. Beside the graph the cache keeps
the RunnerSpec (retriever/encoders/onnx/spec.py), so a cached export opens without the sentence-transformers model
(`OnnxEncoder.cached`): `assistant search` then never imports sentence-transformers, transformers or torch (6.5 of
its 7.4 s cold).
"""

from __future__ import annotations

import logging
import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from models.paths import models_dir
from retriever.encoders.onnx.export import export, quantize
from retriever.encoders.onnx.files import FAST_BACKENDS, MODEL_FILES
from retriever.encoders.onnx.record import record_problem, write_record
from retriever.encoders.onnx.runner import OnnxRunner
from retriever.encoders.onnx.spec import SPEC_FILE, TOKENIZER_FILE, RunnerSpec

log = logging.getLogger(__name__)

#: Part of the cache folder's name: bumped when the export changes, so exports cached by an older version are
#: rebuilt, and recorded in index manifests, which refuse queries from another version (2: eager-attention trace
#: fused by ONNX Runtime's transformer optimizer, int8 attention; 3: the outlier-channel int8 recipe, which mpnet now
#: takes; 4: residual add + layer norm left unfused, onnx_runner.UNFUSED).
EXPORT_VERSION = 4
#: Backends whose graph quantizes activations per batch, so each text is run alone (retriever/encoders/onnx/runner.py).
PER_TEXT = ("onnx-int8",)


def cache_dir(fingerprint: str) -> Path:
    """Where the exports of one set of weights live (by fingerprint: a retrained model gets a new folder)."""
    return models_dir() / ".onnx" / f"{fingerprint[:24]}-v{EXPORT_VERSION}"


@dataclass
class OnnxEncoder:
    """A fast encoder backend (retriever.encoders.encoder.EncoderBackend). Opened from its cached export alone
    (`cached`: no `model`), or over a loaded sentence-transformers model, whose export is then made (or completed) on
    first use."""

    name: str  # onnx or onnx-int8
    fingerprint: str  # of the weights: names the export's cache folder
    model: Any | None = field(default=None, repr=False)
    threads: int | None = None  # ONNX Runtime intra-op threads (None: onnx_runner.default_threads)
    runner: OnnxRunner | None = field(default=None, repr=False)
    version = EXPORT_VERSION

    def __post_init__(self) -> None:
        if self.name not in FAST_BACKENDS:
            raise ValueError(f"unknown fast backend {self.name!r}; choose one of {', '.join(FAST_BACKENDS)}")

    @classmethod
    def cached(
        cls, fingerprint: str, name: str, *, max_seq_length: int | None = None, threads: int | None = None
    ) -> OnnxEncoder | None:
        """The backend over the cached export of the weights with `fingerprint`, without their sentence-transformers
        model, or None when that export is not complete (not exported or quantized yet, or exported before specs
        were saved)."""
        encoder = cls(name, fingerprint, threads=threads)
        folder = cache_dir(fingerprint)
        if record_problem(folder, fingerprint, _run_files(name)):  # the model's path checks it and exports again
            return None
        spec = RunnerSpec.read(folder, max_seq_length)
        if spec is None or not (folder / MODEL_FILES[name]).is_file():
            return None
        encoder.runner = OnnxRunner.open(folder / MODEL_FILES[name], spec, threads=threads, per_text=name in PER_TEXT)
        return encoder

    @property
    def dims(self) -> int:
        return self._runner().spec.dims

    @property
    def max_seq_length(self) -> int:
        return self._runner().spec.max_seq_length

    def encode(self, texts: list[str], batch_size: int, *, progress: bool) -> np.ndarray:
        return self._runner().encode(texts, batch_size, progress=progress)

    def count_tokens(self, text: str) -> int:
        return self._runner().spec.count_tokens(text)

    def _runner(self) -> OnnxRunner:
        """The runner, opened on first use; the export is made from `model` first if the cache lacks it."""
        if self.runner is None:
            self.runner = self._export_and_open()
        return self.runner

    def _export_and_open(self) -> OnnxRunner:
        """Open the cached export of `model` for this backend, exporting (and quantizing) it first where missing."""
        folder = cache_dir(self.fingerprint)
        exported = (folder / MODEL_FILES["onnx"]).is_file()
        checked = {*_run_files(self.name), MODEL_FILES["onnx"]}
        if exported and (problem := record_problem(folder, self.fingerprint, checked)):
            log.warning("%s: exporting it again from the encoder's weights", problem)
            shutil.rmtree(folder)
            exported = False
        if not exported:
            export(self.model, folder)
            write_record(folder, self.fingerprint)
            for stale in folder.parent.glob(f"{self.fingerprint[:24]}*"):  # exports of older EXPORT_VERSIONs
                if stale != folder:
                    shutil.rmtree(stale, ignore_errors=True)
        spec = RunnerSpec.read(folder, int(self.model.max_seq_length))
        if spec is None:  # unreadable although recorded: written anew from the model
            spec = RunnerSpec.from_model(self.model)
            spec.save(folder)
            write_record(folder, self.fingerprint)
        if self.name == "onnx-int8" and not (folder / MODEL_FILES[self.name]).is_file():
            quantize(spec, folder)
            write_record(folder, self.fingerprint)
        return OnnxRunner.open(
            folder / MODEL_FILES[self.name], spec, threads=self.threads, per_text=self.name in PER_TEXT
        )


def _run_files(name: str) -> tuple[str, ...]:
    """The export's files that running backend `name` reads: its graph and the runner spec."""
    return (MODEL_FILES[name], SPEC_FILE, TOKENIZER_FILE)
