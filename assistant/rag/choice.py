"""The model chooses among the evidence instead of paraphrasing it: the candidates of the evidence differential
(assistant/rag/evidence.py) become the only answers the model may give, besides "other" and a name of its own.

Why: a 1.5B model shown whole reports copies their words, negated ones included, and its free-text answer must then
be matched back to the evidence. Given the candidates with their support and a JSON schema whose `diagnosis` is an
enum of them (llama.cpp turns it into a grammar; an OpenAI-compatible server into guided decoding), its answer is
one of the diagnoses the similar reports affirm, or explicitly its own. The answer is also short (a few tokens),
which is most of an answer's time on a CPU.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from typing import Any

from assistant.llm.base import LLM, LLMResult
from assistant.rag.answer import MAX_DIAGNOSIS_CHARS, ParsedOutput, UnparseableOutput, loads_or_none, parse_output
from assistant.rag.beside import ask_alone
from assistant.rag.evidence import EvidenceDifferential
from assistant.text import shorten

#: The choice that means "none of the candidates": the model then names its own diagnosis in OWN_FIELD.
OTHER = "other"
OWN_FIELD = "other_diagnosis"
#: What the model's own name must look like: a letter first, then at least two of the characters a choice may hold.
#: Unbounded on purpose: llama-cpp-python expands a bounded repetition into a grammar rule per character, which
#: slows generation (answer.answer_schema); the answer's token limit bounds the name.
OWN_NAME_PATTERN = r"^[A-Za-z][A-Za-z0-9 '\-(),./]{2,}$"
#: Own "names" that name nothing: the choice then falls back to the evidence (counted by the benchmarks).
NOT_A_NAME = frozenset(
    {"", OTHER, "others", "unknown", "none", "n/a", "na", "not applicable", "no diagnosis", "diagnosis", "uncertain"}
)
#: An own name restates the findings (choice._echoes) when it has at least ECHO_WORDS words, all of them the query's,
#: and at least ECHO_SHARE of the query's distinct words.
ECHO_WORDS = 3
ECHO_SHARE = 0.5
#: Candidates of the evidence differential listed after the chosen one, and supporting reports cited for it.
MAX_CHOICE_DIFFERENTIAL = 4
MAX_CITED = 5
#: Longest candidate name offered as a choice.
MAX_CHOICE_CHARS = 80
#: What a choice's name may hold. The names come from report text and become a grammar (llama.cpp) or a guided
#: decoding pattern (a server): a quote or a backslash there broke llama-cpp-python's grammar parser, which then
#: crashed the process (a report with `takayasu"s arteritis`), so everything else is dropped.
_UNSAFE = re.compile(r"[^A-Za-z0-9 '\-(),./+%&]")
_QUOTES = str.maketrans({"\u2018": "'", "\u2019": "'", "\u02bc": "'", "\u201c": "'", "\u201d": "'", '"': "'"})


def choice_name(text: str) -> str:
    """A candidate's name as the model may choose it: letters, digits and plain punctuation only."""
    plain = unicodedata.normalize("NFKC", text).translate(_QUOTES)
    return " ".join(_UNSAFE.sub(" ", plain).split())[:MAX_CHOICE_CHARS].strip()


@dataclass(frozen=True)
class Choice:
    """What the model chose: a candidate's name, or its own diagnosis (`own` True)."""

    diagnosis: str
    own: bool


def choice_schema(names: list[str]) -> dict[str, Any]:
    """The answer's JSON schema: one of the candidates, or OTHER together with a name of the model's own.

    Why two branches: with `other_diagnosis` merely allowed, the embedded model chose `other` and stopped (4 of 6
    questions in issue 48's review), and the answer fell back to the evidence. Here `other` can only be written
    followed by a name that starts with a letter, so every choice names what it chooses. The name keeps to the
    characters a candidate may hold (`choice_name`), which also keeps the grammar valid for llama.cpp."""
    own = {
        "type": "object",
        "properties": {
            "diagnosis": {"const": OTHER},
            OWN_FIELD: {"type": "string", "pattern": OWN_NAME_PATTERN},
        },
        "required": ["diagnosis", OWN_FIELD],
        "additionalProperties": False,
    }
    offered = [name for name in dict.fromkeys(names) if name.lower() != OTHER]
    if not offered:
        return own
    candidate = {
        "type": "object",
        "properties": {"diagnosis": {"type": "string", "enum": offered}},
        "required": ["diagnosis"],
        "additionalProperties": False,
    }
    return {"anyOf": [candidate, own]}


def render_choices(evidence: EvidenceDifferential, names: list[str]) -> str:
    """The candidates as the prompt lists them, most supported first, one a line with how many similar reports affirm
    it (`- emphysema (5)`). Terse on purpose: every prompt token is time to the first answer token on a CPU (about
    10 ms each for the embedded model on 2 cores), and this form costs half the tokens of a tag per candidate
    (docs/decisions/2026-11-27-shorter-choice-prompt.md). `names` are the candidates' names as the schema spells them:
    choice_name leaves them one line of plain characters, so they need no delimiters to stay data."""
    if not names:
        return "(none: no similar report affirms a diagnosis)"
    return "\n".join(
        f"- {name} ({candidate.count})" for candidate, name in zip(evidence.candidates, names, strict=True)
    )


class Nameless(UnparseableOutput):
    """The model chose `other` and named nothing (no name, or a placeholder such as "other" or "none")."""


def _named(name: str) -> str:
    """`name` when it names a diagnosis; Nameless when it is empty or a placeholder ("other", "unknown"), which the
    schema's pattern cannot rule out but which names nothing."""
    if name.strip(" .").lower() in NOT_A_NAME:
        raise Nameless(f"the model chose `other` without naming a diagnosis ({name!r})")
    return name


def nameless(text: str, names: list[str]) -> bool:
    """Whether the model's output chose `other` and named nothing (a placeholder): it is then asked once from the
    findings alone."""
    try:
        parse_choice(text, names)
    except Nameless:
        return True
    except UnparseableOutput:
        return False
    return False


def _echoes(name: str, query: str) -> bool:
    """Whether `name` restates the findings: words of the query only, at least ECHO_WORDS of them, and at least
    ECHO_SHARE of the query's distinct words. A diagnosis the findings themselves name ("aberrant right subclavian
    artery" in a longer description) is not an echo; on the 306 benchmark cases no own answer was one."""
    words, asked = set(re.findall(r"[a-z0-9]+", name.lower())), set(re.findall(r"[a-z0-9]+", query.lower()))
    return len(words) >= ECHO_WORDS and words <= asked and len(words) >= ECHO_SHARE * len(asked)


def ask_for_a_name(llm: LLM, query: str, first: LLMResult, call: dict[str, Any], notes: list[str]) -> LLMResult:
    """The model's own diagnosis after it chose `other` and named nothing: its answer from the findings alone
    (beside.ask_alone), which parse_choice reads as a name of its own (or as a candidate, when it names one). Why: the
    dev run of prompt version 4 chose `other` named "other" or "None" in 5 of 136 cases, and shown its own answer
    and asked again for a name it wrote the same; asked from the findings alone it names a diagnosis. Same deadline
    as the first call (`call`'s `started_at`); the timings and token counts are the two calls' sums."""
    notes.append("answer: the model chose `other` without naming a diagnosis; it was asked from the findings alone")
    second = ask_alone(llm, query, call, notes)
    timings = {"total": first.timings.get("total", 0.0) + second.timings.get("total", 0.0)}
    usage = {k: first.usage.get(k, 0) + second.usage.get(k, 0) for k in {*first.usage, *second.usage}}
    return LLMResult(second.text, second.model_id, timings, usage)


class Echo(UnparseableOutput):
    """The model's own diagnosis is the findings' own words: it chose none of the candidates and named nothing new."""


def parse_choice(text: str, names: list[str], query: str = "") -> Choice:
    """The model's choice; a server that ignored the schema is read leniently (a name of its own when it is not a
    candidate). Raises UnparseableOutput when there is nothing to read (Nameless: a placeholder name; Echo: an own
    name that restates `query`, the demo's "Patchy airspace opacities in the right upper lobe with air bronchograms."
    answered with that very phrase once the schema required a name)."""
    choice = _parse_choice(text, names)
    if choice.own and _echoes(choice.diagnosis, query):
        raise Echo(f"the model's own diagnosis restates the findings ({shorten(choice.diagnosis, 60)!r})")
    return choice


def _parse_choice(text: str, names: list[str]) -> Choice:
    by_name = {n.lower(): n for n in names}  # a candidate in any case (the no-retrieval answer capitalises)
    data = loads_or_none(text.strip())
    if isinstance(data, dict):
        chosen = str(data.get("diagnosis", "")).strip()
        own = shorten(" ".join(str(data.get(OWN_FIELD, "")).split()), MAX_DIAGNOSIS_CHARS)
        if chosen.lower() in by_name:
            return Choice(by_name[chosen.lower()], False)
        if chosen.lower() == OTHER:
            return Choice(_named(own), True)
        if chosen:
            return Choice(_named(shorten(chosen, MAX_DIAGNOSIS_CHARS)), True)
    parsed = parse_output(text)  # prose or broken JSON: whatever diagnosis it names
    _named(parsed.diagnosis)
    return Choice(by_name.get(parsed.diagnosis.lower(), parsed.diagnosis), parsed.diagnosis.lower() not in by_name)


def chosen_output(
    choice: Choice, evidence: EvidenceDifferential, names: list[str], *, by_model: bool = True
) -> ParsedOutput:
    """A choice as the answer fields: the chosen candidate's supporting reports are its citations, the other
    candidates its differential, its support its rationale (`by_model` False: the evidence answered alone)."""
    others = [name for name in names if name != choice.diagnosis][:MAX_CHOICE_DIFFERENTIAL]
    if choice.own:
        why = "None of the diagnoses the similar reports affirm fits the findings: the model's own diagnosis."
        return ParsedOutput(choice.diagnosis, others, why, [], "json")
    candidate = evidence.candidates[names.index(choice.diagnosis)]
    why = (
        f"Affirmed by {evidence.support(candidate)}, the best fit among the diagnoses they affirm."
        if by_model
        else f"Affirmed by {evidence.support(candidate)}: the best-supported diagnosis they affirm that the "
        "findings do not rule out (no language model was asked)."
    )
    return ParsedOutput(choice.diagnosis, others, why, list(candidate.report_ids[:MAX_CITED]), "json")
