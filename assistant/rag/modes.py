"""How an answer is made: four modes, chosen explicitly (`assistant ask --mode`, the chat's Mode, the preset).

Why explicit: the mode used to be implied by the prompt's name ("evidence" was a prompt name that asked no model, one
word away from `diagnosis_evidence`, which did). Now the mode says *whether and how* a model is asked, and the prompt
(a file of prompts/) only says *in which words*:

- `evidence`: no model; the best-supported diagnosis the most similar reports affirm (assistant/rag/evidence.py);
- `choice`: the model chooses among those diagnoses (a prompt with `references: evidence`, assistant/rag/choice.py);
- `free-text`: the model writes its answer from the retrieved reports, the paper's setting (RadSearch, `diagnosis_rag`);
- `no-retrieval`: the model alone, the baseline.
Every mode's diagnosis goes through the same grounding step (assistant/rag/grounding.py).
"""

from __future__ import annotations

from enum import StrEnum

import prompts

#: What an evidence answer records as its prompt: no template is read (benchmark caches key answers by it).
EVIDENCE_PROMPT_ID = "evidence"


class AnswerMode(StrEnum):
    """How an answer is made (see the module docstring)."""

    EVIDENCE = "evidence"
    CHOICE = "choice"
    FREE_TEXT = "free-text"
    NO_RETRIEVAL = "no-retrieval"

    @property
    def asks_model(self) -> bool:
        return self is not AnswerMode.EVIDENCE

    @property
    def retrieves(self) -> bool:
        return self is not AnswerMode.NO_RETRIEVAL


#: What each mode's prompt must do with the retrieved reports (a template's `references:` line); None: no template.
REFERENCES: dict[AnswerMode, tuple[str, ...] | None] = {
    AnswerMode.EVIDENCE: None,
    AnswerMode.CHOICE: ("evidence",),
    AnswerMode.FREE_TEXT: ("reports", "impressions"),
    AnswerMode.NO_RETRIEVAL: None,
}


def answer_mode(name: str) -> AnswerMode:
    """`name` as an AnswerMode (ValueError listing the modes)."""
    try:
        return AnswerMode(name)
    except ValueError:
        raise ValueError(f"unknown answer mode {name!r}: choose one of {', '.join(AnswerMode)}") from None


def mode_of_prompt(name: str) -> AnswerMode:
    """The mode a retrieval prompt implies, for callers that name only a prompt: the old `evidence` name is the
    evidence mode, a template reading the evidence's candidates the model's choice, any other free text."""
    if name == EVIDENCE_PROMPT_ID:
        return AnswerMode.EVIDENCE
    return AnswerMode.CHOICE if prompts.load(name).references == "evidence" else AnswerMode.FREE_TEXT


def checked_prompt(mode: AnswerMode, name: str) -> prompts.PromptTemplate:
    """The template `name` for `mode`, loaded; ValueError when it does not fit the mode (a free-text template for
    the model's choice, a template that reads the evidence without retrieval...)."""
    prompt = prompts.load(name)
    wanted = REFERENCES[mode]
    if wanted is not None and prompt.references not in wanted:
        raise ValueError(
            f"prompt {name!r} shows the model its references as {prompt.references!r}; the {mode} mode needs a "
            f"prompt with `references: {' or '.join(wanted)}`"
        )
    return prompt
