"""sacreBLEU-style signatures: one string that says exactly how a score was computed.

The one dialect (docs/scorer.md, "Signature dialect"): ``key:value`` fields joined by ``|``,
each key once, the package ``version:`` among them; a report's signature may lead with a
bare word (``calibration|…``). A value never holds ``|`` (it is written ``%7C``); a key is
letters, digits, ``_``, ``-`` and ``.``. A signature embedded in another (an
``--evidence-scorer``'s in a score's, a score's in a lite check's) is written as its fields
with their keys prefixed ``NAME.`` (a head word as ``NAME:HEAD``; :func:`embed_signature`), and read back by
:meth:`ParsedSignature.embedded`. New fields are new keys: :func:`render_signature` and
:func:`extend_signature` write them, :func:`parse_signature` reads any of them.

Example:
    >>> Signature(profile="averitec2024", metric="hu-meteor", tokenizer="nltk-3.9.1-word_tokenize",
    ...           wordnet="3.0+sha256.0123456789ab", thresholds=(0.25,), comparison=">",
    ...           normalisation="gold", evidence_cap=10, version="0.1.0").render()
    'profile:averitec2024|metric:hu-meteor|tok:nltk-3.9.1-word_tokenize|stem:porter-nltk|wordnet:3.0+sha256.0123456789ab|thr:0.25(>)|norm:gold|cap:10|version:0.1.0'
    >>> sig = extend_signature("profile:x|version:1", embed_signature("evidence-scorer", "metric:m|version:1"))
    >>> sig, parse_signature(sig).embedded("evidence-scorer").render()
    ('profile:x|version:1|evidence-scorer.metric:m|evidence-scorer.version:1', 'metric:m|version:1')
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from averitec_tools._version import __version__

_KEY = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.-]*")
_HEAD = re.compile(r"[a-z0-9][a-z0-9-]*")
Fields = Mapping[str, Any] | Iterable[tuple[str, Any]]


def _field(key: str, value: Any) -> str:
    if not _KEY.fullmatch(key):
        raise ValueError(f"not a signature key: {key!r}")
    return f"{key}:{str(value).replace('|', '%7C')}"


def _join(fields: Fields) -> list[str]:
    items = fields.items() if isinstance(fields, Mapping) else fields
    return [_field(key, value) for key, value in items]


def render_signature(fields: Fields, *, version: str = __version__) -> str:
    """The one signature builder: ``key:value`` fields in order, joined by ``|``, then the version.

    Every score and report in the package renders its signature here, so the format (and
    the trailing ``version:``) cannot drift between commands.

    Example:
        >>> render_signature({"profile": "fever", "cap": 5}, version="0.1.0")
        'profile:fever|cap:5|version:0.1.0'
        >>> render_signature({"model": "a|b"}, version="0.1.0")  # a value never holds the separator
        'model:a%7Cb|version:0.1.0'
    """
    return "|".join([*_join(fields), _field("version", version)])


def extend_signature(signature: str, fields: Fields) -> str:
    """``signature`` with more fields after its own (a subset's ``subset:``, an embedded signature).

    Raises:
        ValueError: a key the signature already has.

    Example:
        >>> extend_signature("profile:fever|version:0.1.0", {"subset": "2/3"})
        'profile:fever|version:0.1.0|subset:2/3'
    """
    text = "|".join([signature, *_join(fields)])
    parse_signature(text)  # a key given twice is refused here, not by whoever reads it
    return text


def embed_signature(name: str, signature: str) -> list[tuple[str, str]]:
    """The fields of ``signature`` with keys prefixed ``NAME.`` (its head word, if any, as ``NAME:HEAD``).

    Example:
        >>> embed_signature("score", "profile:fever|version:0.1.0")
        [('score.profile', 'fever'), ('score.version', '0.1.0')]
        >>> embed_signature("of", "compare|test:bootstrap")
        [('of', 'compare'), ('of.test', 'bootstrap')]
    """
    parsed = parse_signature(signature)
    head = [(name, parsed.head)] if parsed.head is not None else []
    return [*head, *((f"{name}.{key}", value) for key, value in parsed.items())]


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


def lexicon_field(lexicon: Any) -> str:
    """The exact lexical tables as ``sha256.DIGEST`` (anything with ``digest``; the signature's ``lex:``)."""
    return f"sha256.{lexicon.digest}"


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
        lexicon: The lexical tables' digest (``sha256.…``, rendered as ``lex:``) the stems and
            synonym sets came from (``None``: not rendered).
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
    lexicon: str | None = None

    def render(self) -> str:
        """The signature string (``key:value`` fields joined by ``|``)."""
        return render_signature(
            [
                ("profile", self.profile),
                ("metric", self.metric),
                ("tok", self.tokenizer),
                ("stem", self.stemmer),
                ("wordnet", self.wordnet),
                *([("lex", self.lexicon)] if self.lexicon is not None else []),
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

    def embedded(self, name: str) -> ParsedSignature:
        """The signature embedded under ``name`` (see :func:`embed_signature`), its keys unprefixed.

        Raises:
            KeyError: no field is prefixed ``name.``.

        Example:
            >>> parse_signature("profile:x|score:lite|score.metric:m").embedded("score").render()
            'lite|metric:m'
        """
        prefix = f"{name}."
        out = ParsedSignature({k[len(prefix):]: v for k, v in self.items() if k.startswith(prefix)})
        if not out:
            raise KeyError(f"no signature embedded as {name!r}")
        out.head = self.get(name)
        return out

    def __str__(self) -> str:
        return self.render()


def parse_signature(text: str) -> ParsedSignature:
    """Split a rendered signature back into its fields; ``.render()`` round-trips it.

    Every signature the package prints parses: a score's (``profile:…|…|version:…``, with a
    trailing ``|subset:N/M`` for a partial run) and a report's, whose first field is a bare
    word (``calibration|profile:…``), kept as :attr:`ParsedSignature.head`.

    Raises:
        ValueError: a field without ``:`` (other than a leading head), a key that is not
            one (:func:`render_signature` writes only keys this reads), or a key given twice.

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
        if not sep or not _KEY.fullmatch(key):
            raise ValueError(f"not a signature field: {part!r}")
        if key in out:
            raise ValueError(f"signature field {key!r} given twice")
        out[key] = value
    return out


__all__ = [
    "ParsedSignature", "Signature", "embed_signature", "extend_signature", "lexicon_field", "parse_signature",
    "render_signature", "threshold_field", "wordnet_field",
]
