"""What a phase declares that ``init`` checks: its one ranking metric and shown columns
(per-claim metrics the ranking profile declares, so that claims can be resampled), and its
deadline (an ISO 8601 time, stored as naive UTC)."""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping
from typing import Any

from averitec_tools.errors import UserError


def declared_metrics(profile: str, options: Mapping[str, Any] | None = None) -> tuple[str, ...]:
    """The per-claim metrics ``profile`` declares; a judged profile's threshold key follows its
    threshold options (``averitec_score_ev2r@0.46`` under ``ev2r_preset: evalai-2025-01-debug``).

    Example:
        >>> "averitec_score_ev2r@0.46" in declared_metrics("fever8", {"ev2r_threshold": 0.46})
        True
    """
    from averitec_tools.scoring.profiles import get_profile

    declared = tuple(get_profile(profile).per_claim_metrics)
    opts = dict(options or {})
    if "ev2r_preset" in get_profile(profile).OPTIONS and opts.keys() & {"ev2r_preset", "ev2r_threshold", "ev2r_comparison"}:
        from averitec_tools.metrics.averitec_score import threshold_key
        from averitec_tools.metrics.ev2r import DEFAULT_PRESET, threshold_rule

        rule = threshold_rule(preset=opts.get("ev2r_preset") or DEFAULT_PRESET, threshold=opts.get("ev2r_threshold"),
                              comparison=opts.get("ev2r_comparison"))
        declared = tuple(k for k in declared if not k.startswith("averitec_score_ev2r@")) + (
            f"averitec_score_ev2r@{threshold_key(rule.threshold)}",)
    return declared


def check_metrics(primary: str, columns: tuple[str, ...], *, profile: str, options: Mapping[str, Any], where: str) -> None:
    """The one ranking metric (and every shown column) must be a per-claim metric the
    ranking profile declares, so the board can resample claims (close names otherwise)."""
    from averitec_tools.registry import Registry

    declared = declared_metrics(profile, options)
    if not declared:
        raise UserError(f"{where}: profile {profile!r} declares no per-claim metrics, so it cannot rank a board")
    known = Registry.of_names(f"per-claim metric of profile {profile!r}", declared)
    for key, name in (("primary_metric", primary), *(("columns", c) for c in columns)):
        if name not in declared:
            raise UserError(f"{where}: {key}: {known.unknown_message(name)}")


def parse_deadline(text: str | None, *, where: str) -> dt.datetime | None:
    """A phase's ``deadline`` as naive UTC (an ISO 8601 time; without an offset it is UTC).

    Example:
        >>> parse_deadline("2026-05-01T14:00:00+02:00", where="c.yaml")
        datetime.datetime(2026, 5, 1, 12, 0)
    """
    if text is None:
        return None
    try:
        when = dt.datetime.fromisoformat(text.strip().replace("Z", "+00:00"))
    except ValueError:
        raise UserError(f"{where}: deadline: {text[:40]!r} is not an ISO 8601 time (e.g. 2026-05-01T12:00:00Z)") from None
    return when.astimezone(dt.timezone.utc).replace(tzinfo=None) if when.tzinfo else when


def count_gold_claims(path: str) -> int | None:
    """How many claims a phase's gold file holds (a FEVER-8 solution CSV: its ``gold`` rows);
    ``None`` when it cannot be read now (scoring reports that, not ``init``).

    Example:
        >>> import json, pathlib, tempfile
        >>> p = pathlib.Path(tempfile.mkdtemp()) / "g.json"
        >>> _ = p.write_text(json.dumps([{"claim": "a"}, {"claim": "b"}]))
        >>> count_gold_claims(str(p)), count_gold_claims("/no/such/file.json")
        (2, None)
    """
    from averitec_tools.scoring.formats import is_fever8_csv

    try:
        if path.lower().endswith(".csv") or is_fever8_csv(path):
            from averitec_tools.scoring.fever8_csv import read_fever8_csv

            rows = read_fever8_csv(path)
            return sum(1 for r in rows if r.get("split", "gold") == "gold") if rows and "split" in rows[0] else len(rows)
        from averitec_tools.jsonio import iter_records

        return sum(1 for _ in iter_records(path))
    except (UserError, OSError):
        return None


__all__ = ["check_metrics", "count_gold_claims", "declared_metrics", "parse_deadline"]
