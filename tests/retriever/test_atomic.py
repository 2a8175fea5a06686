"""models.atomic.write_atomic: a failed write leaves the old file (or folder) whole and no temporary behind."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from models.atomic import write_atomic


def _no_space(src: object, dst: object) -> None:
    raise OSError(28, "No space left on device")


def test_a_failed_rename_leaves_the_old_file_and_no_temporary(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    target = tmp_path / "rejects.jsonl"
    target.write_text("previous\n", encoding="utf-8")
    monkeypatch.setattr(os, "replace", _no_space)
    with pytest.raises(OSError):
        write_atomic(target, "new\n")
    monkeypatch.undo()
    assert target.read_text(encoding="utf-8") == "previous\n"
    assert [p.name for p in tmp_path.iterdir()] == ["rejects.jsonl"]


def test_text_bytes_and_a_callback_each_replace_the_path(tmp_path: Path) -> None:
    write_atomic(tmp_path / "sub" / "a.txt", "new\n")
    assert (tmp_path / "sub" / "a.txt").read_text(encoding="utf-8") == "new\n"
    write_atomic(tmp_path / "b.bin", b"\x00\x01")
    assert (tmp_path / "b.bin").read_bytes() == b"\x00\x01"

    def make_folder(tmp: Path) -> None:
        tmp.mkdir()
        (tmp / "model.json").write_text("{}", encoding="utf-8")

    write_atomic(tmp_path / "model", make_folder)
    assert (tmp_path / "model" / "model.json").is_file()


def test_a_symlink_is_replaced_not_written_through(tmp_path: Path) -> None:
    precious = tmp_path / "precious.txt"
    precious.write_text("keep\n", encoding="utf-8")
    (tmp_path / "link").symlink_to(precious)
    write_atomic(tmp_path / "link", "new\n")
    assert precious.read_text(encoding="utf-8") == "keep\n"
    assert not (tmp_path / "link").is_symlink() and (tmp_path / "link").read_text(encoding="utf-8") == "new\n"


def test_a_failing_callback_removes_its_half_written_folder(tmp_path: Path) -> None:
    def half_then_fail(tmp: Path) -> None:
        tmp.mkdir()
        (tmp / "part").write_text("x", encoding="utf-8")
        raise RuntimeError("killed while writing")

    with pytest.raises(RuntimeError):
        write_atomic(tmp_path / "model", half_then_fail)
    assert list(tmp_path.iterdir()) == []


def test_the_temporary_name_is_the_one_temporary_name_describes(tmp_path: Path) -> None:
    """Folders that tolerate a killed write's leftover (retriever/index/shards.py) recognise it by TEMPORARY_NAME."""
    import re

    from models.atomic import TEMPORARY_NAME

    seen: list[Path] = []

    def write(tmp: Path) -> None:
        seen.append(tmp)
        tmp.write_text("{}")

    write_atomic(tmp_path / "shard.json", write)
    assert re.fullmatch(TEMPORARY_NAME.format(name=re.escape("shard.json")), seen[0].name)
    assert seen[0].parent == tmp_path
