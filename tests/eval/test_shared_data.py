"""Where the benchmarks read the shared data and write results: the checkout's folders unless told otherwise."""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

from eval.common.shared_data import REPO, RESULTS, SHARED_DATA_VARIABLE, add_out_option, shared_data_folder


def test_shared_data_folder_is_the_variable_else_beside_the_checkout(tmp_path: Path) -> None:
    assert shared_data_folder({SHARED_DATA_VARIABLE: str(tmp_path)}) == tmp_path
    beside = REPO.parent / "shared" / "data"
    assert shared_data_folder({}) == shared_data_folder({SHARED_DATA_VARIABLE: ""}) == beside


def test_a_benchmark_reads_the_folder_the_variable_names(tmp_path: Path) -> None:
    """Read when the benchmark starts; an absent folder is named in its message."""
    missing = tmp_path / "no-data"
    env = {**os.environ, SHARED_DATA_VARIABLE: str(missing)}
    command = [sys.executable, "-m", "eval.negation.encoder_pairs"]
    done = subprocess.run(command, cwd=REPO, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 1 and f"shared data {missing} is absent" in done.stderr


def test_results_go_to_out_and_the_default_is_documented(tmp_path: Path) -> None:
    from eval.diagnosis import grader_validation

    committed = {p: p.read_bytes() for p in RESULTS.glob("grader_validation.*")}
    assert grader_validation.main(["--icd", "off", "--out", str(tmp_path / "mine")]) == 0
    assert {p.name for p in (tmp_path / "mine").iterdir()} == {"grader_validation.json", "grader_validation.md"}
    assert {p: p.read_bytes() for p in RESULTS.glob("grader_validation.*")} == committed
    parser = argparse.ArgumentParser()
    add_out_option(parser, RESULTS / "negation")
    assert parser.parse_args([]).out == RESULTS / "negation"
    assert "(default: eval/results/negation in this checkout)" in " ".join(parser.format_help().split())


def test_results_are_written_as_json_and_markdown_through_one_helper(tmp_path: Path) -> None:
    from eval.common.shared_data import write_results

    class Typed:
        def to_json(self) -> dict:
            return {"a": 1}

    markdown = write_results(tmp_path / "deep" / "name.v2", {"a": 1}, lambda payload: f"# {payload['a']}\n")
    assert markdown == "# 1\n"
    written = (tmp_path / "deep" / "name.v2.json").read_text()
    assert written.startswith('{\n "a": 1,\n "provenance": {') and json.loads(written)["provenance"]["commit"]
    assert (tmp_path / "deep" / "name.v2.md").read_text() == "# 1\n"
    write_results(tmp_path / "typed", Typed(), lambda payload: type(payload).__name__, indent=2)
    assert (tmp_path / "typed.json").read_text().startswith('{\n  "a": 1,\n  "provenance": {')
    assert (tmp_path / "typed.md").read_text() == "Typed"
    names = sorted(p.name for p in tmp_path.rglob("*"))  # no temporary left behind
    assert names == ["deep", "name.v2.json", "name.v2.md", "typed.json", "typed.md"]
