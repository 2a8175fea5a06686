"""Which encoder built an index, and the check that refuses any other: vectors of another encoder would be silently
meaningless."""

from __future__ import annotations

import threading

from models.resolve import ModelNotAvailable
from retriever.encoders.encoder import Encoder, load_encoder
from retriever.index.errors import IndexLoadError
from retriever.index.manifest import EncoderInfo


def encoder_info(encoder: Encoder) -> EncoderInfo:
    """What the manifest records about the encoder that built an index (checked by `check_encoder`)."""
    return EncoderInfo(
        encoder.name,
        encoder.location,
        encoder.fingerprint,
        encoder.dims,
        encoder.max_seq_length,
        encoder.backend,
        encoder.backend_version,
    )


def check_encoder(built: EncoderInfo, encoder: Encoder) -> Encoder:
    """`encoder` if it is the one that built the index (same weights, dims, backend and export); else
    IndexLoadError saying which command fixes it. Why: vectors of another encoder would be silently meaningless."""
    if encoder.fingerprint != built.fingerprint or encoder.dims != built.dims:
        raise IndexLoadError(
            f"this index was built with encoder {built.name!r} ({built.dims}-d, weights {built.fingerprint[:12]}), "
            f"not {encoder.name!r} ({encoder.dims}-d, weights {encoder.fingerprint[:12]}): search or update it "
            f"without --encoder, or build an index for that encoder with `assistant index CORPUS... --encoder "
            f"{encoder.name}`"
        )
    if encoder.backend != built.backend:
        raise IndexLoadError(
            f"this index was built with the {built.backend!r} encoder backend; queries encoded with "
            f"{encoder.backend!r} would not match its vectors exactly: load the encoder with "
            f"backend={built.backend!r}, or rebuild the index with RADSEARCH_ENCODER_BACKEND={encoder.backend}"
        )
    if encoder.backend_version != built.backend_version:
        raise IndexLoadError(
            f"this index was built with version {built.backend_version} of the {built.backend!r} encoder export; "
            f"this RadSearch makes version {encoder.backend_version}, whose vectors differ slightly: rebuild the "
            f"index with `assistant index CORPUS... --encoder {built.name} --out FOLDER`"
        )
    return encoder


def built_encoder(built: EncoderInfo, device: str | None = None) -> Encoder:
    """Load the encoder a manifest names (by name, else from its recorded location) and check it is that one."""
    settings = {"max_seq_length": built.max_seq_length, "backend": built.backend, "device": device}
    try:
        loaded = load_encoder(built.name, **settings)
    except ModelNotAvailable:
        loaded = load_encoder(built.location, **settings)
    return check_encoder(built, loaded)


class LazyEncoder:
    """An index's encoder, loaded on first use (BM25-only use never loads it) and shared by every view of the index
    (`ReportIndex.with_search`), so comparing configurations loads the model once.

    `lock` is held while the encoder is loaded or used: its tokenizer keeps per-call state (truncation on for
    encoding, off for counting), so two threads at once can get each other's. Re-entrant: `prepare` loads and
    counts."""

    def __init__(self, built: EncoderInfo, device: str | None = None, encoder: Encoder | None = None) -> None:
        self._built = built
        self._device = device
        self._encoder = encoder
        self.lock = threading.RLock()

    def get(self) -> Encoder:
        with self.lock:
            if self._encoder is None:
                self._encoder = built_encoder(self._built, self._device)
            return self._encoder
