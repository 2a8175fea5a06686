"""Write the free-text query set for the shared data: eval/datasets/shared_label_queries/ (BEIR format).

    python -m eval.retrieval.build_label_queries

One query per finding concept, in the project's own words (what a resident might type), over the held-out DEV and
TEST splits of Open-i (chest X-ray, NegBio labels) and CT-RATE (chest CT, predicted labels). Relevance comes from the
data's labels: score 2 when the report carries the concept as an Open-i NegBio label (derived from the report
text and checked against a manual set), 1 when it carries it as a CT-RATE label (predicted by a classifier, so
less certain). Only ids and query text are written; the corpus is read from the shared data at run time.
"""

from __future__ import annotations

import argparse
import csv
import json
from pathlib import Path

from eval.common.shared_data import DATASETS, SHARED_DATA, add_out_option, load_shared
from retriever.reports.splits import split_of

FOLDER = DATASETS / "shared_label_queries"
SOURCES = ("openi", "ctrate")
#: query id -> (query text, Open-i NegBio label, CT-RATE label); None where a source has no such label.
QUERIES: dict[str, tuple[str, str | None, str | None]] = {
    "q-atelectasis": ("atelectasis, collapse of part of the lung", "Atelectasis", "Atelectasis"),
    "q-cardiomegaly": ("enlarged heart, cardiomegaly", "Cardiomegaly", "Cardiomegaly"),
    "q-pleural-effusion": ("fluid in the pleural space, pleural effusion", "Effusion", "Pleural effusion"),
    "q-infiltrate": ("pulmonary infiltrate", "Infiltration", None),
    "q-mass": ("lung mass", "Mass", None),
    "q-nodule": ("pulmonary nodule", "Nodule", "Lung nodule"),
    "q-pneumonia": ("pneumonia, infection of the lung", "Pneumonia", None),
    "q-pneumothorax": ("air in the pleural space, pneumothorax", "Pneumothorax", None),
    "q-consolidation": ("airspace consolidation", "Consolidation", "Consolidation"),
    "q-edema": ("pulmonary edema, fluid overload of the lungs", "Edema", None),
    "q-emphysema": ("emphysema, hyperinflated lungs", "Emphysema", "Emphysema"),
    "q-fibrosis": ("pulmonary fibrosis and scarring", "Fibrosis", "Pulmonary fibrotic sequela"),
    "q-pleural-thickening": ("pleural thickening", "Pleural_Thickening", None),
    "q-hiatal-hernia": ("hiatal hernia", "Hernia", "Hiatal hernia"),
    "q-device": ("medical device, tube, line or pacemaker", None, "Medical material"),
    "q-arterial-calcification": (
        "atherosclerotic calcification of the aorta and arteries",
        None,
        "Arterial wall calcification",
    ),
    "q-coronary-calcification": ("coronary artery calcification", None, "Coronary artery wall calcification"),
    "q-pericardial-effusion": ("pericardial effusion", None, "Pericardial effusion"),
    "q-lymphadenopathy": ("enlarged mediastinal lymph nodes", None, "Lymphadenopathy"),
    "q-opacity": ("lung opacity", None, "Lung opacity"),
    "q-mosaic": ("mosaic attenuation of the lungs", None, "Mosaic attenuation pattern"),
    "q-peribronchial": ("peribronchial thickening", None, "Peribronchial thickening"),
    "q-bronchiectasis": ("bronchiectasis, dilated bronchi", None, "Bronchiectasis"),
    "q-septal-thickening": ("interlobular septal thickening", None, "Interlobular septal thickening"),
}
GRADE = {"openi": 2, "ctrate": 1}
#: Both splits training never learns from (dev is only logged during training, never selected on).
HELD_OUT = ("dev", "test")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", type=Path, default=SHARED_DATA)
    add_out_option(parser, FOLDER)
    args = parser.parse_args(argv)
    if not args.data.is_dir():
        print(f"skipped: shared data folder {args.data} is absent")
        return 0
    reports = [r for r in load_shared(args.data).reports if r.source in SOURCES and split_of(r.id) in HELD_OUT]
    args.out.mkdir(parents=True, exist_ok=True)
    with (args.out / "queries.jsonl").open("w", encoding="utf-8") as handle:
        for qid, (text, _, _) in QUERIES.items():
            handle.write(json.dumps({"_id": qid, "text": text}) + "\n")
    rows = 0
    with (args.out / "qrels.tsv").open("w", encoding="utf-8", newline="") as handle:
        writer = csv.writer(handle, delimiter="\t", lineterminator="\n")
        writer.writerow(["query-id", "corpus-id", "score"])
        for qid, (_, openi_label, ctrate_label) in QUERIES.items():
            label = {"openi": openi_label, "ctrate": ctrate_label}
            for report in reports:
                if label[report.source] and label[report.source] in report.labels:
                    writer.writerow([qid, report.id, GRADE[report.source]])
                    rows += 1
    (args.out / "corpus_ids.txt").write_text("\n".join(r.id for r in reports) + "\n", encoding="utf-8")
    print(f"wrote {len(QUERIES)} queries, {rows} judgements over {len(reports)} held-out reports to {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
