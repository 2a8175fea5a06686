"""`assistant search --diagnosis`, `assistant info` and `assistant update --relink` as a user runs them (issue 48):
the stored diagnoses filter a search, an unknown name lists close ones, and an index without stored diagnoses is
told apart, refused for the filter, answered by linking at answer time, and linked by `update --relink`."""

from __future__ import annotations

import json
import shutil
import sqlite3
from pathlib import Path

import pytest
from cli_fixtures import run

from retriever.index.folder import STORE_FILE, write_manifest
from retriever.index.manifest import Manifest

pytestmark = pytest.mark.models  # real CLI processes and the shipped encoder

ROWS = [
    ("1", "Moderate right pleural fluid.", "Right pleural effusion."),
    ("2", "Blunted left costophrenic angle.", "Small left pleural effusions."),
    ("3", "Fluid layering at both bases.", "Bilateral effusions with atelectasis."),
    ("4", "Patchy left lower lobe airspace disease.", "Left lower lobe pneumonia. No pleural effusion."),
    ("5", "Apical pleural line without lung markings.", "Pneumothorax."),
    ("6", "Fluid in the fissure.", "Rule out pleural effusion."),
]


@pytest.fixture(scope="module")
def index(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("diagnosis")
    rows = [{"id": i, "findings": f, "impression": imp} for i, f, imp in ROWS]
    (folder / "site.jsonl").write_text("\n".join(json.dumps(r) for r in rows) + "\n", encoding="utf-8")
    result = run("index", str(folder / "site.jsonl"), "--out", str(folder / "index"))
    assert result.returncode == 0, result.stderr
    return folder / "index"


def test_search_keeps_the_reports_affirming_the_diagnosis(index: Path) -> None:
    """Any spelling of a name or synonym; negated and rule-out mentions do not affirm; the k hits are the most
    similar of the affirming reports, and the JSON says how many there are."""
    found = run("search", "fluid", "--index", str(index), "--diagnosis", "PLEURAL EFFUSIONS", "--json", "-k", "5")
    assert found.returncode == 0, found.stderr
    payload = json.loads(found.stdout)
    assert sorted(h["id"] for h in payload["hits"]) == ["site:1", "site:2", "site:3"]
    assert payload["diagnosis"] == {
        "name": "pleural effusion",
        "concept": "rad:pleural_effusion",
        "reports_affirming": 3,
    }
    top = run("search", "fluid", "--index", str(index), "--diagnosis", "pleural effusion", "-k", "2", "--json")
    assert len(json.loads(top.stdout)["hits"]) == 2
    table = run("search", "air", "--index", str(index), "--diagnosis", "rad:pneumothorax")
    assert table.returncode == 0 and "site:5" in table.stdout and "site:1" not in table.stdout
    assert "1 report of the index affirms pneumothorax" in table.stderr


def test_an_unknown_diagnosis_is_an_error_listing_close_names(index: Path) -> None:
    result = run("search", "fluid", "--index", str(index), "--diagnosis", "pleural efusion")
    assert result.returncode == 2
    assert "no diagnosis named 'pleural efusion'" in result.stderr and "close names: pleural effusion" in result.stderr


def test_an_index_without_stored_diagnoses_is_told_apart_and_linked_by_update_relink(index: Path) -> None:
    older = index.parent / "older"
    shutil.copytree(index, older)
    with sqlite3.connect(older / STORE_FILE) as db:  # as an index written before diagnoses were stored
        db.execute("DROP TABLE concepts")
    db.close()
    manifest = Manifest.read(older)
    manifest.concept_rules = ""
    write_manifest(older, manifest)

    info = run("info", "--index", str(older), "--json")
    state = json.loads(info.stdout)["defaults"]["index diagnoses"]["value"]
    assert state.startswith("not stored") and "answer time" in state and "update --relink" in state
    refused = run("search", "fluid", "--index", str(older), "--diagnosis", "pleural effusion")
    assert refused.returncode == 2 and "link them anew" in refused.stderr and "--relink" in refused.stderr
    answered = run("ask", "Blunted costophrenic angle with fluid.", "--index", str(older), "--json", "--no-server")
    assert answered.returncode == 0, answered.stderr
    assert json.loads(answered.stdout)["diagnosis"] == "pleural effusion"  # linked at answer time

    relinked = run("update", "--relink", "--index", str(older))
    assert relinked.returncode == 0, relinked.stderr
    assert "linked anew" in relinked.stderr
    assert json.loads(run("info", "--index", str(older), "--json").stdout)["defaults"]["index diagnoses"][
        "value"
    ].startswith("stored")
    found = run("search", "fluid", "--index", str(older), "--diagnosis", "effusion", "--json")
    assert found.returncode == 0 and json.loads(found.stdout)["diagnosis"]["reports_affirming"] == 3
