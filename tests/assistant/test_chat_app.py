"""The chat's request handler and rendering, without a browser: real MiniLM index, real SmolLM2 for answers.

The browser test checks the page end to end; these check each message the page can show (empty input, index
missing, backend down with the retrieval-only result, search only, filters), follow-up history, and that report
text never becomes markup.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest
from chat_fixtures import CHAT_REPORTS, EFFUSION_QUERY, MARKUP_REPORT, build_chat_index, free_port
from llm_fixtures import require_embedded_smollm2, smollm2_llm
from report_fixtures import hit

from assistant.chat import render, report_cards
from assistant.chat.catalog import IndexCatalog
from assistant.chat.service import MODE_ANSWER, MODE_SEARCH, ChatConfig, ChatService, Request
from assistant.commands.chat_cmd import parse_auth
from assistant.llm.base import LLM, LLMResult, Message
from assistant.rag.answer import Answer
from assistant.settings import LLMSettings, Settings
from models.paths import DataPaths

#: A query the markup fixture report rules out ("... of the left seventh rib, no pneumothorax.").
PNEUMOTHORAX_QUERY = "pneumothorax"


@pytest.fixture(scope="module")
def index_dir(tmp_path_factory: pytest.TempPathFactory, minilm) -> Path:
    return build_chat_index(tmp_path_factory.mktemp("chat") / "index", minilm)


@pytest.fixture(scope="module")
def smollm2() -> LLM:
    require_embedded_smollm2()
    return smollm2_llm()


class RecordingLLM:
    """The real model, with the messages of every call kept (to see what a follow-up sends)."""

    def __init__(self, llm: LLM) -> None:
        self.llm = llm
        self.calls: list[list[Message]] = []

    @property
    def model_id(self) -> str:
        return self.llm.model_id

    def identity(self) -> dict[str, str]:
        return self.llm.identity()

    @property
    def context_window(self) -> int:
        return self.llm.context_window

    def count_tokens(self, text: str) -> int:
        return self.llm.count_tokens(text)

    def complete(self, messages: Sequence[Message], **kwargs: Any) -> LLMResult:
        self.calls.append(list(messages))
        return self.llm.complete(messages, **kwargs)

    def stream(self, messages: Sequence[Message], **kwargs: Any) -> Iterator[str]:
        self.calls.append(list(messages))
        return self.llm.stream(messages, **kwargs)


class UnusableLLM(RecordingLLM):
    """For search-only requests: any use of the model fails the test."""

    def __init__(self) -> None:
        super().__init__(None)  # type: ignore[arg-type]

    def count_tokens(self, text: str) -> int:
        raise AssertionError("search only must not use the LLM")

    def stream(self, messages: Sequence[Message], **kwargs: Any) -> Iterator[str]:
        raise AssertionError("search only must not use the LLM")


def _last(service: ChatService, message: str, request: Request, chat=None, case=None) -> tuple[Any, ...]:
    *_, final = service.respond(message, chat or [], case or [], request)
    return final


def _text(chat: list[dict[str, Any]], i: int = -1) -> str:
    return str(chat[i]["content"])


# --------------------------------------------------------------------------------------------- rendering
def test_report_cards_escape_markup_and_show_impression_first() -> None:
    report = hit(
        MARKUP_REPORT.id,
        1,
        0.71,
        "findings",
        MARKUP_REPORT.impression,
        findings=MARKUP_REPORT.findings,
        modality="XR",
        source="<i>src</i>",
    )
    html = report_cards.report_cards_html([report], cited=[report.report.id])
    assert "<script" not in html and "<img" not in html and "<b>" not in html and "<i>" not in html
    assert "&lt;script&gt;" in html and "&lt;img src=x" in html and "xr-markup-&lt;b&gt;007&lt;/b&gt;" in html
    assert html.index("Impression") < html.index("<details") and "<summary>Findings</summary>" in html
    assert "similarity 0.710" in html and "cited" in html and "matched on findings" in html


def test_cards_past_the_first_ten_are_folded_under_more_reports() -> None:
    """The evidence reads every retrieved report (k = 40 by default); the panel opens with the best ten, each report
    still has one card (the evidence panel links to it)."""
    reports = [hit(f"r-{n}", n, 1 - n / 100, "impression", "Left effusion.") for n in range(1, 26)]
    cards = report_cards.report_cards_html(reports)
    opened, folded = cards.split('<details class="rs-more">')
    assert opened.count('<article class="rs-card') == 10 and folded.count('<article class="rs-card') == 15
    assert "15 more report(s), read by the evidence" in folded and report_cards.card_anchor("r-25") in folded
    assert "rs-more" not in report_cards.report_cards_html(reports[:10])


def test_cards_number_each_report_once_with_a_strength_word_the_modality_in_words_and_the_whole_report() -> None:
    """Issue 41: one numbering (the rank), one relevance scale (a word; the raw score under Details), modality codes
    as words, the matching sentence with the query's words marked (negated ones so) and the whole report folded."""
    whole = "INDICATION: cough.\nFINDINGS: Small right pleural effusion.\nIMPRESSION: Effusion."
    reports = [
        hit(
            "r-1",
            1,
            0.93,
            "findings",
            "Effusion.",
            findings="Small right pleural effusion.",
            full_text=whole,
            modality="MR",
        ),
        hit("r-2", 2, 0.12, "findings", "Normal.", findings="No pleural effusion.", modality="OT"),
    ]
    cards = report_cards.report_cards_html(reports, method="bm25", query="pleural effusion")
    first, second = cards.split('<article class="rs-card')[1:]
    assert '<span class="rs-rank">#1</span>' in first and "strong match" in first and ">MRI<" in first
    assert '<span class="rs-rank">#2</span>' in second and "weak match" in second and ">other<" in second
    assert ">OT<" not in cards and "#3" not in cards
    assert "<summary>Details</summary>" in first and "bm25 score 0.930" in first.split("<summary>Details")[1]
    assert "Small right <mark>pleural</mark> <mark>effusion</mark>." in first
    assert '<mark class="rs-negated" title="negated in this report"><s>effusion</s> (negated)</mark>' in second
    full = first.split("<summary>Full report</summary>")[1]
    assert "INDICATION: cough." in full  # beyond findings and impression
    assert "No pleural effusion." in second.split("<summary>Full report</summary>")[1]  # without it: the sections


def test_export_is_markdown_with_the_answer_its_reports_and_configuration() -> None:
    from assistant.chat.export import EXPORT_ID, answer_document, export_html

    reports = [hit("r-1", 1, 0.9, "impression", "Small <b>left</b> effusion.", modality="XR")]
    evidence = {"read": 1, "candidates": [{"diagnosis": "effusion", "count": 1, "report_ids": ["r-1"]}]}
    answer = Answer(
        "left effusion",
        "effusion",
        [],
        "why",
        ["r-1"],
        reports,
        None,
        "evidence",
        evidence=evidence,
        configuration={"prompt": "evidence", "retrieval": {"k": 1}},
        configuration_hash="abc123",
    )
    document = answer_document(answer)
    assert document.startswith("# RadSearch Assistant answer") and "**Most likely diagnosis:** effusion" in document
    assert "### #1 r-1 (strong match, X-ray, score 0.900)" in document and "&lt;b&gt;left&lt;/b&gt;" in document
    assert "## Configuration abc123" in document and '"k": 1' in document and "not a diagnosis" in document
    assert "1. effusion: 1 of 1 (r-1)" in document
    page = export_html(answer)
    assert page.startswith(f'<textarea id="{EXPORT_ID}" hidden readonly>') and "<b>" not in page


def test_reports_that_contradict_the_query_are_marked_in_words() -> None:
    """Issue 17: a card and a message line say so, in text (not colour alone); the other reports carry no mark."""
    agrees = hit("r-1", 1, 0.9, "impression", "Left pneumothorax.")
    opposite = hit("r-2", 2, 0.8, "impression", "No pneumothorax.", contradicts=True)
    cards = report_cards.report_cards_html([agrees, opposite])
    first, second = cards.split('<article class="rs-card')[1:]
    assert 'data-contradicts="false"' in first and report_cards.CONTRADICTS_LABEL not in first
    assert 'data-contradicts="true"' in second and report_cards.CONTRADICTS_LABEL in second
    assert "says the opposite of your query" in second
    assert render.reports_pointer([agrees, opposite]).endswith(f"**⚠ {report_cards.CONTRADICTS_LABEL}:** #2.")


def test_mixed_reports_are_marked_apart_from_contradicting_ones() -> None:
    """A report that matches the query but rules the finding out somewhere (Hit.partly_contradicts) gets its own
    words, not the contradiction's."""
    mixed = hit("r-3", 1, 0.9, "impression", "No left effusion. Small left effusion.", partly_contradicts=True)
    card = report_cards.report_cards_html([mixed])
    assert 'data-partly-contradicts="true"' in card and 'data-contradicts="false"' in card
    assert report_cards.PARTLY_LABEL in card and "read it before taking it as support" in card
    assert report_cards.CONTRADICTS_LABEL not in card
    line = render.reports_pointer([mixed])
    assert f"{report_cards.PARTLY_LABEL}:** #1" in line and report_cards.CONTRADICTS_LABEL not in line


def test_markdown_messages_escape_model_and_report_text() -> None:
    escaped = render.md_escape("<img src=x onerror=alert(1)> **bold** [link](http://x) # head\n- item")
    assert "<img" not in escaped and "\\*\\*bold\\*\\*" in escaped and "\\[link\\]" in escaped
    assert "\\# head" in escaped and "\n\\- item" in escaped
    partial = render.partial_answer_markdown('{"diagnosis": "Pleural eff')
    assert partial.startswith(render.DRAFTING) and partial.endswith("▍")
    assert "Pleural" not in partial  # issue 48: no diagnosis before it is checked ("other", or one ruled out)
    partial = render.partial_answer_markdown('{"diagnosis": "other", "differential": ["Empyema", "Hemothor')
    assert "other" not in partial.replace(render.DRAFTING, "") and "- Empyema" in partial
    assert render.partial_answer_markdown('{"diag') == "_Thinking…_"


def test_auth_must_be_user_colon_password() -> None:
    assert parse_auth("resident:s3:cret") == ("resident", "s3:cret")
    assert parse_auth(None) is None
    for bad in ("resident", ":pw", "user:"):
        with pytest.raises(ValueError, match="USER:PASSWORD"):
            parse_auth(bad)


# ------------------------------------------------------------------------------------------------ messages
def test_empty_input_asks_for_a_finding_without_calling_anything(index_dir: Path) -> None:
    service = ChatService(ChatConfig(), llm=UnusableLLM())
    chat, _cards, notice, case, _box = _last(service, "   \n ", Request(mode=MODE_ANSWER, index=str(index_dir)))
    assert chat == [] and case == [] and "Type a finding first" in notice and "rs-warning" in notice


@pytest.mark.models
def test_missing_index_says_which_command_builds_it(tmp_path: Path) -> None:
    service = ChatService(ChatConfig(), llm=UnusableLLM())
    for mode in (MODE_SEARCH, MODE_ANSWER):
        chat, _cards, notice, _case, _box = _last(
            service, EFFUSION_QUERY, Request(mode=mode, index=str(tmp_path / "nothing-here"))
        )
        assert "rs-error" in notice and "make demo" in notice and "assistant index" in notice
        assert "index is unavailable" in _text(chat)


def test_search_only_needs_no_llm_and_applies_filters(index_dir: Path) -> None:
    service = ChatService(ChatConfig(), llm=UnusableLLM())
    request = Request(mode=MODE_SEARCH, field="findings", k=3, index=str(index_dir))
    chat, cards, notice, _case, box = _last(service, EFFUSION_QUERY, request)
    assert box == "" and notice == "" and "Search only" in _text(chat)
    assert cards.index('data-report-id="cxr-001"') < cards.index("rs-card", cards.index("cxr-001") + 30)
    assert cards.count('class="rs-card"') == 3
    request.modality = "CT"
    _chat, cards, _notice, _case, _box = _last(service, EFFUSION_QUERY, request)
    assert 'data-report-id="ct-008"' in cards and "cxr-" not in cards and "&gt;XR&lt;" not in cards


def test_search_only_filters_by_study_date_and_says_what_is_no_date(index_dir: Path) -> None:
    """Issue 39 (H4): the chat's study-date fields filter as --since/--until do; a date that is not one is said so
    before anything is searched, and the finding stays in the box."""
    service = ChatService(ChatConfig(), llm=UnusableLLM())
    request = Request(
        mode=MODE_SEARCH, k=len(CHAT_REPORTS), index=str(index_dir), since="2026-11-24", until="24.11.2026"
    )
    _chat, cards, notice, _case, _box = _last(service, EFFUSION_QUERY, request)
    assert notice == "" and cards.count('class="rs-card"') == 1 and 'data-report-id="ct-008"' in cards
    request.since = "05/11/2026"
    chat, _cards, notice, _case, box = _last(service, EFFUSION_QUERY, request)
    assert "rs-warning" in notice and "YYYY-MM-DD" in notice and box == EFFUSION_QUERY and not chat


def _card_of(cards: str, report_id: str) -> str:
    return next(c for c in cards.split('<article class="rs-card')[1:] if f'data-report-id="{report_id}"' in c)


def test_search_only_marks_the_report_that_rules_out_the_finding(index_dir: Path) -> None:
    """Issue 17: searching "pneumothorax", the report whose findings say "no pneumothorax" is marked (card and
    message line); no other report is."""
    service = ChatService(ChatConfig(), llm=UnusableLLM())
    request = Request(mode=MODE_SEARCH, field="findings", k=len(CHAT_REPORTS), index=str(index_dir))
    chat, cards, _notice, _case, _box = _last(service, PNEUMOTHORAX_QUERY, request)
    markup_id = "xr-markup-&lt;b&gt;007&lt;/b&gt;"
    assert 'data-contradicts="true"' in _card_of(cards, markup_id)
    assert cards.count('data-contradicts="true"') == 1 and cards.count(report_cards.CONTRADICTS_LABEL) == 1
    rank = _card_of(cards, markup_id).split('class="rs-rank">')[1].split("<")[0]
    assert _text(chat).endswith(f"**⚠ {report_cards.CONTRADICTS_LABEL}:** {rank}.")  # the card's number, not a new list
    assert "seventh rib fracture" not in _text(chat)  # each report is shown once: on its card


def test_retrieval_only_answer_marks_the_report_that_rules_out_the_finding(index_dir: Path) -> None:
    """The same mark on the reports of an Answer (they pass through the RAG pipeline's Documents)."""
    down = LLMSettings(
        backend="openai", base_url=f"http://127.0.0.1:{free_port()}/v1", model="m", timeout_s=5, max_retries=0
    )
    service = ChatService(ChatConfig(Settings(llm=down)))
    request = Request(mode=MODE_ANSWER, field="findings", k=len(CHAT_REPORTS), index=str(index_dir))
    chat, cards, _notice, _case, _box = _last(service, PNEUMOTHORAX_QUERY, request)
    assert 'data-contradicts="true"' in _card_of(cards, "xr-markup-&lt;b&gt;007&lt;/b&gt;")
    assert cards.count('data-contradicts="true"') == 1
    assert sum(report_cards.CONTRADICTS_LABEL in line for line in _text(chat).splitlines()) == 1


def test_field_missing_from_the_index_is_explained(index_dir: Path) -> None:
    service = ChatService(ChatConfig(), llm=UnusableLLM())
    request = Request(mode=MODE_SEARCH, field="labels", index=str(index_dir))
    _chat, _cards, notice, _case, _box = _last(service, EFFUSION_QUERY, request)
    assert "no &#x27;labels&#x27; vectors" in notice and "impression" in notice


def test_backend_down_shows_the_retrieval_only_result(index_dir: Path) -> None:
    settings = LLMSettings(
        backend="openai", base_url=f"http://127.0.0.1:{free_port()}/v1", model="m", timeout_s=5, max_retries=0
    )
    service = ChatService(ChatConfig(Settings(llm=settings)))
    request = Request(mode=MODE_ANSWER, field="findings", index=str(index_dir))
    chat, cards, notice, case, _box = _last(service, EFFUSION_QUERY, request)
    assert "No LLM answer" in notice and "retrieval-only result is shown" in notice and "rs-warning" in notice
    assert "No LLM answer" in _text(chat) and "listed under *Retrieved reports*" in _text(chat)
    assert 'data-report-id="cxr-001"' in cards and "Small right pleural effusion" in cards
    assert case[-1]["role"] == "assistant" and "Small right pleural effusion" not in case[-1]["content"]


# ------------------------------------------------------------------------------------ answers (SmolLM2)
def test_answer_streams_then_shows_diagnosis_and_cards(index_dir: Path, smollm2: LLM) -> None:
    service = ChatService(ChatConfig(max_tokens=160), llm=smollm2)
    request = Request(mode=MODE_ANSWER, field="findings", k=2, index=str(index_dir))
    updates = list(service.respond(EFFUSION_QUERY, [], [], request))
    assert len(updates) >= 3, "placeholder, cards as soon as retrieved, then the answer"
    first_cards = next(u[1] for u in updates[1:] if isinstance(u[1], str) and "rs-card" in u[1])
    assert 'data-report-id="cxr-001"' in first_cards
    chat, cards, notice, case, _box = updates[-1]
    assert [m["role"] for m in chat] == ["user", "assistant"]
    assert "Most likely diagnosis" in _text(chat) and "smollm2" in _text(chat)
    assert 'data-report-id="cxr-001"' in cards and "rs-error" not in notice
    assert [m["role"] for m in case] == ["user", "assistant"] and case[0]["content"] == EFFUSION_QUERY


def test_follow_up_sends_the_conversation_and_new_case_forgets_it(index_dir: Path, smollm2: LLM) -> None:
    llm = RecordingLLM(smollm2)
    service = ChatService(ChatConfig(max_tokens=120), llm=llm)
    request = Request(mode=MODE_ANSWER, field="findings", k=1, index=str(index_dir))
    chat, _cards, _notice, case, _box = _last(service, EFFUSION_QUERY, request)
    follow_up = "The patient also has fever. Could it be an empyema?"
    chat, cards, _notice, case, _box = _last(service, follow_up, request, chat=chat, case=case)
    sent = llm.calls[-1]
    assert [m["role"] for m in sent] == ["system", "user", "assistant", "user"]
    assert EFFUSION_QUERY in sent[1]["content"] and follow_up in sent[3]["content"]
    assert len(chat) == 4 and len(case) == 4
    assert 'data-report-id="cxr-001"' in cards, "retrieval uses the whole case, not only the follow-up"
    _last(service, follow_up, request)  # new case: empty chat and case
    assert [m["role"] for m in llm.calls[-1]] == ["system", "user"]


def test_retrieved_text_never_reaches_the_model_as_an_assistant_turn(index_dir: Path, smollm2: LLM) -> None:
    """Report text is untrusted: replayed as the assistant's own words it would carry the model's authority."""
    llm = RecordingLLM(smollm2)
    service = ChatService(ChatConfig(max_tokens=40), llm=llm)
    down = LLMSettings(
        backend="openai", base_url=f"http://127.0.0.1:{free_port()}/v1", model="m", timeout_s=5, max_retries=0
    )
    failing = ChatService(ChatConfig(Settings(llm=down)))
    search = Request(mode=MODE_SEARCH, field="findings", k=3, index=str(index_dir))
    answer = Request(mode=MODE_ANSWER, field="findings", k=3, index=str(index_dir))
    chat, _cards, _notice, case, _box = _last(service, EFFUSION_QUERY, search)
    chat, _cards, _notice, case, _box = _last(failing, "Any pleural thickening?", answer, chat=chat, case=case)
    _last(service, "Could it be an empyema?", answer, chat=chat, case=case)
    replayed = " ".join(m["content"] for m in llm.calls[-1] if m["role"] == "assistant")
    for report in CHAT_REPORTS:
        assert report.impression not in replayed and report.findings not in replayed


def test_retrieval_off_answers_from_the_model_alone(index_dir: Path, smollm2: LLM) -> None:
    service = ChatService(ChatConfig(max_tokens=120), llm=smollm2)
    request = Request(use_retrieval=False, index=str(index_dir / "missing"))  # index not even needed
    chat, cards, _notice, _case, _box = _last(service, EFFUSION_QUERY, request)
    assert "Retrieval is off" in cards and "no retrieval" in _text(chat)


def test_catalog_offers_installed_indexes_but_not_a_swap_in_progress(tmp_path: Path) -> None:
    paths = DataPaths.from_env({"RADSEARCH_HOME": str(tmp_path)})
    for name in ("site", ".site.old", ".site.tmp-1234"):  # what an interrupted `assistant index` leaves beside it
        (tmp_path / "indexes" / name).mkdir(parents=True)
        (tmp_path / "indexes" / name / "manifest.json").write_text("{}", encoding="utf-8")
    names = [p.name for p in IndexCatalog(paths).folders()]
    assert names == ["demo", "site"]


def test_a_message_carries_its_configuration_hash_with_what_it_covers() -> None:
    """Issue 42: the chat's message details name the configuration, as `ask --json` does."""
    from assistant.rag.answer import Answer
    from assistant.rag.configuration import configuration_hash

    configuration = {
        "retrieval": {"encoder": {"name": "radsearch"}, "search": {"dense_weight": 0.7, "k": 1}},
        "prompt": "diagnosis_rag@1",
        "llm": {"model": "qwen<b>"},
    }
    answer = Answer(
        "q",
        "Pneumonia",
        [],
        "",
        [],
        [],
        "m",
        "diagnosis_rag@1",
        configuration=configuration,
        configuration_hash=configuration_hash(configuration),
    )
    for message in (
        render.answer_markdown(answer),
        render.answer_markdown(
            Answer(
                "q",
                None,
                [],
                "",
                [],
                [],
                None,
                "p",
                degraded=True,
                degraded_kind="timeout",
                configuration=configuration,
                configuration_hash=configuration_hash(configuration),
            )
        ),
    ):
        assert f"configuration {configuration_hash(configuration)}" in message
        assert "retrieval.search.dense\\_weight: 0.7" in message or "retrieval.search.dense_weight: 0.7" in message
        assert "qwen<b>" not in message  # escaped like every other model-provided text


def test_the_evidence_mode_answers_without_the_model(index_dir: Path) -> None:
    """Issue 37: the chat's Evidence mode answers as `ask --prompt evidence` does, asking no model, with the evidence
    panel linking each candidate to its reports' cards; the page opens in the mode of ask's default."""
    from assistant.chat.service import DEFAULT_MODE, MODE_ANSWER, MODE_EVIDENCE
    from assistant.rag import answer_defaults

    assert DEFAULT_MODE == (MODE_EVIDENCE if answer_defaults.PROMPT == "evidence" else MODE_ANSWER) == Request().mode
    service = ChatService(ChatConfig(), llm=UnusableLLM())
    request = Request(field="findings", index=str(index_dir), mode=MODE_EVIDENCE)
    chat, cards, _notice, _case, _box = _last(service, EFFUSION_QUERY, request)
    assert "Most likely diagnosis" in _text(chat) and "no language model was asked" in _text(chat)
    assert 'aria-label="evidence"' in cards and "similar reports" in cards


def test_stop_ends_the_answer_and_the_backend_stream(index_dir: Path) -> None:
    """Issue 41: Stop (ChatService.stop) ends a running answer within a poll, and the model's call with it: the
    server, writing one piece every 0.5 s, sees the client hang up long before its last piece."""
    import threading

    from fault_server import fault_server

    with fault_server() as server:
        server.behaviour, server.trickle_s = "slow_stream", 0.5
        server.stream_pieces = ('{"diagnosis": "', *["effusion "] * 40, '"}')
        llm = LLMSettings(backend="openai", base_url=server.url, model="m", timeout_s=60, max_retries=0)
        service = ChatService(ChatConfig(Settings(llm=llm)))
        request = Request(mode=MODE_ANSWER, field="findings", k=2, index=str(index_dir))
        request.stop = service.stop_signal("session-1")
        updates = []
        for update in service.respond(EFFUSION_QUERY, [], [], request):
            updates.append(update)
            if render.DRAFTING in _text(update[0]) and not request.stop.is_set():  # the model is writing
                threading.Timer(0.2, service.stop, ["session-1"]).start()  # the button, from another request
        assert _text(updates[-1][0]).endswith(render.STOPPED_MARKDOWN) and updates[-1][3] == []  # not in the case
        assert server.client_left.wait(5) and len(server.sent_at) < len(server.stream_pieces)
        service.release("session-1", request.stop)
        assert service.stop("session-1") is False  # nothing running any more
