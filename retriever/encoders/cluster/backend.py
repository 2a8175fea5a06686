"""The encoder's forward pass on a Ray cluster: a pool of actors, each holding the encoder, behind EncoderBackend.

    with cluster_encoder("local", "radsearch", backend="onnx-int8") as encoder:   # an Encoder
        encode_and_write(out, encoder)          # the streaming build, unchanged

Why a backend and not a build of its own: the streaming build, the update and their resume already decide what is
encoded, in which chunks, and what a killed run reuses; a backend changes only where `encode` runs, so an index built
this way is the single-process build's by construction (same chunk files and digests, same assembly, same rejects),
and a driver killed mid-build resumes from its chunk files like any build.

Each actor loads the encoder once, by the same reference resolved on its own node (a registry name, a model trained
into that node's RADSEARCH_HOME, or a folder at the same path), and runs it on 1 GPU when the cluster has GPUs, else
on 1 CPU with one ONNX Runtime thread: one actor per GPU or CPU of the cluster. `encode` cuts its texts into pieces
of PIECE_BATCHES whole batches and gives each to whichever actor is free (ray.util.ActorPool), results in order.
Ray restarts an actor whose process dies and retries the piece it held (max_restarts, max_task_retries), so every
text is encoded and placed exactly once.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from models.resolve import resolve_encoder
from retriever.encoders.cluster.connection import ClusterError, cluster_slots, connect, spawn_actors, started_actors
from retriever.encoders.encoder import Encoder, load_encoder, weights_fingerprint

#: Batches per piece of work sent to an actor: small enough that the actors finish a chunk's texts together (the
#: build waits for the last piece), large enough that Ray's round trip (about a millisecond) is noise.
PIECE_BATCHES = 2
#: How long the actors may take to start and load the encoder (a busy node imports torch slowly).
START_TIMEOUT_S = 300.0


@dataclass(frozen=True)
class EncoderRequest:
    """What each actor loads: `load_encoder`'s arguments, the same on every node."""

    ref: str
    backend: str
    device: str
    max_seq_length: int | None
    threads: int | None


class EncoderActor:
    """One encoder on one node, loaded once. What the node cannot load is reported by `identity`, not raised, so the
    driver can say which node lacks what (an exception in an actor's constructor reaches the driver as a traceback)."""

    def __init__(self, request: EncoderRequest) -> None:
        import ray

        self.node = f"{ray.util.get_node_ip_address()} (node {ray.get_runtime_context().get_node_id()[:8]})"
        self.encoder: Encoder | None = None
        self.problem = ""
        try:
            self.encoder = load_encoder(
                request.ref,
                backend=request.backend,
                device=request.device,
                max_seq_length=request.max_seq_length,
                threads=request.threads,
            )
        except Exception as exc:  # anything this node cannot load (missing model, library, device) is reported
            self.problem = f"{type(exc).__name__}: {exc}"

    def identity(self) -> dict[str, Any]:
        """The node and the encoder it loaded (what a manifest records), or the node and why it could not."""
        if self.encoder is None:
            return {"node": self.node, "problem": self.problem}
        encoder = self.encoder
        return {
            "node": self.node,
            "name": encoder.name,
            "fingerprint": encoder.fingerprint,
            "dims": encoder.dims,
            "max_seq_length": encoder.max_seq_length,
            "backend": encoder.backend,
            "backend_version": encoder.backend_version,
        }

    def encode(self, texts: list[str], batch_size: int) -> np.ndarray:
        assert self.encoder is not None  # identity() was checked before any piece was sent
        return self.encoder.encode(texts, batch_size=batch_size)

    def count_tokens(self, text: str) -> int:
        assert self.encoder is not None
        return self.encoder.count_tokens(text)


class RayBackend:
    """EncoderBackend whose forward pass runs on the actors; it reports the backend they run (onnx-int8, torch...),
    which is what an index records and what its queries must be encoded with."""

    def __init__(self, actors: list[Any], identity: dict[str, Any]) -> None:
        self.actors = actors
        self.identity = identity

    @property
    def workers(self) -> int:
        return len(self.actors)

    @property
    def name(self) -> str:
        return self.identity["backend"]

    @property
    def version(self) -> int:
        return self.identity["backend_version"]

    @property
    def model(self) -> None:
        return None

    @property
    def dims(self) -> int:
        return self.identity["dims"]

    @property
    def max_seq_length(self) -> int:
        return self.identity["max_seq_length"]

    def encode(self, texts: list[str], batch_size: int, *, progress: bool = False) -> np.ndarray:
        """Pieces of PIECE_BATCHES batches, cut from the start as one process batches them, to the free actors;
        `progress` is the caller's (the build has a bar over all reports)."""
        from ray.util import ActorPool

        step = batch_size * PIECE_BATCHES
        pieces = [texts[start : start + step] for start in range(0, len(texts), step)]
        pool = ActorPool(self.actors)
        parts = list(pool.map(lambda actor, piece: actor.encode.remote(piece, batch_size), pieces))
        return np.concatenate(parts).astype(np.float32, copy=False)

    def count_tokens(self, text: str) -> int:
        import ray

        return ray.get(self.actors[0].count_tokens.remote(text))


@contextmanager
def cluster_encoder(
    address: str,
    ref: str,
    *,
    backend: str,
    max_seq_length: int | None = None,
    start_timeout: float = START_TIMEOUT_S,
) -> Iterator[Encoder]:
    """An Encoder whose `encode` runs on the cluster at `address` (connection.connect), with the identity of `ref`
    as this machine resolves it. ModelNotAvailable if this machine lacks it; ClusterError if the cluster cannot be
    reached, has no CPU or GPU, or a node cannot load the same weights. The actors end with the block."""
    location, _ = resolve_encoder(ref)
    on_nodes = str(Path(location).resolve()) if Path(ref).expanduser().is_dir() else ref
    ray = connect(address)
    try:
        slots = cluster_slots(ray, address, "encode")
        request = EncoderRequest(
            ref=on_nodes,
            backend=backend,
            device="cuda" if slots.gpus else "cpu",
            max_seq_length=max_seq_length,
            threads=None if slots.gpus else 1,
        )
        actors = spawn_actors(ray, slots, EncoderActor, request)
        ready, identity = _started(ray, actors, weights_fingerprint(str(location)), ref, start_timeout)
        yield Encoder(identity["name"], str(location), RayBackend(ready, identity))
    finally:
        ray.shutdown()  # the actors belong to this driver and end with it


def _started(
    ray: Any, actors: list[Any], fingerprint: str, ref: str, timeout: float
) -> tuple[list[Any], dict[str, Any]]:
    """The actors that started within `timeout` and their common identity; ClusterError if none did, if a node
    could not load `ref`, or loaded other weights or another backend than this machine's copy."""
    ready, identities = started_actors(ray, actors, timeout, "encoder worker")
    for identity in identities:
        if problem := identity.get("problem"):
            raise ClusterError(
                f"{identity['node']} cannot load the encoder {ref!r} ({problem}): every node needs it under the same "
                "reference (a registry name, a model trained into that node's RADSEARCH_HOME/models, or a folder at "
                "the same path)"
            )
        if identity["fingerprint"] != fingerprint:
            raise ClusterError(
                f"{identity['node']} holds other weights for the encoder {ref!r} (fingerprint "
                f"{identity['fingerprint'][:12]}, here {fingerprint[:12]}): copy this machine's model to every node"
            )
    described = [{k: v for k, v in identity.items() if k != "node"} for identity in identities]
    if any(d != described[0] for d in described):
        raise ClusterError(
            f"the cluster's nodes load {ref!r} differently ({described}): install the same version of this program "
            "on every node"
        )
    return ready, identities[0]
