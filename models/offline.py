"""Keep every third-party library the product loads offline and silent: no telemetry, no model-hub calls.

Why this exists: patient text flows through these libraries, and some of them phone home by default. ONNX Runtime's
official Linux wheels ship Microsoft's 1DS telemetry: on initialization they write a device id and an event database
under `~/.cache/Microsoft/DeveloperTools/.onnxruntime/` and look up and contact an external events host within
seconds (seen with strace on onnxruntime 1.31.1). `ORT_DISABLE_TELEMETRY=1`, set before ONNX Runtime initializes,
stops the uploader, the events and the device id for the process's lifetime. The Hugging Face libraries read their
offline and telemetry switches when they are imported; Gradio reads its analytics switch the same way.

Each switch is read once, at import or initialization of its library, so `lock_down()` must run before any of them
is imported. It runs when the `retriever` package is imported (every path to ONNX Runtime, sentence-transformers
and transformers goes through it) and at the start of the `assistant` command, which also covers Gradio.
`tests/system/test_no_outbound.py` runs index, search, ask and the chat under strace and fails on any connection that
leaves loopback or any ONNX Runtime telemetry file.
"""

from __future__ import annotations

import os
from collections.abc import MutableMapping

#: Always forced: telemetry and usage statistics of every library in the product and its test servers. Forced, not
#: defaulted, because the README promises no telemetry whatever the user's environment says.
NO_TELEMETRY: dict[str, str] = {
    "ORT_DISABLE_TELEMETRY": "1",  # ONNX Runtime 1DS telemetry: uploader, events and device id
    "HF_HUB_DISABLE_TELEMETRY": "1",  # huggingface_hub usage pings
    "GRADIO_ANALYTICS_ENABLED": "False",  # Gradio's analytics (read when gradio is imported)
    "DO_NOT_TRACK": "1",  # the cross-tool convention (Gradio, huggingface_hub, vLLM honour it)
    "VLLM_NO_USAGE_STATS": "1",  # vLLM's usage report, for servers started from this environment
    "RAY_USAGE_STATS_ENABLED": "0",  # Ray's usage report (`assistant index --ray`), read when a cluster starts
}

#: Defaulted unless the user opts in to downloads (RADSEARCH_ALLOW_DOWNLOADS=1): model hubs are never contacted.
OFFLINE: dict[str, str] = {
    "HF_HUB_OFFLINE": "1",
    "TRANSFORMERS_OFFLINE": "1",
    "HF_DATASETS_OFFLINE": "1",
}

ALLOW_DOWNLOADS = "RADSEARCH_ALLOW_DOWNLOADS"


def lock_down(environ: MutableMapping[str, str] | None = None) -> None:
    """Set the switches above in `environ` (default: this process's environment). Idempotent and cheap."""
    env = os.environ if environ is None else environ
    env.update(NO_TELEMETRY)
    if env.get(ALLOW_DOWNLOADS) != "1":
        for name, value in OFFLINE.items():
            env.setdefault(name, value)
