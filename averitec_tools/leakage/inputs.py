"""Audit inputs: gold files and submissions normalised into :class:`AuditClaim` records.

Accepted files (JSON array or JSONL):

* AVeriTeC gold / 2023 predictions: ``questions → answers`` with ``source_url`` (and
  ``cached_source_url``), plus ``claim_date`` and ``fact_checking_article`` in gold;
* 2024 submissions: ``{claim_id, claim, pred_label, evidence: [{question, answer, url,
  scraped_text?, metadata?}]}``; claim dates and fact-checking articles come from a
  gold ``references`` file aligned on ``claim_id``.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import json
import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from averitec_tools.errors import UserError
from averitec_tools.jsonio import iter_records
from averitec_tools.leakage.dates import PUBLISHED_KEYS
from averitec_tools.leakage.splits import SplitOverlap, SplitRange, split_overlaps, split_ranges
from averitec_tools.leakage.urls import DomainEntry, DomainList, ParsedUrl, parse_url
from averitec_tools.records.averitec import AVeriTeCClaim, parse_claim_date


@dataclass(frozen=True)
class AuditEvidence:
    """One evidence item with a URL.

    Attributes:
        url: The URL as given.
        parsed: The unwrapped URL, or ``None`` if ``url`` is not a URL.
        snapshot: Archive capture date from ``url`` or its cached copy (upper bound).
        metadata: Page metadata (``article:published_time`` etc.), if the file has any.
        html: Stored page HTML/text (``scraped_text``), if any.
    """

    url: str
    parsed: ParsedUrl | None
    snapshot: dt.date | None = None
    metadata: Mapping[str, Any] = field(default_factory=dict)
    html: str | None = None


@dataclass(frozen=True)
class AuditClaim:
    """A claim with everything the rules need."""

    claim_index: int
    claim: str
    claim_date_raw: str | None
    claim_date: dt.date | None
    fact_checking_article: ParsedUrl | None
    evidence: tuple[AuditEvidence, ...]
    n_without_url: int = 0


@dataclass(frozen=True)
class AuditInput:
    """A normalised audit input and what kind of file it was."""

    path: str
    kind: str  # "gold" or "submission"
    claims: tuple[AuditClaim, ...]
    #: Gold claims loaded (FILE if gold, plus references): for fact-checker domains and
    #: split-level checks, keyed by split name (file stem).
    splits: Mapping[str, tuple[AVeriTeCClaim, ...]]
    #: The domains of the ``fact_checking_article`` of every claim in :attr:`splits`.
    split_fact_checkers: DomainList
    #: The claim-date range of each split (:func:`~averitec_tools.leakage.splits.split_ranges`).
    split_ranges: tuple[SplitRange, ...]
    #: The splits whose ranges intersect (:func:`~averitec_tools.leakage.splits.split_overlaps`).
    split_overlaps: tuple[SplitOverlap, ...]


#: The name of a :class:`DomainList` of ``fact_checking_article`` domains.
SPLIT_FACT_CHECKERS = "fact_checking_article domains of the loaded splits"


def article_domains(claims: Iterable[AVeriTeCClaim]) -> set[DomainEntry]:
    """The domains of the claims' ``fact_checking_article`` URLs.

    Example:
        >>> sorted(str(e) for e in article_domains([AVeriTeCClaim(claim="x", fact_checking_article="https://www.snopes.com/f/x")]))
        ['snopes.com']
    """
    entries = set()
    for c in claims:
        parsed = parse_url(c.fact_checking_article) if c.fact_checking_article else None
        if parsed is not None:
            entries.add(DomainEntry(parsed.host))
    return entries


class GoldFile:
    """One gold file's claims (read once per file version and process: :func:`load_gold`)
    and what the audit derives from them alone (their fact-checking domains, their
    claim-date range), built on first use and kept with them: a process that audits many
    submissions against one gold file (the leaderboard's worker) builds them once, and the
    list's remembered matches (:meth:`DomainList.match`) stay warm.
    """

    def __init__(self, claims: tuple[AVeriTeCClaim, ...]) -> None:
        self.claims = claims

    @cached_property
    def fact_checkers(self) -> DomainList:
        """The domains of the claims' ``fact_checking_article`` URLs."""
        return DomainList(article_domains(self.claims), name=SPLIT_FACT_CHECKERS)

    @cached_property
    def _date_range(self) -> SplitRange:
        return split_ranges({"": self.claims})[0]

    def split_range(self, split: str) -> SplitRange:
        """The claims' date range as split ``split`` (the split's name is the path's, which
        a file read through another path may not share)."""
        return dataclasses.replace(self._date_range, split=split)


def _evidence(url: Any, *, cached: Any = None, metadata: Any = None, html: Any = None, where: str) -> AuditEvidence:
    if not isinstance(url, str):
        raise UserError(f"{where}: 'url' must be a string, found {type(url).__name__}")
    parsed = parse_url(url)
    snapshot = parsed.snapshot if parsed else None
    if snapshot is None and isinstance(cached, str):
        cached_parsed = parse_url(cached)
        snapshot = cached_parsed.snapshot if cached_parsed else None
    if metadata is not None and not isinstance(metadata, Mapping):
        raise UserError(f"{where}: 'metadata' must be an object, found {type(metadata).__name__}")
    if html is not None and not isinstance(html, str):
        raise UserError(f"{where}: 'scraped_text' must be a string, found {type(html).__name__}")
    return AuditEvidence(url=url, parsed=parsed, snapshot=snapshot, metadata=dict(metadata or {}), html=html)


def claim_from_gold(record: AVeriTeCClaim, *, index: int, where: str) -> AuditClaim:
    """The audit view of one gold claim: its parsed date, fact-check article and evidence URLs.

    Example:
        >>> gold = AVeriTeCClaim.from_dict({"claim": "x", "claim_date": "31-10-2020", "questions": [
        ...     {"question": "Q?", "answers": [
        ...         {"answer": "A", "source_url": "https://www.a.org/2020/11/02/story"},
        ...         {"answer": "No answer could be found.", "answer_type": "Unanswerable"}]}]}, where="x")
        >>> c = claim_from_gold(gold, index=0, where="dev.json[0]")
        >>> c.claim_date.isoformat(), [e.parsed.host for e in c.evidence], c.n_without_url
        ('2020-10-31', ['a.org'], 1)
    """
    evidence = []
    without = 0
    for qi, q in enumerate(record.questions):
        for ai, a in enumerate(q.answers):
            url = a.source_url or a.cached_source_url
            if not url:
                without += 1
                continue
            evidence.append(
                _evidence(url, cached=a.cached_source_url, where=f"{where}.questions[{qi}].answers[{ai}]")
            )
    fca = parse_url(record.fact_checking_article) if record.fact_checking_article else None
    return AuditClaim(
        claim_index=index,
        claim=record.claim,
        claim_date_raw=record.claim_date,
        claim_date=parse_claim_date(record.claim_date),
        fact_checking_article=fca,
        evidence=tuple(evidence),
        n_without_url=without,
    )


def _claim_id(obj: Mapping[str, Any], *, where: str) -> int:
    """The item's ``claim_id``, required as every scorer requires it: a misspelled key must
    not fall back to the item's position (issue 39)."""
    if "claim_id" not in obj:
        from averitec_tools.registry import close_names

        known = {"claim", "pred_label", "evidence", "string_evidence", "justification", "confidence", "probabilities"}
        near = close_names("claim_id", [str(k) for k in obj if k not in known], n=1, cutoff=0.6)
        raise UserError(f"{where}: missing key 'claim_id'" + (f" (found {near[0]!r}: misspelled?)" if near else ""))
    claim_id = obj["claim_id"]
    if isinstance(claim_id, bool) or not isinstance(claim_id, int):
        raise UserError(f"{where}: 'claim_id' must be an integer, found {claim_id!r}")
    return claim_id


def _submitted_evidence(raw: Any, *, where: str) -> tuple[tuple[AuditEvidence, ...], int]:
    """A submission item's evidence items that have a URL, and how many have none."""
    if not isinstance(raw, list):
        raise UserError(f"{where}: 'evidence' must be a list of {{question, answer, url}} objects")
    evidence = []
    without = 0
    for i, item in enumerate(raw):
        one = _submitted_item(item, where=f"{where}.evidence[{i}]")
        if one is None:
            without += 1
        else:
            evidence.append(one)
    return tuple(evidence), without


def _submitted_item(item: Any, *, where: str) -> AuditEvidence | None:
    """One submitted evidence item, ``None`` when it names no URL."""
    if isinstance(item, str):
        raise UserError(
            f"{where}: evidence is a plain string (EvalAI format?); the audit needs a 'url' per evidence item"
        )
    if not isinstance(item, Mapping):
        raise UserError(f"{where}: evidence item must be an object, found {type(item).__name__}")
    url = item.get("url") or item.get("source_url")
    if not url:
        return None
    if not isinstance(url, str):  # `averitec score` accepts it (eval.py never reads urls): audited as an
        url = json.dumps(url)  # invalid URL, listed under invalid_urls, rather than refused
    metadata = dict(item.get("metadata") or {}) if isinstance(item.get("metadata"), Mapping) else item.get("metadata")
    if isinstance(metadata, dict):
        metadata.update({k: v for k, v in item.items() if str(k).lower() in PUBLISHED_KEYS})
    return _evidence(url, cached=item.get("cached_source_url"), metadata=metadata,
                     html=item.get("scraped_text") or item.get("html"), where=where)


def _reference(claim_id: int, references: Sequence[AVeriTeCClaim] | None, *, where: str) -> AVeriTeCClaim | None:
    """The gold claim a submission item's ``claim_id`` points at (``None`` without references)."""
    if references is None:
        return None
    if not 0 <= claim_id < len(references):
        raise UserError(f"{where}: claim_id {claim_id} is not in the references ({len(references)} claims)")
    return references[claim_id]


def _claim_from_submission(
    obj: Mapping[str, Any], *, position: int, where: str, references: Sequence[AVeriTeCClaim] | None
) -> AuditClaim:
    evidence, without = _submitted_evidence(obj.get("evidence"), where=where)
    claim_id = _claim_id(obj, where=where)
    gold = _reference(claim_id, references, where=where)
    claim_text = obj.get("claim") if isinstance(obj.get("claim"), str) else (gold.claim if gold else "")
    return AuditClaim(
        claim_index=claim_id,
        claim=claim_text or "",
        claim_date_raw=gold.claim_date if gold else None,
        claim_date=gold.date if gold else None,
        fact_checking_article=parse_url(gold.fact_checking_article) if gold and gold.fact_checking_article else None,
        evidence=evidence,
        n_without_url=without,
    )


#: Parsed gold files by (path, mtime, size): a long-running process (the leaderboard's
#: worker audits every submission against one gold file) parses each once. Frozen records.
_GOLD_CACHE: dict[tuple[str, int, int], GoldFile] = {}


def load_gold(path: str | os.PathLike[str]) -> GoldFile:
    """AVeriTeC gold claims from ``path`` (parsed once per file version and process)."""
    try:
        st = os.stat(path)
        key: tuple[str, int, int] | None = (os.path.realpath(path), st.st_mtime_ns, st.st_size)
    except OSError:
        key = None  # iter_records says what is wrong with the path
    if key is not None and key in _GOLD_CACHE:
        return _GOLD_CACHE[key]
    gold = GoldFile(tuple(
        AVeriTeCClaim.from_dict(loc.value, where=loc.where, claim_id=loc.index) for loc in iter_records(path)
    ))
    if key is not None:
        if len(_GOLD_CACHE) >= 8:
            _GOLD_CACHE.pop(next(iter(_GOLD_CACHE)))
        _GOLD_CACHE[key] = gold
    return gold


def _split_name(path: str | os.PathLike[str]) -> str:
    return os.path.splitext(os.path.basename(os.fspath(path)))[0]


def read_audit_input(
    path: str | os.PathLike[str], *, references: Sequence[str | os.PathLike[str]] = ()
) -> AuditInput:
    """Read a gold file or a submission (plus optional gold ``references``).

    A submission's claims take their dates and fact-checking articles from the first
    ``references`` file, aligned on ``claim_id``.

    Raises:
        UserError: for malformed files or a format the audit cannot use.

    Example:
        >>> import json, pathlib, tempfile
        >>> d = pathlib.Path(tempfile.mkdtemp())
        >>> _ = (d / "dev.json").write_text(json.dumps([{"claim": "x", "claim_date": "31-10-2020",
        ...     "questions": [{"question": "Q?", "answers": [{"answer": "A", "source_url": "https://a.org/"}]}]}]))
        >>> _ = (d / "pred.json").write_text(json.dumps([{"claim_id": 0, "claim": "x", "pred_label": "Refuted",
        ...     "evidence": [{"question": "Q?", "answer": "A", "url": "https://b.org/2021/01/05/y"}]}]))
        >>> audit = read_audit_input(d / "pred.json", references=[d / "dev.json"])
        >>> audit.kind, audit.claims[0].claim_date.isoformat(), sorted(audit.splits)
        ('submission', '2020-10-31', ['dev'])
    """
    ref_files = {_split_name(p): load_gold(p) for p in references}
    splits = {name: gold_file.claims for name, gold_file in ref_files.items()}
    items = list(iter_records(path))
    kind = _file_kind(items)
    if kind == "gold":
        gold = tuple(AVeriTeCClaim.from_dict(loc.value, where=loc.where, claim_id=loc.index) for loc in items)
        claims = tuple(claim_from_gold(g, index=i, where=items[i].where) for i, g in enumerate(gold))
        splits.setdefault(_split_name(path), gold)
    else:
        claims = _submission_claims(items, references=next(iter(splits.values()), None))
    fact_checkers, ranges, overlaps = _split_checks(ref_files, splits)
    return AuditInput(path=str(path), kind=kind, claims=claims, splits=splits, split_fact_checkers=fact_checkers,
                      split_ranges=ranges, split_overlaps=overlaps)


def _file_kind(items: Sequence[Any]) -> str:
    """``gold`` (AVeriTeC claims with ``questions``; also an empty file) or ``submission``
    (2024 format, ``evidence``), as the first item says."""
    if not items:
        return "gold"
    first = items[0].value
    if not isinstance(first, Mapping):
        raise UserError(f"{items[0].where}: expected a JSON object, found {type(first).__name__}")
    if "questions" in first:
        return "gold"
    if "evidence" in first:
        return "submission"
    raise UserError(
        f"{items[0].where}: neither an AVeriTeC gold claim ('questions') nor a 2024 submission ('evidence')",
        hint="audit takes dev.json-style gold files or 2024-format predictions",
    )


def _submission_claims(items: Sequence[Any], *, references: Sequence[AVeriTeCClaim] | None) -> tuple[AuditClaim, ...]:
    """A submission's claims, aligned on ``claim_id`` with ``references`` (each claim once)."""
    claims: list[AuditClaim] = []
    first_seen: dict[int, str] = {}
    for loc in items:
        if not isinstance(loc.value, Mapping) or "evidence" not in loc.value:
            raise UserError(f"{loc.where}: expected a submission object with 'evidence'")
        claim = _claim_from_submission(loc.value, position=loc.index, where=loc.where, references=references)
        if claim.claim_index in first_seen:
            # two items aligned on one gold claim would be audited with each other's date
            raise UserError(
                f"{loc.where}: duplicate claim_id {claim.claim_index} (first at {first_seen[claim.claim_index]})",
                hint="each claim must appear once",
            )
        first_seen[claim.claim_index] = loc.where
        claims.append(claim)
    return tuple(claims)


def _split_checks(files: Mapping[str, GoldFile], splits: Mapping[str, Sequence[AVeriTeCClaim]]
                  ) -> tuple[DomainList, tuple[SplitRange, ...], tuple[SplitOverlap, ...]]:
    """The ``fact_checking_article`` domains, the claim-date ranges and the overlapping
    ranges of ``splits``: when they are one gold file's claims, that file's own (kept with
    it, :class:`GoldFile`; one split overlaps none), else built here."""
    if len(splits) == 1 and len(files) == 1:
        ((split, gold),) = files.items()
        return gold.fact_checkers, (gold.split_range(split),), ()
    fact_checkers = DomainList(article_domains(c for claims in splits.values() for c in claims), name=SPLIT_FACT_CHECKERS)
    ranges = split_ranges(splits)
    return fact_checkers, ranges, split_overlaps(splits, ranges=ranges)


__all__ = [
    "SPLIT_FACT_CHECKERS", "AuditClaim", "AuditEvidence", "AuditInput", "GoldFile", "article_domains", "claim_from_gold",
    "load_gold", "read_audit_input",
]
