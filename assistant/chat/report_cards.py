"""The retrieved reports as cards, and the evidence panel above them: the page's one list of reports (one numbering,
the rank), which the answer's citations and the evidence panel link to (`card_anchor`).

All report text is escaped here (escape.py).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

from assistant.chat.escape import html_text as _e
from assistant.excerpt import Excerpt, matching_excerpt, searched_text
from assistant.rag.answer import Answer
from assistant.rag.answer_defaults import SHOWN_REPORTS
from assistant.readable import modality_word, strengths
from assistant.text import shorten
from retriever.reports.record import Field
from retriever.search.hit import Hit
from retriever.search.methods import Method

FIELD_LABELS: dict[Field, str] = {"findings": "findings", "impression": "impressions", "report": "full reports"}
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
    identical = f"and {len(hit.identical)} identical" if hit.identical else ""
    meta = (modality_word(report.modality), report.source, report.meta.get("date", ""), report.status, identical)
    badges = "".join(f'<span class="rs-badge">{_e(v)}</span>' for v in meta if v)
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
