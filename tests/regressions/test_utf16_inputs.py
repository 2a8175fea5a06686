"""Issue 51 (low): UTF-16 CSVs (Excel's "Unicode text", Windows tools' exports) were rejected as binary, and a UTF-16
`--remove` list failed, neither naming the encoding. Wide Unicode files are now read like UTF-8 ones."""

from __future__ import annotations

from pathlib import Path

import pytest

from assistant.commands.update_cmd import _read_ids
from retriever.reports.ingest import Exclusions, ingest
from retriever.reports.sources.files import UnreadableFile, read_text

NO_EXCLUSIONS = Exclusions(require_findings=False, require_impression=False, drop_duplicate_findings=False)
EXPORT = (
    "AccessionNumber,Findings,Impression\r\n"
    "A1,Small left pleural effusion.,Pleural effusion.\r\n"
    "A2,Enlarged cardiac silhouette (Ø 16 cm).,Cardiomegaly.\r\n"
)


@pytest.mark.parametrize("encoding", ["utf-16", "utf-16-le", "utf-16-be", "utf-32"])
def test_a_wide_unicode_export_is_read_like_a_utf8_one(tmp_path: Path, encoding: str) -> None:
    """With its byte order mark (Excel, "utf-16"/"utf-32") and without one (utf-16-le/-be as some tools write it)."""
    export = tmp_path / "site.csv"
    export.write_bytes(EXPORT.encode(encoding))
    result = ingest([str(export)], NO_EXCLUSIONS)
    assert not result.rejections
    assert [(r.id, r.impression) for r in result.reports] == [
        ("site:A1", "Pleural effusion."),
        ("site:A2", "Cardiomegaly."),
    ]
    assert "Ø 16 cm" in result.reports[1].findings


@pytest.mark.parametrize("encoding", ["utf-16", "utf-16-le"])
def test_a_utf16_remove_list_is_read(tmp_path: Path, encoding: str) -> None:
    ids = tmp_path / "remove.txt"
    ids.write_bytes("# studies withdrawn\r\nsite:A1\r\nsite:A2\r\n".encode(encoding))
    assert _read_ids(ids) == ["site:A1", "site:A2"]


def test_binary_files_are_still_rejected_as_binary(tmp_path: Path) -> None:
    blob = tmp_path / "image.csv"
    blob.write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(range(256)))
    with pytest.raises(UnreadableFile, match="binary"):
        read_text(blob)
