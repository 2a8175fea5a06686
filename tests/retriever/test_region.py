"""A text's body regions and modalities read fast (an ASCII text in lower case) exactly as case-insensitively."""

from __future__ import annotations

import csv
import re

from retriever.reports.sources.demo_corpus import DEMO_CSV
from retriever.search.region import (
    MODALITY_WORDS,
    ORGAN_REGION,
    ORGAN_WORDS,
    OTHER_STUDY_WORDS,
    REGION_WORDS,
    _dominant,
    modalities,
    organs,
    regions,
)


def _case_insensitive(words: dict, text: str) -> frozenset[str]:
    from collections import Counter

    patterns = {name: re.compile(rf"\b(?:{alternatives})\b", re.IGNORECASE) for name, alternatives in words.items()}
    return _dominant(Counter({name: n for name, rx in patterns.items() if (n := len(rx.findall(text)))}))


def _own_study(text: str) -> str:
    other = re.compile(rf"\b(?:{OTHER_STUDY_WORDS})\b", re.IGNORECASE)
    return " ".join(s for s in re.split(r"(?<=[.;!?])\s+|\n+", text) if not other.search(s))


def test_every_demo_report_has_the_regions_and_modalities_of_the_case_insensitive_reading() -> None:
    with DEMO_CSV.open(newline="", encoding="utf-8") as handle:
        texts = [" ".join(row.values()) for row in csv.DictReader(handle)]
    texts += [t.upper() for t in texts[:50]] + [
        "CT HEAD: ACUTE SUBDURAL HEMATOMA.",
        "MRI Knee: T2 signal in the MENISCUS.",
    ]
    assert len(texts) > 300
    named = 0
    for text in texts:
        assert regions(text) == _case_insensitive(REGION_WORDS, text), text[:80]
        assert modalities(text) == _case_insensitive(MODALITY_WORDS, _own_study(text)), text[:80]
        named += bool(regions(text))
    assert named > len(texts) // 2  # most name a region: the comparison is not of empty sets


def test_a_text_beyond_ascii_is_read_case_insensitively() -> None:
    """Case-insensitive matching reaches further than lower case (a long s is an s, yet "\u017f".lower() stays
    itself): such a text keeps the case-insensitive patterns."""
    assert regions("\u017fpine: disc bulge") == {"spine"}
    assert modalities("Ultra\u017found, café au lait") == {"US"}


def test_a_study_the_text_compares_with_or_recommends_is_not_its_modality() -> None:
    """A chest radiograph's findings that mention the CT they compare with were read as a CT question, and the
    chest radiograph reports among the most similar did not vote (dev case openi:3251: "no similar case")."""
    assert not modalities("Right mid lung nodule, stable since a CT examination from XXXX. The lungs are clear.")
    assert modalities(
        "PA and lateral views. Opacity in the left apex consistent with radiation change seen on prior CT."
    ) == {"XR"}
    assert not modalities("Cyst in segment 7 of the liver. Dynamic contrast upper abdominal MRI is recommended.")
    assert not modalities("Comparison is made with 10/13/05 radiographs.")
    assert modalities("Contrast-enhanced CT shows a hypoattenuating liver lesion.") == {"CT"}  # its own study counts
    assert modalities("Ultrasound was recommended.", "CT") == {"CT"}  # the report's field still decides


def test_the_abdomen_and_pelvis_read_their_organs_words_from_one_list() -> None:
    """docs/decisions/2026-11-29-region-words-from-organ-words.md: an organ word places a text in its organ's region
    without being written twice."""
    for organ, region in ORGAN_REGION.items():
        assert ORGAN_WORDS[organ] in REGION_WORDS[region], organ
    assert regions("Cystic duct stone.") == {"abdomen"} and organs("Cystic duct stone.") == {"biliary"}
    assert regions("Enlarged right testis.") == {"pelvis"} and organs("Enlarged right testis.") == {"scrotum"}


def test_words_that_only_look_like_an_organ_name_none() -> None:
    assert organs("The left atrial appendage is free of thrombus.") == {"heart"}  # not the appendix: no bowel
    assert organs("Positional testing showed nystagmus.") == frozenset()  # not the testis
    assert organs("Acute appendicitis.") == {"bowel"}
