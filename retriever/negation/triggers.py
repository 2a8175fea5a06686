"""The NegEx trigger tables shared by the negation detector (rules.py) and the lexical scopes (scope.py).

One set of tables, so that "is this finding ruled out" (rules.is_negated) and "which BM25 words are negated"
(scope.scoped_words) can never disagree; the BM25 tokenizer fingerprint (tokens.py) hashes all of them, so an index
tokenized under other tables knows it is stale. The lists follow NegEx (Chapman et al., 2001) and were extended on
real report phrasing (eval/datasets/negation_sentences.jsonl, train + dev reports only): negations written after
the finding ("Pleural effusion was not detected."), resolution ("have cleared"), and hedges that only sound like
negations ("cannot be excluded", "rule out X") which leave the finding possible, not ruled out.
"""

from __future__ import annotations

from itertools import product

WINDOW = 6  # words a trigger always reaches, as in NegEx
#: Words a trigger reaches through a list of findings ("no A, B, C, or D"; "A, B and C were not detected"). Beyond
#: WINDOW a scope only continues through a coordination (see scope.py) and never across a CLAUSE_VERBS word.
LIST_WINDOW = 15

_BE = ("is", "are", "was", "were")
#: "not detected" etc.: the finding comes first. The forms with a copula keep "X is not detected" one trigger, so
#: the copula before it does not count as the verb of a new clause.
_NOT_FOUND = (
    "detected",
    "observed",
    "evident",
    "visualized",
    "visualised",
    "appreciated",
    "noted",
    "visible",
    "demonstrated",
    "identified",
    "present",
    "seen",
)

PRE_NEGATION: tuple[str, ...] = (
    "no evidence of",
    "no evidence for",
    "no signs of",
    "no sign of",
    "no suspicious",
    "no definite",
    "no radiographic evidence of",
    "no ct evidence of",
    "no findings of",
    "no findings to suggest",
    "without evidence of",
    "without",
    "negative for",
    "free of",
    "clear of",  # "The lungs are clear of focal airspace disease, pneumothorax or pleural effusion"
    "absence of",
    "absent",
    "rules out",
    "ruled out",  # "rule out X" is a request to look for X: PRE_UNCERTAINTY
    "not",
    "no",
    "none",
    "neither",
    "nor",
    "denies",
    "denied",
    "resolution of",
    "resolved",
    "there is no",
    "there are no",
    "cannot see",
    "fails to reveal",
    "not demonstrate",
    "not seen",
)
POST_NEGATION: tuple[str, ...] = (
    "is absent",
    "are absent",
    *(f"{be} not {seen}" for be, seen in product(_BE, _NOT_FOUND)),
    *(f"not {seen}" for seen in _NOT_FOUND if seen != "seen"),  # bare "not seen" is a pre-negation
    "has resolved",
    "have resolved",
    "had resolved",
    "now resolved",
    "appears resolved",
    "appear resolved",
    "is resolved",
    "are resolved",
    "has completely resolved",
    "have completely resolved",
    "completely resolved",
    "has cleared",
    "have cleared",
    "had cleared",
    "shows complete resolution",
    "show complete resolution",
    "showed complete resolution",
    "no longer seen",
    "no longer present",
    "no longer visualized",
    "no longer visible",
    "no longer identified",
    "no longer evident",
    "no longer demonstrated",
    "was ruled out",
    "is ruled out",
    "has been ruled out",
    "have been ruled out",
    "was excluded",
    "were excluded",
    "is excluded",
    "are excluded",
    "has been excluded",
    "have been excluded",
    "unlikely",
    "free",
)
PSEUDO_NEGATION: tuple[str, ...] = (
    "no change",
    "no significant change",
    "no interval change",
    "no increase",
    "no definite change",
    "not only",
    "not necessarily",
    "not certain if",
    "not certain whether",
    "without difficulty",
    "gram negative",
    "not extend",
    "no significant interval change",
    # classification qualifiers, not negations: "pneumonia, not otherwise specified", "NOS" expanded, "side not
    # specified" (without them "not specified early syphilis" searched for reports ruling syphilis out)
    "not specified",
    "not otherwise specified",
    "not elsewhere specified",
    "not elsewhere classified",
    # a finding only partly gone is still there
    "partial resolution",
    "partially resolved",
    "incomplete resolution",
    "incompletely resolved",
    "almost completely resolved",
    "nearly resolved",
    "near complete resolution",
    "not resolved",
    "not completely resolved",
    "not fully resolved",
    # a finding not on the prior study is new, i.e. present now
    *(
        f"not {seen} {on}"
        for seen, on in product(
            ("seen", "visualized", "present", "identified", "evident"),
            ("on prior", "on the prior", "previously", "on previous"),
        )
    ),
    # technique, not findings: "CT without contrast showed ventricular enlargement"
    "without contrast",
    "without intravenous contrast",
    "without iv contrast",
    "without and with",
)
_CANNOT = ("cannot", "can not", "could not")
_FULLY = ("", "entirely ", "completely ", "totally ", "confidently ", "definitely ", "definitively ", "fully ")
#: Hedges after the finding: it stays possible, so it is not ruled out even if a negation elsewhere in the clause
#: would reach it ("As an MRA was not obtained, an aneurysm cannot be entirely excluded.").
POST_UNCERTAINTY: tuple[str, ...] = (
    *(f"{aux} be {fully}{verb}" for aux, fully, verb in product(_CANNOT, _FULLY, ("excluded", "ruled out"))),
    *(f"{aux} {fully}be {verb}" for aux, fully, verb in product(_CANNOT, _FULLY[1:], ("excluded", "ruled out"))),
    "not excluded",
    "not ruled out",
    "not entirely excluded",
    "not completely excluded",
)
#: Hedges before the finding: "rule out pulmonary embolism", "to exclude an underlying mass".
PRE_UNCERTAINTY: tuple[str, ...] = (
    "rule out",
    "to rule out",
    "to exclude",
    "cannot exclude",
    "can not exclude",
    "could not exclude",
    "cannot rule out",
    "can not rule out",
    "could not rule out",
    "not exclude",
    "not rule out",
)
TERMINATION: tuple[str, ...] = (
    "but",
    "however",
    "although",
    "though",
    "except",
    "apart from",
    "aside from",
    "which",
    "yet",
    "whereas",
    "nevertheless",
    "still",
    "cause of",
    "source of",
    "etiology of",
    "secondary to",
    # a new clause affirming something: "X is not detected, and there are small nodules"
    "there is",
    "there are",
    "there was",
    "there were",
)
#: A pre-negation describes a property of a thing named with a definite article after a locative preposition,
#: not the thing: "no enhancement within the thrombus", "absent flow to the mass" (the thrombus and mass exist).
PRE_TERMINATION: tuple[str, ...] = tuple(
    f"{where} {which}"
    for where, which in product(
        ("within", "around", "surrounding", "surround", "to", "into", "inside"),
        ("the", "this", "that", "these", "those", "its", "their"),
    )
)
#: Words that begin a new subject after a comma or ", and": a pre-negation's scope ends before them ("no hepatic
#: lesions, and all mesenteric nodes were sub-centimeter": the nodes are there; "due to no evidence of bleeding,
#: the patient remained stable").
NEW_SUBJECT: frozenset[str] = frozenset(("the", "all", "this", "these", "those", "its", "their", "each", "both"))
#: A whole answer after a colon that says what the words before the colon name is absent: "Evaluation for
#: pneumothorax: none identified", "Adnexa: not seen", "Pleural effusions: absent" (scope.py negates that label).
COLON_NEGATION: tuple[str, ...] = (
    "none",
    "no",
    "not",
    "absent",
    "negative",
    "nil",
    *(f"{no} {seen}" for no, seen in product(("none", "not"), _NOT_FOUND)),
)
#: Verbs that start a predicate: a scope stretched past WINDOW through a list stops at them ("No A or B is seen,
#: and C" does not reach C; "A, B and C were not detected" reaches A, whose copula is part of the trigger).
CLAUSE_VERBS: frozenset[str] = frozenset(
    (
        "is",
        "are",
        "was",
        "were",
        "be",
        "been",
        "has",
        "have",
        "had",
        "shows",
        "show",
        "showed",
        "demonstrates",
        "demonstrated",
        "reveals",
        "revealed",
        "suggests",
        "represents",
        "measures",
        "measuring",
        "contains",
    )
)
