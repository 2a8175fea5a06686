"""The matching sentence and the readable relevance scale that `search`, `ask` and the chat show (issue 41)."""

from __future__ import annotations

from assistant.excerpt import MAX_CHARS, matching_excerpt, searched_text
from assistant.readable import FAIR, STRONG, WEAK, modality_word, strengths


def _marked(text: str, query: str) -> list[tuple[str, bool]]:
    excerpt = matching_excerpt(text, query)
    return [(excerpt.text[m.start : m.end], m.negated) for m in excerpt.marks]


def test_the_sentence_with_most_query_words_is_chosen_past_the_opening() -> None:
    report = "Heart size is normal. The aorta is tortuous. Small left pleural effusions are noted. No fracture."
    excerpt = matching_excerpt(report, "left pleural effusion")
    assert excerpt.text == "Small left pleural effusions are noted."
    assert _marked(report, "left pleural effusion") == [("left", False), ("pleural", False), ("effusions", False)]


def test_words_the_report_negates_are_marked_negated() -> None:
    assert _marked("No pleural effusion or pneumothorax.", "pleural effusion") == [
        ("pleural", True),
        ("effusion", True),
    ]


def test_no_matching_sentence_gives_the_first_sentence_unmarked() -> None:
    excerpt = matching_excerpt("Normal  study. Nothing else.", "pneumothorax")
    assert excerpt.text == "Normal study." and excerpt.marks == ()
    assert matching_excerpt("", "pneumothorax").text == ""


def test_a_long_sentence_is_cut_around_its_first_mark_and_the_marks_follow() -> None:
    sentence = "word " * 120 + "a small joint effusion is seen " + "word " * 80 + "."
    excerpt = matching_excerpt(sentence, "joint effusion")
    assert len(excerpt.text) <= MAX_CHARS and excerpt.text.startswith("…")
    assert [excerpt.text[m.start : m.end] for m in excerpt.marks] == ["joint", "effusion"]


def test_the_searched_field_decides_which_text_is_read() -> None:
    assert searched_text("impression", "F.", "I.", "W.") == "I." and searched_text("findings", "F.", "I.") == "F."
    assert searched_text("report", "F.", "I.", "Whole.") == "Whole." and searched_text("report", "F.", "I.") == "F.\nI."


def test_strength_is_relative_to_the_search_and_codes_read_as_words() -> None:
    assert strengths([0.9, 0.6, 0.5, 0.1]) == [STRONG, FAIR, FAIR, WEAK]
    assert strengths([12.0, 11.0, 0.5]) == [STRONG, STRONG, WEAK]  # BM25's scale: the same words
    assert strengths([0.4]) == [STRONG] and strengths([0.3, 0.3]) == [STRONG, STRONG] and strengths([]) == []
    assert [modality_word(c) for c in ("XR", "MR", "OT", "ct", "", "XYZ")] == ["X-ray", "MRI", "other", "CT", "", "XYZ"]
