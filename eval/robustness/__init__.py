"""Robustness benchmarks (issue 20): does search survive the way residents actually type?

Three parts, one command (`python -m eval.robustness`), every method searched through the product's
`retriever.index.report_index.ReportIndex` so BM25, dense and hybrid are exactly what users get:

- `icd`: ICD-10-CM rephrasing retrieval (as in "Evaluating embedding models for ICD-10-CM retrieval", medRxiv 2025):
  100 billable codes, 10 rule-made rephrasings each (`rephrase.py`), top-1 among all ~74k billable descriptions;
  exact code @1, same 3-character category @1, character error rate of the retrieved description.
- `queries`: the shared test split's findings -> impression match@5 with each query also abbreviated, typo'd and in
  British spelling (`variants.py`), and each variant's drop from the clean query.
- `errors`: LLM2VEC4CXR-style error discrimination: the original findings as query, the report's impression and three
  corrupted copies of it (`corrupt.py`) as candidates; accuracy of ranking the original first, per error type.

The tables the rules use are in `tables.py`; `eval/datasets/icd_rephrasings_sample.jsonl` is a hand-checked sample.
"""
