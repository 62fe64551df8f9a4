"""Rules for the names and texts that teams choose: team and system names, metadata values.

Every such string is shown on pages, in exports and in terminals, so it must be plain
text: NFKC-normalised, no control, format (bidi overrides, zero-width characters),
surrogate, private-use or unassigned code points, no line or paragraph separators, and
a bounded length. Team names are unique under :func:`name_key` (NFKC + case folding), so
``blue``, ``BLUE`` and full-width ``ｂｌｕｅ`` are one team; and a new team whose name
*looks like* an existing one is refused (:func:`confusable_with`): same Unicode TR39
confusable skeleton (:func:`skeleton`), so ``bIue`` (capital I) and ``bluе`` (Cyrillic
е) cannot pose as ``blue``.

The skeleton uses Unicode's ``confusables.txt`` (UTS #39 data) as shipped by the
``confusable-homoglyphs`` package (the ``leaderboard`` extra), read once on first use.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Iterable, Mapping, Sequence
from functools import lru_cache

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


@lru_cache(maxsize=1)
def _prototypes() -> dict[str, str]:
    """``{character: its confusable class's representative}`` from Unicode's confusables.txt.

    ``confusable_homoglyphs`` ships the table as symmetric pairs (source ↔ prototype): each
    class is a star around its prototype. A multi-character member is the prototype (TR39
    never maps *from* one); otherwise the member with most neighbours is, ties (a source
    and its prototype alone) broken by code point so both members get one representative.
    """
    try:
        from confusable_homoglyphs.confusables import confusables_data
    except ImportError:
        raise UserError("team names: the Unicode confusables table is missing (package 'confusable-homoglyphs')",
                        hint="pip install 'averitec-tools[leaderboard]'") from None

    def plain(text: str) -> str:
        return text.replace("\u200e", "")  # the table wraps right-to-left characters in LRMs

    neighbours: dict[str, set[str]] = {}
    for char, entries in confusables_data.items():
        for entry in entries:
            a, b = plain(char), plain(entry["c"])
            if a and b and a != b:
                neighbours.setdefault(a, set()).add(b)
                neighbours.setdefault(b, set()).add(a)
    table = {}
    for char, around in neighbours.items():
        if len(char) != 1:
            continue
        star = {char, *around}
        multi = sorted(x for x in star if len(x) > 1)
        table[char] = multi[0] if multi else min(star, key=lambda x: (-len(neighbours.get(x, ())), x))
    return table


def skeleton(name: str) -> str:
    """The UTS #39 skeleton of ``name`` (NFD, each character by its confusables prototype,
    NFD again), case-folded: two names with one skeleton look alike.

    Example:
        >>> skeleton("bIue") == skeleton("blu\u0435") == skeleton("blue")
        True
        >>> skeleton("rnoon") == skeleton("moon"), skeleton("blues") == skeleton("blue")
        (True, False)
    """
    table = _prototypes()

    def mapped(text: str) -> str:
        once = "".join(table.get(ch, ch) for ch in unicodedata.normalize("NFD", text))
        # a multi-character prototype's own characters get their representatives too
        return unicodedata.normalize("NFD", "".join(table.get(ch, ch) for ch in once))

    # map, fold case, map again: the table is case-sensitive ("I" looks like "l", "i" does not)
    return mapped(mapped(unicodedata.normalize("NFKC", name)).casefold())


def confusable_with(name: str, existing: Iterable[str]) -> str | None:
    """The first of ``existing`` that ``name`` looks like (same :func:`skeleton`), if any.

    Example:
        >>> confusable_with("bIue", ["red", "blue"]), confusable_with("blues", ["blue"])
        ('blue', None)
    """
    key = skeleton(name)
    return next((other for other in existing if skeleton(other) == key), None)


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


__all__ = ["REFUSED_CATEGORIES", "check_meta", "clean_text", "confusable_with", "file_display_name", "name_key",
           "skeleton", "system_name", "team_name"]
