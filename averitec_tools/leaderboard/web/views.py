"""What the pages show: visible metrics of one submission, breakdowns, plots.

Gold labels and claim metadata (the per-claim ``gold`` and ``types``, and the
breakdowns by them) are shown only once the phase is revealed, and never on a phase
marked ``gold_private`` (:func:`gold_visible`); before that every per-claim row is
:func:`without_gold`.

Per-claim *scores* tell the gold too (a claim's ``label_accuracy`` with the team's own
label gives the gold label away in three uploads, issue 39), so while the gold is not
shown they go only to the submitting team -- and only where the phase allows it
(``per_claim_feedback``) -- and the organisers, never anonymously
(:func:`per_claim_visible`): the per-claim list and pages, ``scores.json`` and the
calibration plots (drawn from per-claim correctness) answer 403 to anyone else.
"""

from __future__ import annotations

import io
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from averitec_tools.leaderboard.competition import Phase
from averitec_tools.leaderboard.ranking import claim_mask
from averitec_tools.leaderboard.web.site import Site, parse_id

if TYPE_CHECKING:
    from fastapi import Request
    from fastapi.responses import Response


def visible_claims(phase: Phase, per_claim: Sequence[Mapping[str, Any]], *, revealed: bool) -> list[Mapping[str, Any]] | None:
    mask = claim_mask(phase, len(per_claim), revealed=revealed)
    if mask is None:
        return None
    return [c for c, keep in zip(per_claim, mask, strict=True) if keep]


#: Per-claim keys that describe the gold side, not the submission.
GOLD_KEYS = ("gold", "types")


def gold_visible(phase: Phase, *, revealed: bool) -> bool:
    """Whether pages may show the phase's gold labels and claim types.

    Example:
        >>> from averitec_tools.leaderboard.competition import Phase
        >>> dev = Phase(name="dev", gold="g.json", profiles=("averitec2024",), primary_metric="label_accuracy")
        >>> gold_visible(dev, revealed=False), gold_visible(dev, revealed=True)
        (False, True)
        >>> from dataclasses import replace
        >>> gold_visible(replace(dev, gold_private=True), revealed=True)
        False
    """
    return revealed and not phase.gold_private


def per_claim_visible(phase: Phase, *, revealed: bool, own: bool, organiser: bool) -> bool:
    """Whether a viewer may see a submission's per-claim scores: anyone once the gold is
    shown; before that its team (if ``per_claim_feedback``) and the organisers.

    Example:
        >>> from averitec_tools.leaderboard.competition import Phase
        >>> dev = Phase(name="dev", gold="g.json", profiles=("averitec2024",), primary_metric="label_accuracy")
        >>> per_claim_visible(dev, revealed=False, own=False, organiser=False), per_claim_visible(dev, revealed=False, own=True, organiser=False)
        (False, True)
        >>> from dataclasses import replace
        >>> per_claim_visible(replace(dev, per_claim_feedback=False), revealed=False, own=True, organiser=False)
        False
    """
    if gold_visible(phase, revealed=revealed) or organiser:
        return True
    return own and phase.per_claim_feedback


#: Why per-claim scores are refused (the same words on every route).
PER_CLAIM_HIDDEN = ("per-claim scores of this phase are shown only to the submitting team (where the phase allows it) "
                    "and the organisers until its gold is revealed")


def without_gold(claims: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """The per-claim rows without :data:`GOLD_KEYS`.

    Example:
        >>> without_gold([{"id": 0, "gold": "Refuted", "types": ["Event"], "pred": "Supported", "values": {}}])
        [{'id': 0, 'pred': 'Supported', 'values': {}}]
    """
    return [{k: v for k, v in c.items() if k not in GOLD_KEYS} for c in claims]


def mean_scored(values: Sequence[float | None]) -> float:
    """The mean of the scored values (an unscored claim's ``None`` left out; NaN: none).

    Example:
        >>> mean_scored([1.0, None, 0.0]), mean_scored([None])
        (0.5, nan)
    """
    scored = [v for v in values if v is not None]
    return float(np.mean(scored)) if scored else float("nan")


def breakdown(claims: Sequence[Mapping[str, Any]], *, key: str, metrics: Sequence[str]) -> list[dict[str, Any]]:
    """Mean of each metric per gold label (``key="gold"``) or per claim type (``"types"``)."""
    groups: dict[str, list[Mapping[str, Any]]] = {}
    for c in claims:
        names = c.get(key) or []
        for name in [names] if isinstance(names, str) else names:
            groups.setdefault(str(name), []).append(c)
    rows = []
    for name in sorted(groups):
        members = groups[name]
        row: dict[str, Any] = {"group": name, "n": len(members)}
        for m in metrics:
            row[m] = mean_scored([c["values"][m] for c in members if m in c["values"]])
        rows.append(row)
    return rows


def has_confidences(claims: Sequence[Mapping[str, Any]]) -> bool:
    return bool(claims) and all(c.get("confidence") is not None for c in claims) and all("label_accuracy" in c["values"] for c in claims)


def plot_png(kind: str, claims: Sequence[Mapping[str, Any]]) -> bytes:
    """A reliability diagram (``kind="reliability"``) or risk-coverage plot as PNG bytes."""
    import tempfile
    from pathlib import Path

    conf = [float(c["confidence"]) for c in claims]
    correct = [float(c["values"]["label_accuracy"]) for c in claims]
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "plot.png"
        if kind == "reliability":
            from averitec_tools.metrics.ece import reliability_diagram
            from averitec_tools.metrics.plots import plot_reliability_diagram

            plot_reliability_diagram(diagram=reliability_diagram(confidences=conf, correct=correct), path=path)
        else:
            from averitec_tools.metrics.plots import plot_risk_coverage
            from averitec_tools.metrics.selective import risk_coverage_curve

            plot_risk_coverage(curve=risk_coverage_curve(confidences=conf, correct=correct), path=path)
        return io.BytesIO(path.read_bytes()).getvalue()


def submission_view(site: Site, request: Request, raw_id: str) -> tuple[dict[str, Any] | None, Response | None]:
    """What a submission's page, JSON and plots show, or the refusal."""
    store = site.store
    sid = parse_id(raw_id)
    row = store.submission(sid) if sid is not None else None
    if row is None:
        return None, site.error(request, f"no submission {raw_id[:30]}", 404)
    if not site.may_see(request, row):
        return None, site.error(request, "this submission is visible to its team and the organisers until it is on the board "
                                "(teams: sign in on the Submit page)", 403)
    phase = site.comp.phase(row["phase"])
    results = store.results([row["id"]]).get(row["id"], [])
    current = next((r for r in results if r["profile"] == phase.profile), None)
    revealed = store.revealed(phase.name)
    claims: Sequence[Mapping[str, Any]] | None = (
        visible_claims(phase, current["per_claim"], revealed=revealed) if current else None)
    gold = gold_visible(phase, revealed=revealed)
    if claims is not None and not gold:
        claims = without_gold(claims)
    organiser = site.is_admin(request)
    per_claim = per_claim_visible(phase, revealed=revealed, own=site.team_of(request) == row["team"], organiser=organiser)
    return {"row": row, "phase": phase, "results": results, "current": current, "claims": claims, "revealed": revealed,
            "gold": gold, "per_claim": per_claim, "organiser": organiser}, None
