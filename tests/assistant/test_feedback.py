"""Residents' feedback (issue 52): the store keeps every verdict across processes and restarts, the export is a cases
file the diagnosis benchmark reads, and the agreement is counted by configuration hash."""

from __future__ import annotations

import json
import multiprocessing
import os
import threading
from pathlib import Path

import pytest
from cli_fixtures import run

from assistant.chat.feedback import UNKNOWN_ANSWER, RecentAnswers
from assistant.feedback.cases import write_cases
from assistant.feedback.stats import agreement_by_configuration, same_diagnosis
from assistant.feedback.store import Answered, FeedbackError, FeedbackStore, Verdict
from eval.diagnosis.cases import read_cases


def answered(diagnosis: str = "pleural effusion", config: str = "aaaa", user: str | None = "anna") -> Answered:
    answer = {
        "query": "Blunting of the right costophrenic angle",
        "diagnosis": diagnosis,
        "degraded": False,
        "configuration": {"prompt": "evidence", "llm": None, "retrieval": {"encoder": {"name": "minilm"}}},
        "configuration_hash": config,
    }
    findings = "Blunting of the right costophrenic angle.\nPatient is 78 years old."
    return Answered("Patient is 78 years old.", findings, answer, "demo", "chat", user)


def test_a_verdict_is_stored_with_its_answer_and_survives_a_new_store_object(tmp_path: Path) -> None:
    path = tmp_path / "feedback.sqlite"
    first = FeedbackStore(path).record(answered(), Verdict(False, "  empyema ", "loculated"))
    entries = FeedbackStore(path).entries()  # another object on the same file: what a restarted server opens
    assert [e.id for e in entries] == [first]
    entry = entries[0]
    assert entry.answered.user == "anna" and entry.answered.configuration_hash == "aaaa"
    assert entry.answered.answer["diagnosis"] == "pleural effusion" and entry.answered.index == "demo"
    assert entry.verdict == Verdict(False, "empyema", "loculated") and entry.created.endswith("+00:00")


def test_a_second_verdict_on_one_answer_updates_its_entry(tmp_path: Path) -> None:
    store = FeedbackStore(tmp_path / "f.sqlite")
    first = store.record(answered(), Verdict(helpful=False), key="k1")
    again = store.record(answered(), Verdict(right_diagnosis="empyema"), key="k1")
    assert first == again and len(store.entries()) == 1
    assert store.entries()[0].verdict == Verdict(False, "empyema", "")


@pytest.mark.parametrize(
    ("verdict", "message"),
    [(Verdict(), "say whether"), (Verdict(right_diagnosis="x" * 301), "at most 300"), (Verdict(None, "", "  "), "say")],
)
def test_a_verdict_that_says_nothing_or_too_much_is_refused(tmp_path: Path, verdict: Verdict, message: str) -> None:
    with pytest.raises(FeedbackError, match=message):
        FeedbackStore(tmp_path / "f.sqlite").record(answered(), verdict)


def _write_many(path: str, who: str, count: int) -> None:
    store = FeedbackStore(Path(path))
    for n in range(count):
        store.record(answered(user=who), Verdict(True, comment=f"{who}-{n}"))


def test_residents_writing_at_once_lose_no_entry(tmp_path: Path) -> None:
    """Two processes and four threads write 25 entries each into one file at once: all 150 are there."""
    path = str(tmp_path / "f.sqlite")
    context = multiprocessing.get_context("spawn")
    processes = [context.Process(target=_write_many, args=(path, f"p{n}", 25)) for n in range(2)]
    threads = [threading.Thread(target=_write_many, args=(path, f"t{n}", 25)) for n in range(4)]
    for worker in (*processes, *threads):
        worker.start()
    for worker in (*processes, *threads):
        worker.join(120)
    assert all(p.exitcode == 0 for p in processes)
    comments = {e.verdict.comment for e in FeedbackStore(Path(path)).entries()}
    assert len(comments) == 150


def test_the_export_is_a_cases_file_the_benchmark_reads(tmp_path: Path) -> None:
    store = FeedbackStore(tmp_path / "f.sqlite")
    corrected = store.record(answered(), Verdict(False, "Empyema"))
    agreed = store.record(answered(user="ben", config="bbbb"), Verdict(True))
    store.record(answered(), Verdict(False))  # no reference: left out, with its reason
    written, skipped = write_cases(store.entries(), tmp_path / "out" / "cases.jsonl")
    assert written == 2 and [s.reason for s in skipped] == ["not helpful, no right diagnosis given"]
    cases = read_cases(tmp_path / "out" / "cases.jsonl")
    assert [c.id for c in cases] == [f"feedback-{corrected}", f"feedback-{agreed}"]
    assert [c.diagnosis for c in cases] == ["Empyema", "pleural effusion"] and {c.source for c in cases} == {"site"}
    assert cases[0].findings.startswith("Blunting") and "78 years" in cases[0].findings  # the whole case
    assert cases[0].meta["user"] == "anna" and cases[1].meta["configuration_hash"] == "bbbb"
    assert cases[0].meta["answered"] == "pleural effusion" and cases[0].meta["verdict"] == "not helpful"


def test_agreement_is_counted_by_configuration_hash(tmp_path: Path) -> None:
    store = FeedbackStore(tmp_path / "f.sqlite")
    store.record(answered(config="aaaa"), Verdict(True))
    store.record(answered(config="aaaa"), Verdict(None, "Pleural effusion."))  # the same words: agrees
    store.record(answered(config="aaaa", user="ben"), Verdict(True, "empyema"))  # helpful, but another diagnosis
    store.record(answered(config="bbbb"), Verdict(False))
    store.record(answered(config="bbbb"), Verdict(None, "", "a comment judges nothing"))
    rows = {row.configuration_hash: row for row in agreement_by_configuration(store.entries())}
    assert (rows["aaaa"].agreed, rows["aaaa"].judged, rows["aaaa"].corrected, len(rows["aaaa"].users)) == (2, 3, 1, 2)
    assert (rows["bbbb"].agreed, rows["bbbb"].judged, rows["bbbb"].entries) == (0, 1, 2)
    assert rows["aaaa"].label == "evidence · no model · minilm"
    assert same_diagnosis("Pleural effusion.", "pleural  effusion") and not same_diagnosis("", "")


def test_the_chat_stores_a_verdict_only_for_an_answer_of_this_run(tmp_path: Path) -> None:
    answers = RecentAnswers(FeedbackStore(tmp_path / "f.sqlite"), kept=2)
    first = answers.keep(answered(user=None))
    entry, _ = answers.judge(first, Verdict(True), user="carla")
    assert FeedbackStore(tmp_path / "f.sqlite").entries()[0].answered.user == "carla" and entry == 1
    answers.keep(answered())
    answers.keep(answered())  # the first is no longer kept
    with pytest.raises(FeedbackError, match="before the chat restarted"):
        answers.judge(first, Verdict(True), user="carla")
    with pytest.raises(FeedbackError, match=UNKNOWN_ANSWER[:20]):
        answers.judge("made-up", Verdict(True), user="carla")


def test_feedback_commands_judge_export_and_count(tmp_path: Path) -> None:
    """`assistant feedback last` judges the answer `ask` kept; `export` and `stats` read the same file."""
    env = {"RADSEARCH_FEEDBACK": str(tmp_path / "f.sqlite")}
    refused = run("feedback", "last", "--helpful", env=env)
    assert refused.returncode == 2 and "ask first" in refused.stderr
    store = FeedbackStore(tmp_path / "f.sqlite")
    import getpass

    store.remember_last(getpass.getuser(), answered(user=None))
    judged = run("feedback", "last", "--not-helpful", "--right", "empyema", env=env)
    assert judged.returncode == 0, judged.stderr
    assert "stored" in judged.stderr
    empty = run("feedback", "last", env=env)
    assert empty.returncode == 2 and "say whether" in empty.stderr
    out = tmp_path / "cases.jsonl"
    exported = run("feedback", "export", "--out", str(out), env=env)
    assert exported.returncode == 0 and "1 case(s) written" in exported.stderr
    assert json.loads(out.read_text(encoding="utf-8"))["diagnosis"] == "empyema"
    stats = run("feedback", "stats", "--json", env=env)
    assert stats.returncode == 0 and json.loads(stats.stdout)[0]["judged"] == 1
    assert os.path.getsize(tmp_path / "f.sqlite") > 0
