"""Issue 51 (low): a missing index's message suggested `--out /etc` for `--index /etc` and `--out reports.csv` for
`--index reports.csv`: following the hint would replace a system folder or is refused. A hint names the folder only
where `assistant index` would write an index."""

from __future__ import annotations

from pathlib import Path

import pytest

from retriever.index.errors import IndexLoadError
from retriever.index.folder import open_parts
from retriever.index.output_paths import build_hint


def test_a_folder_of_other_files_is_never_suggested_as_the_output(tmp_path: Path) -> None:
    system = tmp_path / "etc"
    system.mkdir()
    (system / "passwd").write_text("root:x:0:0\n")
    assert "--out INDEX_FOLDER" in build_hint(system) and str(system) not in build_hint(system)
    with pytest.raises(IndexLoadError) as raised:
        open_parts(system / "missing")  # a new folder inside it may be suggested: it is a new folder
    assert f"--out {system / 'missing'}" in str(raised.value)


def test_a_report_file_given_as_the_index_is_never_suggested_as_the_output(tmp_path: Path) -> None:
    export = tmp_path / "reports.csv"
    export.write_text("id,findings\n1,Effusion.\n")
    with pytest.raises(IndexLoadError) as raised:
        open_parts(export)
    assert "--out reports.csv" not in str(raised.value) and f"--out {export}" not in str(raised.value)
    assert "INDEX_FOLDER" in str(raised.value)


def test_a_new_or_empty_folder_is_named(tmp_path: Path) -> None:
    assert build_hint(tmp_path / "new") == f"`assistant index CORPUS... --out {tmp_path / 'new'}`"
    (tmp_path / "empty").mkdir()
    assert f"--out {tmp_path / 'empty'}" in build_hint(tmp_path / "empty", "REPORTS")
