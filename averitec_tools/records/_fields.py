"""Readers of one field of a JSON object, for the records' ``from_dict`` constructors.

Each raises :class:`~averitec_tools.errors.UserError` naming ``where`` and the field.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from averitec_tools.errors import UserError


def opt_str(obj: Mapping[str, Any], key: str, where: str, *, ints: bool = False) -> str | None:
    """``obj[key]`` if a string or absent/null (``None``); with ``ints``, an integer as its digits."""
    value = obj.get(key)
    if value is None or isinstance(value, str):
        return value
    if ints and isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    raise UserError(f"{where}: field {key!r} must be a string or null, found {type(value).__name__}")


def opt_strs(obj: Mapping[str, Any], keys: Iterable[str], where: str, *, ints: bool = False) -> dict[str, str | None]:
    """:func:`opt_str` of each of ``keys``, by key (in the order of ``keys``)."""
    return {key: opt_str(obj, key, where, ints=ints) for key in keys}


def req_str(obj: Mapping[str, Any], key: str, where: str) -> str:
    """``obj[key]``, which must be present and a string."""
    if key not in obj:
        raise UserError(f"{where}: missing key {key!r}")
    value = obj[key]
    if not isinstance(value, str):
        raise UserError(f"{where}: field {key!r} must be a string, found {type(value).__name__}")
    return value


def str_list(obj: Mapping[str, Any], key: str, where: str) -> tuple[str, ...]:
    """``obj[key]`` as a tuple of strings (absent/null/empty: ``()``)."""
    value = obj.get(key) or []
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise UserError(f"{where}: field {key!r} must be a list of strings")
    return tuple(value)
