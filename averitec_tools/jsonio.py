"""Reading JSON / JSONL input files with errors that name the file, line and column.

Every reader here turns malformed input into a one-line :class:`UserError`:
non-UTF-8 bytes, truncated JSON, a JSONL line that is not an object, a missing file,
and everything :mod:`averitec_tools.jsonbounds` bounds (integers of more than 100 digits,
numbers that overflow to infinity, nesting past about a thousand levels, lines and files
past their size bounds: ``/dev/zero`` is refused, not read for ever), and a lone
surrogate escape (``"\\ud800"``: not a Unicode character, so no UTF-8 output could hold
it; refused where it is read, naming the item and the field). JSONL is streamed line by
line; a JSON array is parsed once.

Outputs are written through :mod:`averitec_tools.atomicio` (``atomic_writer`` and
``atomic_directory``, re-exported here, where the commands import them from).
"""

from __future__ import annotations

import errno
import json
import os
import re
import sys
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from averitec_tools import jsonbounds
from averitec_tools.atomicio import atomic_directory, atomic_writer
from averitec_tools.errors import UserError
from averitec_tools.jsonbounds import ReadLimits

_PEEK_BYTES = 4096
_SPACE = b" \t\r\n"


@dataclass(frozen=True)
class Located:
    """A parsed JSON value and where it came from (for error messages)."""

    value: Any
    path: str
    line: int | None  # 1-based line for JSONL; None for items of a JSON array
    index: int  # 0-based position of the item in the file

    @property
    def where(self) -> str:
        if self.line is not None:
            return f"{self.path}:{self.line}"
        return f"{self.path}[{self.index}]"


def _check_file(path: str | os.PathLike[str]) -> Path:
    p = Path(path)
    if not p.exists():
        try:
            os.stat(p)
        except OSError as exc:
            if exc.errno == errno.ELOOP:
                raise UserError(f"{p}: a loop of symbolic links, not a file") from None
        raise UserError(f"{p}: no such file")
    if p.is_dir():
        raise UserError(f"{p}: is a directory, expected a .json or .jsonl file")
    return p


def _decode_error(path: Path, data: bytes, exc: UnicodeDecodeError, base_line: int = 1) -> UserError:
    before = data[: exc.start]
    line = base_line + before.count(b"\n")
    col = exc.start - (before.rfind(b"\n") + 1) + 1
    return UserError(f"{path}:{line}:{col}: file is not valid UTF-8 (byte 0x{data[exc.start]:02x})")


def _limits(limits: ReadLimits | None) -> ReadLimits:
    return jsonbounds.DEFAULT_LIMITS if limits is None else limits


def _syntax_only(text: bytes) -> Any:
    """Parse ``text`` for its syntax alone (numbers are not converted: the sniff only
    decides the format; the reader then applies the bounds)."""
    return json.loads(text, parse_int=lambda _: 0, parse_float=lambda _: 0.0)


def sniff_format(path: str | os.PathLike[str], *, limits: ReadLimits | None = None) -> str:
    """Return ``"json"`` (a top-level array/object) or ``"jsonl"`` (one object per line).

    A file whose first line is a complete JSON object is JSONL; a file starting with
    ``[`` is a JSON array. At most the first line is read (itself bounded, as are leading
    blank lines: ``/dev/zero`` or an endless stream is refused, not read for ever).

    Example:
        >>> import tempfile, pathlib
        >>> p = pathlib.Path(tempfile.mkdtemp()) / "x.jsonl"
        >>> _ = p.write_text('{"id": 0}\\n{"id": 1}\\n')
        >>> sniff_format(p)
        'jsonl'
    """
    lim = _limits(limits)
    p = _check_file(path)
    with p.open("rb") as fh:
        head = fh.read(_PEEK_BYTES).removeprefix(b"\xef\xbb\xbf")
        skipped = 0
        while head and not head.lstrip(_SPACE) and skipped <= lim.max_bytes:
            skipped += len(head)
            head = fh.read(_PEEK_BYTES)
        stripped = head.lstrip(_SPACE)
        if skipped + len(head) - len(stripped) > lim.max_bytes:
            raise UserError(f"{p}: more than {jsonbounds._size(lim.max_bytes)} of blank space (the most one input file may hold)")
        if not stripped:
            raise UserError(f"{p}: file is empty")
        if stripped.startswith(b"["):
            return "json"
        if not stripped.startswith(b"{"):
            raise UserError(f"{p}:1:1: expected a JSON array or JSON lines, found {stripped[:20]!r}")
        first = stripped.split(b"\n", 1)[0]
        if b"\n" not in stripped:
            first += fh.readline(lim.max_line_bytes + 1)
            if len(first) > lim.max_line_bytes:  # an object on one line that long is neither format here
                raise UserError(f"{p}:1: a line longer than {jsonbounds._size(lim.max_line_bytes)} (the most one JSON line may hold)")
    try:
        _syntax_only(first)
        return "jsonl"
    except (json.JSONDecodeError, UnicodeDecodeError):
        return "json"
    except RecursionError:
        raise _too_deep(f"{p}:1") from None


def _too_deep(where: str) -> UserError:
    # json raises RecursionError past the interpreter's recursion limit (~1,000 levels);
    # no submission or gold format nests more than a handful
    return UserError(f"{where}: JSON nested too deeply (arrays or objects more than about 1,000 levels deep)")


#: Only a ``\\uD800``-``\\uDFFF`` escape can put a surrogate into parsed JSON (UTF-8 input
#: cannot encode one): files without such an escape are not walked.
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")
_SURROGATE = re.compile("[\ud800-\udfff]")


def _lone_surrogate(value: Any) -> tuple[str, str] | None:
    """``(field path, character)`` of the first lone surrogate in ``value``, if any."""
    stack: list[tuple[str, Any]] = [("", value)]
    while stack:
        path, item = stack.pop()
        if isinstance(item, str):
            found = _SURROGATE.search(item)
            if found:
                return path, found.group()
        elif isinstance(item, dict):
            for key, sub in reversed(item.items()):
                dotted = f"{path}.{key}" if path else str(key)
                if _SURROGATE.search(key):
                    stack.append((f"{path}.<key>" if path else "<key>", key))
                else:
                    stack.append((dotted, sub))
        elif isinstance(item, list):
            stack.extend((f"{path}[{i}]", sub) for i, sub in reversed(list(enumerate(item))))
    return None


def refuse_lone_surrogates(value: Any, *, text: str, where: str, items: bool = False) -> None:
    """Raise if parsed ``value`` (from ``text``) holds a lone surrogate.

    Args:
        value: The parsed JSON.
        text: The text it was parsed from (walked only if it has a surrogate escape).
        where: ``file`` or ``file:line`` for the message.
        items: ``value`` is a file's array of items: name the item (``file[i]`` and its
            ``claim_id``/``id``) rather than a path from the top.

    Raises:
        UserError: One line naming the file, item and field.

    Example:
        >>> import json
        >>> pair = r'["\\ud83d\\ude00"]'  # a surrogate pair: one character, accepted
        >>> refuse_lone_surrogates(json.loads(pair), text=pair, where="f.json")
        >>> lone = r'{"a": "\\ud800"}'
        >>> refuse_lone_surrogates(json.loads(lone), text=lone, where="f.json")
        Traceback (most recent call last):
        averitec_tools.errors.UserError: f.json: a: a lone surrogate U+D800 ...
    """
    if not _SURROGATE_ESCAPE.search(text):
        return
    found: tuple[str, str] | None = None
    if items and isinstance(value, list):
        for i, item in enumerate(value):
            found = _lone_surrogate(item)
            if found:
                where = f"{where}[{i}]"
                value = item
                break
    else:
        found = _lone_surrogate(value)
    if found is None:
        return
    field, char = found
    if isinstance(value, dict):
        key = next((k for k in ("claim_id", "id") if k in value and not isinstance(value[k], (dict, list))), None)
        if key is not None:
            where = f"{where} ({key} {value[key]!r})"
    raise UserError(f"{where}: {field + ': ' if field else ''}a lone surrogate U+{ord(char):04X} (a \\u escape "
                    "that is not a Unicode character; no UTF-8 output can hold it)",
                    hint="write the character itself, or a valid \\uD8xx\\uDCxx pair")


def read_text(path: str | os.PathLike[str], *, what: str, undecodable: str) -> str:
    """The UTF-8 text of a small file the user names (a configuration, competition or prompt file);
    an unreadable file or bad UTF-8 is a one-line :class:`UserError` naming ``path`` as given.

    Args:
        path: The file, named in the messages as the caller holds it (``str`` or ``Path``).
        what: What the file is, for an unreadable file: "cannot read the <what> (<reason>)".
        undecodable: The subject of the bad-UTF-8 message: "<undecodable> is not valid UTF-8".

    Example:
        >>> read_text("/nonexistent/p.txt", what="judge prompt", undecodable="judge prompt")
        Traceback (most recent call last):
        ...
        averitec_tools.errors.UserError: /nonexistent/p.txt: cannot read the judge prompt (No such file or directory)
    """
    try:
        with open(path, encoding="utf-8") as fh:
            return fh.read()
    except UnicodeDecodeError:
        raise UserError(f"{path}: {undecodable} is not valid UTF-8") from None
    except OSError as exc:
        raise UserError(f"{path}: cannot read the {what} ({exc.strerror})") from None


def load_json(path: str | os.PathLike[str], *, limits: ReadLimits | None = None) -> Any:
    """Parse a whole JSON file within ``limits`` (:mod:`averitec_tools.jsonbounds`),
    reporting line and column of any syntax error."""
    lim = _limits(limits)
    p = _check_file(path)
    with p.open("rb") as fh:
        data = jsonbounds.read_bounded(fh, where=str(p), limits=lim)
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise _decode_error(p, data, exc) from None
    value = jsonbounds.loads(text, where=str(p), limits=lim)
    refuse_lone_surrogates(value, text=text, where=str(p), items=True)
    return value


def iter_jsonl(path: str | os.PathLike[str], *, limits: ReadLimits | None = None) -> Iterator[Located]:
    """Stream the objects of a JSONL file within ``limits``; blank lines are skipped."""
    lim = _limits(limits)
    p = _check_file(path)
    index = total = 0
    with p.open("rb") as fh:
        lineno = 0
        while True:
            lineno += 1
            raw = jsonbounds.readline_bounded(fh, where=str(p), lineno=lineno, limits=lim)
            if not raw:
                return
            total += len(raw)
            if total > lim.max_bytes:
                raise UserError(f"{p}:{lineno}: more than {jsonbounds._size(lim.max_bytes)} (the most one input file may hold)")
            if not raw.strip():
                continue
            try:
                line = raw.decode("utf-8-sig" if lineno == 1 else "utf-8")
            except UnicodeDecodeError as exc:
                raise _decode_error(p, raw, exc, base_line=lineno) from None
            value = jsonbounds.loads(line, where=str(p), line=lineno, limits=lim)
            refuse_lone_surrogates(value, text=line, where=f"{p}:{lineno}")
            yield Located(value, str(p), lineno, index)
            index += 1


def iter_records(path: str | os.PathLike[str], *, limits: ReadLimits | None = None) -> Iterator[Located]:
    """Yield the items of a JSON array file or a JSONL file, whichever ``path`` is (both
    read within ``limits``)."""
    fmt = sniff_format(path, limits=limits)
    if fmt == "jsonl":
        yield from iter_jsonl(path, limits=limits)
        return
    value = load_json(path, limits=limits)
    if not isinstance(value, list):
        raise UserError(f"{path}: expected a JSON array of items, found a JSON {type(value).__name__}")
    for i, item in enumerate(value):
        yield Located(item, str(path), None, i)


def print_json(obj: Mapping[str, Any]) -> None:
    """Write ``obj`` as a single JSON line on stdout (UTF-8, not ASCII-escaped).

    The one way commands and servers write ``--json`` output: exactly one JSON object.

    Example:
        >>> print_json({"n": 1, "label": "Réfuté"})
        {"n": 1, "label": "Réfuté"}
    """
    sys.stdout.write(json.dumps(dict(obj), ensure_ascii=False) + "\n")


def write_head(path: str | os.PathLike[str], *, n: int, out: str | os.PathLike[str]) -> int:
    """Write the first ``n`` records of ``path`` to ``out`` in the same format (a JSON
    array stays an array, JSON lines stay lines); returns how many were written.

    The gold file of a ``--limit n`` run: the scorer then compares exactly those claims.

    Example:
        >>> import tempfile, pathlib
        >>> d = pathlib.Path(tempfile.mkdtemp())
        >>> _ = (d / "g.json").write_text(json.dumps([{"claim": "a"}, {"claim": "b"}]))
        >>> write_head(d / "g.json", n=1, out=d / "s.json"), json.loads((d / "s.json").read_text())
        (1, [{'claim': 'a'}])
        >>> _ = (d / "g.jsonl").write_text('{"id": 0}\\n{"id": 1}\\n{"id": 2}\\n')
        >>> write_head(d / "g.jsonl", n=2, out=d / "s.jsonl"), (d / "s.jsonl").read_text()
        (2, '{"id": 0}\\n{"id": 1}\\n')
    """
    items = [loc.value for _, loc in zip(range(n), iter_records(path), strict=False)]
    lines = sniff_format(path) == "jsonl"
    with atomic_writer(out) as fh:
        if lines:
            fh.writelines(json.dumps(item, ensure_ascii=False) + "\n" for item in items)
        else:
            json.dump(items, fh, ensure_ascii=False, indent=1)
            fh.write("\n")
    return len(items)


__all__ = [
    "Located", "atomic_directory", "atomic_writer", "iter_jsonl", "iter_records", "load_json", "print_json",
    "read_text", "sniff_format", "write_head",
]
