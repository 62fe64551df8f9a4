"""Split-level temporal checks: claim-date ranges per split and overlaps between them.

AVeriTeC's splits are temporal (train claims before dev claims before test claims);
a claim-date range that overlaps another split's breaks that design.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from averitec_tools.records.averitec import AVeriTeCClaim


@dataclass(frozen=True)
class SplitRange:
    """Claim-date range of one split."""

    split: str
    n_claims: int
    n_dated: int
    first: dt.date | None
    last: dt.date | None
    unparseable: tuple[tuple[int, str], ...]  # (claim_index, raw claim_date)

    def to_json(self) -> dict[str, Any]:
        return {
            "split": self.split,
            "n_claims": self.n_claims,
            "n_dated": self.n_dated,
            "first": self.first.isoformat() if self.first else None,
            "last": self.last.isoformat() if self.last else None,
            "n_unparseable_dates": len(self.unparseable),
        }


@dataclass(frozen=True)
class SplitOverlap:
    """Two splits whose claim-date ranges intersect, and how many claims fall inside."""

    a: str
    b: str
    start: dt.date
    end: dt.date
    n_claims_in_overlap: int

    def to_json(self) -> dict[str, Any]:
        return {
            "splits": [self.a, self.b],
            "start": self.start.isoformat(),
            "end": self.end.isoformat(),
            "n_claims_in_overlap": self.n_claims_in_overlap,
        }


def split_ranges(splits: Mapping[str, Sequence[AVeriTeCClaim]]) -> tuple[SplitRange, ...]:
    """Claim-date range of each split.

    Example:
        >>> c = AVeriTeCClaim(claim="x", claim_date="31-10-2020")
        >>> split_ranges({"dev": [c]})[0].last.isoformat()
        '2020-10-31'
    """
    out = []
    for name, claims in splits.items():
        dates = []
        bad = []
        for i, c in enumerate(claims):
            d = c.date
            if d is not None:
                dates.append(d)
            elif c.claim_date:
                bad.append((i, c.claim_date))
        out.append(
            SplitRange(name, len(claims), len(dates), min(dates) if dates else None, max(dates) if dates else None, tuple(bad))
        )
    return tuple(out)


def split_overlaps(
    splits: Mapping[str, Sequence[AVeriTeCClaim]], *, ranges: Sequence[SplitRange] | None = None
) -> tuple[SplitOverlap, ...]:
    """Every pair of splits with intersecting claim-date ranges (``ranges``: the splits'
    :func:`split_ranges` where the caller has them already).

    Example:
        >>> a = [AVeriTeCClaim(claim="x", claim_date="01-01-2020"), AVeriTeCClaim(claim="y", claim_date="01-03-2020")]
        >>> b = [AVeriTeCClaim(claim="z", claim_date="01-02-2020")]
        >>> o = split_overlaps({"train": a, "dev": b})[0]
        >>> (o.start.isoformat(), o.end.isoformat(), o.n_claims_in_overlap)
        ('2020-02-01', '2020-02-01', 1)
    """
    by_split = {r.split: r for r in (split_ranges(splits) if ranges is None else ranges)}
    names = list(splits)
    out = []
    for i, a in enumerate(names):
        for b in names[i + 1 :]:
            ra, rb = by_split[a], by_split[b]
            if ra.first is None or ra.last is None or rb.first is None or rb.last is None:
                continue
            start = max(ra.first, rb.first)
            end = min(ra.last, rb.last)
            if start > end:
                continue
            inside = 0
            for name in (a, b):
                for c in splits[name]:
                    d = c.date
                    if d is not None and start <= d <= end:
                        inside += 1
            out.append(SplitOverlap(a, b, start, end, inside))
    return tuple(out)


__all__ = ["SplitOverlap", "SplitRange", "split_overlaps", "split_ranges"]
