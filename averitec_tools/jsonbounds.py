"""Bounded JSON parsing: the one parser every input reader of the CLI and the server uses.

Python's own parser has edges that hostile input reaches: an integer of more than 4,300
digits raises ``ValueError`` (not a syntax error), ``1e400`` becomes ``inf``, an integer
such as ``10**400`` overflows when it is later read as a float, nesting past the
recursion limit raises ``RecursionError``, and a reader that asks for "the next line" of
``/dev/zero`` never gets one. :func:`loads` and the bounded reads here turn each of these
into a one-line :class:`UserError` naming the file, line and column:

* integers of at most :attr:`ReadLimits.max_int_digits` digits (no id, count or
  timestamp needs more), and no number that is infinite once read as a float;
* arrays and objects nested at most about 1,000 levels (the interpreter's recursion
  limit; the leaderboard's validation then allows 16);
* lines of at most :attr:`ReadLimits.max_line_bytes` bytes, files of at most
  :attr:`ReadLimits.max_bytes` bytes read (a FIFO or an endless generator stops there).

The bounds are far above every file the project reads (the largest shipped data file
is under 50 MB; the leaderboard's uploads are at most ``max_upload_mb``).
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from typing import IO, Any

from averitec_tools.errors import UserError

#: Nesting is bounded by the parser's recursion (about this many levels).
MAX_DEPTH = 1000


@dataclass(frozen=True)
class ReadLimits:
    """Bounds on what one input file may make a reader do.

    Attributes:
        max_bytes: Bytes read from one file (a JSON document, or all lines of JSON lines).
        max_line_bytes: Bytes in one line of a JSON-lines file.
        max_int_digits: Digits in one JSON integer.
    """

    max_bytes: int = 1 << 30
    max_line_bytes: int = 64 << 20
    max_int_digits: int = 100


#: The bounds of every reader unless a caller passes others.
DEFAULT_LIMITS = ReadLimits()


def _size(n: int) -> str:
    """``n`` bytes in words (``64 MiB``)."""
    for unit, shift in (("GiB", 30), ("MiB", 20), ("KiB", 10)):
        if n >= 1 << shift and n % (1 << shift) == 0:
            return f"{n >> shift} {unit}"
    return f"{n} bytes"


class _BadNumber(ValueError):
    def __init__(self, token: str, why: str) -> None:
        super().__init__(why)
        self.token, self.why = token, why


def _number_hooks(limits: ReadLimits) -> dict[str, Any]:
    def parse_int(token: str) -> int:
        digits = len(token) - token.startswith("-")
        if digits > limits.max_int_digits:
            raise _BadNumber(token, f"an integer of {digits} digits (at most {limits.max_int_digits} are read)")
        return int(token)

    def parse_float(token: str) -> float:
        value = float(token)
        if math.isinf(value):
            raise _BadNumber(token, f"the number {token[:20]}{'...' if len(token) > 20 else ''} is too large (it overflows to infinity)")
        return value

    return {"parse_int": parse_int, "parse_float": parse_float}


def _position(text: str, offset: int) -> tuple[int, int]:
    line = text.count("\n", 0, offset) + 1
    return line, offset - (text.rfind("\n", 0, offset) + 1) + 1


def _is_truncation(exc: json.JSONDecodeError, text: str) -> bool:
    # json reports an unterminated string only when it reaches the end of the input.
    return exc.pos >= len(text.rstrip()) or exc.msg.startswith("Unterminated string")


def loads(text: str, *, where: str, line: int | None = None, limits: ReadLimits = DEFAULT_LIMITS) -> Any:
    """Parse ``text`` within ``limits``; every refusal is a :class:`UserError` naming
    ``where`` with the line and column.

    Args:
        text: The JSON text.
        where: The file name for messages.
        line: The line number of ``text`` in its file when it is one JSON line
            (``None``: a whole document, lines counted from 1).
        limits: The bounds.

    Example:
        >>> loads('{"claim_id": 7, "confidence": 0.5}', where="p.json")
        {'claim_id': 7, 'confidence': 0.5}
        >>> loads('[1,\\n 1e400]', where="p.json")
        Traceback (most recent call last):
        ...
        averitec_tools.errors.UserError: p.json:2:2: the number 1e400 is too large (it overflows to infinity)
        >>> loads('{"claim_id": ' + "9" * 5000 + '}', where="p.jsonl", line=3)
        Traceback (most recent call last):
        ...
        averitec_tools.errors.UserError: p.jsonl:3:14: an integer of 5000 digits (at most 100 are read)
    """
    try:
        return json.loads(text, **_number_hooks(limits))
    except _BadNumber as exc:
        row, col = _position(text, max(0, text.find(exc.token)))
        raise UserError(f"{where}:{row if line is None else line}:{col}: {exc.why}") from None
    except json.JSONDecodeError as exc:
        what = "truncated JSON" if _is_truncation(exc, text) else "invalid JSON"
        row = exc.lineno if line is None else line  # a JSON line is one line (its newline aside)
        raise UserError(f"{where}:{row}:{exc.colno}: {what}: {exc.msg}") from None
    except RecursionError:
        # json raises RecursionError past the interpreter's recursion limit; no
        # submission or gold format nests more than a handful of levels
        at = where if line is None else f"{where}:{line}"
        raise UserError(f"{at}: JSON nested too deeply (arrays or objects more than about {MAX_DEPTH:,} levels deep)") from None


def read_bounded(fh: IO[bytes], *, where: str, limits: ReadLimits = DEFAULT_LIMITS, already: int = 0) -> bytes:
    """The rest of ``fh``, refused past ``limits.max_bytes`` (counting ``already`` read).

    Example:
        >>> import io
        >>> read_bounded(io.BytesIO(b"[1, 2]"), where="p.json")
        b'[1, 2]'
        >>> read_bounded(io.BytesIO(b"x" * 11), where="p.json", limits=ReadLimits(max_bytes=10))
        Traceback (most recent call last):
        ...
        averitec_tools.errors.UserError: p.json: more than 10 bytes (the most one input file may hold)
    """
    budget = limits.max_bytes - already
    data = fh.read(budget + 1) if budget >= 0 else b"x"
    if len(data) > budget:
        raise UserError(f"{where}: more than {_size(limits.max_bytes)} (the most one input file may hold)")
    return data


def readline_bounded(fh: IO[bytes], *, where: str, lineno: int, limits: ReadLimits = DEFAULT_LIMITS) -> bytes:
    """The next line of ``fh`` (``b""`` at the end), refused past ``limits.max_line_bytes``.

    Example:
        >>> import io
        >>> fh = io.BytesIO(b'{"a": 1}\\n' + b"0" * 20)
        >>> readline_bounded(fh, where="p.jsonl", lineno=1)
        b'{"a": 1}\\n'
        >>> readline_bounded(fh, where="p.jsonl", lineno=2, limits=ReadLimits(max_line_bytes=16))
        Traceback (most recent call last):
        ...
        averitec_tools.errors.UserError: p.jsonl:2: a line longer than 16 bytes (the most one JSON line may hold)
    """
    line = fh.readline(limits.max_line_bytes + 1)
    if len(line) > limits.max_line_bytes and not (len(line) == limits.max_line_bytes + 1 and line.endswith(b"\n")):
        raise UserError(f"{where}:{lineno}: a line longer than {_size(limits.max_line_bytes)} (the most one JSON line may hold)")
    return line


__all__ = ["DEFAULT_LIMITS", "MAX_DEPTH", "ReadLimits", "loads", "read_bounded", "readline_bounded"]
