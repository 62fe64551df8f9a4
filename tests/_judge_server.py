"""A local OpenAI-compatible chat-completions server for the Ev2R judge tests (stdlib only).

Run as ``python _judge_server.py FIXTURES.json LOG.jsonl``: it listens on 127.0.0.1 (a free
port, printed as the first line on stdout) and answers ``POST .../chat/completions`` from
the fixtures. A fixture rule matches when every string of its ``match`` list occurs in the
prompt (and, with ``"min_chars": N``, the prompt is longer than N characters: a judge's
context limit); its ``responses`` are served in turn (the last one repeats). A response is
``{"status": 200, "content": "..."}``, optionally with ``"delay"`` (seconds before
answering), ``"body"`` (a raw body instead of a chat completion), ``"error"`` (the message of an error
reply, e.g. vLLM's "maximum context length"), ``"retry_after"`` or ``"drop"`` (close
the connection without answering); or
``{"derive": SALT}``: a reply whose counts :func:`derived_counts` computes from the salt,
the prompt's last ``Claim:`` line and (at a temperature above 0) the request's seed --
deterministic, different per salt, and varying with the seed like a sampling judge.
Unmatched prompts get ``default``. Content given as parts (the multimodal chat format) is
checked -- ``text`` parts and ``image_url`` parts holding base64 ``data:image/`` URLs, else
HTTP 400 and ``structure_error`` in the log -- and matched as its texts joined, each image
as ``<image:SHA256[:12]>`` of its bytes (:func:`image_digest`). Every request is appended
to LOG as one JSON line (the whole request body under ``request``, the matched text under
``flat``).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import re
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

FIXTURES: dict[str, Any] = {}
LOG_PATH = ""
LOCK = threading.Lock()
COUNTS: dict[int, int] = {}


def derived_counts(salt: str, claim: str, *, seed: object = None, temperature: float = 0) -> dict[str, int]:
    """The four counts of a ``derive`` reply (1-4 facts a side, any number of them supported)."""
    ident = f"{salt}|{claim}" if not temperature else f"{salt}|{claim}|{seed}|{temperature}"
    h = hashlib.sha256(ident.encode("utf-8")).digest()
    n_pred, n_ref = 1 + h[0] % 4, 1 + h[1] % 4
    return {"pred": n_pred, "sup_pred": h[2] % (n_pred + 1), "ref": n_ref, "sup_ref": h[3] % (n_ref + 1)}


def _derived_reply(salt: str, prompt: str, request: dict[str, Any]) -> str:
    claims = re.findall(r"Claim: (.*)", prompt)
    c = derived_counts(salt, claims[-1].strip() if claims else "", seed=request.get("seed"),
                       temperature=float(request.get("temperature") or 0))
    fields = {}
    for kind in ("evidence", "questions"):
        fields.update({f"facts count predicted {kind}": c["pred"], f"support predicted {kind}": c["sup_pred"],
                       f"facts count reference {kind}": c["ref"], f"support reference {kind}": c["sup_ref"]})
    return "Output: " + json.dumps(fields)


def image_digest(url: str) -> str:
    """``<image:SHA256[:12]>`` of a data URL's bytes: how an image part is matched and logged."""
    import base64

    return f"<image:{hashlib.sha256(base64.b64decode(url.split(',', 1)[1], validate=True)).hexdigest()[:12]}>"


def flatten(content: Any) -> tuple[str, str | None]:
    """The text a rule matches (content parts joined, images as :func:`image_digest`), and a
    structure error (``None``: the parts are the OpenAI chat format: ``text`` parts with a
    string, ``image_url`` parts whose URL is a base64 ``data:image/...`` URL)."""
    if isinstance(content, str):
        return content, None
    if not isinstance(content, list) or not content:
        return "", "content must be a string or a non-empty list of parts"
    pieces = []
    for part in content:
        kind = part.get("type") if isinstance(part, dict) else None
        if kind == "text" and isinstance(part.get("text"), str) and set(part) == {"type", "text"}:
            pieces.append(part["text"])
            continue
        url = part.get("image_url", {}).get("url") if kind == "image_url" and isinstance(part.get("image_url"), dict) else None
        if not isinstance(url, str) or not url.startswith("data:image/") or ";base64," not in url.split(",", 1)[0] + ",":
            return "", f"bad content part {str(part)[:80]}"
        try:
            pieces.append(image_digest(url))
        except ValueError:
            return "", "image_url data is not base64"
    return "".join(pieces), None


def _pick(prompt: str) -> tuple[int, dict[str, Any]]:
    for index, rule in enumerate(FIXTURES.get("rules", [])):
        if all(m in prompt for m in rule["match"]) and len(prompt) > int(rule.get("min_chars", -1)):
            with LOCK:
                n = COUNTS.get(index, 0)
                COUNTS[index] = n + 1
            responses = rule["responses"]
            return index, responses[min(n, len(responses) - 1)]
    return -1, FIXTURES.get("default", {"status": 200, "content": ""})


class Handler(BaseHTTPRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - silence the default stderr log
        return

    def do_POST(self) -> None:  # noqa: N802 - http.server's naming
        length = int(self.headers.get("Content-Length") or 0)
        request = json.loads(self.rfile.read(length) or b"{}")
        prompt, structure_error = flatten(request.get("messages", [{}])[-1].get("content", ""))
        index, response = _pick(prompt) if structure_error is None else (-2, {"status": 400})
        with LOCK, open(LOG_PATH, "a", encoding="utf-8") as log:
            log.write(json.dumps({"path": self.path, "rule": index, "model": request.get("model"),
                                  "temperature": request.get("temperature"),
                                  "authorization": self.headers.get("Authorization"),
                                  "prompt_head": prompt[:60], "flat": prompt, "structure_error": structure_error,
                                  "request": request}) + "\n")
        time.sleep(float(response.get("delay", 0)))
        if response.get("drop"):  # hang up without answering (the client sees a reset connection)
            self.close_connection = True
            return
        status = int(response.get("status", 200))
        if "body" in response:
            body = response["body"].encode("utf-8")
        else:
            content = _derived_reply(response["derive"], prompt, request) if "derive" in response else response.get("content", "")
            completion = {"id": "x", "object": "chat.completion", "model": request.get("model"),
                          "choices": [{"index": 0, "finish_reason": "stop",
                                       "message": {"role": "assistant", "content": content}}]}
            error = {"error": {"message": response.get("error", "fixture error"), "type": "BadRequestError", "code": status}}
            body = json.dumps(completion if status == 200 else error).encode("utf-8")
        try:
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            if "retry_after" in response:
                self.send_header("Retry-After", str(response["retry_after"]))
            self.end_headers()
            self.wfile.write(body)
        except (BrokenPipeError, ConnectionResetError):  # the client gave up (timeout test)
            pass


@contextlib.contextmanager
def running(fixtures: dict[str, Any], workdir: Path, name: str = "judge") -> Iterator[tuple[str, Path]]:
    """Start this server as a process answering ``fixtures``; yields (base URL, request log)."""
    workdir.mkdir(parents=True, exist_ok=True)
    path, log = workdir / f"{name}-fixtures.json", workdir / f"{name}-requests.jsonl"
    path.write_text(json.dumps(fixtures), encoding="utf-8")
    proc = subprocess.Popen([sys.executable, __file__, str(path), str(log)], stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        port = int(proc.stdout.readline())
        yield f"http://127.0.0.1:{port}/v1", log
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def requests_sent(log: Path) -> list[dict[str, Any]]:
    """The logged requests, in arrival order."""
    return [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines()]


def main() -> None:
    global FIXTURES, LOG_PATH
    with open(sys.argv[1], encoding="utf-8") as fh:
        FIXTURES = json.load(fh)
    LOG_PATH = sys.argv[2]
    open(LOG_PATH, "a").close()
    ThreadingHTTPServer.request_queue_size = 256  # the benchmark opens up to 64+ connections at once
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    print(server.server_address[1], flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
