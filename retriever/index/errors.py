"""The error an unusable index folder raises, apart from the index itself so that a command can name it without
importing FAISS, BM25 and SciPy (`assistant ask` hands its question to a warm server before it would load them)."""

from __future__ import annotations


class IndexLoadError(Exception):
    """The index folder cannot be used; the message says why and what to do."""
