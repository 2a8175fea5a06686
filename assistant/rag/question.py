"""What the question itself says, so the answer stays consistent with it: which body region and modality it is
about, which diagnoses its own findings rule out, and whether it describes anything abnormal at all.

Why (issue 48): "Right lower lobe consolidation with air bronchograms. No pleural effusion or pneumothorax." was
answered with "effusion; pleural effusion" in its differential, "No pneumothorax." with "hypertension", and a knee
question from brain reports. The evidence differential (assistant/rag/evidence.py) reads the similar reports; this
module reads the question, once, and the pipeline keeps what the two disagree on out of the answer.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from assistant.rag.injection import plain
from retriever.concepts import Concept, ruled_out_concepts
from retriever.reports.impression import positive_items
from retriever.search.region import compatible, concept_regions, modalities, regions

#: What an answer says when the question describes nothing abnormal.
NO_ABNORMALITY = "no abnormality described"
#: A negative or normal sentence that goes on to name something else ("Normal spine, with incidentally noted intense
#: focal uptake ..."): not purely negative.
#: A negative or normal statement: without one, a text that states nothing abnormal asks (a follow-up such as "Could
#: it be an empyema?") or recommends, and is no negative question.
_NEGATIVE = re.compile(r"\b(?:no|not|normal|negative|without|clear|unremarkable|absent|none)\b", re.IGNORECASE)
_BUT = re.compile(r",?\s+\b(?:with|but|except|however|although|apart from|other than)\b", re.IGNORECASE)


@dataclass(frozen=True)
class Question:
    """A question's findings as the answer reads them."""

    text: str
    regions: frozenset[str]
    modalities: frozenset[str]
    #: No sentence of it states something abnormal ("No pneumothorax.", "Normal chest.").
    purely_negative: bool
    #: The ids of the concepts its findings name only as ruled out ("No pleural effusion").
    ruled_out: frozenset[str] = frozenset()

    def rules_out(self, concept: Concept) -> bool:
        """Whether the question's own findings mention `concept` only as ruled out ("No pleural effusion")."""
        return concept.id in self.ruled_out

    def fits(self, concept: Concept) -> bool:
        """Whether `concept` occurs in the question's body region (either side unknown, or they share one): a knee
        question is never answered with a brain tumour, however the reports that affirm it got in."""
        return compatible(self.regions, concept_regions(concept.regions))

    def admits(self, report_text: str, report_modality: str = "") -> bool:
        """Whether a report may vote for this question: its region and its modality, where both sides name one,
        are the question's."""
        return compatible(self.regions, regions(report_text)) and compatible(
            self.modalities, modalities(report_text, report_modality)
        )


def read_question(text: str) -> Question:
    """The question `text` as the answer reads it."""
    return Question(
        text=text,
        regions=regions(text),
        modalities=modalities(text),
        purely_negative=not positive_items(text) and not _BUT.search(text) and _NEGATIVE.search(text) is not None,
        ruled_out=ruled_out_concepts(plain(text)),
    )
