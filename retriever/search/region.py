"""Which body region and which imaging modality a text is about, read from its words.

Why: the evidence differential counts what similar reports affirm, and when the archive holds no report of the
query's body part the most similar ones are of another: an acute subdural hematoma was answered "astrocytoma" and a
medial meniscal tear "meningioma", from brain and spine reports (issue 48). A report whose region (or modality) is
known and shares none with the query's does not vote. The words are plain anatomy and technique terms; a text that
names none leaves its region unknown, and an unknown side never excludes anything.

A text's regions are those named at least half as often as its most named one, so a chest CT report that mentions
"the visualized upper abdomen" stays a chest report while a report of the chest and abdomen is both.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Mapping

from retriever.reports.any_case import AnyCase

#: Region -> words (regular expressions, matched as whole words, case-insensitive) that place a text there: its own
#: words, and for the abdomen and the pelvis the words of their organs (ORGAN_REGION), added below from ORGAN_WORDS.
_OWN_REGION_WORDS: Mapping[str, str] = {
    "head": r"brain|cerebr\w*|cerebell\w*|intracranial|intra-axial|extra-axial|subdural|epidural hematoma|"
    r"subarachnoid|ventricles|ventricular system|lateral ventricles?|fourth ventricle|third ventricle|"
    r"hydrocephalus|sella\w*|pituitary|orbits?|orbital|globe|skull|calvari\w*|frontal lobe|temporal lobe|"
    r"parietal|occipital|white matter|gray matter|grey matter|basal ganglia|thalam\w*|pons|midbrain|brainstem|"
    r"meninge\w*|dural|falx|tentori\w*|sinuses|mastoid\w*|cranial|infarct of the \w+ lobe|corpus callosum|"
    r"hippocamp\w*|cerebellopontine|internal auditory",
    "neck": r"neck|thyroid|parotid|submandibular|laryn\w*|pharyn\w*|trachea|cervical lymph|carotid|jugular|"
    r"tonsil\w*|vocal cords?|epiglott\w*",
    "spine": r"spine|spinal|vertebra\w*|intervertebral|discs?|disk|spinal cord|conus|cauda equina|foramina\w*|"
    r"thecal sac|spondyl\w*|[ctl]\d{1,2}-[ctls]?\d{1,2}|lumbar|sacr\w*|coccy\w*|facet|lamina|pedicles?",
    "chest": r"lungs?|pulmonary|pleura\w*|mediastin\w*|heart|cardiac|cardiomegaly|cardiomediastinal|hil(?:a|u)\w*|"
    r"bronch\w*|pneumothorax|costophrenic|chest|thora\w*|lobe pneumonia|airspace|air space|atelecta\w*|"
    r"pericardi\w*|emphysema|trachea|lingula\w*|apices|hemidiaphragms?|aortic arch|interstiti\w*|"
    r"upper lobe|lower lobe|middle lobe|ground[- ]glass|pneumonia",
    "abdomen": r"abdomen|abdominal|mesenter\w*|peritone\w*|retroperitone\w*|ascites|portal vein|esophag\w*|"
    r"falciform|ligamentum teres|porta hepatis|omentum|omental",
    "pelvis": r"pelvis|pelvic|rectum|rectal|cervix|vagina\w*|seminal|iliac|acetabul\w*|pubic|gestation\w*|fetal|"
    r"fetus|placent\w*|intrauterine",
    "extremity": r"knee|shoulder|elbow|wrist|ankle|hand|foot|feet|finger\w*|toes?|menisc\w*|cruciate|"
    r"collateral ligament|rotator cuff|labr\w*|tendon\w*|femur|femoral head|femoral neck|tibia\w*|fibula\w*|"
    r"humer\w*|radius|ulna\w*|patell\w*|calcane\w*|metatars\w*|metacarp\w*|phalan\w*|carpal|talus|hip joint|"
    r"glenoid|clavicle|scapula\w*|achilles|bursa\w*|joint effusion",
    "breast": r"breasts?|mammo\w*|axilla\w*|nipple|retroareolar|birads|bi-rads",
}
#: Modality -> words that say a text was written about a study of that kind.
MODALITY_WORDS: Mapping[str, str] = {
    "XR": r"radiographs?|radiographic\w*|x-rays?|xray|pa and lateral|frontal and lateral|ap view|lateral view|"
    r"portable chest|cxr|plain films?",
    "CT": r"ct|cta|computed tomograph\w*|hounsfield|hu|contrast-enhanced ct|multidetector|noncontrast ct",
    "MR": r"mri|mra|mr imaging|magnetic resonance|t[12](?:-weighted| weighted| signal| images?)|flair|"
    r"diffusion[- ]weighted|dwi|adc|gadolinium|signal intensity|hyperintens\w*|hypointens\w*",
    "US": r"ultrasound|ultrasonograph\w*|sonograph\w*|sonogram|doppler|echogenic\w*|hypoechoic|hyperechoic|"
    r"anechoic|isoechoic|transvaginal|duplex",
    "NM": r"pet|pet/ct|scintigraph\w*|nuclear medicine|radiotracer|tracer uptake|suv|spect|bone scan|fdg|"
    r"technetium|tc-99m",
}

#: Organ of the abdomen and pelvis, structure of the limbs and joints, the aorta or the heart -> words that name it: one
#: region holds many organs, and a liver question is not answered with a renal diagnosis
#: (docs/decisions/2026-11-29-abdominal-organs.md, 2026-11-29-structures-the-question-names.md).
ORGAN_WORDS: Mapping[str, str] = {
    "liver": r"liver|hepat\w*",
    "biliary": r"gallbladder|biliary|bile ducts?|common duct|cystic duct|cholecyst\w*|choledoch\w*|cholangi\w*|"
    r"cholelith\w*",
    "pancreas": r"pancrea\w*",
    "spleen": r"spleen|splen\w*",
    "kidney": r"kidneys?|renal|nephr\w*|hydronephro\w*|pyel\w*|ureter\w*|hydroureter\w*|perinephric|perirenal",
    "adrenal": r"adrenals?",
    "bowel": r"bowel|colon\w*|colitis|diverticul\w*|appendi\w*|ileus|intestin\w*|duoden\w*|jejun\w*|ile(?:um|al|itis)|"
    r"cec(?:um|al)|sigmoid|rect(?:um|al)|enteritis|crohn\w*|intussuscept\w*|volvulus",
    "stomach": r"stomach|gastric|pylor\w*",
    "bladder": r"bladder|cystitis",
    "uterus_ovary": r"uter\w*|endometri\w*|myometri\w*|ovar\w*|adnex\w*|fallopian|fibroids?|leiomyoma\w*|"
    r"hydrosalpinx",
    "prostate": r"prostat\w*",
    "scrotum": r"scrot\w*|testi(?:s|cles?|cular)|testes|epididym\w*|varicocele|hydrocele",
    # Structures of the limbs and joints: a meniscal question is not answered with a ligament's injury
    # (docs/decisions/2026-11-29-structures-the-question-names.md). The falciform ligament and the ligamentum teres
    # are liver anatomy, not ligaments of a joint.
    "meniscus": r"menisc\w*",
    "ligament": r"(?<!falciform )ligament(?!um teres)\w*|cruciate|acl|pcl|mcl|lcl|syndesmo\w*",
    "tendon": r"tendon\w*|tendin\w*|rotator cuff|supraspinatus|infraspinatus|subscapularis|teres minor|achilles",
    "labrum": r"labr\w*|slap",
    "bone": r"bones?|osseous|fractur\w*|osteomyelitis|osteopeni\w*|osteoporo\w*|osteonecrosis|ribs?|radius|ulna\w*|"
    r"tibia\w*|fibula\w*|humer\w*|calcane\w*|metatars\w*|metacarp\w*|phalan\w*|patella\w*|scaphoid|clavicle|"
    r"scapula\w*|femur|vertebral bod(?:y|ies)",
    "aorta": r"aort\w*",
    "heart": r"heart|cardi\w*|coronar\w*|myocardi\w*|pericardi\w*|mitral|tricuspid|atri(?:um|al|a)",
}

#: The region each abdominal and pelvic organ is in: the region reads its organs' words
#: (docs/decisions/2026-11-29-region-words-from-organ-words.md).
ORGAN_REGION: Mapping[str, str] = {
    **dict.fromkeys(("liver", "biliary", "pancreas", "spleen", "kidney", "adrenal", "bowel", "stomach"), "abdomen"),
    **dict.fromkeys(("bladder", "uterus_ovary", "prostate", "scrotum"), "pelvis"),
}
REGION_WORDS: Mapping[str, str] = {
    region: "|".join([own, *(ORGAN_WORDS[organ] for organ, where in ORGAN_REGION.items() if where == region)])
    for region, own in _OWN_REGION_WORDS.items()
}

#: Words by which a sentence names another study than its text's own, one it compares with or recommends ("seen on
#: prior CT", "Comparison is made with radiographs", "upper abdominal MRI is recommended"): such a sentence names no
#: modality of its text (docs/decisions/2026-11-29-other-studies-modality.md).
OTHER_STUDY_WORDS = (
    r"prior|previous|recent|since|comparison|compared|dated|recommend\w*|correlat\w*|follow-?up|"
    r"further (?:evaluation|assess\w*|characteri\w*|imaging|work-?up)|(?:could|would|should) be|ordered|"
    r"not present (?:in|on)"
)

#: Each kind's words as whole-word patterns, matched case-insensitively (fast on ASCII text: any_case.py).
_REGION = AnyCase({name: rf"\b(?:{words})\b" for name, words in REGION_WORDS.items()})
_MODALITY = AnyCase({name: rf"\b(?:{words})\b" for name, words in MODALITY_WORDS.items()})
_ORGAN = AnyCase({name: rf"\b(?:{words})\b" for name, words in ORGAN_WORDS.items()})
_OTHER_STUDY = AnyCase({"other": rf"\b(?:{OTHER_STUDY_WORDS})\b"})
_SENTENCE = re.compile(r"(?<=[.;!?])\s+|\n+")
#: A report's modality field as one of MODALITY_WORDS' names ("CT - noncontrast", "MRI", "Fluoro/angio").
_FIELD_MODALITY = (
    ("MR", re.compile(r"\bmri?\b", re.IGNORECASE)),
    ("CT", re.compile(r"\bct\b", re.IGNORECASE)),
    ("US", re.compile(r"\bus\b|ultra", re.IGNORECASE)),
    ("NM", re.compile(r"\bnm\b|pet|nuclear", re.IGNORECASE)),
    ("XR", re.compile(r"\bxr\b|x-?ray|radiograph|\bcr\b|\bdx\b", re.IGNORECASE)),
)
#: A region counts when named at least this share as often as the text's most named region.
DOMINANT_SHARE = 0.5


def _dominant(counts: Counter[str]) -> frozenset[str]:
    if not counts:
        return frozenset()
    top = max(counts.values())
    return frozenset(name for name, n in counts.items() if n >= DOMINANT_SHARE * top)


def regions(text: str) -> frozenset[str]:
    """The body regions `text` is mostly about (empty: it names none)."""
    return _dominant(_REGION.counts(text))


def organs(text: str) -> frozenset[str]:
    """The organs and structures `text` names (ORGAN_WORDS; empty: none)."""
    return frozenset(_ORGAN.counts(text))


def modalities(text: str, field: str = "", *, other_studies: bool = False) -> frozenset[str]:
    """The imaging modalities `text` says it was written about, or its report's modality `field` when that names
    one (empty: unknown). A sentence that names another study (OTHER_STUDY_WORDS) does not count, unless
    `other_studies` (the reading before that rule, kept so eval.diagnosis.modality_reading measures both)."""
    for name, rx in _FIELD_MODALITY:
        if field and rx.search(field):
            return frozenset({name})
    return _dominant(_MODALITY.counts(text if other_studies else _own_study(text)))


def _own_study(text: str) -> str:
    """`text` without the sentences that name another study than its own (the whole text when none does)."""
    if _OTHER_STUDY.first("other", text) is None:
        return text
    return " ".join(s for s in _SENTENCE.split(text) if _OTHER_STUDY.first("other", s) is None)


def compatible(query: frozenset[str], report: frozenset[str]) -> bool:
    """Whether a report may vote for a query: either side unknown, or they share a region (or modality)."""
    return not query or not report or bool(query & report)


#: The body regions of the diagnosis vocabulary (retriever.concepts.REGIONS) as regions of this module; a vocabulary
#: region not listed ("vascular") occurs anywhere.
CONCEPT_REGIONS: Mapping[str, frozenset[str]] = {
    "chest": frozenset({"chest"}),
    "abdomen": frozenset({"abdomen"}),
    "pelvis": frozenset({"pelvis"}),
    "neuro": frozenset({"head", "spine"}),
    "spine": frozenset({"spine"}),
    "msk": frozenset({"extremity", "spine", "pelvis"}),
    "breast": frozenset({"breast"}),
    "head_neck": frozenset({"head", "neck"}),
}


def concept_regions(concept_regions: tuple[str, ...]) -> frozenset[str]:
    """Where a concept of the vocabulary occurs, as regions of this module (empty: anywhere)."""
    if not concept_regions or any(r not in CONCEPT_REGIONS for r in concept_regions):
        return frozenset()
    return frozenset().union(*(CONCEPT_REGIONS[r] for r in concept_regions))
