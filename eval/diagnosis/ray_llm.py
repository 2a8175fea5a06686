"""The diagnosis benchmark's model calls on a Ray cluster (`python -m eval.diagnosis.benchmark --ray ADDRESS`).

Why only the model calls: retrieval, prompts, parsing, grounding and the prediction cache stay in the driver, as in a
run on one machine, so a cached row means the same whichever machines answered it, a run resumes from the same cache,
and the nodes need no corpus or index. `RayLLM` is an `LLM` (assistant/llm/base.py) whose `complete` runs on
whichever actor is free; the benchmark's prediction loop calls it from one thread per actor.

Each actor builds the backend the driver's settings name, on its node: the embedded GGUF (loaded once per actor, one
llama.cpp thread per CPU the actor holds), or an OpenAI-compatible server, where `127.0.0.1` is each node's own
server, so a cluster of LLM servers is used by starting one server per node. Errors of the model (timeouts, an
unreachable server) come back as the same typed errors, so answers degrade as on one machine. Ray restarts an actor
whose process dies and retries its call (connection.RESTARTS times). ADDRESS is `local`, `auto` or the head's HOST:PORT
(retriever/encoders/cluster/connection.py).
"""

from __future__ import annotations

import os
import queue
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import replace
from typing import Any

from assistant.llm.base import JsonSchema, LLMError, LLMResult, Message
from assistant.settings import LLMSettings
from retriever.encoders.cluster.connection import ClusterError, cluster_slots, connect, spawn_actors, started_actors

#: How long the actors may take to start and load the model.
START_TIMEOUT_S = 600.0


class LLMActor:
    """One backend on one node, loaded when the actor starts. What the node cannot load is reported by `identity`,
    not raised (an exception in an actor's constructor reaches the driver as a traceback)."""

    def __init__(self, settings: LLMSettings) -> None:
        import ray

        from assistant.llm_factory import make_llm
        from models.paths import DataPaths

        self.node = f"{ray.util.get_node_ip_address()} (node {ray.get_runtime_context().get_node_id()[:8]})"
        self.llm = make_llm(settings, DataPaths.from_env(os.environ))
        self.problem = ""
        try:
            self.llm.count_tokens("ready")  # the embedded model loads here, not during the first answer
        except Exception as exc:  # anything this node cannot load (missing model, library) is reported
            self.problem = f"{type(exc).__name__}: {exc}"

    def identity(self) -> dict[str, Any]:
        """The node and the model it answers with, or the node and why it cannot."""
        if self.problem:
            return {"node": self.node, "problem": self.problem}
        return {
            "node": self.node,
            "model_id": self.llm.model_id,
            "context_window": self.llm.context_window,
            "identity": self.llm.identity(),
        }

    def complete(self, messages: list[Message], options: dict[str, Any]) -> LLMResult | LLMError:
        """The completion, or the backend's typed error as a value (so the driver raises the same type)."""
        try:
            return self.llm.complete(messages, **options)
        except LLMError as exc:
            return exc

    def count_tokens(self, text: str) -> int:
        return self.llm.count_tokens(text)


class RayLLM:
    """An LLM whose calls run on the cluster's actors, one call per free actor."""

    def __init__(self, actors: list[Any], identity: dict[str, Any]) -> None:
        self.actors = actors
        self._identity = identity
        self._free: queue.Queue[Any] = queue.Queue()
        for actor in actors:
            self._free.put(actor)

    @property
    def workers(self) -> int:
        """Calls that run at once: one per actor."""
        return len(self.actors)

    @property
    def model_id(self) -> str:
        return self._identity["model_id"]

    def identity(self) -> dict[str, str]:
        return self._identity["identity"]

    @property
    def context_window(self) -> int:
        return self._identity["context_window"]

    def _call(self, method: str, *args: Any) -> Any:
        import ray

        actor = self._free.get()
        try:
            return ray.get(getattr(actor, method).remote(*args))
        finally:
            self._free.put(actor)

    def count_tokens(self, text: str) -> int:
        return self._call("count_tokens", text)

    def complete(
        self,
        messages: Sequence[Message],
        *,
        json_schema: JsonSchema | None = None,
        max_tokens: int = 512,
        temperature: float = 0.0,
        seed: int = 0,
        started_at: float | None = None,  # another node has another clock: the actor's backend times the call
    ) -> LLMResult:
        options = {"json_schema": json_schema, "max_tokens": max_tokens, "temperature": temperature, "seed": seed}
        result = self._call("complete", list(messages), options)
        if isinstance(result, LLMError):
            raise result
        return result

    def stream(
        self,
        messages: Sequence[Message],
        *,
        json_schema: JsonSchema | None = None,
        max_tokens: int = 512,
        temperature: float = 0.0,
        seed: int = 0,
        cancel: threading.Event | None = None,
        started_at: float | None = None,  # as in `complete`
    ) -> Iterator[str]:
        """The whole answer as one piece: the benchmark reads answers whole."""
        if cancel is None or not cancel.is_set():
            yield self.complete(
                messages, json_schema=json_schema, max_tokens=max_tokens, temperature=temperature, seed=seed
            ).text


@contextmanager
def cluster_llm(address: str, settings: LLMSettings, *, start_timeout: float = START_TIMEOUT_S) -> Iterator[RayLLM]:
    """A RayLLM on the cluster at `address`: one actor per GPU, else one per CPU with one llama.cpp thread each
    (an actor per `n_threads` CPUs for a server backend would only wait on the server). ClusterError if the cluster
    cannot be reached, has nothing to run on, or a node cannot load the model or loads another one."""
    ray = connect(address)
    try:
        slots = cluster_slots(ray, address, "answer")
        on_node = replace(settings, n_threads=1) if settings.backend == "embedded" and not slots.gpus else settings
        actors = spawn_actors(ray, slots, LLMActor, on_node)
        ready, identity = _started(ray, actors, settings, start_timeout)
        yield RayLLM(ready, identity)
    finally:
        ray.shutdown()  # the actors belong to this driver and end with it


def _started(ray: Any, actors: list[Any], settings: LLMSettings, timeout: float) -> tuple[list[Any], dict[str, Any]]:
    """The actors that started within `timeout` and their common identity; ClusterError if none did, or if a node
    could not load the model or answers with another one."""
    ready, identities = started_actors(ray, actors, timeout, "model worker")
    for identity in identities:
        if problem := identity.get("problem"):
            raise ClusterError(f"{identity['node']} cannot answer with {settings.describe()} ({problem})")
    models = {(i["model_id"], tuple(sorted(i["identity"].items()))) for i in identities}
    if len(models) > 1:
        raise ClusterError(f"the cluster's nodes answer with different models ({sorted(models)}): install the same one")
    return ready, identities[0]
