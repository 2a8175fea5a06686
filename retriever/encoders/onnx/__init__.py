"""The fast CPU encoder path: export to ONNX, int8 quantization, the runner and what it needs beside the graph."""
