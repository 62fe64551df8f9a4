"""The organisers' Ev2R judge prompt, obtained on the user's machine and verified by SHA-256.

The FEVER-8 leaderboard's scorer (``averitec_evaluate.py`` in ``Raldir/FEVER-8-Shared-Task``)
fills two templates from that repository's ``properties.py``: the Q+A prompt
(``ATOMIC_REFERENCE_PROMPT_PREC_RECALL``) and the questions-only prompt
(``ATOMIC_QUESTION_REFERENCE_PROMPT_PREC_RECALL``), with ``str.format(claim, reference,
prediction)``. That file carries no licence, so this package ships none of its text:
``--judge-prompt official`` downloads the file at a pinned commit (or reads it from the
user's clone, ``--judge-prompt official:PATH``), checks its SHA-256 against the value
recorded here, caches it, and reads the two templates out of it with :mod:`ast` (the file
is never executed). Any other bytes are refused with one line.

Recorded from the public repository (commit ``5bf344f``, 2025-04-26; the same bytes as
``evaluation/properties.py`` at ``fee3357``): file SHA-256 ``7561b5ee…6164a``, 65,166
bytes; the Q+A template's SHA-256 ``6b4296ad…5f88``, the questions template's
``10eb8bec…4e50`` (UTF-8 of the string values).
"""

from __future__ import annotations

import ast
import hashlib
import os
import sys
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path

from averitec_tools._version import __version__
from averitec_tools.cache import cache_root
from averitec_tools.errors import UserError
from averitec_tools.jsonio import atomic_writer
from averitec_tools.metrics.ev2r import KINDS, JudgePrompt
from averitec_tools.resources import downloads_allowed

#: ``--judge-prompt official`` and ``--judge-prompt official:PATH``.
OFFICIAL = "official"
_MAX_BYTES = 4 << 20


@dataclass(frozen=True)
class OfficialPromptSource:
    """Where the organisers' prompt file lives and what its bytes must hash to.

    Attributes:
        name: Prompt name in signatures (``fever8-official``; the short commit is appended).
        repo: GitHub ``owner/name``.
        commit: The pinned commit (40 hex digits).
        paths: The file's path in a clone, newest layout first (the first one is downloaded).
        sha256: SHA-256 of the file's bytes.
        variables: ``(kind, module-level variable)`` of each template.
        url: Download URL of ``paths[0]`` at ``commit``.
        what: What the file is for, in messages (``Ev2R``).
    """

    name: str
    repo: str
    commit: str
    paths: tuple[str, ...]
    sha256: str
    variables: tuple[tuple[str, str], ...]
    url: str
    what: str = "Ev2R"

    @property
    def label(self) -> str:
        """``name@short-commit``.

        Example:
            >>> FEVER8_PROMPT_SOURCE.label
            'fever8-official@5bf344f'
        """
        return f"{self.name}@{self.commit[:7]}"


_COMMIT = "5bf344fc725ea0f32cd5e48504d5ae34af953bcf"
FEVER8_PROMPT_SOURCE = OfficialPromptSource(
    name="fever8-official",
    repo="Raldir/FEVER-8-Shared-Task",
    commit=_COMMIT,
    paths=("properties.py", "evaluation/properties.py"),
    sha256="7561b5ee401a8e78d486e409653f3d120d9d23439b8884fd06f715446eb6164a",
    variables=(("qa", "ATOMIC_REFERENCE_PROMPT_PREC_RECALL"), ("questions", "ATOMIC_QUESTION_REFERENCE_PROMPT_PREC_RECALL")),
    url=f"https://raw.githubusercontent.com/Raldir/FEVER-8-Shared-Task/{_COMMIT}/properties.py",
)


def is_official(spec: object) -> bool:
    """Whether a ``--judge-prompt`` value asks for the organisers' prompt.

    Example:
        >>> is_official("official"), is_official("official:/src/FEVER-8-Shared-Task"), is_official("mine.txt")
        (True, True, False)
    """
    return isinstance(spec, str) and (spec == OFFICIAL or spec.startswith(OFFICIAL + ":"))


def verify_bytes(data: bytes, *, source: OfficialPromptSource, where: str, hint: str | None = None) -> str:
    """The bytes' SHA-256, if it is ``source``'s; else one line naming the file and both hashes."""
    digest = hashlib.sha256(data).hexdigest()
    if digest != source.sha256:
        raise UserError(
            f"{where}: SHA-256 {digest[:16]}... is not the organisers' prompt file "
            f"{source.repo}@{source.commit[:7]}:{source.paths[0]} (SHA-256 {source.sha256[:16]}...)",
            hint=hint,
        )
    return digest


def prompt_from_file_bytes(data: bytes, *, source: OfficialPromptSource, where: str, hint: str | None = None) -> JudgePrompt:
    """Verify the file's SHA-256, then read its templates (module-level string constants) without running it."""
    digest = verify_bytes(data, source=source, where=where, hint=hint)
    try:
        tree = ast.parse(data.decode("utf-8"))
    except (UnicodeDecodeError, SyntaxError, ValueError) as exc:  # only reachable with a wrong pinned hash
        raise UserError(f"{where}: not a Python file ({exc})") from None
    constants = {
        node.targets[0].id: node.value.value
        for node in tree.body
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name)
        and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str)
    }
    templates: dict[str, str] = {}
    for kind, variable in source.variables:
        if variable not in constants:
            raise UserError(f"{where}: no string constant {variable} (the {kind} prompt)")
        templates[kind] = constants[variable]
        try:
            templates[kind].format("", "", "")
        except (IndexError, KeyError, ValueError) as exc:
            raise UserError(f"{where}: {variable} is not a template of 3 positional fields ({exc})") from None
    missing = [k for k in KINDS if k not in templates]
    if missing:
        raise UserError(f"{where}: the prompt source defines no template for {', '.join(missing)}")
    return JudgePrompt(source.label, digest, templates, style="positional")


def cached_file(source: OfficialPromptSource, cache_dir: str | os.PathLike[str] | None = None) -> Path:
    """Where the verified file is kept: ``CACHE/judge-prompts/OWNER+NAME@COMMIT/FILE``.

    Example:
        >>> cached_file(FEVER8_PROMPT_SOURCE, "/c").as_posix()
        '/c/judge-prompts/Raldir+FEVER-8-Shared-Task@5bf344fc725ea0f32cd5e48504d5ae34af953bcf/properties.py'
    """
    base = Path(cache_dir) if cache_dir is not None else cache_root()
    return base / "judge-prompts" / f"{source.repo.replace('/', '+')}@{source.commit}" / Path(source.paths[0]).name


def _read_clone(path: Path, source: OfficialPromptSource) -> tuple[bytes, str]:
    candidates = [path] if path.is_file() else [path / p for p in source.paths]
    for candidate in candidates:
        if candidate.is_file():
            try:
                return candidate.read_bytes(), str(candidate)
            except OSError as exc:
                raise UserError(f"{candidate}: cannot read the organisers' prompt file ({exc.strerror})") from None
    raise UserError(
        f"{path}: no {' or '.join(source.paths)} here",
        hint=f"give a clone of {source.repo} or its {source.paths[0]}",
    )


def _download(source: OfficialPromptSource, timeout: float) -> bytes:
    print(f"averitec: downloading the organisers' {source.what} prompt file {source.url}", file=sys.stderr)
    request = urllib.request.Request(source.url, headers={"User-Agent": f"averitec-tools/{__version__}"})
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:  # noqa: S310 - a fixed https URL
            data: bytes = response.read(_MAX_BYTES + 1)
    except urllib.error.HTTPError as exc:
        reason = f"HTTP {exc.code} {exc.reason}"
    except (urllib.error.URLError, TimeoutError, OSError) as exc:
        reason = str(getattr(exc, "reason", exc))
    else:
        if len(data) > _MAX_BYTES:
            raise UserError(f"{source.url}: more than {_MAX_BYTES} bytes; not the organisers' prompt file")
        return data
    raise UserError(
        f"cannot download the organisers' prompt file {source.url}: {reason}",
        hint=f"or clone {source.repo} and pass --judge-prompt {OFFICIAL}:PATH",
    )


def _cached_bytes(target: Path, source: OfficialPromptSource) -> bytes | None:
    """The cached file's bytes if they verify; a damaged cache file is reported and replaced."""
    try:
        data = target.read_bytes()
    except OSError:
        return None
    if hashlib.sha256(data).hexdigest() == source.sha256:
        return data
    print(f"averitec: warning: {target} does not verify; fetching the prompt file again", file=sys.stderr)
    return None


def official_bytes(
    spec: str = OFFICIAL,
    *,
    source: OfficialPromptSource,
    cache_dir: str | os.PathLike[str] | None = None,
    allow_download: bool = True,
    timeout: float = 30.0,
) -> tuple[bytes, str, str]:
    """The bytes of ``source``'s file from the cache, the user's clone (``official:PATH``) or
    a download, and where they came from, verified against ``source.sha256``.

    Returns ``(bytes, where, hint)``: ``hint`` says how to get good bytes if the caller's
    reading of them fails. A verified file not yet cached is written to :func:`cached_file`.
    """
    target = cached_file(source, cache_dir)
    clone = spec[len(OFFICIAL) + 1 :] if spec != OFFICIAL else ""
    cached = _cached_bytes(target, source)
    hint = f"check out commit {source.commit[:7]} in the clone, or use --judge-prompt {OFFICIAL} to download it"
    if clone:
        data, where = _read_clone(Path(clone).expanduser(), source)
    elif cached is not None:
        data, where = cached, str(target)
    elif not downloads_allowed(allow_download=allow_download):
        raise UserError(
            "the organisers' prompt file is not cached and downloads are disabled",
            hint=f"pass --judge-prompt {OFFICIAL}:PATH with a clone of {source.repo}, or allow downloads",
        )
    else:
        data, where = _download(source, timeout), source.url
        hint = f"the download was altered; clone {source.repo} at {source.commit[:7]} and pass --judge-prompt {OFFICIAL}:PATH"
    verify_bytes(data, source=source, where=where, hint=hint)
    if cached is None:
        try:
            with atomic_writer(target, "wb") as fh:
                fh.write(data)
        except (UserError, OSError) as exc:  # an unwritable cache costs a download next time, nothing more
            print(f"averitec: warning: cannot cache the prompt file at {target}: {exc}", file=sys.stderr)
    return data, where, hint


def load_official_prompt(
    spec: str = OFFICIAL,
    *,
    cache_dir: str | os.PathLike[str] | None = None,
    source: OfficialPromptSource | None = None,
    allow_download: bool = True,
    timeout: float = 30.0,
) -> JudgePrompt:
    """The organisers' prompt: from the cache, the user's clone (``official:PATH``) or a download.

    ``source`` defaults to :data:`FEVER8_PROMPT_SOURCE` (looked up at call time, so tests can
    point it at a local server). Whatever the origin, the bytes must hash to
    ``source.sha256``; a verified file is
    written to :func:`cached_file` so that later runs need no network. Downloads follow
    ``--no-download`` / ``AVERITEC_NO_DOWNLOAD``.

    Example:
        >>> import tempfile
        >>> load_official_prompt("official", cache_dir=tempfile.mkdtemp(), allow_download=False)
        Traceback (most recent call last):
        ...
        averitec_tools.errors.UserError: the organisers' prompt file is not cached and downloads are disabled (...)
    """
    if not is_official(spec):
        raise ValueError(f"not an official prompt spec: {spec!r}")
    source = source or FEVER8_PROMPT_SOURCE
    data, where, hint = official_bytes(spec, source=source, cache_dir=cache_dir, allow_download=allow_download,
                                       timeout=timeout)
    return prompt_from_file_bytes(data, source=source, where=where, hint=hint)


__all__ = ["FEVER8_PROMPT_SOURCE", "OFFICIAL", "OfficialPromptSource", "cached_file", "is_official",
           "load_official_prompt", "official_bytes"]
