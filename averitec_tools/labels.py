"""Label spaces and the maps between them — the one place where labels are translated.

Spaces:

* ``averitec`` — the four AVeriTeC verdicts (``Supported``, ``Refuted``,
  ``Not Enough Evidence``, ``Conflicting Evidence/Cherrypicking``).
* ``fever`` / ``vitaminc`` — FEVER's and VitaminC's three labels
  (``SUPPORTS``, ``REFUTES``, ``NOT ENOUGH INFO``).
* ``ternary`` — the R2VC paper's shared ternary space for standardised data
  (``SUPPORTS``, ``REFUTES``, ``NEI``; §3.1 and the prompt of Figure B.1).
* ``r2vc`` — the verdicts the R2VC generator writes (``True``, ``False``, ``Uncertain``;
  Figure B.1: True ⇐ SUPPORTS, False ⇐ REFUTES, Uncertain ⇐ NEI).

Every map goes through the ternary space. Two directions lose information and are
documented as such (see :data:`AMBIGUOUS`):

* AVeriTeC ``Conflicting Evidence/Cherrypicking`` → ``NEI``: the claim is neither simply
  supported nor refuted (evidence conflicts, or the claim is technically true but
  misleading). Mapping it to ``REFUTES`` would also be defensible for cherry-picking;
  we follow the R2VC convention that ``Uncertain`` covers "missing or conflicting
  evidence" (Appendix B), so it goes to ``NEI``/``Uncertain``.
* ``NEI``/``Uncertain`` → AVeriTeC ``Not Enough Evidence`` (never ``Conflicting
  Evidence/Cherrypicking``), so AVeriTeC → ternary → AVeriTeC is not a round trip for
  the conflicting class.

Example:
    >>> map_label("Uncertain", source="r2vc", target="averitec")
    'Not Enough Evidence'
    >>> map_label("Conflicting Evidence/Cherrypicking", source="averitec", target="fever")
    'NOT ENOUGH INFO'
    >>> normalize_label("supported", space="ternary")
    'SUPPORTS'
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

from averitec_tools.errors import UserError
from averitec_tools.registry import Registry

AVERITEC_LABELS: tuple[str, ...] = (
    "Supported",
    "Refuted",
    "Not Enough Evidence",
    "Conflicting Evidence/Cherrypicking",
)
FEVER_LABELS: tuple[str, ...] = ("SUPPORTS", "REFUTES", "NOT ENOUGH INFO")
VITAMINC_LABELS: tuple[str, ...] = FEVER_LABELS
TERNARY_LABELS: tuple[str, ...] = ("SUPPORTS", "REFUTES", "NEI")
R2VC_LABELS: tuple[str, ...] = ("True", "False", "Uncertain")


def _key(label: str) -> str:
    """Case-, space-, underscore- and hyphen-insensitive lookup key."""
    return re.sub(r"[\s_\-]+", " ", label.strip()).casefold()


@dataclass(frozen=True)
class LabelSpace:
    """One label vocabulary and its translation to/from the ternary pivot.

    Attributes:
        name: Registry name (``"averitec"``, ``"fever"``, ...).
        labels: Canonical spellings, in the dataset's conventional order.
        to_ternary: Canonical label → ternary label.
        from_ternary: Ternary label → canonical label of this space.
        aliases: Extra accepted spellings (already lookup keys) → canonical label.

    Example:
        >>> SPACES.get("r2vc").to_ternary["Uncertain"]
        'NEI'
    """

    name: str
    labels: tuple[str, ...]
    to_ternary: Mapping[str, str]
    from_ternary: Mapping[str, str]
    aliases: Mapping[str, str] = field(default_factory=dict)

    def normalize(self, label: str, *, where: str = "") -> str:
        """Return the canonical spelling of ``label`` (case/space/alias tolerant).

        Raises:
            UserError: if the label is not one of this space's labels or aliases.
        """
        if not isinstance(label, str):
            raise UserError(
                f"{where + ': ' if where else ''}label must be a string, found {type(label).__name__}"
            )
        if label in self.labels:
            return label
        key = _key(label)
        for canonical in self.labels:
            if _key(canonical) == key:
                return canonical
        if key in self.aliases:
            return self.aliases[key]
        raise UserError(
            f"{where + ': ' if where else ''}unknown {self.name} label {label!r}",
            hint=f"valid labels: {', '.join(self.labels)}",
        )


_TERNARY_ALIASES = MappingProxyType(
    {
        "supported": "SUPPORTS",
        "support": "SUPPORTS",
        "true": "SUPPORTS",
        "refuted": "REFUTES",
        "refute": "REFUTES",
        "false": "REFUTES",
        "not enough info": "NEI",
        "notenoughinfo": "NEI",
        "not enough information": "NEI",
        "not enough evidence": "NEI",
        "uncertain": "NEI",
    }
)
_FEVER_ALIASES = MappingProxyType(
    {k: ("NOT ENOUGH INFO" if v == "NEI" else v) for k, v in _TERNARY_ALIASES.items()}
    | {"nei": "NOT ENOUGH INFO"}
)

#: All label spaces by name.
SPACES: Registry[LabelSpace] = Registry("label space")
SPACES.add(
    "averitec",
    LabelSpace(
        name="averitec",
        labels=AVERITEC_LABELS,
        to_ternary=MappingProxyType(
            {
                "Supported": "SUPPORTS",
                "Refuted": "REFUTES",
                "Not Enough Evidence": "NEI",
                "Conflicting Evidence/Cherrypicking": "NEI",
            }
        ),
        from_ternary=MappingProxyType(
            {"SUPPORTS": "Supported", "REFUTES": "Refuted", "NEI": "Not Enough Evidence"}
        ),
    ),
)
for _name in ("fever", "vitaminc"):
    SPACES.add(
        _name,
        LabelSpace(
            name=_name,
            labels=FEVER_LABELS,
            to_ternary=MappingProxyType(
                {"SUPPORTS": "SUPPORTS", "REFUTES": "REFUTES", "NOT ENOUGH INFO": "NEI"}
            ),
            from_ternary=MappingProxyType(
                {"SUPPORTS": "SUPPORTS", "REFUTES": "REFUTES", "NEI": "NOT ENOUGH INFO"}
            ),
            aliases=_FEVER_ALIASES,
        ),
    )
SPACES.add(
    "ternary",
    LabelSpace(
        name="ternary",
        labels=TERNARY_LABELS,
        to_ternary=MappingProxyType({label: label for label in TERNARY_LABELS}),
        from_ternary=MappingProxyType({label: label for label in TERNARY_LABELS}),
        aliases=_TERNARY_ALIASES,
    ),
)
SPACES.add(
    "r2vc",
    LabelSpace(
        name="r2vc",
        labels=R2VC_LABELS,
        to_ternary=MappingProxyType({"True": "SUPPORTS", "False": "REFUTES", "Uncertain": "NEI"}),
        from_ternary=MappingProxyType({"SUPPORTS": "True", "REFUTES": "False", "NEI": "Uncertain"}),
        aliases=MappingProxyType(
            {"supports": "True", "refutes": "False", "nei": "Uncertain", "not enough info": "Uncertain"}
        ),
    ),
)

#: (source, label) pairs whose mapping loses information, with the reason.
AMBIGUOUS: Mapping[tuple[str, str], str] = MappingProxyType(
    {
        ("averitec", "Conflicting Evidence/Cherrypicking"): (
            "no ternary counterpart: mapped to NEI/Uncertain (conflicting or misleading "
            "evidence), so it merges with 'Not Enough Evidence'"
        ),
        ("averitec", "Not Enough Evidence"): (
            "shares NEI with 'Conflicting Evidence/Cherrypicking'; NEI maps back to "
            "'Not Enough Evidence' only"
        ),
    }
)


def normalize_label(label: str, *, space: str, where: str = "") -> str:
    """Canonical spelling of ``label`` in ``space`` (tolerates case, spaces, known aliases).

    Args:
        label: The label as written in a file.
        space: Label space name (``averitec``, ``fever``, ``vitaminc``, ``ternary``, ``r2vc``).
        where: Location for the error message (file:line, claim id).

    Raises:
        UserError: for an unknown space or label.

    Example:
        >>> normalize_label("not_enough_info", space="fever")
        'NOT ENOUGH INFO'
    """
    return SPACES.get(space).normalize(label, where=where)


def map_label(label: str, *, source: str, target: str, where: str = "") -> str:
    """Translate ``label`` from the ``source`` space to the ``target`` space.

    The label is first normalised in ``source``; translation pivots through the ternary
    space (see the module docstring for the lossy cases).

    Example:
        >>> map_label("REFUTES", source="fever", target="r2vc")
        'False'
        >>> map_label("Refuted", source="averitec", target="ternary")
        'REFUTES'
    """
    src = SPACES.get(source)
    dst = SPACES.get(target)
    canonical = src.normalize(label, where=where)
    if source == target:
        return canonical
    return dst.from_ternary[src.to_ternary[canonical]]


def is_lossy(label: str, *, source: str) -> bool:
    """Whether mapping ``label`` out of ``source`` merges it with another label.

    Example:
        >>> is_lossy("Conflicting Evidence/Cherrypicking", source="averitec")
        True
    """
    return (source, normalize_label(label, space=source)) in AMBIGUOUS


__all__ = [
    "AMBIGUOUS", "AVERITEC_LABELS", "FEVER_LABELS", "R2VC_LABELS", "SPACES", "TERNARY_LABELS", "is_lossy",
    "map_label", "normalize_label",
]
