"""The model's own knowledge, shown beside an answer whose evidence is weak (issue 48).

Why: when few similar cases in the archive affirm the answer, the resident should still see what a model knows
about such findings, but never mistaken for the archive's evidence. The rule written before the dev run
(docs/decisions/2026-11-28-evidence-strength.md) keeps the evidence as the answer: the model alone was right in as
many weak dev answers as the evidence (12 of 42 each). So the model's view is asked for apart, with the no-retrieval
prompt (it sees the findings only, not the candidates it might echo), and shown under its own label.

Only where a model is asked anyway (the `choice` mode): the default evidence answer loads no model and stays instant.
"""

from __future__ import annotations

from typing import Any

import prompts
from assistant.llm.base import LLM, LLMError, LLMResult
from assistant.rag import answer_defaults
from assistant.rag.answer import Answer, UnparseableOutput, answer_schema, parse_output
from assistant.rag.prompt_fit import PromptFitter

#: Its answer's token limit: a diagnosis and a short differential; the rationale is not shown.
MAX_TOKENS = 96
#: Differential items shown beside its diagnosis.
MAX_DIFFERENTIAL = 3


def wanted(answer: Answer) -> bool:
    """Whether `answer` gets the model's view beside it: a diagnosis that some similar reports affirm, weakly. A
    diagnosis no report affirms (measure 0) is the model's own already; a degraded answer has nothing to set it
    beside."""
    level, measure = answer.strength.get("level"), answer.strength.get("measure", 0)
    return not answer.degraded and level == "weak" and measure > 0


def ask_alone(llm: LLM, query: str, call: dict[str, Any], notes: list[str]) -> LLMResult:
    """The model's answer to `query` from the findings alone (the no-retrieval prompt and its schema; `call`: the
    sampling, and `started_at` when a deadline already runs). Raises LLMError."""
    prompt = prompts.load(answer_defaults.NORAG_PROMPT)
    messages = PromptFitter(llm, prompt, MAX_TOKENS, notes).messages(query, [], [], [])
    return llm.complete(messages, **(call | {"json_schema": answer_schema([]), "max_tokens": MAX_TOKENS}))


def model_knowledge(llm: LLM, query: str, sampling: dict[str, Any], notes: list[str]) -> dict[str, Any]:
    """The model's diagnosis and differential for `query` from the findings alone: {"diagnosis", "differential",
    "model_id"}; {} (and a note saying why) when the model cannot be asked or writes nothing readable."""
    try:
        result = ask_alone(llm, query, sampling, notes)
        parsed = parse_output(result.text)
    except (LLMError, UnparseableOutput) as exc:
        notes.append(f"answer: the model's own knowledge could not be shown beside the weak evidence ({exc})")
        return {}
    differential = [d for d in parsed.differential if d.lower() != parsed.diagnosis.lower()][:MAX_DIFFERENTIAL]
    return {"diagnosis": parsed.diagnosis, "differential": differential, "model_id": result.model_id}
