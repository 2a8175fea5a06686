"""Reaching the Ray cluster that `assistant index --ray ADDRESS` and `assistant update --ray ADDRESS` encode on.

Ray is an optional extra (`pip install '.[ray]'`): only this sub-package imports it, and only when asked to.
ADDRESS is Ray's own: `local` starts a cluster on this machine for the one command (stopped with it), `auto` joins the
cluster `ray start --head` made on this machine, `HOST:PORT` the head node's address (`ray start --head` prints it).
Every failure here is a ClusterError, raised before the command has written anything.
"""

from __future__ import annotations

import logging
import socket
from types import ModuleType

INSTALL_HINT = "pip install 'radsearch-assistant[ray]' (in a checkout: pip install '.[ray]')"
#: How long an address that does not answer is tried: Ray itself retries a dead head address for minutes.
CONNECT_TIMEOUT_S = 5.0
SPECIAL_ADDRESSES = ("local", "auto")


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
