"""sacreBLEU-style signatures: one string that says exactly how a score was computed.

Example:
    >>> Signature(profile="averitec2024", metric="hu-meteor", tokenizer="nltk-3.9.1-word_tokenize",
    ...           wordnet="3.0+sha256.0123456789ab", thresholds=(0.25,), comparison=">",
    ...           normalisation="gold", evidence_cap=10, version="0.1.0").render()
    'profile:averitec2024|metric:hu-meteor|tok:nltk-3.9.1-word_tokenize|stem:porter-nltk|wordnet:3.0+sha256.0123456789ab|thr:0.25(>)|norm:gold|cap:10|version:0.1.0'
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from averitec_tools._version import __version__


def render_signature(fields: Mapping[str, Any] | Iterable[tuple[str, Any]], *, version: str = __version__) -> str:
    """The one signature builder: ``key:value`` fields in order, joined by ``|``, then the version.

    Every score and report in the package renders its signature here, so the format (and
    the trailing ``version:``) cannot drift between commands.

    Example:
        >>> render_signature({"profile": "fever", "cap": 5}, version="0.1.0")
        'profile:fever|cap:5|version:0.1.0'
    """
    items = fields.items() if isinstance(fields, Mapping) else fields
    return "|".join([*(f"{key}:{value}" for key, value in items), f"version:{version}"])


def threshold_field(thresholds: float | Sequence[float], comparison: str) -> str:
    """λ values (``repr`` of each float) and the comparison, as in ``thr:0.25(>)``.

    Example:
        >>> threshold_field((0.1, 0.25), ">"), threshold_field(0.5, ">=")
        ('0.1,0.25(>)', '0.5(>=)')
    """
    values = (thresholds,) if isinstance(thresholds, (int, float)) else thresholds
    return f"{','.join(repr(float(t)) for t in values)}({comparison})"


def wordnet_field(wordnet: Any) -> str:
    """A loaded WordNet as ``VERSION+sha256.CHECKSUM`` (anything with ``version`` and ``checksum``)."""
    return f"{wordnet.version}+sha256.{wordnet.checksum}"


@dataclass(frozen=True)
class Signature:
    """Everything that can change a printed score.

    Attributes:
        profile: Scoring profile name.
        metric: Evidence metric (``hu-meteor``).
        tokenizer: Tokenizer behaviour (``nltk-3.9.1-word_tokenize``).
        wordnet: WordNet version and checksum of the files used.
        thresholds: λ values reported.
        comparison: ``">"`` or ``">="``.
        normalisation: ``"gold"`` or ``"pred"`` (what the matched sum is divided by).
        evidence_cap: How many predicted evidence items are scored (``None``: all).
        version: averitec-tools version.
        stemmer: Stemmer used in METEOR's stem stage.
        lenient: Whether ``--lenient`` input was tolerated (rendered as ``mode:lenient``).
    """

    profile: str
    metric: str
    tokenizer: str
    wordnet: str
    thresholds: tuple[float, ...]
    comparison: str
    normalisation: str
    evidence_cap: int | None
    version: str
    stemmer: str = "porter-nltk"
    lenient: bool = False

    def render(self) -> str:
        """The signature string (``key:value`` fields joined by ``|``)."""
        return render_signature(
            [
                ("profile", self.profile),
                ("metric", self.metric),
                ("tok", self.tokenizer),
                ("stem", self.stemmer),
                ("wordnet", self.wordnet),
                ("thr", threshold_field(self.thresholds, self.comparison)),
                ("norm", self.normalisation),
                ("cap", "none" if self.evidence_cap is None else self.evidence_cap),
                *([("mode", "lenient")] if self.lenient else []),
            ],
            version=self.version,
        )

    def __str__(self) -> str:
        return self.render()


class ParsedSignature(dict[str, str]):
    """A signature's ``key: value`` fields in order, and the bare word that heads a report's
    signature (``calibration``, ``compare``, ``r2vc-paper-table``; ``None`` for a score's).

    :meth:`render` gives back the exact string parsed.
    """

    head: str | None = None

    def render(self) -> str:
        """The signature string again: the head (if any), then ``key:value`` fields joined by ``|``."""
        return "|".join([*([self.head] if self.head is not None else []), *(f"{k}:{v}" for k, v in self.items())])

    def __str__(self) -> str:
        return self.render()


_HEAD = re.compile(r"[a-z0-9][a-z0-9-]*")


def parse_signature(text: str) -> ParsedSignature:
    """Split a rendered signature back into its fields; ``.render()`` round-trips it.

    Every signature the package prints parses: a score's (``profile:…|…|version:…``, with a
    trailing ``|subset:N/M`` for a partial run) and a report's, whose first field is a bare
    word (``calibration|profile:…``), kept as :attr:`ParsedSignature.head`.

    Raises:
        ValueError: a field without ``:`` (other than a leading head) or a key given twice.

    Example:
        >>> parse_signature("profile:evalai|cap:none")
        {'profile': 'evalai', 'cap': 'none'}
        >>> sig = parse_signature("compare|profile:fever|test:bootstrap|version:0.1.0")
        >>> sig.head, sig["test"], sig.render()
        ('compare', 'bootstrap', 'compare|profile:fever|test:bootstrap|version:0.1.0')
    """
    out = ParsedSignature()
    parts = text.split("|")
    if len(parts) > 1 and ":" not in parts[0] and _HEAD.fullmatch(parts[0]):
        out.head = parts.pop(0)
    for part in parts:
        key, sep, value = part.partition(":")
        if not sep:
            raise ValueError(f"not a signature field: {part!r}")
        if key in out:
            raise ValueError(f"signature field {key!r} given twice")
        out[key] = value
    return out


__all__ = ["ParsedSignature", "Signature", "parse_signature", "render_signature", "threshold_field", "wordnet_field"]
