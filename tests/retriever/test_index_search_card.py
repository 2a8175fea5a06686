"""An index says how it is searched (issue 49): its manifest records the search values measured for its encoder when
it was built (the card), those values search it after the preset changes, the user's explicit choices (a flag, a
named preset) still win, and an index built before cards is searched with the preset's values as before."""

from __future__ import annotations

import json
import shutil
from dataclasses import replace
from pathlib import Path

import pytest

from assistant.settings import SearchSettings, Settings
from models.preset import PRESET, adopt_search, load_preset, write_preset
from retriever.index.manifest import MANIFEST, Manifest
from retriever.index.report_index import ReportIndex
from retriever.search.configuration import SearchConfiguration
from retriever.search.support import SupportCheck

QUERY = "small left pleural effusion"


@pytest.fixture(scope="module")
def folder(minilm, tmp_path_factory: pytest.TempPathFactory) -> Path:
    from llm_fixtures import build_index

    return build_index(tmp_path_factory.mktemp("card") / "index", minilm)


@pytest.fixture
def changed(tmp_path: Path) -> SearchSettings:
    """The settings after a benchmark rule adopted other values for the encoder the card was measured for: written
    to a copy of the preset, as `adopt_search` writes models/preset.json."""
    target = tmp_path / "preset.json"
    write_preset(PRESET, target)
    measured = PRESET.card_for("minilm").measured_for
    adopted = adopt_search(measured, "a-later-run.json", target, dense_weight=0.2, second_stage=None)
    assert load_preset(target).search_for(measured).dense_weight == 0.2
    return SearchSettings.from_env({}, adopted)


def _ranked(index: ReportIndex) -> list[tuple[str, float]]:
    return [(h.report.id, round(h.score, 6)) for h in index.search(QUERY, k=3, method="hybrid-weighted")]


def test_the_manifest_records_the_values_the_index_was_built_with(folder: Path) -> None:
    card = json.loads((folder / MANIFEST).read_text(encoding="utf-8"))["search"]
    measured = PRESET.search_for(card["measured_for"])
    assert card["measured_for"] == PRESET.encoder  # no rule measured minilm: the default encoder's values
    assert (card["method"], card["dense_weight"]) == (measured.method, measured.dense_weight)
    assert (card["second_stage"], card["second_stage_weight"]) == (measured.second_stage, measured.second_stage_weight)
    assert Manifest.read(folder).search == PRESET.card_for("minilm")


def test_the_streaming_build_of_assistant_index_records_the_card_too(minilm, tmp_path: Path) -> None:
    from report_fixtures import REPORTS

    from retriever.index.streaming_build import encode_and_write, read_reports

    corpus = tmp_path / "site.jsonl"
    rows = [{"id": r.id, "findings": r.findings, "impression": r.impression} for r in REPORTS if r.findings]
    corpus.write_text("\n".join(json.dumps(r) for r in rows) + "\n", encoding="utf-8")
    read_reports([str(corpus)], tmp_path / "index")
    assert encode_and_write(tmp_path / "index", minilm).search == PRESET.card_for("minilm")
    assert Manifest.read(tmp_path / "index").search == PRESET.card_for("minilm")


def test_the_index_is_searched_with_its_cards_values_after_the_preset_changes(
    folder: Path, minilm, changed: SearchSettings
) -> None:
    before = ReportIndex.load(folder, minilm, search=Settings().search.configure)
    after = ReportIndex.load(folder, minilm, search=changed.configure)
    card = Manifest.read(folder).search
    searched = after.search_configuration
    assert (searched.method, searched.dense_weight) == (card.method, card.dense_weight) != ("dense", 0.2)
    assert isinstance(searched.second_stage, SupportCheck)
    assert searched.second_stage.weight == card.second_stage_weight
    assert _ranked(after) == _ranked(before)


def test_an_index_built_before_cards_loads_and_is_searched_with_the_presets_values(
    folder: Path, tmp_path: Path, minilm, changed: SearchSettings
) -> None:
    old = tmp_path / "old"
    shutil.copytree(folder, old)
    raw = json.loads((old / MANIFEST).read_text(encoding="utf-8"))
    del raw["search"]
    (old / MANIFEST).write_text(json.dumps(raw), encoding="utf-8")
    index = ReportIndex.load(old, minilm, search=changed.configure)
    assert index.manifest.search is None and index.card == PRESET.card_for("minilm")
    assert index.search_configuration.dense_weight == 0.2 and index.search_configuration.second_stage is None
    plain = ReportIndex.load(old, minilm)  # no settings: the preset's first stage, as before
    assert plain.search_configuration == SearchConfiguration.first_stage(PRESET.card_for("minilm"))


def test_the_users_explicit_choices_win_over_the_card(folder: Path, minilm) -> None:
    flagged = Settings().with_flags(method="bm25", reranker="off").search
    index = ReportIndex.load(folder, minilm, search=flagged.configure)
    assert index.search_configuration.method == "bm25" and index.search_configuration.second_stage is None
    paper = ReportIndex.load(folder, minilm, search=Settings.from_env({}, "paper").search.configure)
    assert paper.search_configuration.method == "dense" and paper.search_configuration.second_stage is None


def test_assistant_info_says_the_search_values_come_from_the_index_manifest(folder: Path) -> None:
    from assistant.commands.info_cmd import defaults

    rows = {name: (value, origin) for name, value, origin in defaults(Settings(), folder)}
    card = Manifest.read(folder).search
    assert rows["dense weight (hybrid-weighted)"] == (
        card.dense_weight,
        "index manifest, the default encoder's (none measured for minilm)",
    )


def test_a_card_with_an_unknown_method_is_refused(folder: Path, tmp_path: Path) -> None:
    broken = tmp_path / "broken"
    shutil.copytree(folder, broken)
    raw = json.loads((broken / MANIFEST).read_text(encoding="utf-8"))
    raw["search"]["method"] = "telepathy"
    (broken / MANIFEST).write_text(json.dumps(raw), encoding="utf-8")
    with pytest.raises(ValueError, match="unknown method 'telepathy'"):
        Manifest.read(broken)


def test_an_index_refuses_a_search_setting_assigned_after_load(folder: Path, minilm) -> None:
    index = ReportIndex.load(folder, minilm)
    with pytest.raises(AttributeError):
        index.reranker = SupportCheck()  # type: ignore[attr-defined]
    staged = index.with_search(second_stage=SupportCheck())  # a view: the same loaded index, searched another way
    assert index.search_configuration.second_stage is None
    assert replace(staged.search_configuration, second_stage=None) == index.search_configuration
    assert staged.encoder() is index.encoder() is minilm
