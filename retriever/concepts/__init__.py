"""Diagnosis concepts: impression text linked to a vocabulary of diagnoses and imaging findings (issue 48).

`link(text)` names the concepts a fragment mentions; `affirmed_concepts(impression)` the ones an impression affirms.
The vocabulary is a hand-written radiology layer over an ICD-10-CM fallback (vocabulary.py); anything that links to
none of its concepts (exams, procedures, anatomy, adjectives, measurements, sign-offs) is no candidate.
"""

from retriever.concepts.affirmed import affirmed_concepts, affirmed_in, ruled_out_concepts
from retriever.concepts.concept import KINDS, REGIONS, Concept
from retriever.concepts.matcher import Mention, gives_way, link, mentions
from retriever.concepts.vocabulary import VocabularyError, default_vocabulary

__all__ = [
    "KINDS",
    "REGIONS",
    "Concept",
    "Mention",
    "VocabularyError",
    "affirmed_concepts",
    "affirmed_in",
    "default_vocabulary",
    "gives_way",
    "link",
    "mentions",
    "ruled_out_concepts",
]
