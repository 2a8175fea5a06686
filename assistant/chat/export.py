"""An answer as a Markdown document a resident can keep or paste into teaching notes: the finding, the answer, what
the similar reports affirm, the reports themselves (rank, strength, id, the matching sentence, the impression) and
the configuration that produced it, with its hash.

Why a document of its own: a chat message holds the answer alone, and an answer without its reports and its
configuration cannot be checked or repeated later. The chat hands it to the browser, which saves it (nothing is
written on the server); `assistant ask --markdown` prints it.
"""

from __future__ import annotations

import html
import json
from collections.abc import Sequence

from assistant.chat.escape import md_escape
from assistant.excerpt import matching_excerpt, searched_text
from assistant.rag.answer import Answer
from assistant.rag.knowledge_line import knowledge_line
from assistant.rag.strength import strength_line
from assistant.readable import modality_word, strengths

DISCLAIMER = "Decision support and teaching tool, not a diagnosis."
#: The page element holding the document; the Export button's script saves its text as a file.
EXPORT_ID = "rs-export-md"


def export_html(answer: Answer, earlier: Sequence[str] = ()) -> str:
    """The document inside a hidden, inert textarea of the page (escaped: report text stays text)."""
    return f'<textarea id="{EXPORT_ID}" hidden readonly>{html.escape(answer_document(answer, earlier))}</textarea>'


def _line(text: str) -> str:
    """Report or model text on one Markdown line, read as text: whitespace folded, markup characters escaped."""
    return md_escape(" ".join(text.split()))


def answer_document(answer: Answer, earlier: Sequence[str] = ()) -> str:
    """The whole answer as Markdown (see the module docstring); `earlier`: the case's findings before this question,
    when it is a follow-up (the answer rests on them all, so the document keeps them)."""
    lines = ["# RadSearch Assistant answer", ""]
    if earlier:
        lines += [f"**Findings:** {_line(earlier[0])}", ""]
        lines += [f"**Follow-up {n}:** {_line(text)}" for n, text in enumerate([*earlier[1:], answer.query], 1)]
        lines.append("")
    else:
        lines += [f"**Finding:** {_line(answer.query)}", ""]
    if answer.degraded:
        lines += [f"**No diagnosis** ({answer.degraded_kind}): {_line(answer.degraded_reason or '')}", ""]
    else:
        lines += [f"**Most likely diagnosis:** {_line(answer.diagnosis or '')}", ""]
        if answer.strength:
            lines += [_line(strength_line(answer.strength)), ""]
        if answer.model_knowledge:
            lines += [f"*{_line(knowledge_line(answer.model_knowledge))}*", ""]
        if answer.differential:
            lines += ["**Differential:**", *(f"- {_line(d)}" for d in answer.differential), ""]
        if answer.rationale:
            lines += [f"**Rationale:** {_line(answer.rationale)}", ""]
        if answer.cited_report_ids:
            lines += ["**Cites:** " + ", ".join(_line(c) for c in answer.cited_report_ids), ""]
    evidence = answer.evidence
    if evidence.get("candidates"):
        lines += [f"## What the {evidence['read']} most similar reports affirm", ""]
        lines += [
            f"{n}. {_line(c['diagnosis'])}: {c['count']} of {evidence['read']} ({_line(', '.join(c['report_ids']))})"
            for n, c in enumerate(evidence["candidates"], start=1)
        ]
        lines.append("")
    if answer.retrieved:
        lines += ["## Similar reports", ""]
        for hit, strength in zip(answer.retrieved, strengths([h.score for h in answer.retrieved]), strict=True):
            report = hit.report
            shown = report.shown_impression
            sentence = matching_excerpt(searched_text(hit.field, report.findings, shown), answer.query)
            facts = [strength, modality_word(report.modality), report.source, f"score {hit.score:.3f}"]
            lines += [f"### #{hit.rank} {_line(report.id)} ({_line(', '.join(f for f in facts if f))})", ""]
            if sentence.marks:
                lines.append(f"- Matching sentence: {_line(sentence.text)}")
            lines.append(f"- Impression: {_line(shown or '(none)')}")
            if hit.contradicts or hit.partly_contradicts:
                lines.append("- ⚠ contradicts the finding" + ("" if hit.contradicts else " in part"))
            lines.append("")
    lines += [f"## Configuration {answer.configuration_hash}", "", "```json"]
    lines += [json.dumps(answer.configuration, indent=2, ensure_ascii=False, default=str), "```", ""]
    lines += [f"*{DISCLAIMER}*", ""]
    return "\n".join(lines)
