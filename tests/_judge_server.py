"""A local OpenAI-compatible chat-completions server for the Ev2R judge tests (stdlib only).

Run as ``python _judge_server.py FIXTURES.json LOG.jsonl``: it listens on 127.0.0.1 (a free
port, printed as the first line on stdout) and answers ``POST .../chat/completions`` from
the fixtures. A fixture rule matches when every string of its ``match`` list occurs in the
prompt; its ``responses`` are served in turn (the last one repeats). A response is
``{"status": 200, "content": "..."}``, optionally with ``"delay"`` (seconds before
answering), ``"body"`` (a raw body instead of a chat completion) or ``"retry_after"``.
Unmatched prompts get ``default``. Every request is appended to LOG as one JSON line.
"""

from __future__ import annotations

import json
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

FIXTURES: dict[str, Any] = {}
LOG_PATH = ""
LOCK = threading.Lock()
COUNTS: dict[int, int] = {}


def _pick(prompt: str) -> tuple[int, dict[str, Any]]:
    for index, rule in enumerate(FIXTURES.get("rules", [])):
        if all(m in prompt for m in rule["match"]):
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
        prompt = request.get("messages", [{}])[-1].get("content", "")
        index, response = _pick(prompt)
        with LOCK, open(LOG_PATH, "a", encoding="utf-8") as log:
            log.write(json.dumps({"path": self.path, "rule": index, "model": request.get("model"),
                                  "temperature": request.get("temperature"),
                                  "authorization": self.headers.get("Authorization"),
                                  "prompt_head": prompt[:60]}) + "\n")
        time.sleep(float(response.get("delay", 0)))
        status = int(response.get("status", 200))
        if "body" in response:
            body = response["body"].encode("utf-8")
        else:
            completion = {"id": "x", "object": "chat.completion", "model": request.get("model"),
                          "choices": [{"index": 0, "finish_reason": "stop",
                                       "message": {"role": "assistant", "content": response.get("content", "")}}]}
            body = json.dumps(completion if status == 200 else {"error": {"message": "fixture error"}}).encode("utf-8")
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


def main() -> None:
    global FIXTURES, LOG_PATH
    with open(sys.argv[1], encoding="utf-8") as fh:
        FIXTURES = json.load(fh)
    LOG_PATH = sys.argv[2]
    open(LOG_PATH, "a").close()
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    print(server.server_address[1], flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
