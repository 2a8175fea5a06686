"""Reaching the Ray cluster that `assistant index --ray ADDRESS` and `assistant update --ray ADDRESS` encode on.

Ray is an optional extra (`pip install '.[ray]'`): only this sub-package imports it, and only when asked to.
ADDRESS is Ray's own: `local` starts a cluster on this machine for the one command (stopped with it), `auto` joins the
cluster `ray start --head` made on this machine, `HOST:PORT` the head node's address (`ray start --head` prints it).
Every failure here is a ClusterError, raised before the command has written anything.
"""

from __future__ import annotations

import logging
import socket
from dataclasses import dataclass
from types import ModuleType
from typing import Any

INSTALL_HINT = "pip install 'radsearch-assistant[ray]' (in a checkout: pip install '.[ray]')"
#: How long an address that does not answer is tried: Ray itself retries a dead head address for minutes.
CONNECT_TIMEOUT_S = 5.0
SPECIAL_ADDRESSES = ("local", "auto")
#: How often Ray restarts an actor whose process dies (and retries the call it was running).
RESTARTS = 3


class ClusterError(RuntimeError):
    """The cluster cannot encode for this command (Ray missing, unreachable, no workers, no encoder); the message
    says what to do."""


def import_ray() -> ModuleType:
    """The `ray` module, or ClusterError saying how to install it."""
    try:
        import ray
    except ImportError as exc:
        raise ClusterError(f"--ray needs Ray, which is not installed here: {INSTALL_HINT}") from exc
    return ray


def connect(address: str) -> ModuleType:
    """Join (or, for `local`, start) the cluster; the `ray` module, connected. An address that does not answer is
    refused within CONNECT_TIMEOUT_S, with the command that starts a head there."""
    ray = import_ray()
    if address not in SPECIAL_ADDRESSES:
        check_reachable(address)
    local = {"include_dashboard": False} if address == "local" else {}
    try:
        ray.init(address=address, logging_level=logging.WARNING, log_to_driver=False, **local)
    except (ConnectionError, RuntimeError, ValueError) as exc:
        hint = "start one with `ray start --head` first, or use --ray local" if address == "auto" else ""
        raise ClusterError(f"could not join the Ray cluster at {address}: {exc} {hint}".rstrip()) from exc
    return ray


def check_reachable(address: str) -> None:
    """ClusterError unless `address` is HOST:PORT and something listens there."""
    host, _, port = address.rpartition(":")
    if not host or not port.isdigit():
        raise ClusterError(f"--ray {address!r}: give local, auto, or the HOST:PORT of the cluster's head node")
    try:
        socket.create_connection((host, int(port)), timeout=CONNECT_TIMEOUT_S).close()
    except OSError as exc:
        raise ClusterError(
            f"the Ray cluster at {address} cannot be reached ({exc.strerror or exc}): start its head with "
            f"`ray start --head --port {port}` on {host}, or check the address"
        ) from exc


@dataclass(frozen=True)
class Slots:
    """Where a command's actors run: one per GPU when the cluster has GPUs, else one per CPU."""

    gpus: int
    cpus: int

    @property
    def count(self) -> int:
        return self.gpus or self.cpus


def cluster_slots(ray: ModuleType, address: str, purpose: str) -> Slots:
    """The connected cluster's GPUs and CPUs; ClusterError when it has neither for `purpose` ("encode", "answer")."""
    resources = ray.cluster_resources()
    slots = Slots(int(resources.get("GPU", 0)), int(resources.get("CPU", 0)))
    if not slots.count:
        raise ClusterError(f"the Ray cluster at {address} has no CPU or GPU to {purpose} on")
    return slots


def spawn_actors(ray: ModuleType, slots: Slots, actor_class: type, argument: Any) -> list[Any]:
    """One `actor_class(argument)` per slot (cluster_slots), spread over the nodes and restarted (RESTARTS) when
    their process dies."""
    placement = {"num_gpus": 1} if slots.gpus else {"num_cpus": 1}
    actor = ray.remote(actor_class).options(
        max_restarts=RESTARTS, max_task_retries=RESTARTS, scheduling_strategy="SPREAD", **placement
    )
    return [actor.remote(argument) for _ in range(slots.count)]


def started_actors(ray: ModuleType, actors: list[Any], timeout: float, what: str) -> tuple[list[Any], list[dict]]:
    """The actors whose `identity()` answered within `timeout` (the others are killed), and those identities, for
    the caller to check they all load the same thing. ClusterError, naming `what` ("encoder worker", "model worker"),
    when none started or one failed to start."""
    calls = {actor.identity.remote(): actor for actor in actors}
    done, pending = ray.wait(list(calls), num_returns=len(calls), timeout=timeout)
    for late in pending:
        ray.kill(calls[late])
    if not done:
        raise ClusterError(
            f"no {what} started on the cluster within {timeout:.0f} s: its CPUs/GPUs are taken by other jobs, "
            "or its nodes cannot start Python workers (see `ray status`)"
        )
    try:
        identities = ray.get(done)
    except ray.exceptions.RayError as exc:
        first = str(exc).strip().splitlines()[0]
        raise ClusterError(
            f"one {what} could not start on the cluster ({first}); every node needs this program installed "
            "with its Ray extra in the same Python version"
        ) from exc
    return [calls[call] for call in done], identities
