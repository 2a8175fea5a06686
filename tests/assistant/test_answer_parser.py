"""The parser must get an answer out of whatever a model writes, and refuse output with none in it."""

from __future__ import annotations

import pytest

from assistant.rag.answer import UnparseableOutput, answer_schema, parse_output


def test_clean_json() -> None:
    parsed = parse_output(
        '{"diagnosis": "Pleural effusion", "differential": ["Empyema", "Hemothorax"], '
        '"rationale": "Meniscus sign.", "cited_report_ids": ["cxr-001"]}'
    )
    assert parsed.mode == "json" and parsed.diagnosis == "Pleural effusion"
    assert parsed.differential == ["Empyema", "Hemothorax"] and parsed.cited_report_ids == ["cxr-001"]


def test_json_in_code_fence_with_chatter_around_it() -> None:
    parsed = parse_output('Sure! Here it is:\n```json\n{"diagnosis": "Pneumothorax"}\n```\nHope this helps.')
    assert parsed.mode == "fenced_json" and parsed.diagnosis == "Pneumothorax"


def test_json_embedded_in_prose() -> None:
    parsed = parse_output('Answer: {"diagnosis": "Cardiomegaly", "differential": "CHF, effusion"} done')
    assert parsed.mode == "embedded_json" and parsed.differential == ["CHF", "effusion"]


def test_truncated_json_is_repaired() -> None:
    parsed = parse_output('{"diagnosis": "Pneumonia", "differential": ["Atelectasis", "Aspir')
    assert parsed.mode == "repaired_json" and parsed.diagnosis == "Pneumonia"
    assert parsed.differential[0] == "Atelectasis"


def test_near_miss_keys_and_types_are_tolerated() -> None:
    parsed = parse_output('{"Most likely diagnosis": ["Pulmonary embolism"], "citations": [5], "reasoning": 3}')
    assert parsed.diagnosis == "Pulmonary embolism" and parsed.cited_report_ids == ["5"] and parsed.rationale == ""


def test_labelled_plain_text() -> None:
    parsed = parse_output("Diagnosis: Lobar pneumonia\nDifferential: atelectasis; aspiration\nRationale: consolidation")
    assert parsed.mode == "plain_text" and parsed.diagnosis == "Lobar pneumonia"
    assert parsed.differential == ["atelectasis", "aspiration"] and parsed.rationale == "consolidation"


def test_unlabelled_prose_takes_the_first_sentence() -> None:
    parsed = parse_output("Right lower lobe pneumonia. The opacity with air bronchograms suggests it.")
    assert parsed.diagnosis == "Right lower lobe pneumonia"


def test_non_english_output_is_kept() -> None:
    assert parse_output('{"diagnosis": "Épanchement pleural droit"}').diagnosis == "Épanchement pleural droit"


@pytest.mark.parametrize("text", ["", "   \n\t"])
def test_empty_output_is_an_error(text: str) -> None:
    with pytest.raises(UnparseableOutput, match="empty"):
        parse_output(text)


@pytest.mark.parametrize("text", ["{{{", '{"diagnosis": }', "```json\n```", '{"differential": ["x"]}', "[1, 2]"])
def test_malformed_json_without_a_diagnosis_is_an_error(text: str) -> None:
    with pytest.raises(UnparseableOutput, match="no diagnosis"):
        parse_output(text)


def test_runaway_output_is_clipped() -> None:
    parsed = parse_output(
        '{"diagnosis": "'
        + "very " * 500
        + 'long", "differential": '
        + str([f"d{i}" for i in range(30)]).replace("'", '"')
        + "}"
    )
    assert len(parsed.diagnosis) <= 300 and len(parsed.differential) == 8


def test_schema_limits_citations_to_retrieved_ids() -> None:
    schema = answer_schema(["a", "b", "a"])
    assert schema["properties"]["cited_report_ids"]["items"]["enum"] == ["a", "b"]
    assert schema["properties"]["cited_report_ids"]["maxItems"] == 2
    assert answer_schema([])["properties"]["cited_report_ids"]["maxItems"] == 0


def test_a_rationale_looping_on_a_sentence_keeps_it_once() -> None:
    loop = "The reference report suggests monitoring. " * 6
    parsed = parse_output(
        '{"diagnosis": "Pleural effusion", "differential": [], "rationale": "Meniscus sign. '
        + loop
        + 'the reference report  suggests monitoring. Small volume.", "cited_report_ids": []}'
    )
    assert parsed.rationale == "Meniscus sign. The reference report suggests monitoring. Small volume."
    plain = parse_output("Diagnosis: Lobar pneumonia\nRationale: Air bronchograms. " + loop + "The reference")
    assert plain.rationale == "Air bronchograms. The reference report suggests monitoring."  # the cut-off start too
    assert parse_output("Diagnosis: Effusion\nRationale: Meniscus sign. Small").rationale == "Meniscus sign. Small"


@pytest.mark.parametrize("text", ["[" * 100_000 + "]" * 100_000, '{"diagnosis": ' + "[" * 100_000])
def test_json_nested_too_deep_is_unparseable_not_a_recursion_error(text: str) -> None:
    with pytest.raises(UnparseableOutput):
        parse_output(text)
