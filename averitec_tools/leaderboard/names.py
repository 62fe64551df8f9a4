"""Rules for the names and texts that teams choose: team and system names, metadata values.

Every such string is shown on pages, in exports and in terminals, so it must be plain
text: NFKC-normalised, no control, format (bidi overrides, zero-width characters),
surrogate, private-use or unassigned code points, no line or paragraph separators, and
a bounded length. Team names are unique under :func:`name_key` (NFKC + case folding), so
``blue``, ``BLUE`` and full-width ``ｂｌｕｅ`` are one team.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Mapping, Sequence

from averitec_tools.errors import UserError

#: Unicode general categories refused anywhere in a name (Cc control, Cf format --
#: bidi overrides and isolates, zero-width characters --, Cs surrogates, Co private use,
#: Cn unassigned, Zl/Zp line and paragraph separators).
REFUSED_CATEGORIES = frozenset({"Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp"})

TEAM_NAME_MAX = 100
SYSTEM_NAME_MAX = 200
META_VALUE_MAX = 200


def clean_text(value: str, *, what: str, max_len: int, allow_empty: bool = False) -> str:
    """``value`` NFKC-normalised with outer whitespace and inner runs of spaces collapsed,
    or a :class:`UserError` naming ``what`` and the offending character.

    Example:
        >>> clean_text("  ｂｌｕｅ   team ", what="team name", max_len=100)
        'blue team'
        >>> clean_text("evil\\u202egnp.exe", what="system name", max_len=200)
        Traceback (most recent call last):
        ...
        averitec_tools.errors.UserError: system name: character U+202E (RIGHT-TO-LEFT OVERRIDE) is not allowed ...
    """
    if not isinstance(value, str):
        raise UserError(f"{what}: expected text")
    text = unicodedata.normalize("NFKC", value)
    for ch in text:
        if unicodedata.category(ch) in REFUSED_CATEGORIES:
            name = unicodedata.name(ch, "unnamed")
            raise UserError(
                f"{what}: character U+{ord(ch):04X} ({name}) is not allowed",
                hint="names are plain text: no control, formatting or bidi characters",
            )
    text = " ".join(text.split())
    if not text and not allow_empty:
        raise UserError(f"{what}: must not be empty")
    if len(text) > max_len:
        raise UserError(f"{what}: {len(text)} characters, at most {max_len} allowed")
    return text


def name_key(name: str) -> str:
    """The uniqueness key of a team name: NFKC, case-folded, NFKC again (Unicode's
    NFKC_Casefold up to default-ignorables, which :func:`clean_text` refuses anyway).

    Example:
        >>> name_key("Blue") == name_key("BLUE") == name_key("ｂｌｕｅ")
        True
    """
    return unicodedata.normalize("NFKC", unicodedata.normalize("NFKC", name).casefold())


def team_name(value: str) -> str:
    """A valid team name (see the module docstring)."""
    return clean_text(value, what="team name", max_len=TEAM_NAME_MAX)


def system_name(value: str) -> str:
    """A valid system name."""
    return clean_text(value, what="system name", max_len=SYSTEM_NAME_MAX)


def file_display_name(value: str) -> str:
    """The shown name of an uploaded file: its last path component, made plain text
    (refused characters dropped instead of refused: the name is only a label).

    Example:
        >>> file_display_name("../../etc/pass\\x00wd"), file_display_name("")
        ('passwd', 'submission')
    """
    base = value.replace("\\", "/").rsplit("/", 1)[-1]
    base = "".join(ch for ch in unicodedata.normalize("NFKC", base) if unicodedata.category(ch) not in REFUSED_CATEGORIES)
    base = " ".join(base.split())[:SYSTEM_NAME_MAX]
    return base if base not in ("", ".", "..") else "submission"


def check_meta(meta: Mapping[str, str], *, allowed: Sequence[str]) -> dict[str, str]:
    """Disclosure metadata as stored: only the competition's ``disclosure`` keys, values
    plain text (empty values dropped).

    Example:
        >>> check_meta({"model": " bloom ", "open_weights": ""}, allowed=["model", "open_weights"])
        {'model': 'bloom'}
        >>> check_meta({"secret": "x"}, allowed=["model"])
        Traceback (most recent call last):
        ...
        averitec_tools.errors.UserError: metadata key 'secret' is not one of the competition's disclosure keys: model
    """
    out = {}
    for key, value in meta.items():
        if key not in allowed:
            listed = ", ".join(allowed) or "(none: this competition takes no metadata)"
            raise UserError(f"metadata key {str(key)[:40]!r} is not one of the competition's disclosure keys: {listed}")
        text = clean_text(str(value), what=f"metadata {key!r}", max_len=META_VALUE_MAX, allow_empty=True)
        if text:
            out[key] = text
    return out


__all__ = ["REFUSED_CATEGORIES", "check_meta", "clean_text", "file_display_name", "name_key", "system_name", "team_name"]
