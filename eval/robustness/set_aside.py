"""How many genuine reports the injection defence sets aside: every shared report judged by
assistant.rag.injection.addresses_a_model on all its fields (issue 51). A report set aside is no evidence, so every
one flagged here is a false alarm that costs the differential a vote; the results list each with its matching words.

    python -m eval.robustness.set_aside [--out DIR]
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter

from assistant.rag.injection import addresses_a_model, directive_in, report_text
from eval.common.shared_data import RESULTS, SHARED_DATA, add_out_option, load_shared, write_results
from eval.robustness.results import SetAsideResults


def measure() -> dict:
    """Reports read, reports set aside, and each one set aside with the words that set it aside."""
    reports = load_shared(SHARED_DATA).reports
    flagged = [r for r in reports if addresses_a_model(report_text(r))]
    by_source = Counter(r.source for r in reports)
    return {
        "reports": len(reports),
        "set_aside": len(flagged),
        "rate": round(len(flagged) / max(len(reports), 1), 6),
        "by_source": {s: n for s, n in sorted(by_source.items())},
        "flagged": [{"id": r.id, "source": r.source, "words": directive_in(report_text(r))} for r in flagged],
    }


def render(result: dict) -> str:
    lines = [
        "# Genuine reports the injection defence sets aside (issue 51)",
        "",
        f"{result['set_aside']} of {result['reports']:,} shared reports ({result['rate']:.4%}) address a model by "
        "assistant.rag.injection.addresses_a_model (all fields judged). Each is a false alarm: none of these "
        "reports was written to a model.",
        "",
        "| report | source | words that set it aside |",
        "|---|---|---|",
    ]
    lines += [f"| {f['id']} | {f['source']} | {f['words']} |" for f in result["flagged"]]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_out_option(parser, RESULTS)
    args = parser.parse_args(argv)
    if not SHARED_DATA.is_dir():
        print(f"skipped: no shared data at {SHARED_DATA}", file=sys.stderr)
        return 0
    print(
        write_results(
            args.out / "injection_set_aside", SetAsideResults.from_json(measure()), lambda r: render(r.to_json())
        )
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
