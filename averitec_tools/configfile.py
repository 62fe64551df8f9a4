"""Reading and validating YAML configuration files: the one helper every config loader uses.

:func:`load_yaml_file` / :func:`load_yaml_text` read YAML with one-line errors (file,
line and column); validation is pydantic's, with strict scalars (``1`` is not a bool,
``"1"`` not a number, an int is accepted for a float), unknown keys refused with the close
names (:meth:`averitec_tools.registry.Registry.unknown_message`), and every error turned
into one :class:`~averitec_tools.errors.UserError` (exit code 2) that names the file and
the key. Configurations kept as frozen dataclasses are validated through a pydantic model
derived from the dataclass (:func:`override_dataclass`: a YAML file names only what it
changes on top of a base configuration); others declare pydantic models directly
(:func:`validate`) on :class:`StrictModel`.

This module imports pydantic: loaders import it inside the function that reads a file, so
``import averitec_tools`` and ``averitec score`` stay light.

Example:
    >>> from dataclasses import dataclass
    >>> @dataclass(frozen=True)
    ... class Encoder:
    ...     model: str = "minilm"
    ...     batch_size: int = 64
    ...     seed: int | None = None
    >>> override_dataclass(Encoder(), {"batch_size": 8}, where="s.yaml")
    Encoder(model='minilm', batch_size=8, seed=None)
    >>> override_dataclass(Encoder(), {"batch_sise": 8}, where="s.yaml: encoder")
    Traceback (most recent call last):
    ...
    averitec_tools.errors.UserError: s.yaml: encoder: unknown key 'batch_sise' (did you mean: batch_size?)
    >>> override_dataclass(Encoder(), {"seed": "7"}, where="s.yaml")
    Traceback (most recent call last):
    ...
    averitec_tools.errors.UserError: s.yaml: seed: expected int or null, found str '7'
"""

from __future__ import annotations

import dataclasses
import functools
import operator
import os
import types
import typing
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal, TypeVar

from pydantic import (
    BaseModel,
    ConfigDict,
    Strict,
    StrictBool,
    StrictFloat,
    StrictInt,
    StrictStr,
    ValidationError,
    create_model,
)

from averitec_tools.errors import UserError
from averitec_tools.jsonio import read_text
from averitec_tools.registry import Registry

T = TypeVar("T")

#: What each pydantic type error expected, in the words of our messages.
_EXPECTED = {
    "bool_type": "bool",
    "int_type": "int",
    "float_type": "float",
    "string_type": "str",
    "list_type": "a list",
    "tuple_type": "a list",
    "dict_type": "a mapping of settings",
    "model_type": "a mapping of settings",
    "model_attributes_type": "a mapping of settings",
}


def _bounded_loader(where: str) -> Any:
    """A ``yaml.SafeLoader`` whose numbers are bounded as JSON's are
    (:mod:`averitec_tools.jsonbounds`): an integer of more than 100 digits, or a number that
    overflows to infinity, is a :class:`UserError` naming the line and column (PyYAML's
    own ``int()`` would raise ``ValueError`` past 4,300 digits)."""
    import math

    import yaml

    from averitec_tools.jsonbounds import DEFAULT_LIMITS

    def at(node: Any) -> str:
        return f"{where}:{node.start_mark.line + 1}:{node.start_mark.column + 1}"

    def construct_int(loader: Any, node: Any) -> Any:
        digits = sum(ch.isdigit() for ch in str(node.value))
        if digits > DEFAULT_LIMITS.max_int_digits:
            raise UserError(f"{at(node)}: an integer of {digits} digits (at most {DEFAULT_LIMITS.max_int_digits} are read)")
        return yaml.SafeLoader.construct_yaml_int(loader, node)

    def construct_float(loader: Any, node: Any) -> Any:
        value = yaml.SafeLoader.construct_yaml_float(loader, node)
        if math.isinf(value) and "inf" not in str(node.value).lower():
            raise UserError(f"{at(node)}: the number {str(node.value)[:20]} is too large (it overflows to infinity)")
        return value

    class Loader(yaml.SafeLoader):
        pass

    Loader.add_constructor("tag:yaml.org,2002:int", construct_int)
    Loader.add_constructor("tag:yaml.org,2002:float", construct_float)
    return Loader


def load_yaml_text(text: str, *, where: str) -> Any:
    """Parse YAML text; a syntax error is a :class:`UserError` ``where:LINE:COL: invalid YAML: ...``.

    Example:
        >>> load_yaml_text("a: [1,\\n", where="c.yaml")
        Traceback (most recent call last):
        ...
        averitec_tools.errors.UserError: c.yaml:2:1: invalid YAML: expected the node content, but found '<stream end>'
    """
    import yaml

    try:
        return yaml.load(text, Loader=_bounded_loader(where))  # noqa: S506 (a SafeLoader)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        loc = f":{mark.line + 1}:{mark.column + 1}" if mark is not None else ""
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise UserError(f"{where}{loc}: invalid YAML: {problem}") from None


def load_yaml_file(path: str | os.PathLike[str], *, what: str = "configuration file", hint: str | None = None) -> Any:
    """Read a YAML file: a missing or unreadable file, bad UTF-8 or bad YAML is a one-line
    :class:`UserError` naming the file (``hint`` is added to the missing-file error).

    Example:
        >>> load_yaml_file("/nonexistent/c.yaml", hint="or use a built-in: paper")
        Traceback (most recent call last):
        ...
        averitec_tools.errors.UserError: /nonexistent/c.yaml: no such configuration file (or use a built-in: paper)
    """
    p = Path(path)
    if not p.is_file():
        raise UserError(f"{p}: no such {what}", hint=hint)
    return load_yaml_text(read_text(p, what=what, undecodable="file"), where=str(p))


class StrictModel(BaseModel):
    """A pydantic model for configuration: unknown keys refused, scalars strict, frozen."""

    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)


def _unwrap_optional(annotation: Any) -> tuple[Any, bool]:
    args = typing.get_args(annotation)
    if typing.get_origin(annotation) in (typing.Union, types.UnionType) and type(None) in args:
        rest = [a for a in args if a is not type(None)]
        return functools.reduce(operator.or_, rest), True
    return annotation, False


def _strict(annotation: Any) -> Any:
    inner, optional = _unwrap_optional(annotation)
    args = typing.get_args(inner)
    if typing.get_origin(inner) is tuple and len(args) == 2 and args[1] is Ellipsis:
        # a tuple setting is a list in YAML and JSON: the list is accepted, each item stays strict
        strict = typing.Annotated[tuple[_strict(args[0]), ...], Strict(False)]  # type: ignore[misc,valid-type]
    else:
        strict = {bool: StrictBool, int: StrictInt, float: StrictFloat, str: StrictStr}.get(inner, inner)
    return strict | None if optional else strict


@functools.cache
def _dataclass_model(cls: Any, choices: tuple[tuple[tuple[str, str], tuple[str, ...]], ...]) -> type:
    chosen = dict(choices)
    fields: dict[str, Any] = {}
    for f in dataclasses.fields(cls):
        annotation: Any = typing.get_type_hints(cls)[f.name]
        if dataclasses.is_dataclass(annotation):
            fields[f.name] = (_dataclass_model(typing.cast(Any, annotation), choices), ...)
        elif (cls.__name__, f.name) in chosen:
            fields[f.name] = (Literal[chosen[(cls.__name__, f.name)]], ...)  # type: ignore[valid-type]
        else:
            fields[f.name] = (_strict(annotation), ...)
    return create_model(cls.__name__, __base__=StrictModel, **fields)


def _deep_merge(base: dict[str, Any], overrides: Mapping[Any, Any]) -> dict[str, Any]:
    merged = dict(base)
    for key, value in overrides.items():
        if isinstance(value, Mapping) and isinstance(merged.get(key), dict):
            merged[key] = _deep_merge(merged[key], value)
        else:
            merged[key] = value
    return merged


def _to_dataclass(cls: Any, model: Any) -> Any:
    values = {}
    for f in dataclasses.fields(cls):
        annotation = typing.get_type_hints(cls)[f.name]
        value = getattr(model, f.name)
        values[f.name] = _to_dataclass(annotation, value) if dataclasses.is_dataclass(annotation) else value
    return cls(**values)


def override_dataclass(base: T, overrides: Any, *, where: str,
                       choices: Mapping[tuple[str, str], tuple[str, ...]] | None = None) -> T:
    """``base`` (a frozen dataclass, nested sections allowed) with the ``overrides`` mapping applied.

    Args:
        base: The configuration the overrides change.
        overrides: The mapping read from the file (only what changes).
        where: The file name (and section) for messages.
        choices: ``(dataclass name, field) → allowed values`` for settings with a fixed
            set of values.

    Raises:
        UserError: An unknown key (with close names), a wrongly typed value, a section
            that is not a mapping, a value outside its choices.
    """
    if not isinstance(overrides, Mapping):
        raise UserError(f"{where}: expected a mapping of settings, found {type(overrides).__name__}")
    cls: Any = type(base)
    model = _dataclass_model(cls, tuple(sorted((choices or {}).items())))
    merged = _deep_merge(dataclasses.asdict(base), overrides)  # type: ignore[call-overload]
    result: T = _to_dataclass(cls, validate(model, merged, where=where))
    return result


def validate(model: type[Any], data: Any, *, where: str) -> Any:
    """``model.model_validate(data)``, with pydantic's first error as a one-line :class:`UserError`.

    Example:
        >>> class Limits(StrictModel):
        ...     per_day: int | None = None
        >>> validate(Limits, {"per_day": 5}, where="c.yaml").per_day
        5
        >>> validate(Limits, {"per_dya": 5}, where="c.yaml: limits")
        Traceback (most recent call last):
        ...
        averitec_tools.errors.UserError: c.yaml: limits: unknown key 'per_dya' (did you mean: per_day?)
    """
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        raise _user_error(exc.errors()[0], model=model, where=where) from None


def _path(loc: tuple[Any, ...]) -> str:
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


def _annotation_at(model: type[Any], loc: tuple[Any, ...]) -> Any:
    """The annotation of the value at ``loc`` (``None`` when the path leaves the models)."""
    annotation: Any = model
    for part in loc:
        if isinstance(part, int):
            args = typing.get_args(_unwrap_optional(annotation)[0])
            annotation = args[0] if args else None
        else:
            holder = _unwrap_optional(annotation)[0]
            if not (isinstance(holder, type) and issubclass(holder, BaseModel)) or part not in holder.model_fields:
                return None
            annotation = holder.model_fields[part].annotation
    return annotation


def _user_error(error: Mapping[str, Any], *, model: type[Any], where: str) -> UserError:
    loc = tuple(error["loc"])
    kind = error["type"]
    value = error.get("input")
    at = f"{where}: {_path(loc)}" if loc else where
    if kind == "extra_forbidden":
        holder = _unwrap_optional(_annotation_at(model, loc[:-1]))[0]
        parent = f"{where}: {_path(loc[:-1])}" if loc[:-1] else where
        known = list(holder.model_fields) if isinstance(holder, type) and issubclass(holder, BaseModel) else []
        return UserError(f"{parent}: {Registry.of_names('key', known).unknown_message(str(loc[-1]))}")
    if kind == "missing":
        parent = f"{where}: {_path(loc[:-1])}" if loc[:-1] else where
        return UserError(f"{parent}: missing key {loc[-1]!r}")
    annotation = _annotation_at(model, loc)
    optional = annotation is not None and _unwrap_optional(annotation)[1]
    if value is None and kind in _EXPECTED and not optional:
        return UserError(f"{at}: must not be null")
    if kind == "literal_error":
        allowed = typing.get_args(_unwrap_optional(annotation)[0]) if annotation is not None else ()
        return UserError(f"{at}: {Registry.of_names('value', [str(a) for a in allowed]).unknown_message(str(value))}")
    if kind in _EXPECTED:
        expected = _EXPECTED[kind] + (" or null" if optional else "")
        return UserError(f"{at}: expected {expected}, found {type(value).__name__} {value!r}")
    message = str(error["msg"]).removeprefix("Value error, ")
    return UserError(f"{at}: {message}, found {value!r}")


__all__ = ["StrictModel", "load_yaml_file", "load_yaml_text", "override_dataclass", "validate"]
