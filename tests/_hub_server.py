"""A local Hugging Face hub for the download tests (stdlib only, 127.0.0.1, a free port).

It answers the endpoints ``huggingface_hub`` uses to download:

* ``HEAD``/``GET /{repo_id}/resolve/{revision}/{path}`` (models) and
  ``/datasets/{repo_id}/resolve/...``: ``X-Repo-Commit``, ``ETag`` (the sha256 for files
  marked LFS, as the hub sends for Git LFS files, else the git blob id), ``Content-Length``,
  ``Accept-Ranges``; ``Range: bytes=N-`` / ``N-M`` answered with 206 and ``Content-Range``;
* ``GET /api/{type}s/{repo_id}/tree/{revision}[/{folder}]`` (``?recursive=``): the JSON
  listing ``HfApi.list_repo_tree`` reads (``type``, ``path``, ``size``, ``oid``, ``lfs``);
* ``GET /api/{type}s/{repo_id}/revision/{revision}``: the repo info (``sha``, ``siblings``)
  ``snapshot_download`` asks for first;
* unknown repositories and files: 404 with ``X-Error-Code: RepoNotFound`` / ``EntryNotFound``;
* ``plain`` files at their own path (a plain HTTPS folder), and ``forbidden`` paths answered 403.

Faults, per file, for the tests: ``script``, one step consumed per ``GET`` (``"cut"``: send
``cut_after`` body bytes, then drop the connection; ``"fail"``: answer 500), and ``serve``
(bytes sent instead of the real ones while the headers describe the real ones: damage in
transit). Every request is logged as ``(method, path, range header)``.
"""

from __future__ import annotations

import hashlib
import json
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, unquote, urlsplit

COMMIT = "0123456789abcdef0123456789abcdef01234567"


@dataclass
class HubFile:
    data: bytes
    lfs: bool = False
    cut_after: int = 0
    script: list[str] = field(default_factory=list)
    serve: bytes | None = None

    @property
    def etag(self) -> str:
        if self.lfs:
            return hashlib.sha256(self.data).hexdigest()
        return hashlib.sha1(b"blob %d\0" % len(self.data) + self.data).hexdigest()


@dataclass
class FakeHub:
    """Files by ``(repo_type, repo_id, path)``; ``url`` once started."""

    files: dict[tuple[str, str, str], HubFile] = field(default_factory=dict)
    #: Files served at a plain path (a ``url`` location: ``AVERITEC_URL_ROOT`` points here), and paths refused 403.
    plain: dict[str, HubFile] = field(default_factory=dict)
    forbidden: set[str] = field(default_factory=set)
    log: list[tuple[str, str, str | None]] = field(default_factory=list)
    url: str = ""
    lock: threading.Lock = field(default_factory=threading.Lock)

    def add(self, repo_type: str, repo_id: str, path: str, data: bytes, **kw: Any) -> HubFile:
        f = HubFile(data, **kw)
        self.files[(repo_type, repo_id, path)] = f
        return f

    def repos(self) -> set[tuple[str, str]]:
        return {(t, r) for t, r, _ in self.files}


def _handler(hub: FakeHub) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - silence stderr
            return

        def _send(self, status: int, headers: dict[str, str], body: bytes = b"") -> None:
            self.send_response(status)
            for k, v in headers.items():
                self.send_header(k, v)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            if self.command != "HEAD":
                self.wfile.write(body)

        def _route(self) -> None:
            url = urlsplit(self.path)
            with hub.lock:
                hub.log.append((self.command, unquote(url.path), self.headers.get("Range")))
            if unquote(url.path) in hub.forbidden:
                return self._send(403, {})
            if unquote(url.path) in hub.plain:
                return self._file(hub.plain[unquote(url.path)])
            parts = [unquote(p) for p in url.path.strip("/").split("/")]
            if parts[:1] == ["api"]:
                return self._tree(parts[1:], parse_qs(url.query))
            repo_type = "model"
            if parts[:1] in (["datasets"], ["spaces"]):
                repo_type, parts = parts[0][:-1], parts[1:]
            if len(parts) < 5 or parts[2] != "resolve":
                return self._send(404, {"X-Error-Code": "RepoNotFound"})
            repo_id, path = "/".join(parts[:2]), "/".join(parts[4:])
            if (repo_type, repo_id) not in hub.repos():
                return self._send(404, {"X-Error-Code": "RepoNotFound"})
            f = hub.files.get((repo_type, repo_id, path))
            if f is None:
                return self._send(404, {"X-Error-Code": "EntryNotFound", "X-Repo-Commit": COMMIT})
            self._file(f)

        def _file(self, f: HubFile) -> None:
            headers = {"X-Repo-Commit": COMMIT, "ETag": f'"{f.etag}"', "Accept-Ranges": "bytes"}
            if self.command == "HEAD":
                self.send_response(200)
                for k, v in headers.items():
                    self.send_header(k, v)
                self.send_header("Content-Length", str(len(f.data)))
                self.end_headers()
                return
            with hub.lock:
                step = f.script.pop(0) if f.script else "ok"
            if step == "fail":
                return self._send(500, {})
            cut = f.cut_after if step == "cut" else None
            body = f.serve if f.serve is not None else f.data
            total, start, end, status = len(f.data), 0, len(f.data) - 1, 200
            rng = self.headers.get("Range")
            if rng and rng.startswith("bytes="):
                first, _, last = rng[6:].partition("-")
                start, end, status = int(first), int(last) if last else total - 1, 206
                headers["Content-Range"] = f"bytes {start}-{end}/{total}"
            chunk = body[start:end + 1]
            self.send_response(status)
            for k, v in headers.items():
                self.send_header(k, v)
            self.send_header("Content-Length", str(end - start + 1))
            self.end_headers()
            if cut is not None:  # the connection drops mid-body
                self.wfile.write(chunk[:cut])
                self.wfile.flush()
                self.close_connection = True
                return
            self.wfile.write(chunk)

        def _tree(self, parts: list[str], query: dict[str, list[str]]) -> None:
            # api/{type}s/{owner}/{name}/tree/{revision}[/{folder...}]
            if len(parts) == 5 and parts[3] == "revision":
                return self._revision(parts)
            if len(parts) < 5 or parts[3] != "tree":
                return self._send(404, {"X-Error-Code": "RepoNotFound"})
            repo_type, repo_id, folder = parts[0][:-1], "/".join(parts[1:3]), "/".join(parts[5:])
            if (repo_type, repo_id) not in hub.repos():
                return self._send(404, {"X-Error-Code": "RepoNotFound"})
            recursive = query.get("recursive", ["False"])[0].lower() == "true"
            prefix = f"{folder}/" if folder else ""
            entries, dirs = [], set()
            for (t, r, path), f in sorted(hub.files.items()):
                if t != repo_type or r != repo_id or not path.startswith(prefix):
                    continue
                rest = path[len(prefix):]
                if "/" in rest and not recursive:
                    dirs.add(prefix + rest.split("/", 1)[0])
                    continue
                entry: dict[str, Any] = {"type": "file", "path": path, "size": len(f.data), "oid": f.etag}
                if f.lfs:
                    entry["lfs"] = {"oid": f.etag, "size": len(f.data), "pointerSize": 130}
                entries.append(entry)
            entries += [{"type": "directory", "path": d, "oid": "0" * 40} for d in sorted(dirs)]
            self._send(200, {"Content-Type": "application/json"}, json.dumps(entries).encode())

        def _revision(self, parts: list[str]) -> None:
            # api/{type}s/{owner}/{name}/revision/{revision}: the repo's info (snapshot_download asks it first)
            repo_type, repo_id = parts[0][:-1], "/".join(parts[1:3])
            if (repo_type, repo_id) not in hub.repos():
                return self._send(404, {"X-Error-Code": "RepoNotFound"})
            files = sorted(path for t, r, path in hub.files if (t, r) == (repo_type, repo_id))
            body = {"id": repo_id, "sha": COMMIT, "siblings": [{"rfilename": f} for f in files]}
            self._send(200, {"Content-Type": "application/json"}, json.dumps(body).encode())

        do_GET = _route  # noqa: N815 - http.server's naming
        do_HEAD = _route  # noqa: N815

    return Handler


class HubServer:
    """``with HubServer(hub) as url:`` serves ``hub`` on 127.0.0.1 in a thread."""

    def __init__(self, hub: FakeHub) -> None:
        self.hub = hub
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(hub))
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self) -> str:
        self.thread.start()
        self.hub.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        return self.hub.url

    def __exit__(self, *exc: Any) -> None:
        self.server.shutdown()
        self.server.server_close()
