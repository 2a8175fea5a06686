"""Awkward output paths as users type them (issue 39's review): `.`, `~`, a symlinked index, a path under a file, a
read-only or full file system, a file that cannot be replaced. Each is a clear error with an exit code, or works;
none is a traceback, and none leaves a build folder behind."""

from __future__ import annotations

import csv
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from cli_fixtures import ASSISTANT, run

pytestmark = pytest.mark.models  # real CLI processes

ROWS = [
    ["1", "Large left pleural effusion with atelectasis.", "Left pleural effusion."],
    ["2", "Right upper lobe consolidation.", "Right upper lobe pneumonia."],
]


def write_csv(path: Path, header: list[str], rows: list[list[str]]) -> Path:
    with path.open("w", newline="", encoding="utf-8") as handle:
        csv.writer(handle).writerows([header, *rows])
    return path


@pytest.fixture
def reports(tmp_path: Path) -> Path:
    return write_csv(tmp_path / "site.csv", ["id", "findings", "impression"], ROWS)


def _no_traceback(result: subprocess.CompletedProcess[str]) -> None:
    assert "Traceback" not in result.stderr, result.stderr


def _leftovers(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.name.endswith(".build"))


def test_dot_inside_an_index_names_that_index(reports: Path, tmp_path: Path) -> None:
    index = tmp_path / "index"
    assert run("index", str(reports), "--out", str(index)).returncode == 0
    for args in (["index", str(reports), "--out", "."], ["search", "pleural effusion", "--index", "."]):
        result = subprocess.run([*ASSISTANT, *args], capture_output=True, text=True, cwd=index, timeout=600)
        _no_traceback(result)
        assert result.returncode == 0, result.stderr
    assert (index / "manifest.json").is_file()


def test_an_update_through_a_symlink_changes_the_index_it_leads_to(reports: Path, tmp_path: Path) -> None:
    real, link = tmp_path / "real", tmp_path / "link"
    assert run("index", str(reports), "--out", str(real)).returncode == 0
    link.symlink_to(real)
    day = write_csv(tmp_path / "day2.csv", ["id", "findings", "impression"], [["9", "Liver mass.", "Mass."]])
    result = run("update", str(day), "--index", str(link))
    assert result.returncode == 0, result.stderr
    assert link.is_symlink() and link.resolve() == real
    assert "added 1" in result.stderr and '"reports": 3' in (real / "manifest.json").read_text()


def test_a_tilde_is_the_home_folder(reports: Path, tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    args = ["index", str(reports), "--out", "~/idx", "--rejects", "~/rejects.jsonl"]  # quoted: no shell expands it
    env = {**os.environ, "HOME": str(home)}
    result = subprocess.run([*ASSISTANT, *args], capture_output=True, text=True, cwd=tmp_path, env=env, timeout=600)
    assert result.returncode == 0, result.stderr
    assert (home / "idx" / "manifest.json").is_file() and (home / "rejects.jsonl").is_file()
    assert not (tmp_path / "~").exists()


def test_outputs_under_a_file_are_refused_before_reading(reports: Path, tmp_path: Path) -> None:
    a_file = tmp_path / "notes.txt"
    a_file.write_text("not a folder", encoding="utf-8")
    for args in (["--out", str(a_file / "index")], ["--out", str(tmp_path / "i"), "--rejects", str(a_file / "r")]):
        result = run("index", str(reports), *args)
        _no_traceback(result)
        message = " ".join(result.stderr.split())
        assert result.returncode == 2 and "notes.txt is a file, not a folder" in message, message
    assert _leftovers(tmp_path) == []


def test_a_rejects_file_that_cannot_be_replaced_is_refused_before_reading(reports: Path, tmp_path: Path) -> None:
    result = run("index", str(reports), "--out", str(tmp_path / "index"), "--rejects", "/proc/version")
    _no_traceback(result)
    assert result.returncode == 2 and "/proc/version" in result.stderr
    assert _leftovers(tmp_path) == [] and not (tmp_path / "index").exists()


def test_radsearch_home_that_is_a_file_is_named(reports: Path, tmp_path: Path) -> None:
    home = tmp_path / "home-file"
    home.write_text("", encoding="utf-8")
    result = run("index", str(reports), "--out", str(tmp_path / "index"), env={"RADSEARCH_HOME": str(home)})
    _no_traceback(result)
    assert result.returncode == 2 and "RADSEARCH_HOME" in result.stderr and str(home) in result.stderr
    assert _leftovers(tmp_path) == []


@pytest.fixture
def small_mount(tmp_path: Path) -> Iterator[Path]:
    """A 300 KB tmpfs (fault injection: a full disk; remounted read-only by the test that needs it)."""
    folder = tmp_path / "mount"
    folder.mkdir()
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=300k", "tmpfs", str(folder)], capture_output=True)
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {mounted.stderr.decode().strip()}")
    yield folder
    subprocess.run(["umount", str(folder)], check=True)


def test_a_read_only_location_is_a_clear_error(reports: Path, small_mount: Path, tmp_path: Path) -> None:
    subprocess.run(["mount", "-o", "remount,ro", str(small_mount)], check=True)
    for args in (
        ["--out", str(small_mount / "index")],
        ["--out", str(tmp_path / "i"), "--rejects", f"{small_mount}/r"],
    ):
        result = run("index", str(reports), *args)
        _no_traceback(result)
        assert result.returncode == 2 and "Read-only file system" in result.stderr, result.stderr
    assert _leftovers(tmp_path) == []


def test_a_full_disk_while_reading_keeps_the_previous_index(tmp_path: Path, small_mount: Path) -> None:
    rows = [
        [str(i), f"Finding {i}: a pleural effusion described at length. " * 3, f"Impression {i}."] for i in range(3000)
    ]
    many = write_csv(tmp_path / "many.csv", ["id", "findings", "impression"], rows)
    index = small_mount / "index"
    assert (
        run(
            "index", str(write_csv(tmp_path / "s.csv", ["id", "findings", "impression"], ROWS)), "--out", str(index)
        ).returncode
        == 0
    )
    result = run("index", str(many), "--out", str(index))
    _no_traceback(result)
    assert result.returncode == 1 and "full" in result.stderr and "previous index" in result.stderr, result.stderr
    assert (index / "manifest.json").is_file() and '"reports": 2' in (index / "manifest.json").read_text()
    assert "resume" in result.stderr  # the build folder stays for the next run, as after a killed build
