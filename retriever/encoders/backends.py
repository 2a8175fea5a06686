"""Which backends can run an encoder, by name: apart from the encoders themselves so that the settings can check a
name without importing NumPy, ONNX Runtime or torch (`assistant ask` reads its settings before it hands its question
to a warm server, which has them loaded already)."""

from __future__ import annotations

from models.preset import PRESET
from retriever.encoders.onnx.files import FAST_BACKENDS

BACKENDS = ("torch", *FAST_BACKENDS)
#: What `assistant index` builds with: int8 ONNX, measured at equal findings -> impression match@5 and well above the
#: throughput of the default torch encode (eval/results/performance.md). Callers take the backend from the settings
#: (assistant.settings.EncoderSettings: RADSEARCH_ENCODER_BACKEND, else this).
INDEX_BACKEND = PRESET.index_backend
