"""The settings object (issue 18): every RADSEARCH_* variable read in one place, from the environment it is given."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from assistant.settings import EncoderSettings, LLMSettings, Settings
from models.paths import DataPaths

REPO = Path(__file__).resolve().parents[2]


def test_no_environment_gives_the_defaults() -> None:
    assert Settings.from_env({}) == Settings()
    assert Settings().paths.default_index == Path.home() / ".local" / "share" / "radsearch" / "indexes" / "demo"
    assert Settings().encoder == EncoderSettings(backend="onnx-int8", device="cpu")


def test_each_part_reads_its_variables() -> None:
    settings = Settings.from_env(
        {
            "RADSEARCH_HOME": "/data/rs",
            "RADSEARCH_INDEX": "/data/site-index",
            "RADSEARCH_ENCODER_BACKEND": "torch",
            "RADSEARCH_ENCODER_DEVICE": "cuda",
            "RADSEARCH_LLM_GGUF": "smollm2",
            "RADSEARCH_CHAT_AUTH": "resident:pass:with:colons",
        }
    )
    assert settings.paths.models == Path("/data/rs/models") and settings.paths.indexes == Path("/data/rs/indexes")
    assert settings.paths.default_index == Path("/data/site-index")
    assert settings.encoder == EncoderSettings(backend="torch", device="cuda")
    assert settings.llm.model == "smollm2"
    assert settings.chat.auth == "resident:pass:with:colons"
    xdg = DataPaths.from_env({"XDG_DATA_HOME": "/xdg"})
    assert xdg.home == Path("/xdg/radsearch") and xdg.default_index == Path("/xdg/radsearch/indexes/demo")


def test_a_refused_value_names_its_variable() -> None:
    with pytest.raises(ValueError, match="RADSEARCH_ENCODER_BACKEND='gpu'"):
        Settings.from_env({"RADSEARCH_ENCODER_BACKEND": "gpu"})
    with pytest.raises(ValueError, match="RADSEARCH_LLM_BACKEND"):
        Settings.from_env({"RADSEARCH_LLM_BACKEND": "ollama"})


def test_flags_use_the_environment_the_settings_were_read_from(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RADSEARCH_LLM_MODEL", "not-this-one")
    read = LLMSettings.from_env({"RADSEARCH_LLM_MODEL": "served-name"})
    assert read.backend == "embedded" and read.model == "served-name"
    switched = read.with_flags(backend="openai")
    assert switched.backend == "openai" and switched.model == "served-name"
    assert switched.with_flags(backend="embedded").model == "qwen1.5b"


def test_importing_the_settings_imports_no_backend_and_no_encoder() -> None:
    code = (
        "import sys, assistant.settings; "
        "print(sorted(m for m in sys.modules if m.endswith('_backend') or m == 'retriever.encoders.encoder'))"
    )
    run = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() == "[]"


@pytest.mark.parametrize(
    ("variable", "value"),
    [
        ("RADSEARCH_LLM_RETRIES", "-1"),
        ("RADSEARCH_LLM_RETRIES", "two"),
        ("RADSEARCH_LLM_TIMEOUT", "-1"),
        ("RADSEARCH_LLM_TIMEOUT", "0"),
        ("RADSEARCH_LLM_TIMEOUT", "nan"),
        ("RADSEARCH_LLM_TIMEOUT", "inf"),
        ("RADSEARCH_LLM_THREADS", "0"),
        ("RADSEARCH_LLM_CONTEXT", "-5"),
    ],
)
def test_a_refused_number_names_its_variable(variable: str, value: str) -> None:
    """Issue 39's review: -1 retries was an AssertionError deep inside, a 0 or nan deadline a 'backend unavailable'."""
    with pytest.raises(ValueError, match=f"^{variable}={value!r}: must be"):
        Settings.from_env({variable: value})


def test_zero_retries_and_a_fractional_deadline_are_accepted() -> None:
    llm = Settings.from_env({"RADSEARCH_LLM_RETRIES": "0", "RADSEARCH_LLM_TIMEOUT": "2.5"}).llm
    assert (llm.max_retries, llm.timeout_s) == (0, 2.5)
