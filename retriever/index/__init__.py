"""The report index: FAISS vectors, BM25, the SQLite store, the manifest, atomic swaps, updates, streaming
and sharded builds."""
