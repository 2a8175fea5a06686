"""Sentence encoders: loading by name, the torch backend and the ONNX Runtime fast path (onnx/)."""
