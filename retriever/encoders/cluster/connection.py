"""Reaching the Ray cluster that `assistant index --ray ADDRESS` and `assistant update --ray ADDRESS` encode on.

Ray is an optional extra (`pip install '.[ray]'`): only this sub-package imports it, and only when asked to.
ADDRESS is Ray's own: `local` starts a cluster on this machine for the one command (stopped with it), `auto` joins the
cluster `ray start --head` made on this machine, `HOST:PORT` the head node's address (`ray start --head` prints it).
Every failure here is a ClusterError, raised before the command has written anything.

What Ray does on the network (issue 51: `--ray local` listened on every interface, and looked up a public DNS server
and the cloud metadata address 169.254.169.254): a `local` cluster is bound to loopback (Ray's servers listen on
127.0.0.1 only when their node's address is 127.0.0.1), and for every address Ray's usage statistics, whose report
probes the cloud metadata endpoints, are switched off. The driver's own address on a real cluster is the one of the
interface its route to the head leaves by (RADSEARCH_RAY_NODE_IP names another), found without a packet sent,
instead of Ray's probe towards a public DNS server. The cluster's own nodes are started by their administrator:
docs/guide/ray-cluster.md says how, behind a firewall.
"""

from __future__ import annotations

import ipaddress
import logging
import os
import socket
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from types import ModuleType
from typing import Any

INSTALL_HINT = "pip install 'radsearch-assistant[ray]' (in a checkout: pip install '.[ray]')"
#: How long an address that does not answer is tried: Ray itself retries a dead head address for minutes.
CONNECT_TIMEOUT_S = 5.0
SPECIAL_ADDRESSES = ("local", "auto")
#: How often Ray restarts an actor whose process dies (and retries the call it was running).
RESTARTS = 3
#: Set before Ray starts, for this process and the processes a `local` cluster starts (they inherit them): no usage
#: statistics (their report probes cloud metadata endpoints), no prompt about them.
QUIET_RAY = {"RAY_USAGE_STATS_ENABLED": "0", "RAY_USAGE_STATS_PROMPT_ENABLED": "0"}
#: Where a `local` cluster listens: loopback only.
LOOPBACK = "127.0.0.1"
#: For a `local` cluster, set before Ray is imported: Ray replaces a node address of 127.0.0.1 by "a remotely
#: reachable" one, found by a probe towards 8.8.8.8, unless it runs as on a laptop, a single-machine cluster.
LOCAL_ONLY = {"RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER": "0"}
#: For the processes a `local` cluster starts (they inherit it): Ray's dashboard process looks up which cloud it runs
#: in (HTTP to 169.254.169.254 and metadata.google.internal) even with usage statistics off; its plain-HTTP requests
#: go to a closed loopback port instead and fail at once. Loopback itself (Ray's own gRPC) is not proxied.
NO_CLOUD_LOOKUP = {
    "http_proxy": "http://127.0.0.1:9",
    "HTTP_PROXY": "http://127.0.0.1:9",
    "no_proxy": "127.0.0.1,localhost,::1",
    "NO_PROXY": "127.0.0.1,localhost,::1",
}
#: Names the address (of one of this machine's interfaces) a driver joining a real cluster is reached at.
NODE_IP_VARIABLE = "RADSEARCH_RAY_NODE_IP"


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
    os.environ.update(QUIET_RAY | (LOCAL_ONLY if address == "local" else {}))  # read when Ray is imported
    ray = import_ray()
    if address not in SPECIAL_ADDRESSES:
        check_reachable(address)
    try:
        with _environment(NO_CLOUD_LOOKUP if address == "local" else {}):
            ray.init(address=address, logging_level=logging.WARNING, log_to_driver=False, **_placement(address))
    except (ConnectionError, RuntimeError, ValueError) as exc:
        hint = "start one with `ray start --head` first, or use --ray local" if address == "auto" else ""
        raise ClusterError(f"could not join the Ray cluster at {address}: {exc} {hint}".rstrip()) from exc
    return ray


@contextmanager
def _environment(variables: dict[str, str]) -> Iterator[None]:
    """`variables` set in this process's environment for the block (for the processes started in it), then restored."""
    before = {name: os.environ.get(name) for name in variables}
    os.environ.update(variables)
    try:
        yield
    finally:
        for name, value in before.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


def _placement(address: str) -> dict[str, Any]:
    """`ray.init`'s options that decide where this driver (and a `local` cluster) listens and is reached."""
    if address == "local":
        return {"include_dashboard": False, "_node_ip_address": LOOPBACK}
    named = os.environ.get(NODE_IP_VARIABLE)
    if named:
        return {"_node_ip_address": named}
    if address == "auto":
        return {}  # the head is on this machine: Ray reads its address from the head's own record
    own = route_address(address.rpartition(":")[0])
    if ipaddress.ip_address(own.partition("%")[0]).is_loopback:  # a head on this machine: Ray finds it as before
        return {}
    return {"_node_ip_address": own}


def route_address(host: str) -> str:
    """This machine's address on the interface its route to `host` leaves by (a UDP socket is connected, which sends
    nothing); ClusterError when there is no route."""
    try:
        family, _, _, _, target = socket.getaddrinfo(host, 9, type=socket.SOCK_DGRAM)[0]
        with socket.socket(family, socket.SOCK_DGRAM) as probe:
            probe.connect(target)
            return str(probe.getsockname()[0])
    except OSError as exc:
        raise ClusterError(f"no route to the Ray head {host} ({exc.strerror or exc}): check the address") from exc


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
