"""Indexing on a real Ray cluster (issue 40): `assistant index --ray ADDRESS` and `assistant update --ray ADDRESS`
against a local cluster of two node processes (`ray start --head`, `ray start --address`, one CPU each), compared
with single-process builds of the same corpus; a worker killed mid-build, a driver killed mid-build, a cluster that
lacks the encoder, one that cannot be reached, and Ray not installed. No part of Ray is mocked. The tests on the
cluster take about two minutes on 2 busy cores (marked slow: CI runs them).

The cluster's processes are found and killed by session (each `ray start` is started in a session of its own), so
nothing is left behind, whatever a test does.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
from cli_fixtures import ASSISTANT
from test_shards import _assert_same_index, _ids

from eval.perf.ray_cluster import LocalCluster, free_port, kill, local_cluster
from retriever.index.report_index import open_parts
from retriever.index.streaming_build import chunk_path, work_folder

REPO = Path(__file__).resolve().parents[2]
LOBES = ("right upper", "right middle", "right lower", "left upper", "left lower")
FINDINGS = ("nodule", "consolidation", "ground-glass opacity", "mass", "cyst", "scar")
#: Two chunk files of the streaming build (CHUNK = 1024), so a kill can land between them.
REPORTS = 1300


def _rows() -> list[dict[str, str]]:
    """Distinct short reports, plus one of each kind the exclusions reject (duplicate findings: when asked to) and a
    newer version of a study (id 7, which replaces it)."""
    rows = [
        {
            "id": str(i),
            "findings": f"{i % 17 + 2} mm {FINDINGS[i % 6]} in the {LOBES[i % 5]} lobe, study {i}. No effusion.",
            "impression": f"{FINDINGS[i % 6].capitalize()} of the {LOBES[(i // 5) % 5]} lobe.",
        }
        for i in range(REPORTS)
    ]
    return [
        *rows,
        {"id": "empty", "findings": "", "impression": "Impression only."},
        {"id": "7", "findings": "A second record with id 7.", "impression": "Its newer version."},
        {"id": "copy", "findings": rows[3]["findings"], "impression": "Same findings as report 3."},
    ]


@pytest.fixture(scope="module")
def cluster() -> Iterator[LocalCluster]:
    """A head node and one worker node process, one CPU each, on loopback (eval/perf/ray_cluster.py); stopped,
    every process of their sessions killed, however the tests end."""
    pytest.importorskip("ray", reason="Ray is not installed: pip install '.[ray]' (make test installs it)")
    with local_cluster(nodes=2, code=REPO) as found:
        yield found


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("corpus")
    path = folder / "site.jsonl"
    path.write_text("".join(json.dumps(row) + "\n" for row in _rows()), encoding="utf-8")
    return path


def _index(*args: str) -> list[str]:
    return [*ASSISTANT, "index", *args, "--drop-duplicate-findings"]


def _env(cluster: LocalCluster | None = None, **extra: str) -> dict[str, str]:
    """A driver's environment: wide tables, and the cluster's token when it joins one."""
    return cluster.driver_env(COLUMNS="200", **extra) if cluster else {**os.environ, "COLUMNS": "200", **extra}


@pytest.fixture(scope="module")
def single(corpus: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, str]:
    """The single-process build of the corpus with the shipped encoder: (index, rejects log, printed output)."""
    folder = tmp_path_factory.mktemp("single")
    out, rejects = folder / "index", folder / "rejects.jsonl"
    done = subprocess.run(
        _index(str(corpus), "--out", str(out), "--rejects", str(rejects)),
        capture_output=True,
        text=True,
        env=_env(),
        timeout=900,
    )
    assert done.returncode == 0, done.stderr
    return out, rejects, done.stderr


@pytest.fixture(scope="module")
def encoder():
    from assistant.settings import EncoderSettings
    from retriever.encoders.encoder import load_encoder

    return load_encoder("radsearch", backend=EncoderSettings.from_env(os.environ).backend)


def _counts(output: str) -> list[str]:
    """The printed ingestion tables (records in / indexed / rejected per source and by reason)."""
    return [line for line in output.splitlines() if line.startswith(("│", "┃"))]


@pytest.mark.slow
def test_a_ray_build_equals_a_single_process_build(cluster, corpus, single, encoder, tmp_path: Path) -> None:
    out, rejects = tmp_path / "index", tmp_path / "rejects.jsonl"
    args = _index(str(corpus), "--out", str(out), "--rejects", str(rejects), "--ray", cluster.address)
    done = subprocess.run(args, capture_output=True, text=True, env=_env(cluster), timeout=900)
    assert done.returncode == 0, done.stderr
    assert "on 2 Ray workers" in done.stderr and f"indexed {REPORTS} reports" in done.stderr
    single_out, single_rejects, single_output = single
    assert _counts(done.stderr) == _counts(single_output) != []
    assert rejects.read_bytes() == single_rejects.read_bytes()
    assert sorted(json.loads(line)["reason"] for line in rejects.read_text().splitlines()) == [
        "duplicate findings",
        "missing findings",
    ]
    _assert_same_index(out, single_out, encoder)


@pytest.mark.slow
def test_a_worker_killed_mid_build_is_restarted_by_ray_and_no_report_is_lost_or_repeated(
    cluster, corpus, single, encoder, tmp_path: Path
) -> None:
    out = tmp_path / "index"
    build = subprocess.Popen(
        _index(str(corpus), "--out", str(out), "--ray", cluster.address),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        env=_env(cluster),
    )
    killed = None
    try:
        deadline = time.monotonic() + 600
        while killed is None and build.poll() is None and time.monotonic() < deadline:
            busy = [pid for pid, title in cluster.actors(1) if title.startswith("ray::EncoderActor.encode")]
            if busy:  # the worker node's actor, in the middle of encoding a piece
                killed = busy[0]
                kill(killed)
            time.sleep(0.02)
        assert killed is not None, "the build ended before its worker could be killed"
        restarted = set()
        while build.poll() is None and time.monotonic() < deadline:
            restarted |= {pid for pid, _ in cluster.actors(1)} - {killed}
            time.sleep(0.05)
        _, err = build.communicate(timeout=600)
    finally:
        if build.poll() is None:
            build.kill()
    assert build.returncode == 0, err
    assert restarted, "Ray did not start the killed actor again on the worker node"
    assert f"indexed {REPORTS} reports" in err
    _assert_same_index(out, single[0], encoder)  # every report once: same ids, rows, vectors and searches


@pytest.mark.slow
def test_a_driver_killed_mid_build_resumes_reusing_the_chunks_it_wrote(
    cluster, corpus, single, encoder, tmp_path: Path
) -> None:
    """The driver writes each encoded chunk file as the single-process build does: killed after the first of two,
    the next run takes that file as it is. The test turns the vectors in it around (digest kept) before the rerun,
    so the result shows whether they were reused or encoded again."""
    out = tmp_path / "index"
    args = _index(str(corpus), "--out", str(out), "--ray", cluster.address)
    first, second = chunk_path(work_folder(out), 0), chunk_path(work_folder(out), 1)
    build = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=_env(cluster))
    try:
        deadline = time.monotonic() + 600
        while not first.exists() and build.poll() is None and time.monotonic() < deadline:
            time.sleep(0.02)
        build.send_signal(signal.SIGKILL)
        build.wait(timeout=60)
    finally:
        if build.poll() is None:
            build.kill()
    assert first.exists() and not second.exists() and not out.exists(), "not killed between the two chunks"
    with np.load(first) as saved:
        arrays = dict(saved)
    turned = {name: -array if name.endswith("_vectors") else array for name, array in arrays.items()}
    np.savez(first, **turned)
    reused_rows = set(arrays["findings_rowids"].tolist())

    done = subprocess.run(args, capture_output=True, text=True, env=_env(cluster), timeout=900)
    assert done.returncode == 0, done.stderr
    assert "resuming the build left in" in done.stderr and f"indexed {REPORTS} reports" in done.stderr
    mine, mine_vectors, _, mine_store = open_parts(out)
    theirs, theirs_vectors, _, theirs_store = open_parts(single[0])
    try:
        assert list(mine_store.iter_reports()) == list(theirs_store.iter_reports())
        assert mine.files["reports.sqlite"] == theirs.files["reports.sqlite"]
        index, reference = mine_vectors["findings"], theirs_vectors["findings"]
        assert _ids(index) == _ids(reference)
        for rowid in _ids(index):
            expected = -reference.reconstruct(rowid) if rowid in reused_rows else reference.reconstruct(rowid)
            np.testing.assert_allclose(index.reconstruct(rowid), expected, atol=1e-5)
    finally:
        mine_store.close()
        theirs_store.close()


@pytest.mark.slow
def test_update_on_the_cluster_equals_an_update_in_one_process(cluster, single, encoder, tmp_path: Path) -> None:
    news = tmp_path / "news" / "site.jsonl"  # same file name: ids 0..19 are corrections, 5000.. are new
    news.parent.mkdir()
    rows = [
        {"id": str(i), "findings": f"{i} cm mass in the left hilum, new.", "impression": "Mass."} for i in range(20)
    ]
    rows += [
        {"id": str(5000 + i), "findings": f"Rib fracture number {i}.", "impression": "Fracture."} for i in range(40)
    ]
    news.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    here, there = tmp_path / "here", tmp_path / "there"
    shutil.copytree(single[0], here)
    shutil.copytree(single[0], there)
    for index, extra in ((here, []), (there, ["--ray", cluster.address])):
        done = subprocess.run(
            [*ASSISTANT, "update", str(news), "--index", str(index), *extra],
            capture_output=True,
            text=True,
            env=_env(cluster),
            timeout=900,
        )
        assert done.returncode == 0, done.stderr
        assert "added 40, replaced 20" in done.stderr
    _assert_same_index(there, here, encoder, updated=True)


@pytest.mark.slow
def test_a_cluster_without_the_encoder_is_refused_before_anything_is_written(cluster, corpus, tmp_path: Path) -> None:
    """`tiny` is a model trained into this machine's RADSEARCH_HOME only (the shipped weights under another name):
    the cluster's nodes, which have their own data folder, cannot load it."""
    home = tmp_path / "home"
    (home / "models").mkdir(parents=True)
    (home / "models" / "tiny").symlink_to(REPO / "models" / "radsearch" / "model")
    work = tmp_path / "work"
    work.mkdir()
    args = ["--encoder", "tiny", "--out", str(work / "index"), "--rejects", str(work / "rejects.jsonl")]
    done = subprocess.run(
        _index(str(corpus), *args, "--ray", cluster.address),
        capture_output=True,
        text=True,
        env=_env(cluster, RADSEARCH_HOME=str(home)),
        timeout=600,
    )
    assert done.returncode == 3, done.stderr
    assert "cannot load the encoder 'tiny'" in done.stderr and "Traceback" not in done.stderr
    assert list(work.iterdir()) == []


def test_an_unreachable_cluster_is_refused_quickly_before_anything_is_written(corpus, tmp_path: Path) -> None:
    pytest.importorskip("ray", reason="Ray is not installed: pip install '.[ray]' (make test installs it)")
    address = f"127.0.0.1:{free_port()}"  # nothing listens there
    start = time.monotonic()
    done = subprocess.run(
        _index(str(corpus), "--out", str(tmp_path / "index"), "--ray", address),
        capture_output=True,
        text=True,
        env=_env(),
        timeout=120,
    )
    assert done.returncode == 3, done.stderr
    assert f"the Ray cluster at {address} cannot be reached" in done.stderr and "ray start --head" in done.stderr
    assert "Traceback" not in done.stderr and time.monotonic() - start < 60
    assert sorted(p.name for p in tmp_path.iterdir()) == []


def test_without_ray_installed_ray_says_how_to_install_it(corpus, tmp_path: Path) -> None:
    """Ray made unimportable (a `ray` package that raises ImportError first on the path), as on a machine without the
    extra: the product works as before, and --ray names the install command."""
    blocker = tmp_path / "blocker" / "ray"
    blocker.mkdir(parents=True)
    (blocker / "__init__.py").write_text("raise ImportError('No module named ray')\n")
    work = tmp_path / "work"
    work.mkdir()
    done = subprocess.run(
        _index(str(corpus), "--out", str(work / "index"), "--ray", "local"),
        capture_output=True,
        text=True,
        env=_env(PYTHONPATH=os.pathsep.join([str(blocker.parent), str(REPO)])),
        timeout=120,
    )
    assert done.returncode == 3, done.stderr
    assert "pip install" in done.stderr and "[ray]" in done.stderr and "Traceback" not in done.stderr
    assert list(work.iterdir()) == []
