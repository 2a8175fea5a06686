"""The README is a front page (issue 38): at most 300 lines, every section in its contents line, and every link in it
and in docs/ points to a file (and heading) that exists."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
README = REPO / "README.md"
PAGES = [README, REPO / "CHANGELOG.md", *sorted((REPO / "docs").rglob("*.md"))]
LINK = re.compile(r"\]\(([^)\s]+)\)")


def headings(page: Path) -> set[str]:
    """GitHub's anchors of the page's headings (outside code fences)."""
    found, fence = set(), False
    for line in page.read_text(encoding="utf-8").splitlines():
        if line.startswith("```"):
            fence = not fence
        elif not fence and (match := re.match(r"^#+ (.*)$", line)):
            found.add(re.sub(r"[^\w\- ]", "", match.group(1).strip().lower()).replace(" ", "-"))
    return found


def test_the_readme_is_at_most_300_lines_and_lists_every_section() -> None:
    text = README.read_text(encoding="utf-8")
    assert len(text.splitlines()) <= 300
    contents = next(line for line in text.splitlines() if line.startswith("**Contents:**"))
    contents += text.split(contents, 1)[1].split("\n\n", 1)[0]  # the contents paragraph, wrapped
    linked = set(re.findall(r"\]\(#([^)]+)\)", contents))
    top = {
        re.sub(r"[^\w\- ]", "", m.strip().lower()).replace(" ", "-")
        for m in re.findall(r"^## (.*)$", text, flags=re.MULTILINE)
    }
    assert top <= linked, f"sections missing from the contents line: {sorted(top - linked)}"
    assert linked <= headings(README)


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.relative_to(REPO).as_posix())
def test_every_relative_link_resolves(page: Path) -> None:
    broken = []
    for target in LINK.findall(page.read_text(encoding="utf-8")):
        if re.match(r"^[a-z]+:", target):
            continue
        path, _, anchor = target.partition("#")
        resolved = (page.parent / path).resolve() if path else page
        if not resolved.exists() or anchor and resolved.suffix == ".md" and anchor not in headings(resolved):
            broken.append(target)
    assert broken == [], f"{page.relative_to(REPO)}: broken links {broken}"
