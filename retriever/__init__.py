"""Reports, importers, encoders, the FAISS + SQLite index, BM25 and training.

Importing this package first puts the libraries it wraps (ONNX Runtime, sentence-transformers, transformers,
huggingface_hub) in offline, no-telemetry mode (models/offline.py): their switches are read when they are imported,
and every module here imports them only after this package is initialized.
"""

import os

from models.offline import lock_down

lock_down()
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")  # the Rust tokenizer's fork warning; batches are ours
