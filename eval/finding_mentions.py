"""Does a text affirm a finding, only rule it out, or not mention it at all?

Two measurements need the same answer: the negation-detector comparison (eval.negation_detection, judged against
NegBio's Open-i labels) and the negated-hit rate of search (eval.negated_hits: a hit that only rules out the
query's finding). One term list per dataset label and one mention rule keep them in step.

A mention is one whole-word occurrence of a term in a sentence; where terms overlap ("pleural effusion",
"effusion") the longest wins. A detector judges a concept at its first occurrence in the text it is given (as
retriever.negation.is_negated does), so a later occurrence is judged on the sentence from the end of the previous
one: in "No left effusion, small right effusion" the second mention is affirmed. The term lists are recall-minded
but cannot see every phrasing: "the heart is not enlarged" names no cardiomegaly term, so such a text counts as
not mentioning it (the negated-hit rate is a lower bound for those findings).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from enum import StrEnum

from retriever.negation_pairs import mention_spans, sentences, term_spans

#: (text, concept) -> whether the concept's first whole-word occurrence in the text is negated.
Detector = Callable[[str, str], bool]


class Status(StrEnum):
    """What a text says about one finding."""

    ABSENT = "absent"
    AFFIRMED = "affirmed"
    NEGATED = "negated"  # mentioned, and every mention negated


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
    Finding("Effusion", "pleural effusion", ("pleural effusion", "pleural effusions", "effusion", "effusions",
                                             "pleural fluid")),
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
        ("Medical material", ("medical material", "surgical material", "fixation material", "stent", "stents",
                              "catheter", "pacemaker", "prosthesis", "prosthetic", "sternotomy", "cannula", "clips")),
        ("Arterial wall calcification", ("arterial wall calcification", "atheroma", "atheromatous",
                                         "atherosclerotic", "atherosclerosis", "calcific plaque", "calcific plaques",
                                         "calcified plaque", "calcified plaques", "vascular calcification")),
        ("Cardiomegaly", ("cardiomegaly", "cardiac enlargement", "enlarged heart")),
        ("Pericardial effusion", ("pericardial effusion", "pericardial effusions", "pericardial fluid")),
        ("Coronary artery wall calcification", ("coronary",)),
        ("Hiatal hernia", ("hiatal hernia", "hiatus hernia", "hernia")),
        ("Lymphadenopathy", ("lymphadenopathy", "adenopathy", "lymph node", "lymph nodes")),
        ("Emphysema", ("emphysema", "emphysematous")),
        ("Atelectasis", ("atelectasis", "atelectatic", "fibroatelectasis", "fibroatelectatic")),
        ("Lung nodule", ("nodule", "nodules", "nodular")),
        ("Lung opacity", ("opacity", "opacities", "ground glass", "ground-glass", "density increase",
                          "density increases")),
        ("Pulmonary fibrotic sequela", ("fibrotic", "fibrosis", "sequela", "sequelae")),
        ("Pleural effusion", ("pleural effusion", "pleural effusions", "pleural fluid")),
        ("Mosaic attenuation pattern", ("mosaic attenuation", "mosaic")),
        ("Peribronchial thickening", ("peribronchial thickening", "peribronchial thickenings",
                                      "peribronchial thickness", "peribronchial")),
        ("Consolidation", ("consolidation", "consolidations", "consolidative")),
        ("Bronchiectasis", ("bronchiectasis", "bronchiectases", "bronchiectatic")),
        ("Interlobular septal thickening", ("interlobular septal thickening", "septal thickening",
                                            "septal thickenings", "septal thickness", "interlobular septa",
                                            "interlobular septal")),
    )
)

#: Label sets by the source whose reports carry them.
FINDINGS_BY_SOURCE: dict[str, tuple[Finding, ...]] = {"openi": OPENI_FINDINGS, "ctrate": CTRATE_FINDINGS}


def mentions(text: str, terms: Iterable[str]) -> list[tuple[str, str]]:
    """(text to judge, term) per mention: the mention is the term's first occurrence in the text to judge."""
    found: list[tuple[str, str]] = []
    for sentence in sentences(text, shortest=1, longest=len(text)):
        for start, _end, term in mention_spans(sentence, terms):
            earlier = [e for s, e in term_spans(sentence, term) if s < start]
            found.append((sentence[max(earlier, default=0):], term))
    return found


def status_of(negated: Sequence[bool]) -> Status:
    """Absent without mentions; affirmed when any mention is not negated; otherwise negated."""
    if not negated:
        return Status.ABSENT
    return Status.NEGATED if all(negated) else Status.AFFIRMED


def mention_status(text: str, finding: Finding, detector: Detector) -> Status:
    """What `text` says about `finding`, by `detector`."""
    return status_of([detector(part, term) for part, term in mentions(text, finding.terms)])
