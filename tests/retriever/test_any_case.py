"""Case-insensitive patterns matched fast on ASCII text (retriever/reports/any_case.py)."""

from __future__ import annotations

import pytest

from retriever.reports.any_case import AnyCase


def test_a_match_is_given_as_written_and_counted_in_any_case() -> None:
    patterns = AnyCase({"effusion": r"\beffusions?\b", "note": r"\bnote\W+to\b"})
    assert patterns.first("note", "SYSTEM NOTE TO AI") == "NOTE TO"
    assert patterns.counts("Effusion; EFFUSIONS; effusion.") == {"effusion": 3}
    # beyond ASCII the case-insensitive pattern reads it: a long s is an s there, not in lower case
    assert patterns.counts("EFFU\u017fION note to") == {"effusion": 1, "note": 1}
    assert patterns.first("effusion", "Effu\u017fion") == "Effu\u017fion" and patterns.first("note", "") is None


def test_a_pattern_with_upper_case_letters_is_refused() -> None:
    """Lower-cased text would never match it: the fast path would silently differ from the case-insensitive one."""
    with pytest.raises(ValueError, match="'Dx' has upper-case letters"):
        AnyCase({"Dx": r"\bPneumonia\b"})
    AnyCase({"ok": r"\W\S\D\B[a-z]"})  # escapes are not letters
