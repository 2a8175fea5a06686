"""The defences against text that poses as instructions: one module, so a reviewer reads every one in one place.

Untrusted text reaches an answer three ways, and each has its defence here:
- into the prompt (report text, ids and sources, the query, earlier turns, candidate names): every such string goes
  through `neutralise_tags`, which removes the prompt's own delimiters and the chat templates' control sequences
  and tool/think tags, so the text cannot close its block, open a turn or call a tool of its own;
- into the evidence (a report's impression becomes a candidate the model may choose): a report that addresses a
  model (`addresses_a_model`, judged on the whole report, every field and sentence, NFKC-normalised, look-alike
  letters read as Latin) is set aside (`set_aside`): it contributes no candidate and the answer names it
  (issue 51); within other reports, `reads_as_instruction` keeps a part made of order words or markup from
  becoming a candidate (assistant/rag/evidence.py);
- into the answer (the model repeats what a report told it to say): `echoes_an_instruction` finds a diagnosis
  written in a retrieved report that addresses a model and in no ordinary one, and the grounding step sets it
  aside (assistant/rag/grounding.py; issue 39: no retrieved report sets the diagnosis).
Candidate names are also reduced to plain characters before they become a grammar (assistant/rag/choice.py).
The judgements of text (`plain`, `addresses_a_model`, `reads_as_instruction`, `directive_in`) live in
retriever/reports/judged_text.py: the concepts a report affirms are linked when it is indexed, with the same ones.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence

from retriever.reports.judged_text import addresses_a_model, directive_in, plain, reads_as_instruction
from retriever.reports.record import Report
from retriever.search.hit import Hit
from retriever.search.query import visible_text

_OPEN = "<\u2039\u27e8\u3008\u276c\u276e"  # "<" and the look-alikes NFKC does not map to it
_CLOSE = ">\u203a\u27e9\u3009\u276d\u276f"
# A delimiter however spelled: any bracket, slashes or a JSON-escaped one, `reference_report` with any separator,
# and the rest of the tag up to its bracket when it has one on the same line (an unterminated tag loses its name).
_TAGS = re.compile(
    rf"[{_OPEN}]\s*[/\\]*\s*(?:findings?|reference[\W_]*reports?|candidates?)\b(?:[^{_OPEN}{_CLOSE}\n]*[{_CLOSE}])?",
    re.IGNORECASE,
)
#: Tag names that chat templates of current model families give a meaning to: turns (Gemma), BOS/EOS, tool calls
#: and their results (Qwen/Hermes `<tool_call>`, `<tool_response>`, `<tools>`; Llama 3.1 `<function=...>`;
#: FunctionGemma `<start_function_call>`), and reasoning (`<think>` of Qwen3 and DeepSeek-R1).
_TEMPLATE_TAGS = (
    r"start_of_turn|end_of_turn|bos|eos|s|tool_calls?|tool_responses?|tool_results?|tool_outputs?|tools|"
    r"function_calls?|function_responses?|functions?|start_function_\w+|end_function_\w+|think|thinking|reasoning"
)
#: Chat-template control sequences, which a tokenizer may read as control tokens (a report holding
#: `<|im_end|><|im_start|>system` would start a turn of its own): `<|...|>` tokens (ChatML/Qwen, Llama 3, Phi,
#: DeepSeek's full-width bars once NFKC-normalised), Llama 2 / Mistral `[INST]` and `<<SYS>>`, Mistral's tool and
#: system brackets, and the tags above with any attributes, in any of the look-alike brackets.
_CONTROL = re.compile(
    rf"[{_OPEN}]\|[^|<>\n]{{1,40}}\|[{_CLOSE}]"
    r"|\[/?(?:INST|TOOL_CALLS|AVAILABLE_TOOLS|TOOL_RESULTS|TOOL_CONTENT|SYSTEM_PROMPT|THINK|ARGS|CALL_ID)\]|<</?SYS>>"
    rf"|[{_OPEN}]\s*/?\s*(?:{_TEMPLATE_TAGS})(?:[\s=][^{_OPEN}{_CLOSE}\n]{{0,80}})?[{_CLOSE}]",
    re.IGNORECASE,
)
_WORD = re.compile(r"[a-z0-9]+(?:-[a-z0-9]+)*")

__all__ = [
    "addresses_a_model",
    "directive_in",
    "echoes_an_instruction",
    "neutralise_tags",
    "plain",
    "reads_as_instruction",
    "report_text",
    "set_aside",
]


def neutralise_tags(text: str) -> str:
    """Remove the prompt's own delimiters, and the chat templates' control sequences, from untrusted text (reports,
    queries, history) so it cannot close its block or start a turn of its own and pose as instructions (a report
    containing `</reference_report>` or `<|im_end|><|im_start|>system` followed by commands).

    The text is NFKC-normalised and stripped of invisible characters first, and the model reads it that way:
    otherwise a full-width `＜/reference_report＞` or a zero-width space inside the name would pass the filter
    and still read as the delimiter to the model."""
    visible = visible_text(unicodedata.normalize("NFKC", text))
    return _CONTROL.sub("[control removed]", _TAGS.sub("[tag removed]", visible))


def report_text(report: Report) -> str:
    """Every field of a report a model or the evidence may read, as one text to judge."""
    return "\n".join((report.id, report.source, report.findings, report.impression, report.full_text))


def set_aside(hits: Sequence[Hit]) -> tuple[str, ...]:
    """The ids of the retrieved reports that address a model, in rank order: they count as no evidence."""
    return tuple(h.report.id for h in hits if addresses_a_model(report_text(h.report)))


def echoes_an_instruction(diagnosis: str, reports: Sequence[str]) -> bool:
    """True when the diagnosis is written in a retrieved report that addresses a model and in none that does not:
    the answer then repeats what a report told the model to say (in the order's sentence or any other), whichever
    report the model cites. A diagnosis an ordinary report also names stays an answer."""
    words = " ".join(_WORD.findall(plain(diagnosis).lower()))
    if not words:
        return False
    pattern = re.compile(rf"\b{re.escape(words)}\b")
    naming = [text for text in reports if pattern.search(" ".join(_WORD.findall(plain(text).lower())))]
    return bool(naming) and all(addresses_a_model(text) for text in naming)  # only reports that name it are judged
