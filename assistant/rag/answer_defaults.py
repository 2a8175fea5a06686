"""How `assistant ask` and the chat answer by default: the answer mode (assistant/rag/modes.py), how many retrieved
reports the answer reads (K), the report field the finding is matched against (FIELD) and each mode's prompt.

These are not tuned by hand. `python -m eval.diagnosis.default` picks them by a fixed rule from the committed
dev runs and the preset records them (models/preset.json); tests/eval/test_diagnosis_default.py fails when the preset
and that choice disagree. Kept apart from the commands so every entry point (CLI, chat, the LangChain retriever, the
pipeline) reads the same values; a process started with another preset (`--preset`, RADSEARCH_PRESET) reads its
values from its Settings (assistant/settings.py) instead.
"""

from __future__ import annotations

from assistant.rag.modes import EVIDENCE_PROMPT_ID, AnswerMode, answer_mode
from models.preset import PRESET, AnswerPreset
from retriever.reports.record import checked_field

#: How answers are made unless told otherwise.
MODE = answer_mode(PRESET.answer.mode)
#: Retrieved reports an answer reads (the evidence differential reads them all; the model sees its candidates).
K = PRESET.answer.k
#: Most reports an answer may read (`assistant ask -k`, the chat's slider).
MAX_K = 100
#: Reports listed one by one (the CLI's table, the chat's open cards); the rest are read all the same, named in the
#: evidence and listed in full by `--json` and the chat's folded "more reports".
SHOWN_REPORTS = 10
#: Field of the archived reports the finding is matched against: "impression", "findings" or "report".
FIELD = checked_field(PRESET.answer.field)
#: The prompt of the no-retrieval baseline (prompts/<name>.txt).
NORAG_PROMPT = PRESET.answer.prompts[AnswerMode.NO_RETRIEVAL]


def prompt_for(mode: AnswerMode, answer: AnswerPreset = PRESET.answer) -> str:
    """The prompt `mode` asks a model with under the preset's `answer` values (`evidence` for the evidence mode,
    which asks none: what its answers record as their prompt)."""
    return EVIDENCE_PROMPT_ID if mode is AnswerMode.EVIDENCE else answer.prompts[mode]


#: What answers in the default mode record as their prompt (benchmark caches key answers by it).
PROMPT = prompt_for(MODE)
