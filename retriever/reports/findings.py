"""The findings residents search by: per dataset label, the words a resident types and the terms that mention it.

One vocabulary for everything that must agree on what counts as a mention of a finding: the negated-hit rate of
search and the negation-detector comparison (eval.negation.negated_hits, eval.negation.detection), the real-sentence
negation test (eval.negation.real_pairs) and training's label-query negation triplets (retriever.negation.label_pairs).
The lists are the labels of the two shared datasets that carry them (NegBio's Open-i labels, CT-RATE's predicted
labels), with recall-minded term lists: chest findings, so they apply to those sources' reports only.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass


@dataclass(frozen=True)
class Finding:
    """A dataset label, the words a resident would search it by, and the terms that mention it in a report."""

    label: str
    query: str
    terms: tuple[str, ...]


#: NegBio's 14 Open-i labels (negbio_labels14.csv columns, "normal" aside).
OPENI_FINDINGS: tuple[Finding, ...] = (
    Finding("Atelectasis", "atelectasis", ("atelectasis", "atelectases", "atelectatic")),
    Finding(
        "Cardiomegaly",
        "cardiomegaly",
        (
            "cardiomegaly",
            "cardiac enlargement",
            "enlarged heart",
            "enlarged cardiac silhouette",
            "enlargement of the cardiac silhouette",
            "cardiac silhouette is enlarged",
        ),
    ),
    Finding(
        "Effusion",
        "pleural effusion",
        ("pleural effusion", "pleural effusions", "effusion", "effusions", "pleural fluid"),
    ),
    Finding("Infiltration", "pulmonary infiltrate", ("infiltrate", "infiltrates", "infiltration", "infiltrative")),
    Finding("Mass", "lung mass", ("mass", "masses")),
    Finding("Nodule", "lung nodule", ("nodule", "nodules", "nodular")),
    Finding("Pneumonia", "pneumonia", ("pneumonia", "pneumonias")),
    Finding("Pneumothorax", "pneumothorax", ("pneumothorax", "pneumothoraces")),
    Finding("Consolidation", "consolidation", ("consolidation", "consolidations", "consolidative")),
    Finding("Edema", "pulmonary edema", ("edema", "oedema")),
    Finding("Emphysema", "emphysema", ("emphysema", "emphysematous")),
    Finding("Fibrosis", "pulmonary fibrosis", ("fibrosis", "fibrotic")),
    Finding("Pleural_Thickening", "pleural thickening", ("pleural thickening",)),
    Finding("Hernia", "hiatal hernia", ("hernia", "hernias")),
)

#: CT-RATE's 18 predicted labels (valid_predicted_labels.csv columns); the query is the label in lower case.
CTRATE_FINDINGS: tuple[Finding, ...] = tuple(
    Finding(label, label.lower(), terms)
    for label, terms in (
        (
            "Medical material",
            (
                "medical material",
                "surgical material",
                "fixation material",
                "stent",
                "stents",
                "catheter",
                "pacemaker",
                "prosthesis",
                "prosthetic",
                "sternotomy",
                "cannula",
                "clips",
            ),
        ),
        (
            "Arterial wall calcification",
            (
                "arterial wall calcification",
                "atheroma",
                "atheromatous",
                "atherosclerotic",
                "atherosclerosis",
                "calcific plaque",
                "calcific plaques",
                "calcified plaque",
                "calcified plaques",
                "vascular calcification",
            ),
        ),
        ("Cardiomegaly", ("cardiomegaly", "cardiac enlargement", "enlarged heart")),
        ("Pericardial effusion", ("pericardial effusion", "pericardial effusions", "pericardial fluid")),
        ("Coronary artery wall calcification", ("coronary",)),
        ("Hiatal hernia", ("hiatal hernia", "hiatus hernia", "hernia")),
        ("Lymphadenopathy", ("lymphadenopathy", "adenopathy", "lymph node", "lymph nodes")),
        ("Emphysema", ("emphysema", "emphysematous")),
        ("Atelectasis", ("atelectasis", "atelectatic", "fibroatelectasis", "fibroatelectatic")),
        ("Lung nodule", ("nodule", "nodules", "nodular")),
        (
            "Lung opacity",
            ("opacity", "opacities", "ground glass", "ground-glass", "density increase", "density increases"),
        ),
        ("Pulmonary fibrotic sequela", ("fibrotic", "fibrosis", "sequela", "sequelae")),
        ("Pleural effusion", ("pleural effusion", "pleural effusions", "pleural fluid")),
        ("Mosaic attenuation pattern", ("mosaic attenuation", "mosaic")),
        (
            "Peribronchial thickening",
            ("peribronchial thickening", "peribronchial thickenings", "peribronchial thickness", "peribronchial"),
        ),
        ("Consolidation", ("consolidation", "consolidations", "consolidative")),
        ("Bronchiectasis", ("bronchiectasis", "bronchiectases", "bronchiectatic")),
        (
            "Interlobular septal thickening",
            (
                "interlobular septal thickening",
                "septal thickening",
                "septal thickenings",
                "septal thickness",
                "interlobular septa",
                "interlobular septal",
            ),
        ),
    )
)

#: Label sets by the source whose reports carry them.
FINDINGS_BY_SOURCE: dict[str, tuple[Finding, ...]] = {"openi": OPENI_FINDINGS, "ctrate": CTRATE_FINDINGS}


def owners(findings: Iterable[Finding]) -> dict[str, Finding]:
    """term -> the first finding that lists it."""
    owner: dict[str, Finding] = {}
    for finding in findings:
        for term in finding.terms:
            owner.setdefault(term, finding)
    return owner


#: Per source with a label list (Open-i, CT-RATE), its findings by term. Reports of other sources have none: their
#: findings are not labelled, and "mass" in a neck MRI is no lung mass.
OWNERS: dict[str, dict[str, Finding]] = {source: owners(f) for source, f in FINDINGS_BY_SOURCE.items()}
