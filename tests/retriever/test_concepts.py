"""The diagnosis vocabulary and its linker (retriever/concepts, issue 48): only diagnoses and imaging findings are
concepts, one disease under several names is one concept, and an impression affirms only what it does not negate,
call resolved or ask to rule out."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from retriever.concepts import (
    KINDS,
    REGIONS,
    Concept,
    VocabularyError,
    affirmed_concepts,
    affirmed_in,
    default_vocabulary,
    link,
)
from retriever.concepts.affirmed import _affirmed
from retriever.concepts.vocabulary import load


def names(concepts: list[Concept]) -> list[str]:
    return [c.name for c in concepts]


@pytest.mark.parametrize(
    "text",
    [
        "ct scan",
        "grade 3",
        "suv of 3.7",
        "electronically signed by dr x",
        "Electronically signed by: John Smith, MD 11/28/2026 14:02",
        "Dictated by: Dr. Jones",
        "kub",
        "inspiratory",
        "complex",
        "laparoscopic cholecystectomy",
        "right lower lobe",
        "left upper quadrant",
        "status post median sternotomy",
        "Malpositioned right PICC line tip",
        "Recommend clinical correlation",
        "END OF IMPRESSION",
    ],
)
def test_exams_procedures_anatomy_measurements_and_signoffs_link_to_nothing(text: str) -> None:
    assert link(text) == []


def test_effusion_pleural_effusion_and_pleural_effusions_are_one_concept() -> None:
    """Decision: a bare "effusion" in a conclusion is a pleural effusion (how chest reports use it), unless its
    clause names a joint or the pericardium."""
    found = [link(t) for t in ("effusion", "pleural effusion", "Small bilateral pleural effusions", "Effusions.")]
    assert {c[0].id for c in found} == {"rad:pleural_effusion"}
    assert found[0][0].name == "pleural effusion"
    assert found[0][0].kind == "finding" and found[0][0].regions == ("chest",)


@pytest.mark.parametrize(
    ("text", "concept"),
    [
        ("Small effusion in the right knee", "joint effusion"),
        ("Knee joint effusion", "joint effusion"),
        ("Moderate pericardial effusion", "pericardial effusion"),
        ("Small left pleural effusion, pericardium normal", "pleural effusion"),
        ("Millimetric nodule in the lower lobe of the left lung", "pulmonary nodule"),
        ("Thyroid nodule", "thyroid nodule"),
        ("Hypodense lesion in the liver", "liver lesion"),
        ("Vasogenic edema around the mass in the left frontal lobe", "cerebral edema"),
        ("Interstitial edema", "pulmonary edema"),
        ("Tear of the posterior horn of the medial meniscus", "meniscal tear"),
        # "Enhancing mass" was a brain tumour's synonym (docs/decisions/2026-11-29-enhancing-is-not-brain.md)
        ("Heterogeneous enhancing mass in the upper pole of the left kidney", "renal mass"),
        ("Enhancing lesion in the liver", "liver lesion"),
        ("Enhancing lesion in the right frontal lobe", "brain tumor"),
    ],
)
def test_a_generic_word_takes_the_concept_its_clause_names(text: str, concept: str) -> None:
    assert names(link(text))[0] == concept


@pytest.mark.parametrize(
    ("variants", "concept"),
    [
        (("cholecystitis", "Calculous cholecystitis", "acute calculous cholecystitis"), "cholecystitis"),
        (("Crohn's disease", "Crohn disease", "crohns disease"), "crohn disease"),
        (("hiatal hernia", "Hiatus hernia", "Large hiatal hernias"), "hiatal hernia"),
        (("Cardiomegaly", "Enlarged cardiac silhouette", "enlargement of the cardiac silhouette"), "cardiomegaly"),
        (("ground-glass opacities", "ground glass densities", "GGO"), "ground-glass opacity"),
        (("pulmonary oedema", "pulmonary edema"), "pulmonary edema"),
        (("Metastases", "metastatic disease"), "metastases"),
    ],
)
def test_synonyms_plurals_spellings_and_possessives_meet(variants: tuple[str, ...], concept: str) -> None:
    assert {names(link(v))[0] for v in variants} == {concept}


def test_the_most_specific_phrase_wins_and_matches_do_not_overlap() -> None:
    assert names(link("Loculated right pleural effusion")) == ["pleural effusion"]
    assert names(link("Acute subdural hematoma")) == ["subdural hematoma"]
    assert names(link("Medial meniscal tear")) == ["meniscal tear"]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Focal ground glass in the right middle lobe, density is nonspecific", ["ground-glass opacity"]),
        ("Several hypodense lesions (cysts?) in the liver", ["hepatic cyst"]),
        ("Hypodense nodular lesion (cyst?) in the upper pole of the right kidney", ["renal cyst"]),
        ("Soft tissue density in the anterior mediastinum (thymic remnant?)", []),
        ("Retrocardiac density compatible with hiatal hernia", ["opacity", "hiatal hernia"]),
    ],
)
def test_a_generic_concept_gives_way_to_its_more_specific_form_in_the_sentence(text: str, expected: list[str]) -> None:
    """docs/decisions/2026-11-28-linker-generalises.md, rules 1 and 2: another kind of concept stays."""
    assert names(affirmed_in(text)) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Calcified plaques in the aorta and coronary arteries", ["atherosclerosis", "coronary artery calcification"]),
        ("Dilatation in the pulmonary artery and thoracic aorta", ["aortic aneurysm", "enlarged pulmonary arteries"]),
        ("Hepatosplenomegaly", ["hepatomegaly", "splenomegaly"]),
        ("Dilated loops, no transition point", []),
    ],
)
def test_one_word_names_a_finding_at_every_site_its_clause_lists(text: str, expected: list[str]) -> None:
    assert names(affirmed_in(text)) == expected


def test_coordinated_modifiers_name_both_heads() -> None:
    assert names(affirmed_in("Airspace and interstitial opacity in the right lung")) == [
        "airspace disease",
        "interstitial lung disease",
    ]


def test_history_and_what_the_findings_are_atypical_of_are_not_affirmed() -> None:
    assert affirmed_in("Operated HCC at follow-up") == ()
    assert names(affirmed_in("Sequelae of prior infection in the right upper lobe")) == ["scarring"]
    assert affirmed_in("Clinical correlation for infection is recommended") == ()
    text = "Nodules with cavitation are atypical in terms of Covid-19 viral pneumonia"
    assert names(affirmed_in(text)) == ["nodule", "cavitary lesion"]


def test_icd10_names_what_the_radiology_layer_lacks() -> None:
    found = link("Swyer-James syndrome")
    assert [c.id for c in found] == ["icd10:J43.0"] and found[0].kind == "diagnosis"


def test_the_radiology_layer_wins_over_icd10() -> None:
    assert [c.id for c in link("Pleural effusion")] == ["rad:pleural_effusion"]


def test_an_icd10_phrase_never_takes_a_radiology_match_even_a_longer_one() -> None:
    """docs/decisions/2026-11-29-linker-requests-and-longer-names.md, rule 2 (reverted): ICD-10-CM's longer phrases
    name the same disease with a course word ("acute pulmonary embolism") or another disease in the same words
    ("chronic granulomatous disease", an immunodeficiency in ICD-10-CM, healed granulomas in a chest report)."""
    assert [c.id for c in link("Acute pulmonary embolism")] == ["rad:pulmonary_embolism"]
    assert [c.name for c in link("Chronic granulomatous disease")] == ["granuloma"]


def test_consider_is_a_request_before_or_after_what_it_names() -> None:
    text = "Asymmetric left suprahilar opacity, consider focal airspace disease or adenopathy"
    assert names(affirmed_in(text)) == ["opacity"]
    assert affirmed_in("Organizing pneumonia and drug toxicity should be considered in the differential") == ()
    assert names(affirmed_in("Viral pneumonias are considered in the etiology")) == ["pneumonia"]  # stated


def test_look_alikes_a_report_lists_are_not_findings() -> None:
    text = "Other diseases such as organizing pneumonia and drug toxicity can cause a similar appearance"
    assert affirmed_in(text) == ()
    assert affirmed_in("Sarcoidosis may cause similar findings") == ()


@pytest.mark.parametrize(
    ("text", "concept"),
    [
        ("Increases in interlobar and interlobular thickness", "interlobular septal thickening"),
        ("Increased pulmonary artery diameters", "enlarged pulmonary arteries"),
        ("Bilateral intrarenal stones, no obstruction", "nephrolithiasis"),
        ("Chronic parenchymal liver disease", "cirrhosis"),
        ("Structural distortion in the apical segment of the right upper lobe", "architectural distortion"),
    ],
)
def test_names_ct_reports_write_for_common_findings(text: str, concept: str) -> None:
    assert names(affirmed_in(text)) == [concept]


def test_negated_items_affirm_nothing() -> None:
    query = "Right lower lobe consolidation with air bronchograms. No pleural effusion or pneumothorax."
    assert names(affirmed_concepts(query)) == ["consolidation"]
    assert affirmed_concepts("No pneumothorax.") == []
    assert affirmed_concepts("No acute cardiopulmonary abnormality.") == []
    assert names(affirmed_concepts("Mild cardiomegaly without pulmonary edema.")) == ["cardiomegaly"]


def test_resolved_and_rule_out_are_no_evidence_but_a_hedge_is() -> None:
    assert affirmed_concepts("Previously seen pneumothorax has resolved.") == []
    assert affirmed_concepts("Rule out pneumonia.") == []
    assert affirmed_concepts("Recommend CT to evaluate for pulmonary embolism.") == []
    assert names(affirmed_concepts("Left basilar opacity, cannot rule out pneumonia.")) == ["opacity", "pneumonia"]
    assert names(affirmed_concepts("Atelectasis versus pneumonia.")) == ["atelectasis", "pneumonia"]


def test_each_mention_is_judged_where_it_stands() -> None:
    assert names(affirmed_concepts("No right effusion. Small left effusion.")) == ["pleural effusion"]
    assert names(affirmed_concepts("No change in the small left pleural effusion.")) == ["pleural effusion"]


def test_affirmed_concepts_are_in_order_and_once_each() -> None:
    impression = "1. Small left pleural effusion. 2. Cardiomegaly. 3. Effusion is unchanged. 4. Hiatal hernia."
    assert names(affirmed_concepts(impression)) == ["pleural effusion", "cardiomegaly", "hiatal hernia"]


def test_a_signoff_line_adds_no_concept() -> None:
    impression = "Cardiomegaly with interstitial edema. Electronically signed by: Dr X on 11/28/2026."
    assert names(affirmed_concepts(impression)) == ["cardiomegaly", "pulmonary edema"]


def test_a_caller_changing_the_list_it_got_changes_no_later_answer() -> None:
    first = affirmed_concepts("Small left pleural effusion.")
    first.clear()
    link("Cardiomegaly").clear()
    assert names(affirmed_concepts("Small left pleural effusion.")) == ["pleural effusion"]
    assert names(link("Cardiomegaly")) == ["cardiomegaly"]


def test_the_shipped_vocabulary_is_well_formed() -> None:
    vocabulary = default_vocabulary()
    concepts = list(vocabulary.concepts.values())
    assert sum(c.id.startswith("rad:") for c in concepts) >= 300
    assert all(c.name == c.name.lower() and c.kind in KINDS for c in concepts)
    assert {c.name for c in concepts if c.kind == "appearance"} >= {"opacity", "lesion", "mass", "nodule"}
    assert all(set(c.regions) <= set(REGIONS) for c in concepts)


def _write(tmp_path: Path, rows: list[str]) -> Path:
    path = tmp_path / "terms.tsv"
    path.write_text("id\tname\tsynonyms\tkind\tregions\trefine\n" + "\n".join(rows) + "\n", encoding="utf-8")
    return path


def test_a_phrase_naming_two_concepts_is_refused(tmp_path: Path) -> None:
    path = _write(
        tmp_path,
        ["rad:a\tpleural effusion\teffusion\tfinding\tchest\t", "rad:b\tjoint effusion\teffusions\tfinding\tmsk\t"],
    )
    with pytest.raises(VocabularyError, match=r"terms.tsv, line 3: 'effusion' already names rad:a"):
        load(path, None)


@pytest.mark.parametrize(
    ("row", "message"),
    [
        ("rad:a\tx\t\tsymptom\t\t", "kind 'symptom'"),
        ("rad:a\tx\t\tfinding\tthorax\t", "unknown region 'thorax'"),
        ("rad:a\tx\t\tfinding\t", "5 columns, expected 6"),
        ("rad:a\tx\t\tfinding\t\trad:missing=knee", "names no known concept"),
        ("rad:a\tx\t\tfinding\t\t+rad:missing=knee", "names no known concept"),
    ],
)
def test_a_bad_vocabulary_line_is_named(tmp_path: Path, row: str, message: str) -> None:
    with pytest.raises(VocabularyError, match=message):
        load(_write(tmp_path, [row]), None)


def test_linking_forty_impressions_takes_well_under_ten_milliseconds() -> None:
    default_vocabulary()
    impressions = [
        f"{i}. Small left pleural effusion with adjacent atelectasis. No pneumothorax. Mild cardiomegaly. "
        f"Degenerative changes of the thoracic spine. Electronically signed by Dr {i}."
        for i in range(40)
    ]
    best = min(_timed(impressions) for _ in range(5))
    assert best < 0.010, f"{best * 1000:.1f} ms"


def _timed(impressions: list[str]) -> float:
    """One pass with empty caches: only the items repeated within the forty impressions are read once."""
    _affirmed.cache_clear()
    affirmed_in.cache_clear()
    start = time.process_time()
    for impression in impressions:
        affirmed_concepts(impression)
    return time.process_time() - start
