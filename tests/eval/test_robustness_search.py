"""The robustness scores on tiny real indexes (the product's ReportIndex, real MiniLM): right by hand."""

from __future__ import annotations

from pathlib import Path

import pytest

from eval.robustness import errors, icd
from eval.robustness.metrics import cer
from eval.robustness.rephrase import Rephrasing
from eval.robustness.search import RankerSpec, cached_index, text_reports
from retriever.index.report_index import ReportIndex

TOY_CODES = {
    "J18.9": "Pneumonia, unspecified organism",
    "J93.9": "Pneumothorax, unspecified",
    "I50.9": "Heart failure, unspecified",
}


def test_ranker_references_map_to_encoder_and_product_method() -> None:
    assert RankerSpec.parse("bm25") == RankerSpec("bm25", "minilm", "bm25")
    assert RankerSpec.parse("mpnet") == RankerSpec("mpnet", "mpnet", "dense")
    assert RankerSpec.parse("hybrid-weighted:x") == RankerSpec("hybrid-weighted:x", "x", "hybrid-weighted")
    ref = "hybrid-weighted:x+expand+rerank=my-rr"
    assert RankerSpec.parse(ref) == RankerSpec(ref, "x", "hybrid-weighted", "expand", "my-rr")
    assert RankerSpec.parse("bm25+rerank=r").reranker == "r"
    for bad in ("x+rerank=", "x+rerank=r+expand"):
        with pytest.raises(ValueError, match="re-ranker goes last"):
            RankerSpec.parse(bad)


def test_exact_and_category_at_1_on_a_three_code_index(minilm, tmp_path: Path) -> None:
    index = cached_index("toy", text_reports(list(TOY_CODES.values()), ids=list(TOY_CODES)), minilm, tmp_path)
    queries = [
        Rephrasing("J18.9", "pneumonia", "drop"),
        Rephrasing("J93.9", "collapsed lung pneumothorax", "synonym"),
        Rephrasing("J18.1", "pneumonia of a lobe", "template"),  # not in the index: category only
    ]
    corpus = TOY_CODES | {"J18.1": "Lobar pneumonia, unspecified organism"}
    for ref in ("bm25", "minilm"):
        scores = icd.score(RankerSpec.parse(ref), index, queries, corpus)
        assert scores["exact@1"]["value"] == round(2 / 3, 4), ref
        assert scores["category@1"]["value"] == 1.0, ref
        assert scores["rules_only"]["exact@1"] == {"value": 1.0, "n": 2, "ci95": [0.3424, 1.0]}
    expected_cer = sum([0.0, 0.0, cer("Pneumonia, unspecified organism", "Lobar pneumonia, unspecified organism")]) / 3
    assert scores["cer"] == round(expected_cer, 4)


def test_cached_index_is_saved_once_and_loaded_after(minilm, tmp_path: Path) -> None:
    reports = text_reports(["No pneumothorax.", "Small left pleural effusion."])
    built = cached_index("toy", reports, minilm, tmp_path)
    assert isinstance(built._store, list)
    loaded = cached_index("toy", reports, minilm, tmp_path)
    assert not isinstance(loaded._store, list)
    assert loaded.manifest.corpus_sha256 == built.manifest.corpus_sha256


def test_cached_index_tokenized_under_older_negation_rules_is_retokenized(minilm, tmp_path: Path) -> None:
    import json

    from retriever.negation.tokens import TOKENIZER_FINGERPRINT

    reports = text_reports(["No pneumothorax.", "Small left pleural effusion."])
    cached_index("toy", reports, minilm, tmp_path)
    manifest = next(tmp_path.glob("toy-*")) / "manifest.json"
    fields = json.loads(manifest.read_text(encoding="utf-8"))
    manifest.write_text(json.dumps(fields | {"lexical_rules": "older rules"}), encoding="utf-8")
    loaded = cached_index("toy", reports, minilm, tmp_path)
    assert loaded.manifest.lexical_rules == TOKENIZER_FINGERPRINT
    assert json.loads(manifest.read_text(encoding="utf-8"))["lexical_rules"] == TOKENIZER_FINGERPRINT
    assert [h.report.id for h in loaded.search("pneumothorax", k=2, method="bm25")] == []  # only a negated mention


def test_four_way_discrimination_searches_only_the_item_and_scores_by_hand(minilm, tmp_path: Path) -> None:
    good = errors.Item(
        "negation:a",
        "negation",
        "Large right pneumothorax with mediastinal shift.",
        ("Large right pneumothorax.", "No pneumothorax.", "No acute abnormality.", "Normal chest."),
    )
    unrelated = errors.Item(
        "laterality:b",
        "laterality",
        "Large right pneumothorax with mediastinal shift.",
        ("Normal brain MRI.", "Large right pneumothorax.", "Left pneumothorax.", "Large pneumothorax."),
    )
    texts, ids, groups = [], [], []
    for item in (good, unrelated):
        for n, text in enumerate(item.candidates):
            texts.append(text)
            ids.append(f"{item.key}#{n}")
            groups.append(item.key)
    index = ReportIndex.build(text_reports(texts, ids=ids, groups=groups), minilm, ("impression",))
    for ref in ("bm25", "minilm"):
        scores = errors.score(RankerSpec.parse(ref), index, [good, unrelated])
        assert scores["negation"]["value"] == 1.0, ref
        assert scores["laterality"]["value"] == 0.0, ref  # its original is the unrelated brain MRI
        assert scores["all"]["n"] == 2
