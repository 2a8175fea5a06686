"""Cases files, the prediction cache, conditions and the case builders, on data the tests write themselves."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from eval.common.prediction_cache import PredictionCache, cache_key
from eval.diagnosis.build_cases import impression_case, mark_screening, medpix_case, openi_case
from eval.diagnosis.cases import SCREENING, Case, CaseFileError, read_cases, write_cases
from eval.diagnosis.conditions import parse_conditions, retrieval_corpus
from retriever.reports.record import Report


def test_cases_round_trip_and_references(tmp_path) -> None:
    cases = [
        Case("c1", "Enlarged appendix.", "Appendicitis", ("acute appendicitis",), "medpix"),
        Case("c2", "Blunted angle.", "Pleural effusion"),
    ]
    path = tmp_path / "cases.jsonl"
    assert write_cases(cases, path) == 2
    assert read_cases(path) == cases
    assert cases[0].references() == ["Appendicitis", "acute appendicitis"]


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("not json", "not JSON"),
        ('["a list"]', "expected an object"),
        ('{"id": "x", "findings": " ", "diagnosis": "d"}', "missing or empty findings"),
        ('{"id": "x", "findings": "f", "diagnosis": "d", "accept": "one string"}', "must be a list"),
    ],
)
def test_bad_case_lines_name_the_line_and_problem(tmp_path, line: str, message: str) -> None:
    path = tmp_path / "cases.jsonl"
    path.write_text('{"id": "ok", "findings": "f", "diagnosis": "d"}\n' + line + "\n")
    with pytest.raises(CaseFileError, match=f"cases.jsonl:2: .*{message}"):
        read_cases(path)


def test_duplicate_ids_and_empty_files_are_refused(tmp_path) -> None:
    path = tmp_path / "cases.jsonl"
    path.write_text('{"id": "a", "findings": "f", "diagnosis": "d"}\n' * 2)
    with pytest.raises(CaseFileError, match="duplicate id"):
        read_cases(path)
    path.write_text("\n")
    with pytest.raises(CaseFileError, match="no cases"):
        read_cases(path)


def test_prediction_cache_resumes_and_ignores_a_torn_last_line(tmp_path) -> None:
    path = tmp_path / "predictions.jsonl"
    cache = PredictionCache(path)
    row = {"case_id": "c1", "condition": "none", "model_id": "m", "prompt_id": "p@1", "diagnosis": "x"}
    cache.put(row)
    with path.open("a") as handle:
        handle.write('{"case_id": "c2", "condit')  # killed mid-write
    reopened = PredictionCache(path)
    assert len(reopened) == 1
    assert reopened.get(cache_key("c1", "none", "m", "p@1", 32)) == row
    assert reopened.get(cache_key("c1", "none", "m", "p@2", 32)) is None  # a new prompt version is a new prediction


def _append_rows(path: str, worker: int) -> None:
    cache = PredictionCache(path)
    for n in range(300):
        cache.put(
            {
                "case_id": f"w{worker}-{n}",
                "condition": "none",
                "model_id": "m",
                "prompt_id": "p@1",
                "diagnosis": "x" * (n * 37 % 5000),
            }
        )


@pytest.mark.models
def test_processes_appending_to_one_cache_never_tear_each_other_s_lines(tmp_path) -> None:
    """`eval.diagnosis.benchmark --shard` runs several processes on one cache file."""
    import multiprocessing

    path = tmp_path / "predictions.jsonl"
    workers = [multiprocessing.get_context("spawn").Process(target=_append_rows, args=(str(path), w)) for w in (0, 1)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    lines = path.read_text().splitlines()
    assert len(lines) == 600 and all(json.loads(line)["model_id"] == "m" for line in lines)
    assert len(PredictionCache(path)) == 600


def test_conditions_parse_and_name() -> None:
    none, bm25, mpnet = parse_conditions("None, bm25 ,mpnet,mpnet")
    assert (none.retrieval, bm25.method, bm25.encoder, mpnet.method) == (False, "bm25", "minilm", "dense")
    assert [c.name for c in (none, bm25, mpnet)] == ["none", "bm25", "mpnet"]
    assert parse_conditions("minilm", field="findings", k=3)[0].name == "minilm[findings,k=3]"
    hybrid, weighted = parse_conditions("hybrid:radsearch-minilm,hybrid-weighted:mpnet")
    assert (hybrid.method, hybrid.encoder, hybrid.name) == ("hybrid", "radsearch-minilm", "hybrid:radsearch-minilm")
    assert (weighted.method, weighted.encoder) == ("hybrid-weighted", "mpnet")
    with pytest.raises(ValueError):
        parse_conditions(" , ")


def test_conditions_order_exactly_the_report_fields() -> None:
    """Their own order (ties go to the paper's field first), but the fields are the hit's Literal's."""
    from eval.diagnosis.conditions import FIELDS as CONDITION_FIELDS
    from retriever.reports.record import FIELDS

    assert sorted(CONDITION_FIELDS) == sorted(FIELDS) and CONDITION_FIELDS[0] == "impression"


def test_conditions_take_bracketed_options_and_the_top_hit_baseline_asks_no_model() -> None:
    text = "none, mpnet[report,k=3,prompt=diagnosis_candidates], tophit:hybrid:x[findings,k=5], mpnet[k=2]"
    none, candidates, top_hit, k2 = parse_conditions(text, k=1)
    assert (candidates.field, candidates.k, candidates.prompt) == ("report", 3, "diagnosis_candidates")
    assert candidates.name == "mpnet[report,k=3,prompt=diagnosis_candidates]"
    assert not top_hit.uses_llm and none.uses_llm and (top_hit.method, top_hit.encoder) == ("hybrid", "x")
    assert (top_hit.k, top_hit.name) == (1, "tophit:hybrid:x[findings]")  # one hit, no prompt
    assert k2.name == "mpnet[k=2]" and parse_conditions("mpnet", k=2)[0].name == "mpnet[k=2]"
    with pytest.raises(ValueError, match="bad condition option 'k=0'"):
        parse_conditions("mpnet[k=0]")
    staged, plain = parse_conditions("hybrid-weighted:x[rerank=support], hybrid-weighted:x")
    assert (staged.rerank, staged.name, plain.rerank) == ("support", "hybrid-weighted:x[rerank=support]", None)
    assert staged != plain  # its answers are cached apart
    with pytest.raises(ValueError, match="bad condition option 'rerank=support'"):
        parse_conditions("none[rerank=support]")
    sqrt, default = parse_conditions("evidence:x[report,k=40,weighting=sqrt], evidence:x[report,k=40]")
    assert (sqrt.weighting, sqrt.name, default.weighting) == ("sqrt", "evidence:x[report,k=40,weighting=sqrt]", None)
    for bad in ("evidence:x[weighting=log]", "none[weighting=sqrt]"):
        with pytest.raises(ValueError, match="weighting"):  # unknown, or on a condition without evidence
            parse_conditions(bad)
    from assistant.rag.answer_defaults import FIELD
    from eval.diagnosis.benchmark import default_condition
    from eval.retrieval.findings_impression import reranker_for
    from retriever.search.methods import DEFAULT_SECOND_STAGE

    # the benchmark's default is what `ask` searches with: the second stage only where it re-scores the ask's field
    applies = DEFAULT_SECOND_STAGE is not None and reranker_for(DEFAULT_SECOND_STAGE).applies_to(FIELD)
    assert default_condition().rerank == (DEFAULT_SECOND_STAGE if applies else None)
    assert (default_condition().field, default_condition().rerank) == ("report", None)  # support reads impressions


def test_no_retrieval_takes_only_a_prompt_of_its_own() -> None:
    """`none` asks with the product's no-retrieval prompt whatever the run's --prompt; `none[prompt=X]` with X, so a
    new answer format can be compared with and without retrieval; field and k mean nothing to it."""
    plain, own = parse_conditions("none,none[prompt=diagnosis_brief_norag]", prompt="diagnosis_candidates")
    assert (plain.name, plain.answer_prompt) == ("none", "diagnosis_norag")
    assert (own.name, own.answer_prompt) == ("none[prompt=diagnosis_brief_norag]", "diagnosis_brief_norag")
    assert parse_conditions("mpnet", prompt="diagnosis_candidates")[0].answer_prompt == "diagnosis_candidates"
    with pytest.raises(ValueError, match="only prompt=NAME applies"):
        parse_conditions("none[report,k=3]")


def test_retrieval_corpus_never_holds_a_case_report() -> None:
    reports = [Report("a", "f", "i"), Report("b", "f2", "i2")]
    assert [r.id for r in retrieval_corpus(reports, {"a"})] == ["b"]


def test_medpix_case_accepts_title_aliases_and_numbered_diagnoses() -> None:
    report = Report(
        "medpix:1",
        "Nodular thickening of the plantar fascia.",
        "Plantar Fibromatosis (Ledderhose Disease)",
        source="medpix",
        meta={"title": "Plantar fibromatosis", "differential": "Fasciitis"},
    )
    case = medpix_case(report)
    assert case.diagnosis == "Plantar Fibromatosis (Ledderhose Disease)"
    assert case.accept == ("Plantar Fibromatosis", "Ledderhose Disease")  # the title repeats it: kept once
    assert "Fasciitis" not in case.accept  # the differential names the alternatives, not the answer
    numbered = medpix_case(Report("medpix:2", "f", "1. Metastatic breast cancer 2. Anemia", source="medpix"))
    assert numbered.diagnosis == "Metastatic breast cancer" and numbered.accept == ("Anemia",)
    assert medpix_case(Report("medpix:3", "", "Dx", source="medpix")) is None


def test_openi_case_needs_an_abnormal_label_and_names_the_positive_sentences() -> None:
    abnormal = Report(
        "openi:1",
        "Blunted right costophrenic angle.",
        "Small right pleural effusion. No pneumothorax.",
        labels=("Effusion",),
        source="openi",
    )
    case = openi_case(abnormal)
    assert case.diagnosis == "Small right pleural effusion"  # the negated sentence is not part of the answer
    assert case.accept == ("pleural effusion",)
    normal_label = Report("openi:2", "Clear lungs.", "Normal chest.", labels=("normal",), source="openi")
    assert openi_case(normal_label) is None
    # NegBio found a nodule in the findings although the impression says nothing abnormal: the label is the answer
    silent = Report(
        "openi:3", "5 mm nodule in the left upper lobe.", "No acute disease.", labels=("Nodule",), source="openi"
    )
    assert openi_case(silent).diagnosis == "pulmonary nodule"


def test_impression_case_takes_the_first_positive_item_and_skips_normal_studies() -> None:
    mts = Report(
        "mtsamples:1",
        "Dilated renal pelvis.",
        "No renal stone.,2. Mild left hydronephrosis.,3. Normal appendix.",
        source="mtsamples",
    )
    case = impression_case(mts)
    assert case.diagnosis == "Mild left hydronephrosis" and case.accept == ()
    ct = Report(
        "ctrate:1",
        "Nodules in both lungs.",
        "Multiple lung nodules, metastasis favoured. Hiatal hernia.",
        labels=("Lung nodule", "Hiatal hernia"),
        source="ctrate",
    )
    case = impression_case(ct)
    assert case.diagnosis == "Multiple lung nodules, metastasis favoured"
    assert case.accept == ("Hiatal hernia", "lung nodule")  # the label repeats a sentence: kept once
    assert impression_case(Report("ctrate:2", "Normal lungs.", "No acute findings.", source="ctrate")) is None


def test_screening_cases_are_dev_cases_and_marked(tmp_path) -> None:
    from retriever.reports.splits import split_of

    cases = [Case(f"medpix:{i}", "f", "d", source="medpix") for i in range(60)]
    marked = mark_screening(cases, 3)
    screening = [c for c in marked if SCREENING in c.meta]
    assert len(screening) == 3 and all(split_of(c.id) == "dev" for c in screening)
    assert [c.id for c in marked] == [c.id for c in cases]
    write_cases(marked, tmp_path / "c.jsonl")
    assert read_cases(tmp_path / "c.jsonl") == marked  # the mark survives the file


def test_written_cases_hold_no_extra_fields(tmp_path) -> None:
    path = tmp_path / "c.jsonl"
    write_cases([Case("x", "f", "d")], path)
    assert json.loads(path.read_text()) == {"id": "x", "findings": "f", "diagnosis": "d", "accept": [], "source": ""}


def test_a_cached_eval_index_from_older_negation_rules_is_tokenized_anew(tmp_path) -> None:
    """Benchmarks reuse indexes across sessions: one tokenized under older rules must not decide today's figures."""
    import json

    from eval.diagnosis.conditions import load_or_build_index
    from retriever.reports.record import Report

    reports = [Report("r:1", "", "Effusion has cleared."), Report("r:2", "", "Small effusion.")]
    first = load_or_build_index(reports, "minilm", ("impression",), tmp_path)
    (folder,) = tmp_path.iterdir()
    manifest = json.loads((folder / "manifest.json").read_text())
    manifest["lexical_rules"] = ""
    (folder / "manifest.json").write_text(json.dumps(manifest))
    again = load_or_build_index(reports, "minilm", ("impression",), tmp_path)
    assert again.manifest.current_lexical_rules and first.manifest.created == again.manifest.created  # not rebuilt
    assert [h.report.id for h in again.search("effusion", "impression", 2, method="bm25")] == ["r:2"]


def test_an_evidence_condition_keeps_its_k_and_a_token_limit_names_its_answers() -> None:
    evidence, short_none, chooser = parse_conditions(
        "evidence:hybrid-weighted:x[report,k=20], none[tokens=32], hybrid-weighted:x[report,k=20,prompt=p,tokens=64]"
    )
    assert not evidence.uses_llm and (evidence.k, evidence.name) == (20, "evidence:hybrid-weighted:x[report,k=20]")
    assert (short_none.max_tokens, short_none.name, short_none.legacy_name) == (32, "none[tokens=32]", "none")
    assert chooser.name == "hybrid-weighted:x[report,k=20,prompt=p,tokens=64]"
    with pytest.raises(ValueError, match="tokens=N"):
        parse_conditions("none[tokens=two]")


def test_answers_cached_before_limits_were_recorded_serve_the_legacy_limit(tmp_path: Path) -> None:
    from eval.diagnosis.benchmark import _cached
    from eval.diagnosis.cases import Case

    cache = PredictionCache(tmp_path / "p.jsonl")
    cache.put({"case_id": "c1", "condition": "none", "model_id": "m", "prompt_id": "p@1", "diagnosis": "x"})
    short, long = parse_conditions("none[tokens=32], none[tokens=512]")
    case = Case("c1", "findings", "x")
    assert _cached(cache, case, short, "m", "p@1", 32)["condition"] == "none[tokens=32]"
    assert _cached(cache, case, long, "m", "p@1", 512) is None
