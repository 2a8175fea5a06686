"""How `assistant ask` and the chat answer by default: how many retrieved reports the model reads (K), the report
field the finding is matched against (FIELD) and the prompt (PROMPT, a file of `prompts/`).

These are not tuned by hand. `python -m eval.diagnosis_default` picks them by a fixed rule from the committed
screening run (eval/results/diagnosis_screen.json, dev cases only), and tests/test_diagnosis_default.py fails when
this module and that choice disagree, as the search method follows eval/results/retrieval.json
(retriever.search.methods.DEFAULT_METHOD). Kept apart from the commands so every entry point (CLI, chat, the LangChain
retriever, the pipeline) reads the same three values.
"""

from __future__ import annotations

#: Retrieved reports shown to the model.
K = 1
#: Field of the archived reports the finding is matched against: "impression", "findings" or "report".
FIELD = "report"
#: Prompt with retrieval (prompts/<name>.txt); the no-retrieval baseline always uses NORAG_PROMPT.
PROMPT = "diagnosis_rag"
NORAG_PROMPT = "diagnosis_norag"
