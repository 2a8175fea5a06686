"""Hand-labelled real report sentences for measuring a negation detector.

Why this set exists: synthetic negation tests ("No pneumothorax.") are easy; real reports put the cue after the
finding ("Pleural effusion was not detected."), negate whole lists, mention a finding next to a negation of
something else, hedge ("cannot be excluded") or report a finding as resolved. Each row of
`eval/datasets/negation_sentences.jsonl` is one (sentence, concept) pair from the shared development reports with a
label read by an annotator without seeing any detector output:

- `ruled_out`: the sentence says the concept is absent, negated, resolved or no longer seen;
- `present`: the sentence affirms it (hedged "likely"/"consistent with" and "unchanged known X" included);
- `uncertain`: only a question or possibility ("cannot be excluded", "possible X", "X versus Y", "evaluate for X").

`kind` says how the cue relates to the concept: `post` (cue after it), `pre` (cue before it), `list` (negated as a
later member of a list), `resolved`, `other` (a cue in the sentence that does not negate it, a qualifier, a hedge)
or `none`. `form` (rows added for issue 50; empty on the earlier rows) names the construction the sentence negates
with: a negated list, "clear of", "negative for", "no evidence of any", a negation after a colon, or a plural of
the concept (FORMS). See eval/datasets/negation_sentences.md for how sentences were chosen and the counts.

The file holds offsets, not text, because the Open-i, CT-RATE and MedPix licences do not let the project
redistribute their reports (only MTSamples, CC0, rows also carry the sentence). The sentences are rebuilt here from
the shared data folder with the project's own importers (`eval.common.shared_data.load_shared`), so report ids and field
texts are exactly those the benchmarks see; each rebuilt sentence is checked against the row's SHA-1 prefix.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path

from eval.common.shared_data import DATASETS, SHARED_DATA, load_shared
from retriever.negation.inflection import concept_spans

#: The labelled rows (offsets into the shared reports; no text except MTSamples).
SENTENCES_FILE = DATASETS / "negation_sentences.jsonl"
LABELS = ("ruled_out", "present", "uncertain")
KINDS = ("post", "pre", "list", "resolved", "other", "none")
FIELDS = ("findings", "impression")
#: The list and colon forms of issue 50 (eval/negation/list_forms.py proposed their sentences); "" for earlier rows.
FORMS = ("list-negation", "clear-of", "negative-for", "no-evidence-of-any", "after-colon", "plural")
_SHA1_LENGTH = 12


@dataclass(frozen=True)
class LabelledSentence:
    """One sentence of a shared report with one concept in it and whether the sentence rules that concept out."""

    report_id: str
    source: str
    field: str
    sentence: str
    concept: str
    label: str
    kind: str
    form: str = ""

    @property
    def ruled_out(self) -> bool:
        """True when the gold label says the concept is negated, absent or resolved in this sentence."""
        return self.label == "ruled_out"


def sentence_sha1(sentence: str) -> str:
    """The first 12 hex digits of the SHA-1 of the sentence's UTF-8 text (the check stored with each row)."""
    return hashlib.sha1(sentence.encode("utf-8")).hexdigest()[:_SHA1_LENGTH]


def _read_rows(path: Path) -> list[dict[str, object]]:
    rows: list[dict[str, object]] = []
    with path.open(encoding="utf-8") as handle:
        for number, line in enumerate(handle, start=1):
            if line.strip():
                row = json.loads(line)
                row["_line"] = number
                rows.append(row)
    return rows


def load_labelled_sentences(
    data_folder: Path | None = None, sentences_file: Path = SENTENCES_FILE
) -> list[LabelledSentence]:
    """Every labelled row with its sentence rebuilt from the shared reports, in file order.

    `data_folder` is the shared data folder (default: RADSEARCH_SHARED_DATA, else `shared/data` beside the checkout).
    Raises FileNotFoundError when it is absent (callers skip), and ValueError naming the row when a row's report is
    missing, its offsets no longer give the sentence that was labelled (SHA-1 differs), its concept is not in the
    sentence (its last word may be there in the plural or singular: `plural` rows), or its label, kind or form is
    unknown.
    """
    folder = SHARED_DATA if data_folder is None else data_folder
    if not folder.is_dir():
        raise FileNotFoundError(
            f"shared data folder {folder} not found: the labelled negation sentences are offsets into its reports "
            "(set RADSEARCH_SHARED_DATA to its location)"
        )
    rows = _read_rows(sentences_file)
    reports = {report.id: report for report in load_shared(folder).reports}
    labelled: list[LabelledSentence] = []
    for row in rows:
        where = f"{sentences_file.name} line {row['_line']} ({row.get('report_id')}, {row.get('concept')!r})"
        report_id, field_name = str(row["report_id"]), str(row["field"])
        label, kind, concept = str(row["label"]), str(row["kind"]), str(row["concept"])
        form = str(row.get("form", ""))
        if label not in LABELS:
            raise ValueError(f"{where}: unknown label {label!r}; expected one of {', '.join(LABELS)}")
        if kind not in KINDS:
            raise ValueError(f"{where}: unknown kind {kind!r}; expected one of {', '.join(KINDS)}")
        if form and form not in FORMS:
            raise ValueError(f"{where}: unknown form {form!r}; expected one of {', '.join(FORMS)}")
        if field_name not in FIELDS:
            raise ValueError(f"{where}: unknown field {field_name!r}; expected one of {', '.join(FIELDS)}")
        report = reports.get(report_id)
        if report is None:
            raise ValueError(f"{where}: report {report_id} is not among the shared reports")
        start, end = int(str(row["start"])), int(str(row["end"]))
        sentence = report.text_of(field_name)[start:end]
        if sentence_sha1(sentence) != row["sha1"]:
            raise ValueError(
                f"{where}: the text at {field_name}[{start}:{end}] has SHA-1 {sentence_sha1(sentence)}, not "
                f"{row['sha1']}; the shared data or its importer changed since the row was labelled"
            )
        if concept.lower() not in sentence.lower() and not concept_spans(sentence, concept):
            raise ValueError(f"{where}: concept {concept!r} does not occur in the sentence {sentence!r}")
        labelled.append(
            LabelledSentence(
                report_id=report_id,
                source=str(row["source"]),
                field=field_name,
                sentence=sentence,
                concept=concept,
                label=label,
                kind=kind,
                form=form,
            )
        )
    return labelled
