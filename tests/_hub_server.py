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
* ``plain`` files at their own path (a plain HTTPS folder), and ``forbidden`` paths answered 403;
* revisions: a repository with commits registered (:meth:`FakeHub.pin`) answers those commits and
  ``main`` (its last commit) and 404 ``RevisionNotFound`` for anything else; ``X-Repo-Commit`` is
  the commit a revision resolved to (any revision of a repository without registered commits
  resolves: a 40-hex one to itself, others to :data:`COMMIT`).

Uploads, as ``HfApi.create_repo`` / ``upload_folder`` make them (Git LFS, not Xet: run the client
with ``HF_HUB_DISABLE_XET=1``): ``POST /api/repos/create`` (409 when it exists);
``POST /api/validate-yaml`` (the card's front matter parses as YAML);
``POST /api/{type}s/{repo}/preupload/{rev}`` (parquet and files over 10 MB are LFS);
``POST /{type}s/{repo}.git/info/lfs/objects/batch`` answering a ``basic`` upload action whose
``PUT`` the server keeps by oid; ``POST /api/{type}s/{repo}/commit/{rev}`` (the NDJSON commit:
regular files base64, LFS files by oid) which adds the files and a new commit (``main`` moves to it).

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
    commits: dict[tuple[str, str], list[str]] = field(default_factory=dict)
    created: set[tuple[str, str]] = field(default_factory=set)
    lfs_objects: dict[str, bytes] = field(default_factory=dict)
    commit_messages: list[str] = field(default_factory=list)
    log: list[tuple[str, str, str | None]] = field(default_factory=list)
    url: str = ""
    lock: threading.Lock = field(default_factory=threading.Lock)

    def add(self, repo_type: str, repo_id: str, path: str, data: bytes, **kw: Any) -> HubFile:
        f = HubFile(data, **kw)
        self.files[(repo_type, repo_id, path)] = f
        return f

    def pin(self, repo_type: str, repo_id: str, *commits: str) -> None:
        """Register the repository's commits (oldest first; ``main`` is the last)."""
        self.commits.setdefault((repo_type, repo_id), []).extend(commits)

    def resolve(self, repo_type: str, repo_id: str, revision: str) -> str | None:
        """The commit ``revision`` names, or ``None`` (not a revision of the repository)."""
        known = self.commits.get((repo_type, repo_id))
        if not known:
            return revision if len(revision) == 40 else COMMIT
        if revision == "main":
            return known[-1]
        return revision if revision in known else None

    def repos(self) -> set[tuple[str, str]]:
        return {(t, r) for t, r, _ in self.files} | self.created

    def commit(self, repo_type: str, repo_id: str, files: dict[str, HubFile], message: str) -> str:
        """Add ``files`` to the repository as a new commit; returns its id."""
        digest = hashlib.sha1(f"{repo_type}/{repo_id}/{len(self.commit_messages)}/{message}".encode())
        for path, f in files.items():
            digest.update(path.encode() + f.data)
            self.files[(repo_type, repo_id, path)] = f
        sha = digest.hexdigest()
        self.pin(repo_type, repo_id, sha)
        self.commit_messages.append(message)
        return sha


class _Handler(BaseHTTPRequestHandler):
    """The hub's endpoints; :func:`_handler` binds one :class:`FakeHub` as ``hub``."""

    hub: FakeHub
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
        with self.hub.lock:
            self.hub.log.append((self.command, unquote(url.path), self.headers.get("Range")))
        if unquote(url.path) in self.hub.forbidden:
            return self._send(403, {})
        if unquote(url.path) in self.hub.plain:
            return self._file(self.hub.plain[unquote(url.path)], COMMIT)
        parts = [unquote(p) for p in url.path.strip("/").split("/")]
        if parts[:1] == ["api"]:
            return self._tree(parts[1:], parse_qs(url.query))
        repo_type = "model"
        if parts[:1] in (["datasets"], ["spaces"]):
            repo_type, parts = parts[0][:-1], parts[1:]
        if len(parts) < 5 or parts[2] != "resolve":
            return self._send(404, {"X-Error-Code": "RepoNotFound"})
        repo_id, path = "/".join(parts[:2]), "/".join(parts[4:])
        if (repo_type, repo_id) not in self.hub.repos():
            return self._send(404, {"X-Error-Code": "RepoNotFound"})
        commit = self.hub.resolve(repo_type, repo_id, parts[3])
        if commit is None:
            return self._send(404, {"X-Error-Code": "RevisionNotFound"})
        f = self.hub.files.get((repo_type, repo_id, path))
        if f is None:
            return self._send(404, {"X-Error-Code": "EntryNotFound", "X-Repo-Commit": commit})
        self._file(f, commit)

    def _file(self, f: HubFile, commit: str) -> None:
        headers = {"X-Repo-Commit": commit, "ETag": f'"{f.etag}"', "Accept-Ranges": "bytes"}
        if self.command == "HEAD":
            self.send_response(200)
            for k, v in headers.items():
                self.send_header(k, v)
            self.send_header("Content-Length", str(len(f.data)))
            self.end_headers()
            return
        with self.hub.lock:
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
        if (repo_type, repo_id) not in self.hub.repos():
            return self._send(404, {"X-Error-Code": "RepoNotFound"})
        if self.hub.resolve(repo_type, repo_id, parts[4]) is None:
            return self._send(404, {"X-Error-Code": "RevisionNotFound"})
        recursive = query.get("recursive", ["False"])[0].lower() == "true"
        prefix = f"{folder}/" if folder else ""
        entries, dirs = [], set()
        for (t, r, path), f in sorted(self.hub.files.items()):
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
        if (repo_type, repo_id) not in self.hub.repos():
            return self._send(404, {"X-Error-Code": "RepoNotFound"})
        commit = self.hub.resolve(repo_type, repo_id, parts[4])
        if commit is None:
            return self._send(404, {"X-Error-Code": "RevisionNotFound"})
        files = sorted(path for t, r, path in self.hub.files if (t, r) == (repo_type, repo_id))
        body = {"id": repo_id, "sha": commit, "siblings": [{"rfilename": f} for f in files]}
        self._send(200, {"Content-Type": "application/json"}, json.dumps(body).encode())

    def _body(self) -> bytes:
        return self.rfile.read(int(self.headers.get("Content-Length") or 0))

    def _json(self, status: int, obj: Any) -> None:
        self._send(status, {"Content-Type": "application/json"}, json.dumps(obj).encode())

    def _post(self) -> None:
        url = urlsplit(self.path)
        with self.hub.lock:
            self.hub.log.append((self.command, unquote(url.path), None))
        parts = [unquote(p) for p in url.path.strip("/").split("/")]
        body = self._body()
        if parts == ["api", "validate-yaml"]:
            return self._validate_yaml(body)
        if parts == ["api", "repos", "create"]:
            return self._create_repo(body)
        if len(parts) >= 4 and parts[2].endswith(".git") and parts[-1] == "batch":
            return self._lfs_batch(body)
        if len(parts) >= 6 and parts[0] == "api" and parts[4] in ("preupload", "commit"):
            return self._repo_post((parts[1][:-1], "/".join(parts[2:4])), parts[4], body)
        self._send(404, {"X-Error-Code": "EntryNotFound"})

    def _validate_yaml(self, body: bytes) -> None:
        """The card's front matter must be YAML (upload_folder asks first)."""
        import yaml

        text = json.loads(body)["content"]
        front = text[4:text.find("\n---", 4)] if text.startswith("---\n") else ""
        try:
            meta = yaml.safe_load(front)
        except yaml.YAMLError as exc:
            return self._json(400, {"errors": [{"message": str(exc)}]})
        warnings = [] if isinstance(meta, dict) else [{"message": "empty or missing metadata"}]
        self._json(200, {"warnings": warnings})

    def _create_repo(self, body: bytes) -> None:
        req = json.loads(body)
        repo = (req.get("type") or "model", f"{req.get('organization') or 'user'}/{req['name']}"
                if "/" not in req["name"] else req["name"])
        exists = repo in self.hub.repos()
        self.hub.created.add(repo)
        prefix = "" if repo[0] == "model" else f"{repo[0]}s/"
        self._json(409 if exists else 200, {"url": f"{self.hub.url}/{prefix}{repo[1]}", "error": "exists"
                                            if exists else None})

    def _lfs_batch(self, body: bytes) -> None:
        objects = json.loads(body)["objects"]
        self._json(200, {"transfer": "basic", "objects": [  # no action: the hub has those bytes
            {"oid": o["oid"], "size": o["size"], "authenticated": True,
             **({} if o["oid"] in self.hub.lfs_objects else
                {"actions": {"upload": {"href": f"{self.hub.url}/lfs-upload/{o['oid']}"}}})} for o in objects]})

    def _repo_post(self, repo: tuple[str, str], what: str, body: bytes) -> None:
        """``/api/{type}s/{repo}/{preupload,commit}/{revision}``."""
        if repo not in self.hub.repos():
            return self._send(404, {"X-Error-Code": "RepoNotFound"})
        if what == "commit":
            return self._commit(repo, body)
        files = json.loads(body)["files"]
        self._json(200, {"files": [
            {"path": f["path"], "shouldIgnore": False, "oid": None,
             "uploadMode": "lfs" if f["path"].endswith(".parquet") or f["size"] > 10 << 20
             else "regular"} for f in files]})

    def _commit(self, repo: tuple[str, str], body: bytes) -> None:
        import base64

        files: dict[str, HubFile] = {}
        message = ""
        for line in body.splitlines():
            item = json.loads(line)
            value = item["value"]
            if item["key"] == "header":
                message = value.get("summary", "")
            elif item["key"] == "file":
                files[value["path"]] = HubFile(base64.b64decode(value["content"]))
            elif item["key"] == "lfsFile":
                files[value["path"]] = HubFile(self.hub.lfs_objects[value["oid"]], lfs=True)
        with self.hub.lock:
            sha = self.hub.commit(*repo, files, message)
        prefix = "" if repo[0] == "model" else f"{repo[0]}s/"
        self._json(200, {"commitUrl": f"{self.hub.url}/{prefix}{repo[1]}/commit/{sha}", "commitOid": sha,
                         "pullRequestUrl": None})

    def _put(self) -> None:
        path = unquote(urlsplit(self.path).path)
        with self.hub.lock:
            self.hub.log.append((self.command, path, None))
            self.hub.lfs_objects[path.rsplit("/", 1)[-1]] = self._body()
        self._send(200, {})

    do_GET = _route  # noqa: N815 - http.server's naming
    do_HEAD = _route  # noqa: N815
    do_POST = _post  # noqa: N815
    do_PUT = _put  # noqa: N815


def _handler(hub: FakeHub) -> type[BaseHTTPRequestHandler]:
    return type("Handler", (_Handler,), {"hub": hub})


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
