"""How `assistant ask` and the chat answer by default: how many retrieved reports the model reads (K), the report
field the finding is matched against (FIELD) and the prompt (PROMPT, a file of `prompts/`).

These are not tuned by hand. `python -m eval.diagnosis.default` picks them by a fixed rule from the committed
screening run (eval/results/diagnosis_screen.json, dev cases only) and the preset records them (models/preset.json);
tests/eval/test_diagnosis_default.py fails when the preset and that choice disagree. Kept apart from the commands so
every entry point (CLI, chat, the LangChain retriever, the pipeline) reads the same values.
"""

from __future__ import annotations

from models.preset import PRESET
from retriever.reports.record import checked_field

#: Retrieved reports an answer reads (the evidence differential reads them all; the model sees its candidates).
K = PRESET.answer.k
#: Most reports an answer may read (`assistant ask -k`, the chat's slider).
MAX_K = 100
#: Reports listed one by one (the CLI's table, the chat's open cards); the rest are read all the same, named in the
#: evidence and listed in full by `--json` and the chat's folded "more reports".
SHOWN_REPORTS = 10
#: Field of the archived reports the finding is matched against: "impression", "findings" or "report".
FIELD = checked_field(PRESET.answer.field)
#: Prompt with retrieval (prompts/<name>.txt); the no-retrieval baseline always uses NORAG_PROMPT.
PROMPT = PRESET.answer.prompt
#: The answer "prompt" that asks no model: the evidence differential's best-supported diagnosis that the findings do
#: not rule out is the answer (chosen by eval.diagnosis.default on the dev cases).
EVIDENCE_ONLY = "evidence"
NORAG_PROMPT = PRESET.answer.norag_prompt
#: The prompt used when a model is asked for the answer: PROMPT, or, when PROMPT asks no model ("evidence"), the
#: model choosing among the evidence (the arm measured beside it, eval/results/diagnosis_dev_arms.md).
LLM_PROMPT = "diagnosis_evidence" if PROMPT == EVIDENCE_ONLY else PROMPT
