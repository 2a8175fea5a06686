"""The question reader's checks on real reports (eval.diagnosis.modality_reading, normal_organs): what they measure
holds on the dev split's reports, and each names the reports it counts. Skipped without the shared data."""

from __future__ import annotations

from pathlib import Path


def test_a_sentence_naming_another_study_fixes_modality_readings_and_breaks_none(shared_data: Path) -> None:
    from eval.diagnosis.modality_reading import measure

    result = measure("dev")
    overall = result.overall
    assert "openi:3251" in overall.fixed_ids  # "... stable since a CT examination": a chest radiograph
    assert not overall.new_ids and overall.contradicted_now < overall.contradicted_before
    assert sum(c.reports for c in result.by_source.values()) == overall.reports > 200


def test_a_normal_organ_rules_out_only_what_the_impressions_do_not_affirm(shared_data: Path) -> None:
    from eval.diagnosis.normal_organs import measure

    result = measure("dev")
    assert {"rad:cardiomegaly", "rad:mediastinal_widening"} <= set(result.rules) and len(result.rules) == 3
    for name, rule in result.rules.items():
        assert rule.applies > 20, name
        assert rule.contradicted <= 0.01 * rule.applies and len(rule.contradicted_ids) == rule.contradicted, name
