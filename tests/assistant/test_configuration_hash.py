"""One configuration hash (issue 49): `ask --json`, the warm server and a benchmark's provenance give the same hash
for the same settings, and another when query expansion is switched off."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from cli_fixtures import home_env, private_home

from assistant.settings import Settings

REPO = Path(__file__).resolve().parents[2]
QUERY = "Blunting of the right costophrenic angle."


@pytest.fixture
def home(tmp_path: Path, minilm) -> Path:
    return private_home(tmp_path, minilm)


def _ask_hash(env: dict[str, str]) -> str:
    """The configuration hash of `ask --json`'s answer (the evidence answer: no model is loaded)."""
    command = [sys.executable, "-m", "assistant", "ask", QUERY, "--json", "--no-server"]
    run = subprocess.run(command, cwd=REPO, env=env, capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stderr
    return json.loads(run.stdout)["configuration_hash"]


def _warm_hash(env: dict[str, str], socket: Path) -> tuple[str, str]:
    """The warm server's key under `env`'s settings (a digest of every setting with its paths resolved, so that it
    also refuses another folder's index), and the configuration hash of the answer it gives to `ask --json`."""
    from assistant.commands.ask_cmd import ask_call, parse_arguments
    from assistant.warm.server import WarmServer

    server = WarmServer(socket, Settings.from_env(env), lambda a, cwd: ask_call(parse_arguments(a), cwd))
    try:
        events = list(server.events({"argv": [QUERY, "--json"], "cwd": str(REPO), "env": env}))
    finally:
        server.server_close()
    assert events[-1]["kind"] == "answer", events
    return server.key, events[-1]["answer"]["configuration_hash"]


@pytest.mark.models
def test_ask_the_warm_server_and_provenance_give_one_hash_and_query_expansion_changes_it(
    home: Path, tmp_path: Path
) -> None:
    from eval.common.provenance import provenance

    hashes, keys = {}, {}
    for expansion in ("on", "off"):
        env = home_env(home, RADSEARCH_ABBREVIATION_EXPANSION=expansion)
        keys[expansion], warm = _warm_hash(env, tmp_path / f"{expansion}.sock")
        recorded = provenance(settings=Settings.from_env(env))["configuration_hash"]
        assert _ask_hash(env) == warm == recorded == Settings.from_env(env).configuration_hash
        hashes[expansion] = warm
    assert hashes["on"] != hashes["off"] and keys["on"] != keys["off"]  # a server under the other setting refuses


def test_the_hash_covers_what_changes_an_answer() -> None:
    base = Settings()
    assert base.configuration_hash == Settings().configuration_hash
    changed = [
        base.with_flags(mode="choice"),
        base.with_flags(k=3),
        base.with_flags(method="dense"),
        base.with_flags(reranker="off"),
        base.with_flags(prompt="diagnosis_candidates"),
        Settings.from_env({"RADSEARCH_ABBREVIATION_EXPANSION": "off"}),
        Settings.from_env({}, preset="paper"),
    ]
    assert len({s.configuration_hash for s in changed} | {base.configuration_hash}) == len(changed) + 1
