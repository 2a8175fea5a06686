"""The chat page's messages and notices: the answer message (its citations linking to the report cards), the
search-only and stopped messages, notices in plain words, the banner and the title bar.

Kept apart from `page.py` and `service.py` so the page's wiring reads on its own and the rendering can be tested
without a server. The report cards are cards.py's, the style sheet style.py's; all model and report text is escaped
(escape.py).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Sequence
from typing import Literal

from assistant.chat.escape import html_text as _e
from assistant.chat.escape import md_escape
from assistant.chat.report_cards import CONTRADICTS_LABEL, FIELD_LABELS, PARTLY_LABEL, card_anchor
from assistant.rag.answer import Answer, UnparseableOutput, parse_output
from assistant.rag.knowledge_line import knowledge_line
from assistant.rag.strength import strength_line
from retriever.reports.record import Field
from retriever.search.hit import Hit

NoticeKind = Literal["info", "warning", "error"]
DEGRADED_LABELS = {
    "backend_unavailable": "the language model backend is unavailable",
    "timeout": "the language model did not answer in time",
    "unparseable": "the language model's output held no answer",
    "ruled_out": "the model's diagnosis is ruled out by the findings or the reports it cites",
    "no_evidence": "no similar report affirms a diagnosis",
    "no_abnormality": "no abnormality described: every finding is negated or normal",
    "no_finding": "no finding described: describe what the images show",
}


BANNER_HTML = (
    '<div class="rs-banner" role="note">'
    "<strong>Decision support and teaching tool, not a diagnosis.</strong> "
    '<span class="rs-banner-more">Answers rest on other patients\' archived reports and can be wrong: check them '
    "against the images, the clinical context and the reports shown, and follow your department's supervision "
    "rules. No patient identifiers.</span>"
    "</div>"
)


def header_html(backend_label: str) -> str:
    """Title bar: product name, one-line purpose, and which LLM answers (so nobody mistakes the model)."""
    return (
        '<div class="rs-header">'
        '<div class="rs-title">RadSearch Assistant</div>'
        '<div class="rs-subtitle">Describe a finding: get the most likely diagnosis, a differential and the '
        "similar archived reports it rests on.</div>"
        f'<div class="rs-backend">LLM: {_e(backend_label)}</div>'
        "</div>"
    )


def notice_html(kind: NoticeKind, message: str, *, detail: str = "") -> str:
    """A message box in the page (empty input, backend down, index missing); `detail` may name a command."""
    extra = f'<div class="rs-notice-detail">{_e(detail)}</div>' if detail else ""
    return f'<div class="rs-notice rs-{kind}" role="status">{_e(message)}{extra}</div>'


#: The pipeline's notes (assistant/rag/pipeline.py) say where they come from ("answer: ...", "prompt: ...") and how, in
#: a developer's words; the page says what they mean for the answer. A note matching none is shown without its prefix.
PLAIN_NOTES: tuple[tuple[re.Pattern[str], str], ...] = tuple(
    (re.compile(pattern, re.DOTALL), plain)
    for pattern, plain in (
        (
            r"answer: the model's choice could not be read.*",
            "The model's reply could not be read, so the answer is the diagnosis the most similar reports support.",
        ),
        (
            r"answer: dropped citations of reports that were not retrieved: (.*)",
            r"The model cited reports it was not shown (\1); those citations were removed.",
        ),
        (
            r"prompt: reference reports from rank (\d+) on left out.*",
            r"Reports from #\1 on did not fit in what the model can read at once; it was not shown them.",
        ),
        (
            r"prompt: reference report rank (\d+) shortened.*",
            r"Report #\1 was shortened to fit in what the model can read at once.",
        ),
        (r"prompt: query cut .*", "Your findings were shortened to fit in what the model can read at once."),
        (
            r"prompt: (\d+) earlier message\(s\) of the conversation left out.*",
            r"The \1 earliest message(s) of this case did not fit and were not shown to the model.",
        ),
        (r"answer: (.*)", r"\1"),
        (r"(?:retrieval|prompt): (.*)", r"\1"),
    )
)


def plain_note(note: str) -> str:
    """A pipeline note in a resident's words, its first letter upper case."""
    for pattern, plain in PLAIN_NOTES:
        if (found := pattern.fullmatch(note)) is not None:
            text = found.expand(plain)
            return text[:1].upper() + text[1:]
    return note


def signed_in_html(user: str | None) -> str:
    """Who is signed in, and a link that signs out (Gradio's /logout, relative so a --root-path prefix is kept);
    empty without sign-in."""
    if not user:
        return ""
    return (
        f'<div class="rs-user" role="status">Signed in as <strong>{_e(user)}</strong> · '
        '<a href="logout" id="rs-sign-out">Sign out</a></div>'
    )


def notes_html(notes: Iterable[str]) -> str:
    """The pipeline's notes (truncation, dropped citations) in plain words as an info notice; empty without any."""
    items = "".join(f"<li>{_e(plain_note(n))}</li>" for n in notes)
    return f'<div class="rs-notice rs-info" role="status"><ul>{items}</ul></div>' if items else ""


def degraded_heading(answer: Answer) -> str:
    """ "No diagnosis" when the question or its evidence holds none (Answer.no_diagnosis), "No LLM answer" when a
    part failed: an evidence answer that finds nothing to diagnose asked no model."""
    return "No diagnosis" if answer.no_diagnosis else "No LLM answer"


def degraded_why(answer: Answer) -> str:
    """Why a degraded answer has no diagnosis, in the words every chat view uses."""
    return DEGRADED_LABELS.get(answer.degraded_kind or "", "the language model failed")


def answer_markdown(answer: Answer) -> str:
    """The chat message for a finished answer; a degraded one says why and lists the top impressions."""
    if answer.degraded:
        lines = [f"**{degraded_heading(answer)}:** {degraded_why(answer)}."]
        if answer.retrieved:
            lines += ["", f"Retrieval-only result: {reports_pointer(answer.retrieved)}"]
        return "\n".join([*lines, "", configuration_details(answer)])
    lines = [f"**Most likely diagnosis:** {md_escape(answer.diagnosis or '')}"]
    if answer.strength:
        lines += ["", md_escape(strength_line(answer.strength))]
    if answer.model_knowledge:
        lines += ["", f"*{md_escape(knowledge_line(answer.model_knowledge))}*"]
    if answer.differential:
        lines += ["", "**Differential:**", *(f"- {md_escape(d)}" for d in answer.differential)]
    if answer.rationale:
        lines += ["", f"**Rationale:** {md_escape(answer.rationale)}"]
    facts = []
    if answer.cited_report_ids:
        ranks = {h.report.id: h.rank for h in answer.retrieved}
        cited = [f"{citation_link(c, ranks.get(c))} {md_escape(c)}" for c in answer.cited_report_ids]
        facts.append("cites " + ", ".join(cited))
    elif answer.retrieved:
        facts.append("cites no retrieved report")
    else:
        facts.append("no retrieval")
    facts.append(
        md_escape(answer.model_id or ("no language model" if answer.prompt_id == "evidence" else "model unknown"))
    )
    if "total" in answer.timings:
        facts.append(f"{answer.timings['total']:.1f} s")
    lines += ["", f"<sub>{' · '.join(facts)}</sub>", "", configuration_details(answer)]
    return "\n".join(lines)


def citation_link(report_id: str, rank: int | None) -> str:
    """A citation in the answer, `#rank` linking to the report's card (the page's script scrolls to it and opens it
    if folded); a cited id that was not retrieved has no card, and stays text."""
    if rank is None:
        return "#?"
    return f'<a class="rs-cite" href="#{card_anchor(report_id)}" data-card="{card_anchor(report_id)}">#{rank}</a>'


def configuration_details(answer: Answer) -> str:
    """The answer's configuration hash, with what it covers folded beneath it (assistant/rag/configuration.py): two
    answers with one hash came from one configuration."""
    facts = [f"{md_escape(key)}: {md_escape(str(value))}" for key, value in _flat(answer.configuration)]
    body = "<br>".join(facts) or "not recorded"
    return (
        f'<details class="rs-configuration"><summary>configuration {md_escape(answer.configuration_hash)}'
        f"</summary><sub>{body}</sub></details>"
    )


def _flat(tree: object, prefix: str = "") -> list[tuple[str, object]]:
    """`a.b: value` pairs of a nested configuration, in its order (None-valued entries left out)."""
    if not isinstance(tree, dict):
        return [] if tree is None else [(prefix, tree)]
    return [pair for key, value in tree.items() for pair in _flat(value, f"{prefix}.{key}" if prefix else key)]


#: What the chat shows while the model writes: its diagnosis only once checked (issue 48: the chat streamed "Most
#: likely diagnosis: other", or a diagnosis the findings rule out, before swapping in the checked answer).
DRAFTING = "_The model is answering; its diagnosis is shown once it is checked against the findings and the reports…_"


def partial_answer_markdown(text: str) -> str:
    """What the model has written so far, without its diagnosis (which grounding may still replace): a placeholder
    until the answer starts, then the draft's differential as it grows."""
    try:
        parsed = parse_output(text)
    except UnparseableOutput:
        return "_Thinking…_"
    lines = [DRAFTING]
    if parsed.differential:
        lines += ["", "**Differential (draft):**", *(f"- {md_escape(d)}" for d in parsed.differential)]
    return "\n".join(lines) + " ▍"


def reports_pointer(reports: Sequence[Hit]) -> str:
    """A message's pointer to the report cards, which alone list the reports (each once, numbered by rank), naming
    the ones that contradict the query."""
    line = f"the {len(reports)} most similar reports are listed under *Retrieved reports* (#1–#{len(reports)})."
    for label, flagged in (
        (CONTRADICTS_LABEL, [r for r in reports if r.contradicts]),
        (PARTLY_LABEL, [r for r in reports if r.partly_contradicts and not r.contradicts]),
    ):
        if flagged:
            line += f" **⚠ {label}:** " + ", ".join(f"#{r.rank}" for r in flagged) + "."
    return line


def search_markdown(reports: Sequence[Hit], field: Field) -> str:
    """The chat message for a search-only request (no LLM)."""
    if not reports:
        return "**Search only:** no report matched (check the filters)."
    label = FIELD_LABELS.get(field, field)
    return f"**Search only** (no LLM), matched on {label}: {reports_pointer(reports)}"


#: A message whose answer the resident stopped (the Stop button).
STOPPED_MARKDOWN = "_Stopped: no answer to this question. Ask again, or ask another._"
NO_ANSWER_TURN = "(No answer: the language model failed, so only similar archived reports were shown.)"


def history_content(answer: Answer) -> str:
    """How an earlier answer is replayed to the model on a follow-up: the same compact JSON it answers in.

    A turn without an answer (degraded) is replayed as a fixed sentence, never with the retrieved reports: an
    assistant turn is read as the model's own words, and report text is untrusted. The follow-up retrieves
    with the whole case, so those reports reach the model again inside their untrusted-data delimiters."""
    if not answer.degraded and answer.diagnosis:
        return json.dumps(
            {"diagnosis": answer.diagnosis, "differential": answer.differential, "rationale": answer.rationale},
            ensure_ascii=False,
        )
    return NO_ANSWER_TURN
