"""The exported model file of each fast backend: what the ONNX path writes and reads, named apart from its heavy
modules so that the settings can check a backend's name without importing NumPy or ONNX Runtime."""

from __future__ import annotations

#: The exported model file of each fast backend (retriever/encoders/onnx/export.py writes them).
MODEL_FILES = {"onnx": "model.onnx", "onnx-int8": "model.int8.onnx"}
FAST_BACKENDS = tuple(MODEL_FILES)
