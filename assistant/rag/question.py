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
from functools import cache

from assistant.rag.injection import plain
from retriever.concepts import Concept, affirmed_concepts, affirmed_in, default_vocabulary, ruled_out_concepts
from retriever.concepts.normalize import tokens
from retriever.negation.rules import negated_ranges
from retriever.negation.tokens import STOPWORDS
from retriever.reports.impression import conclusion_items, positive_items
from retriever.search.region import compatible, concept_regions, modalities, organs, regions

#: What an answer says when the question describes nothing abnormal.
NO_ABNORMALITY = "no abnormality described"
#: Why a question that names nothing a finding is made of ("hello", "test", "N/A") gets no diagnosis.
NO_FINDING = (
    "no finding described: the question names no finding, organ or study; describe what the images show, e.g. "
    "'small left pleural effusion'"
)
#: Words a question may hold besides its findings: section labels and question words (stopwords aside).
_NOT_FINDINGS = frozenset({"findings", "finding", "impression", "impressions", "report", "please", "question"})
#: A negative or normal statement: without one, a text that states nothing abnormal asks (a follow-up such as "Could
#: it be an empyema?") or recommends, and is no negative question.
_NEGATIVE = re.compile(r"\b(?:no|not|normal|negative|without|clear|unremarkable|absent|none|nil)\b", re.IGNORECASE)
#: How findings say an organ is normal in words an impression's normal item does not start with ("The heart is
#: normal in size", "Calibrations of the vascular structures are natural", "Both main bronchi are open").
#: A bare "no" or "without" is none of them: "... preferentially affected early No contrast enhancement" and "Low
#: lung volumes without focal consolidation" describe something abnormal beside what they rule out.
_NORMAL_WORDS = re.compile(
    r"\b(?:normal|natural|unremarkable|preserved|intact|patent|open|clear|within normal limits|not|none|nil"
    r"|negative)\b",
    re.IGNORECASE,
)
#: Words that describe something abnormal whatever organ they are about ("Hypoattenuating area along the falciform
#: ligament; the remaining liver parenchyma is normal", "Decreased attenuation of the pancreas, otherwise normal"):
#: a sentence holding one that no negation reaches is abnormal, though the vocabulary names no diagnosis in it.
_ABNORMAL_WORDS = re.compile(
    r"\b(?:abnormal\w*|enlarg\w*|thicken\w*|heterogene\w*|enhanc\w*|mass\w*|lesion\w*|nodul\w*|opacit\w*|densit\w*"
    r"|dilat\w*|disten\w*|increased|decreased|reduced|elevat\w*|hyper\w+|hypo\w+|irregular\w*|calcifi\w*|fluid"
    r"|collection\w*|defect\w*|swell\w*|o?edema\w*|narrow\w*|signal|attenuat\w*|effusion\w*|fractur\w*|tear\w*"
    r"|torn|cyst\w*|focal|small|large|mild\w*|moderate\w*|severe\w*|marked\w*|minimal|trace|subtle|prominen\w*"
    r"|loss|widen\w*|deviat\w*|shift\w*|displace\w*|erosi\w*|destruct\w*|scleros\w*|sclerotic|lytic|blunt\w*|free"
    r"|air|gas|thromb\w*|occlu\w*|stenos\w*|infiltrat\w*|consolidat\w*|atelecta\w*|herniat\w*|bulg\w*|protru\w*"
    r"|spur\w*|osteophyt\w*|degenerat\w*|tortu\w*|ectatic|aneurysm\w*|suspicious|concerning|compatible|consistent"
    r"|suggest\w*|likely|probabl\w*|possibl\w*|may|versus|vs|borderline|larger|smaller|top normal|high normal"
    r"|upper limits? of normal|first limits of normal)\b",
    re.IGNORECASE,
)
_OPENS_NEGATED = re.compile(r"\W*(?:no|negative for|without)\b", re.IGNORECASE)
#: A negative or normal sentence that goes on to name something else ("Normal spine, with incidentally noted intense
#: focal uptake ..."): not purely negative.
_BUT = re.compile(r",?\s+\b(?:with|but|except|however|although|apart from|other than)\b", re.IGNORECASE)


#: An organ a normal sentence names -> the concepts that sentence rules out, as a negation does: "Heart size normal."
#: is no cardiomegaly (docs/decisions/2026-11-29-normal-organ-rules-out.md, each kept for erring on <= 1% of the
#: train reports it applies to).
NORMAL_ORGAN_RULES_OUT: tuple[tuple[re.Pattern[str], frozenset[str]], ...] = (
    (re.compile(r"\b(?:heart|cardiac|cardio ?mediastinal)\b", re.IGNORECASE), frozenset({"rad:cardiomegaly"})),
    (
        re.compile(
            r"\b(?:mediastinum|mediastinal (?:contours?|silhouette|width)|cardio ?mediastinal)\b", re.IGNORECASE
        ),
        frozenset({"rad:mediastinal_widening"}),
    ),
    (
        re.compile(
            r"^(?!.*\b(?:otherwise|remainder|remaining|rest|elsewhere|except|apart|right|left|volumes?)\b)"
            r".*\b(?:lungs|lung fields)[\s:,]+(?:\w+\s+){0,3}?(?:clear|normal|unremarkable)\b",
            re.IGNORECASE,
        ),
        frozenset(
            {"rad:pneumonia", "rad:consolidation", "rad:airspace_disease", "rad:infiltrate", "rad:pulmonary_edema"}
        ),
    ),
)


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
    #: The organs and structures it names: abdominal, pelvic, of the limbs, the aorta, the heart (region.ORGAN_WORDS).
    organs: frozenset[str] = frozenset()
    #: The ids of the concepts its findings affirm ("Free air under the right hemidiaphragm": pneumoperitoneum).
    affirmed: frozenset[str] = frozenset()
    #: It names nothing a finding is made of ("hello", "N/A"): no word of the diagnosis vocabulary, of a body region
    #: or modality, and none that describes something abnormal. A normal statement ("None.") is purely negative.
    describes_nothing: bool = False

    def rules_out(self, concept: Concept) -> bool:
        """Whether the question's own findings mention `concept` only as ruled out ("No pleural effusion")."""
        return concept.id in self.ruled_out

    def fits(self, concept: Concept) -> bool:
        """Whether `concept` occurs in the question's body region (either side unknown, or they share one): a knee
        question is never answered with a brain tumour, however the reports that affirm it got in; nor a liver
        question with a renal mass, when the question names an abdominal organ and the concept's name names others
        (docs/decisions/2026-11-29-abdominal-organs.md), nor a meniscal tear with a ligament's injury (the same for
        the structures of the limbs, the aorta and the heart: 2026-11-29-structures-the-question-names.md). One the
        question itself affirms is of its own region, whatever the vocabulary says: a chest radiograph's free air
        under the diaphragm is pneumoperitoneum (docs/decisions/2026-11-29-what-the-question-names-fits.md)."""
        if concept.id in self.affirmed:
            return True
        in_region = compatible(self.regions, concept_regions(concept.regions))
        return in_region and (not self.organs or compatible(self.organs, _name_organs(concept.name)))

    def described(self) -> tuple[Concept, ...]:
        """The diagnoses and findings its findings affirm (not the appearances: "opacity", "mass"), by name: what
        the similar reports should affirm if they are about what it describes."""
        concepts = default_vocabulary().concepts
        found = (concepts[i] for i in self.affirmed)
        return tuple(sorted((c for c in found if c.kind != "appearance"), key=lambda c: c.name))

    def admits(self, report_text: str, report_modality: str = "") -> bool:
        """Whether a report may vote for this question: its region and its modality, where both sides name one,
        are the question's."""
        return compatible(self.regions, regions(report_text)) and compatible(
            self.modalities, modalities(report_text, report_modality)
        )


def read_question(text: str) -> Question:
    """The question `text` as the answer reads it."""
    where, study, judged = regions(text), modalities(text), plain(text)
    purely_negative = _NEGATIVE.search(text) is not None and all(map(_normal_sentence, conclusion_items(text)))
    return Question(
        text=text,
        regions=where,
        modalities=study,
        purely_negative=purely_negative,
        ruled_out=ruled_out_concepts(judged) | normal_organs_rule_out(text),
        affirmed=frozenset(c.id for c in affirmed_concepts(judged)),
        organs=organs(text),
        describes_nothing=not (purely_negative or where or study) and _names_nothing(judged),
    )


def _names_nothing(text: str) -> bool:
    """Whether `text` holds no word a finding is made of: none of the diagnosis vocabulary's words (both layers,
    folded as the linker folds them), and none that describes something abnormal; stopwords, section labels, single
    letters and bare numbers do not count. docs/decisions/2026-11-29-questions-without-findings.md"""
    if _ABNORMAL_WORDS.search(text):
        return False
    words = {t.word for t in tokens(text) if len(t.word) > 1 and not t.word.isdigit()} - STOPWORDS - _NOT_FINDINGS
    return not words & _vocabulary_words()


@cache
def _name_organs(name: str) -> frozenset[str]:
    """The organs a concept's preferred name places it in, read once per name: `fits` asks it for every concept of
    every voting report."""
    return organs(name)


@cache
def _vocabulary_words() -> frozenset[str]:
    """Every (folded) word of the diagnosis vocabulary's names and synonyms."""
    return frozenset(word for phrase in default_vocabulary().names() for word in phrase)


def normal_organs_rule_out(text: str) -> frozenset[str]:
    """The concept ids `text`'s normal sentences rule out (NORMAL_ORGAN_RULES_OUT), unless it affirms them elsewhere."""
    out: set[str] = set()
    for sentence in conclusion_items(text):
        named = [ids for rx, ids in NORMAL_ORGAN_RULES_OUT if rx.search(sentence)]
        if named and _normal_sentence(sentence):
            out.update(*named)
    return frozenset(out - {c.id for c in affirmed_concepts(text)}) if out else frozenset()


def stated_diagnosis(diagnosis: str | None, degraded_kind: str | None) -> str | None:
    """What an answer states as its diagnosis: its diagnosis, or "no abnormality described" for a question that
    describes nothing abnormal (that answer has no diagnosis field; `ask` and the chat show the words). The
    benchmark grades this, so a normal study answered so counts as answered."""
    return NO_ABNORMALITY if degraded_kind == "no_abnormality" else diagnosis


def _normal_sentence(sentence: str) -> bool:
    """Whether one sentence of a question states nothing abnormal: it affirms no diagnosis the vocabulary knows, and
    it describes nothing abnormal outside a negation, and it starts as an impression's normal item does ("No ...",
    "Normal ...") or says its organ is normal in other words. A sentence with neither ("Stool-distended bowel to
    the rectum") stays abnormal, so a finding the vocabulary lacks is never taken for a normal one; one that affirms
    a diagnosis stays abnormal however it starts ("No effusion.. Cardiomegaly is noted", one sentence to the
    splitter). docs/decisions/2026-11-29-normal-studies.md"""
    if _BUT.search(sentence) or affirmed_in(sentence) or _describes_abnormal(sentence):
        return False
    return not positive_items(sentence) or _NORMAL_WORDS.search(sentence) is not None


def _describes_abnormal(sentence: str) -> bool:
    """Whether a word that describes something abnormal stands in `sentence` outside every negation's scope
    ("Pericardial effusion-thickening was not observed" holds two, both negated). A sentence that opens with its
    negation ("No suspicious mass or nodular lesion was observed") rules out all it names: the scope rules stop
    short of some of its words."""
    if _OPENS_NEGATED.match(sentence):
        return False
    found = [m.span() for m in _ABNORMAL_WORDS.finditer(sentence)]
    return bool(found) and not all(negated_ranges(sentence, found))
