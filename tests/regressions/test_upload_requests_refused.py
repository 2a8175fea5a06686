"""Issue 51 (low): 20 files of 1 MB in one upload request were accepted (Gradio's `max_file_size` limits each file,
not the request). The chat takes no files, so the real `assistant chat` refuses every upload request with 413, in
every form: many files of 1 MB (with and without an upload id), many tiny files, one small file, a chunked body
without Content-Length; the requests come from a signed-in resident, the one Gradio would serve."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest
from chat_process import running_chat

pytestmark = pytest.mark.models  # starts the chat command

ACCOUNT = ("resident", "passphrase of the resident")
MB = 1_000_000


@pytest.fixture(scope="module")
def signed_in(tmp_path_factory: pytest.TempPathFactory) -> Iterator[httpx.Client]:
    folder = tmp_path_factory.mktemp("uploads")
    with running_chat(folder, [ACCOUNT]) as base, httpx.Client(base_url=base, trust_env=False, timeout=120) as client:
        signed = client.post("/login", data={"username": ACCOUNT[0], "password": ACCOUNT[1]})
        assert signed.status_code == 200, signed.text
        yield client


def _upload(client: httpx.Client, path: str, files: list[tuple[str, bytes]]) -> int:
    """POST `files` as one multipart upload request; its status (a refusal may close the connection early)."""
    parts = [("files", (name, body, "application/octet-stream")) for name, body in files]
    return client.post(path, files=parts).status_code


@pytest.mark.parametrize("path", ["/gradio_api/upload", "/gradio_api/upload?upload_id=progress-1"])
def test_twenty_files_of_one_megabyte_are_refused(signed_in: httpx.Client, path: str) -> None:
    """The issue's form, and the same with an upload id (Gradio then tracks the upload's progress)."""
    assert _upload(signed_in, path, [(f"f{i}.bin", b"x" * MB) for i in range(20)]) == 413


def test_many_tiny_files_are_refused(signed_in: httpx.Client) -> None:
    """Under Gradio's own limit of 1,000 files a request (more get its 400)."""
    assert _upload(signed_in, "/gradio_api/upload", [(f"t{i}.txt", b"x") for i in range(900)]) == 413


def test_one_small_file_is_refused(signed_in: httpx.Client) -> None:
    assert _upload(signed_in, "/gradio_api/upload", [("one.txt", b"small")]) == 413


def test_a_chunked_upload_without_a_length_is_refused(signed_in: httpx.Client) -> None:
    """Twenty files of 1 MB again, sent chunked: no Content-Length to judge the request by."""
    boundary = "b0undary"

    def chunks() -> Iterator[bytes]:  # a generator body: httpx sends it chunked
        for i in range(20):
            yield f'--{boundary}\r\nContent-Disposition: form-data; name="files"; filename="c{i}.bin"\r\n\r\n'.encode()
            yield b"x" * MB + b"\r\n"
        yield f"--{boundary}--\r\n".encode()

    headers = {"Content-Type": f"multipart/form-data; boundary={boundary}"}
    answer = signed_in.post("/gradio_api/upload", content=chunks(), headers=headers)
    assert "content-length" not in answer.request.headers and answer.status_code == 413
