"""What a performance figure was measured on: CPU, cores, RAM, threads, load and library versions.

The development machine is shared (another job may hold a core), so every section records the load average it
ran under next to its numbers.
"""

from __future__ import annotations

import os
import platform
from dataclasses import dataclass
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

from eval.common.records import Record

PACKAGES = ("torch", "sentence-transformers", "onnxruntime", "faiss-cpu", "llama_cpp_python", "numpy")


def _cpu_model() -> str:
    cpuinfo = Path("/proc/cpuinfo")
    if cpuinfo.is_file():
        for line in cpuinfo.read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    return platform.processor() or "unknown"


#: Instruction sets that decide how fast int8 and float kernels run (no VNNI: int8 gains less).
SIMD = ("avx2", "fma", "avx512f", "avx512_vnni", "avx_vnni", "amx_tile")


def _simd() -> list[str]:
    cpuinfo = Path("/proc/cpuinfo")
    if not cpuinfo.is_file():
        return []
    flags = next(
        (line.split(":", 1)[1].split() for line in cpuinfo.read_text().splitlines() if line.startswith("flags")), []
    )
    return [flag for flag in SIMD if flag in flags]


def _ram_gib() -> float | None:
    meminfo = Path("/proc/meminfo")
    if not meminfo.is_file():
        return None
    kib = next(int(line.split()[1]) for line in meminfo.read_text().splitlines() if line.startswith("MemTotal"))
    return round(kib / 2**20, 1)


def _version(package: str) -> str | None:
    try:
        return version(package)
    except PackageNotFoundError:
        return None


def load_average() -> list[float]:
    """1, 5 and 15 minute load averages (how many runnable jobs shared the cores)."""
    return [round(x, 2) for x in os.getloadavg()]


@dataclass
class Machine(Record):
    """The machine and library versions a results file was measured with."""

    cpu: str
    simd: list[str]
    cores: int | None
    ram_gib: float
    gpu: str | None
    python: str
    platform: str
    #: Package -> version (None: not installed).
    versions: dict[str, str | None]


def describe() -> Machine:
    """The machine and library versions, for the top of the results file."""
    return Machine(
        cpu=_cpu_model(),
        simd=_simd(),
        cores=os.cpu_count(),
        ram_gib=_ram_gib(),
        gpu=None,
        python=platform.python_version(),
        platform=platform.platform(),
        versions={p: _version(p) for p in PACKAGES},
    )


def limit_threads(threads: int) -> None:
    """Make torch, FAISS and BLAS use `threads` threads (ONNX Runtime and llama.cpp take it per session)."""
    os.environ["OMP_NUM_THREADS"] = str(threads)
    import faiss
    import torch

    torch.set_num_threads(threads)
    faiss.omp_set_num_threads(threads)
