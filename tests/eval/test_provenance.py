"""Every results file says which commit, command and shipped configuration produced it (eval/common/provenance.py)."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from assistant.rag.configuration import configuration_hash
from assistant.settings import Settings
from eval.common.provenance import REPO, command_line, provenance, stamp
from eval.common.shared_data import write_results
from eval.perf.results import read, store
from eval.perf.sections import Concurrency


def _head() -> str:
    return subprocess.run(["git", "rev-parse", "HEAD"], cwd=REPO, capture_output=True, text=True).stdout.strip()


def test_provenance_names_the_commit_the_command_and_the_preset() -> None:
    found = provenance({"k": 20})
    assert found["commit"] == _head() and len(found["commit"]) == 40
    assert isinstance(found["dirty"], bool)
    assert found["configuration_hash"] == Settings.from_env(os.environ).configuration_hash
    assert found["measured_configuration_hash"] == configuration_hash({"k": 20}) != found["configuration_hash"]
    assert "measured_configuration_hash" not in provenance()


def test_command_line_is_the_module_as_typed(monkeypatch) -> None:
    import sys
    import types

    main = types.ModuleType("__main__")
    main.__spec__ = types.SimpleNamespace(name="eval.diagnosis.benchmark")  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "__main__", main)
    assert command_line(["/x/eval/diagnosis/benchmark.py", "--split", "dev"]) == (
        "python -m eval.diagnosis.benchmark --split dev"
    )


def test_results_files_carry_provenance_and_keep_their_keys(tmp_path: Path) -> None:
    write_results(tmp_path / "demo", {"accuracy": 0.5}, lambda p: f"accuracy {p['accuracy']}\n")
    data = json.loads((tmp_path / "demo.json").read_text())
    assert data["accuracy"] == 0.5 and data["provenance"]["commit"] == _head()
    assert (tmp_path / "demo.md").read_text() == "accuracy 0.5\n"
    assert stamp({"a": 1})["a"] == 1


def test_performance_sections_carry_provenance(tmp_path: Path) -> None:
    path = tmp_path / "performance.json"
    run = {"workers": 1, "cases": 2, "answered": 2, "wall_s": 1.0, "cases_per_minute": 120.0}
    data = {"backend": "b", "server_start_s": 1.0, "condition": "none", "max_tokens": 8, "runs": [run], "speedup": 1}
    store("concurrency", data, threads=1, command="python -m eval.perf.concurrency", path=path)
    section = read(path).sections["concurrency"]
    assert isinstance(section, Concurrency) and section.runs[0].cases_per_minute == 120.0
    assert section.provenance is not None and section.provenance["commit"] == _head()


def test_a_performance_section_without_a_record_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="'demo' has no record"):
        store("demo", {"reports_per_s": 3.0}, threads=1, command="python -m eval.perf.demo", path=tmp_path / "p.json")
    with pytest.raises(ValueError, match="Concurrency: missing server_start_s, condition, max_tokens, runs, speedup"):
        store("concurrency", {"backend": "b"}, threads=1, command="c", path=tmp_path / "p.json")
