"""HTML and Markdown for the chat page: the answer message, the report cards, notices, the banner, the CSS.

Kept apart from `page.py` and `service.py` so the page's wiring reads on its own and the rendering can be tested
without a server. Every piece of report or model text is untrusted (archived reports can contain markup, a model can
emit anything), so all of it goes through `html.escape` (cards) or `md_escape` (chat messages) here and
nowhere else builds markup from it.
"""

from __future__ import annotations

import html
import json
import re
from collections.abc import Iterable, Sequence
from typing import Literal

from assistant.excerpt import Excerpt, matching_excerpt, searched_text
from assistant.rag.answer import Answer, UnparseableOutput, parse_output
from assistant.rag.answer_defaults import SHOWN_REPORTS
from assistant.rag.strength import strength_line
from assistant.readable import modality_word, strengths
from assistant.text import shorten
from retriever.reports.record import Field
from retriever.search.hit import Hit
from retriever.search.methods import Method

NoticeKind = Literal["info", "warning", "error"]

FIELD_LABELS: dict[Field, str] = {"findings": "findings", "impression": "impressions", "report": "full reports"}
DEGRADED_LABELS = {
    "backend_unavailable": "the language model backend is unavailable",
    "timeout": "the language model did not answer in time",
    "unparseable": "the language model's output held no answer",
    "ruled_out": "the model's diagnosis is ruled out by the findings or the reports it cites",
    "no_evidence": "no similar report affirms a diagnosis",
    "no_abnormality": "no abnormality described: every finding is negated or normal",
}
IMPRESSION_PREVIEW_CHARS = 600
#: How a report that says the opposite of the query is marked (`Hit.contradicts`: it rules out the finding asked for,
#: or affirms one the query rules out); in words, not colour alone.
CONTRADICTS_LABEL = "contradicts your query"
CONTRADICTS_NOTE = (
    "This report says the opposite of your query: it rules out the finding you asked about (or reports one you "
    "ruled out). It is ranked after the reports that do not."
)
#: A mixed report (`Hit.partly_contradicts`): it matches the query but also rules out, somewhere, a finding it asserts.
PARTLY_LABEL = "mixed: also rules out your finding"
PARTLY_NOTE = (
    "Somewhere this report rules out a finding your query asserts (or reports one you ruled out), while matching it "
    "elsewhere: read it before taking it as support."
)

# Markdown/HTML characters that would otherwise turn report or model text into formatting or markup.
_MD_SPECIAL = re.compile(r"([\\`*_\[\]#|~])")


def md_escape(text: str) -> str:
    """Text for a Markdown chat message shown literally: HTML-escaped, Markdown specials backslashed, and a
    leading list/heading marker neutralised."""
    escaped = _MD_SPECIAL.sub(r"\\\1", html.escape(text, quote=False))
    return re.sub(r"^(\s*)([-+>]|\d+\.)(\s)", r"\1\\\2\3", escaped, flags=re.MULTILINE)


def _e(text: object) -> str:
    return html.escape(str(text), quote=True)


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


def notes_html(notes: Iterable[str]) -> str:
    """The pipeline's notes (truncation, dropped citations) as an info notice; empty when there are none."""
    items = "".join(f"<li>{_e(n)}</li>" for n in notes)
    return f'<div class="rs-notice rs-info" role="status"><ul>{items}</ul></div>' if items else ""


def report_cards_html(
    reports: Sequence[Hit],
    *,
    cited: Iterable[str] = (),
    method: Method = "dense",
    empty_message: str = "Retrieved reports appear here.",
    query: str = "",
) -> str:
    """The retrieved reports as cards, the only place the page lists them (one numbering: the rank): rank and a
    strength word (the method's raw score under *Details*), the sentence that matched `query` with its words marked,
    the impression, findings and the whole report folded, modality in words and source; the reports the answer
    cites marked, and those that contradict the query marked with a badge and a sentence. Past the first
    SHOWN_REPORTS the cards are folded under "more reports": the evidence reads them all."""
    if not reports:
        return f'<div class="rs-cards-empty">{_e(empty_message)}</div>'
    cited_ids = set(cited)
    words = strengths([r.score for r in reports])
    cards = [
        _card(r, strength, r.report.id in cited_ids, score_label(method), query)
        for r, strength in zip(reports, words, strict=True)
    ]
    field = FIELD_LABELS.get(reports[0].field, reports[0].field or "")
    head = f'<div class="rs-cards-head">{len(reports)} similar report(s), matched on {_e(field)}</div>'
    shown, more = cards[:SHOWN_REPORTS], cards[SHOWN_REPORTS:]
    folded = (
        f'<details class="rs-more"><summary>{len(more)} more report(s), read by the evidence</summary>'
        f'<div class="rs-cards">{"".join(more)}</div></details>'
        if more
        else ""
    )
    return f'<div class="rs-cards">{head}{"".join(shown)}{folded}</div>'


def marked_html(excerpt: Excerpt) -> str:
    """A matching sentence, escaped, with the query's words in <mark> and the ones the report negates struck
    through and labelled (in words, not colour alone)."""
    parts, at = [], 0
    for mark in excerpt.marks:
        parts.append(_e(excerpt.text[at : mark.start]))
        word = _e(excerpt.text[mark.start : mark.end])
        parts.append(
            f'<mark class="rs-negated" title="negated in this report"><s>{word}</s> (negated)</mark>'
            if mark.negated
            else f"<mark>{word}</mark>"
        )
        at = mark.end
    parts.append(_e(excerpt.text[at:]))
    return "".join(parts)


def card_anchor(report_id: str) -> str:
    """The HTML id of a report's card, so the evidence panel can link to it."""
    return "rs-report-" + re.sub(r"[^A-Za-z0-9_-]", "_", report_id)


def evidence_html(answer: Answer) -> str:
    """The evidence differential beside the answer (assistant/rag/evidence.py): each diagnosis the similar reports
    affirm, "6 of 15 similar reports", and links to those reports' cards; empty without evidence."""
    evidence = answer.evidence
    if not evidence.get("candidates"):
        return ""
    rows = []
    ranks = {h.report.id: h.rank for h in answer.retrieved}
    for candidate in evidence["candidates"]:
        links = " ".join(
            f'<a href="#{card_anchor(i)}" title="{_e(i)}">#{ranks.get(i, "?")}</a>' for i in candidate["report_ids"]
        )
        chosen = ' class="rs-chosen"' if candidate["diagnosis"] == answer.diagnosis else ""
        rows.append(
            f'<li{chosen}><span class="rs-candidate">{_e(candidate["diagnosis"])}</span> '
            f'<span class="rs-support">{candidate["count"]} of {evidence["read"]} similar reports</span>'
            f'<div class="rs-links">{links}</div></li>'
        )
    return (
        f'<section class="rs-evidence" aria-label="evidence"><div class="rs-cards-head">What the '
        f"{evidence['read']} most similar reports affirm</div><ol>{''.join(rows)}</ol></section>"
    )


def score_label(method: Method) -> str:
    """What a card's number is: a cosine similarity only for dense search; BM25 and fused scores are relative
    to the other hits (a fused top hit scores near 1 whatever its match), so they are named by their method."""
    return "similarity" if method == "dense" else f"{method} score"


def _card(hit: Hit, strength: str, cited: bool, score_name: str, query: str) -> str:
    report = hit.report
    shown = report.shown_impression
    impression = shorten(shown.strip() or "(no impression section)", IMPRESSION_PREVIEW_CHARS)
    badges = "".join(
        f'<span class="rs-badge">{_e(v)}</span>' for v in (modality_word(report.modality), report.source) if v
    )
    cited_badge = '<span class="rs-badge rs-cited">cited</span>' if cited else ""
    contradicts, partly = hit.contradicts, hit.partly_contradicts and not hit.contradicts
    label, note, kind = (
        (CONTRADICTS_LABEL, CONTRADICTS_NOTE, "contradicts")
        if contradicts
        else (PARTLY_LABEL, PARTLY_NOTE, "partly")
        if partly
        else ("", "", "")
    )
    contradicts_badge = f'<span class="rs-badge rs-{kind}">⚠ {label}</span>' if kind else ""
    contradicts_note = f'<div class="rs-{kind}-note" role="note">{note}</div>' if kind else ""
    excerpt = matching_excerpt(searched_text(hit.field, report.findings, shown, report.full_text), query)
    match = (
        f'<div class="rs-label">Matching sentence</div><p class="rs-match">{marked_html(excerpt)}</p>'
        if query and excerpt.marks
        else ""
    )
    findings = (
        f'<details class="rs-findings"><summary>Findings</summary><p>{_e(report.findings.strip())}</p></details>'
        if report.findings.strip()
        else '<div class="rs-muted">No findings section in this report.</div>'
    )
    full = report.full_text.strip() or "\n\n".join(p for p in (report.findings.strip(), shown.strip()) if p)
    return (
        f'<article class="rs-card{" rs-card-contradicts" if contradicts else ""}" id="{card_anchor(report.id)}" '
        f'data-report-id="{_e(report.id)}" data-contradicts="{str(contradicts).lower()}" '
        f'data-partly-contradicts="{str(partly).lower()}">'
        f'<div class="rs-card-top"><span class="rs-rank">#{hit.rank}</span>'
        f'<span class="rs-strength">{_e(strength)}</span>{badges}{cited_badge}{contradicts_badge}</div>'
        f"{contradicts_note}{match}"
        f'<div class="rs-label">Impression</div><p class="rs-impression">{_e(impression)}</p>'
        f"{findings}"
        f'<details class="rs-full"><summary>Full report</summary><pre>{_e(full)}</pre></details>'
        f'<details class="rs-details"><summary>Details</summary><span class="rs-id">{_e(report.id)}</span> · '
        f'<span class="rs-score">{_e(score_name)} {hit.score:.3f}</span> (the method\'s raw score: it ranks '
        "reports within one search; the strength word places it between this search's best and weakest report)"
        "</details></article>"
    )


def answer_markdown(answer: Answer) -> str:
    """The chat message for a finished answer; a degraded one says why and lists the top impressions."""
    if answer.degraded:
        why = DEGRADED_LABELS.get(answer.degraded_kind or "", "the language model failed")
        lines = [f"**No LLM answer:** {why}."]
        if answer.retrieved:
            lines += ["", f"Retrieval-only result: {reports_pointer(answer.retrieved)}"]
        return "\n".join([*lines, "", configuration_details(answer)])
    lines = [f"**Most likely diagnosis:** {md_escape(answer.diagnosis or '')}"]
    if answer.strength:
        lines += ["", md_escape(strength_line(answer.strength))]
    if answer.differential:
        lines += ["", "**Differential:**", *(f"- {md_escape(d)}" for d in answer.differential)]
    if answer.rationale:
        lines += ["", f"**Rationale:** {md_escape(answer.rationale)}"]
    facts = []
    if answer.cited_report_ids:
        ranks = {h.report.id: h.rank for h in answer.retrieved}
        facts.append("cites " + ", ".join(f"#{ranks.get(c, '?')} {md_escape(c)}" for c in answer.cited_report_ids))
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


def partial_answer_markdown(text: str) -> str:
    """What the model has written so far, readable: the fields parsed from the incomplete JSON, or a
    placeholder until the diagnosis starts."""
    try:
        parsed = parse_output(text)
    except UnparseableOutput:
        return "_Thinking…_"
    lines = [f"**Most likely diagnosis:** {md_escape(parsed.diagnosis)}"]
    if parsed.differential:
        lines += ["", "**Differential:**", *(f"- {md_escape(d)}" for d in parsed.differential)]
    if parsed.rationale and parsed.mode != "plain_text":
        lines += ["", f"**Rationale:** {md_escape(parsed.rationale)}"]
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


CSS = """
.gradio-container { max-width: 1500px !important; }
.rs-header { display:flex; align-items:baseline; gap:16px; flex-wrap:wrap; padding:4px 2px 0; }
.rs-title { font-size:1.5rem; font-weight:700; color:var(--body-text-color); letter-spacing:-0.01em; }
.rs-subtitle { color:var(--body-text-color-subdued); font-size:0.95rem; flex:1; min-width:240px; }
.rs-backend { font-size:0.8rem; color:var(--body-text-color-subdued); border:1px solid var(--border-color-primary);
  border-radius:999px; padding:2px 10px; }
.rs-banner { background:#fff7e6; border:1px solid #f5c26b; border-left:5px solid #e08a00; color:#5c3d00;
  border-radius:8px; padding:5px 12px; font-size:0.82rem; line-height:1.35; }
.dark .rs-banner { background:#3a2a0a; color:#ffd98a; border-color:#a86b00; }
.rs-notice { border-radius:8px; padding:9px 13px; font-size:0.92rem; line-height:1.4; margin:2px 0; }
.rs-notice ul { margin:0; padding-left:18px; }
.rs-notice-detail { margin-top:4px; font-family:var(--font-mono); font-size:0.85rem; }
.rs-info { background:#eef5ff; border:1px solid #b7d3f7; color:#17406d; }
.rs-warning { background:#fff4e5; border:1px solid #f3c27a; color:#6b4100; }
.rs-error { background:#fdecec; border:1px solid #f2b3b3; color:#7a1a1a; }
.rs-cards { display:flex; flex-direction:column; gap:10px; }
.rs-evidence ol { margin:0.2rem 0 0.8rem 1.2rem; padding:0; }
.rs-evidence li { margin-bottom:0.3rem; }
.rs-evidence .rs-chosen .rs-candidate { font-weight:700; }
.rs-support { color:var(--body-text-color-subdued); font-size:0.85rem; margin-left:0.3rem; }
.rs-links a { font-size:0.8rem; margin-right:0.4rem; }
.rs-cards-head { font-weight:600; color:var(--body-text-color-subdued); font-size:0.85rem;
  text-transform:uppercase; letter-spacing:0.04em; }
.rs-cards-empty { color:var(--body-text-color-subdued); border:1px dashed var(--border-color-primary);
  border-radius:10px; padding:28px 16px; text-align:center; font-size:0.92rem; }
.rs-card { border:1px solid var(--border-color-primary); border-radius:10px; padding:11px 14px;
  background:var(--background-fill-primary); box-shadow:0 1px 2px rgba(0,0,0,0.04); }
.rs-card-top { display:flex; align-items:center; gap:6px; flex-wrap:wrap; font-size:0.82rem; }
.rs-rank { font-weight:700; color:var(--color-accent); }
.rs-id { font-family:var(--font-mono); color:var(--body-text-color); }
.rs-badge { background:var(--background-fill-secondary); border:1px solid var(--border-color-primary);
  border-radius:999px; padding:0 8px; font-size:0.75rem; color:var(--body-text-color-subdued); }
.rs-cited { background:#e7f6ec; border-color:#9fd6b0; color:#1d6b36; }
.rs-contradicts { background:#fdecec; border-color:#e08585; color:#8a1414; font-weight:700; }
.rs-card-contradicts { border-left:5px solid #c62828; }
.rs-contradicts-note { background:#fdecec; border:1px solid #f2b3b3; color:#7a1a1a; border-radius:6px;
  padding:5px 9px; margin:6px 0; font-size:0.85rem; font-weight:600; }
.dark .rs-contradicts-note, .dark .rs-contradicts { background:#4a1515; color:#ffc9c9; border-color:#a33; }
.rs-partly { background:#fff4e0; border-color:#e0b060; color:#7a4a00; font-weight:700; }
.rs-partly-note { background:#fff4e0; border:1px solid #f0d090; color:#6a4000; border-radius:6px;
  padding:5px 9px; margin:6px 0; font-size:0.85rem; font-weight:600; }
.dark .rs-partly-note, .dark .rs-partly { background:#4a3510; color:#ffe2b0; border-color:#a77a20; }
.rs-strength { font-size:0.8rem; font-weight:600; color:var(--body-text-color); }
.rs-score { font-variant-numeric:tabular-nums; }
.rs-match { margin:2px 0 6px; line-height:1.4; }
.rs-match mark { background:#fff3b0; color:inherit; border-radius:3px; padding:0 2px; }
.rs-match mark.rs-negated { background:#fde0e0; color:#8a1414; }
.dark .rs-match mark { background:#5a4a00; } .dark .rs-match mark.rs-negated { background:#4a1515; color:#ffc9c9; }
.rs-full summary, .rs-details summary { cursor:pointer; font-size:0.85rem; color:var(--color-accent); }
.rs-full pre { white-space:pre-wrap; word-break:break-word; font-family:inherit; font-size:0.88rem; margin:6px 0 0;
  max-height:50vh; overflow-y:auto; }
.rs-details { font-size:0.8rem; color:var(--body-text-color-subdued); }
.rs-label { font-size:0.72rem; text-transform:uppercase; letter-spacing:0.05em;
  color:var(--body-text-color-subdued); margin-top:4px; }
.rs-impression { margin:2px 0 6px; font-weight:600; line-height:1.4; white-space:pre-wrap; }
.rs-findings summary { cursor:pointer; font-size:0.85rem; color:var(--color-accent); }
.rs-findings p { margin:6px 0 0; font-size:0.9rem; line-height:1.45; white-space:pre-wrap; }
.rs-muted { color:var(--body-text-color-subdued); font-size:0.82rem; }
#rs-reports { max-height:78vh; overflow-y:auto; padding-right:4px; }
.rs-card, .rs-impression, .rs-findings p, .rs-match { overflow-wrap:anywhere; }
#rs-actions button { white-space:nowrap; }
/* A phone: one column, the conversation and its input first, then the reports, then the settings. */
@media (max-width: 900px) {
  .gradio-container { padding:6px !important; }
  #rs-layout { flex-direction:column; }
  #rs-chat-col { order:-2; } #rs-cards-col { order:-1; }
  .rs-subtitle, .rs-banner-more { display:none; }
  .rs-title { font-size:1.2rem; }
  .rs-header { gap:8px; }
}
#rs-notice:not(:has(.rs-notice)) { display:none; }
"""
