"""Shared test set-up: no network, no writes to the user's data folder, shared data located or skipped."""

from __future__ import annotations

from pathlib import Path

import pytest

from models.offline import lock_down

lock_down()  # as the `assistant` command does: tests that import libraries directly stay offline and silent too

REPO = Path(__file__).resolve().parents[1]
SHARED_DATA = REPO.parent / "shared" / "data"
#: Fixtures that load a real model or the shared data: a test that uses one (directly or through another fixture)
#: is marked `models` and left out of the fast tier (`make test-fast`, `-m "not slow and not models"`).
HEAVY_FIXTURES = frozenset({"minilm", "shared_data"})


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Mark the tests that load a model through a fixture; those that load one in their body are marked in place."""
    for item in items:
        if HEAVY_FIXTURES.intersection(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.models)


@pytest.fixture(autouse=True)
def _isolated_default_index(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    """Commands that fall back to the default index must never touch the user's real one, nor write feedback (ask
    keeps its last answer for `assistant feedback last`) into the user's data folder."""
    monkeypatch.setenv("RADSEARCH_INDEX", str(tmp_path_factory.getbasetemp() / "default-index"))
    monkeypatch.setenv("RADSEARCH_FEEDBACK", str(tmp_path_factory.getbasetemp() / "feedback.sqlite"))


@pytest.fixture(scope="session")
def shared_data() -> Path:
    """The shared real-data folder, or a clean skip when this checkout has none."""
    if not SHARED_DATA.is_dir():
        pytest.skip(f"shared data folder {SHARED_DATA} is absent")
    return SHARED_DATA


@pytest.fixture(scope="session")
def minilm():
    """The real all-MiniLM-L6-v2 encoder from its PyPI package (skipped only if the package is missing)."""
    from models.resolve import ModelNotAvailable
    from retriever.encoders.encoder import load_encoder

    try:
        return load_encoder("minilm")
    except ModelNotAvailable as exc:
        pytest.skip(str(exc))
