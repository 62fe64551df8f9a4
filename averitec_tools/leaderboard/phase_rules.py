"""A phase's scoring options and organiser rules: profile options (the LLM judge's URL,
model, ...), what a failed judge request means, and the audit rules that reject a
submission.

Competition YAML (one phase)::

    - name: fever8-dev
      gold: ${AVERITEC_DATA_DIR}/averitec/dev.json
      profiles: [fever8]
      primary_metric: averitec_score_ev2r@0.5
      options:                          # per profile; the profile's declared options
        fever8: {judge_url: "${JUDGE_URL}", judge_model: llama-3.3-70b, judge_retries: 2}
      judge_failures: unscored          # unscored (default) | zero (the official scorer's "failure is 0")
      reject_own_factcheck: true        # refuse evidence that is the claim's own fact-checking article
      reject_published_after_claim: false

``judge_failures`` applies to every profile of the phase that scores with an LLM judge
(declares ``judge_unscored``), for failures on the judge's side only: ``unscored`` leaves
a claim whose judge request failed after its retries unscored (excluded from the means,
counted per row, the row incomplete and unranked until it is scored again); ``zero``
scores it 0, as the organisers' FEVER-8 code. What the submission's content causes -- a
refusal for its length, an unparseable reply -- is 0 either way
(:mod:`averitec_tools.metrics.judge_policy`). It is in the board's signature
(``judge-failures:``). The failure-mode, dry-run and snapshot options are set by the
board, not by ``options``; the judge's input bound (``judge_max_items``,
``judge_item_chars``) defaults to the board's (:mod:`~averitec_tools.leaderboard.judging`).

Example:
    >>> opts = profile_options({"fever8": {"judge_model": "m", "judge_retries": 2}}, profiles=("fever8",), where="c.yaml")
    >>> dict(opts[0][1])
    {'judge_model': 'm', 'judge_retries': 2}
    >>> score_options(profile="fever8", options=opts, judge_failures="zero")["official_failure_mode"]
    True
    >>> uses_judge(("averitec2024",)), uses_judge(("averitec2024", "fever8"))
    (False, True)
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from averitec_tools.errors import UserError

#: ``judge_failures`` values: what a failed or unparseable judge request means on the board.
JUDGE_FAILURE_MODES = ("unscored", "zero")
#: Options the board sets itself (a phase may not).
BOARD_OPTIONS = frozenset({"judge_unscored", "official_failure_mode", "dry_run", "allow_download", "judge_snapshot",
                           "max_images_per_claim", "max_image_bytes", "max_image_pixels"})
#: Audit rules an organiser may set on a phase: the rule key -> the audit rule it refuses on.
REJECT_RULES: dict[str, str] = {
    "reject_own_factcheck": "own_fact_check_article",
    "reject_published_after_claim": "published_after_claim",
}
ProfileOptions = tuple[tuple[str, tuple[tuple[str, Any], ...]], ...]


def uses_judge(profiles: Sequence[str]) -> bool:
    """Whether any of ``profiles`` scores with an LLM judge (declares ``judge_unscored``)."""
    from averitec_tools.scoring.profiles import get_profile

    return any("judge_unscored" in get_profile(p).OPTIONS for p in profiles)


def profile_options(raw: Mapping[str, Mapping[str, Any]] | None, *, profiles: Sequence[str], where: str,
                    expand: Any = None) -> ProfileOptions:
    """The phase's ``options`` checked against each profile's declared options (unknown
    names, wrong types and the options the board sets are errors naming the key);
    ``expand(value, where=...)`` replaces ``${VAR}`` in strings, before the check."""
    from averitec_tools.scoring.profiles import get_profile
    from averitec_tools.scoring.profiles.base import check_options

    out = []
    for profile, values in (raw or {}).items():
        w = f"{where}: options: {profile}"
        if profile not in profiles:
            raise UserError(f"{w}: not a profile of this phase (its profiles: {', '.join(profiles)})")
        declared = get_profile(profile).OPTIONS
        board = sorted(set(values) & BOARD_OPTIONS)
        if board:
            raise UserError(f"{w}: {', '.join(board)} is set by the board (judge_failures: unscored | zero; image "
                            "bounds: the competition's validation section)")
        checked = {name: expand(value, where=f"{w}: {name}") if expand is not None and isinstance(value, str) else value
                   for name, value in values.items()}
        try:
            check_options(profile, checked, declared)
        except UserError as exc:
            raise UserError(f"{w}: {exc.message}", hint=exc.hint) from None
        out.append((profile, tuple(checked.items())))
    return tuple(out)


#: Image bounds of a competition's ``validation`` the board passes to a profile that checks images (averimatec).
IMAGE_LIMITS = ("max_images_per_claim", "max_image_bytes", "max_image_pixels")


def score_options(*, profile: str, options: ProfileOptions, judge_failures: str, limits: Any = None) -> dict[str, Any]:
    """The keyword options the board scores ``profile`` with: the phase's, the board's input
    bound for a judged profile, its judge-failure mode, and (``limits``: the competition's
    ``validation``) the image bounds of a profile that checks images.

    Example:
        >>> from averitec_tools.leaderboard.limits import SubmissionLimits
        >>> score_options(profile="averimatec", options=(), judge_failures="unscored",
        ...               limits=SubmissionLimits(max_image_pixels=1000))["max_image_pixels"]
        1000
    """
    from averitec_tools.leaderboard.judging import bounded_options
    from averitec_tools.scoring.profiles import get_profile

    declared = get_profile(profile).OPTIONS
    out = bounded_options(profile, next((dict(v) for p, v in options if p == profile), {}))
    if "judge_unscored" in declared:
        out["judge_unscored"] = judge_failures == "unscored"
        out["official_failure_mode"] = judge_failures == "zero"
    for name in IMAGE_LIMITS:
        if name in declared and getattr(limits, name, None) is not None:
            out[name] = int(getattr(limits, name))
    return out


__all__ = ["REJECT_RULES", "profile_options", "score_options", "uses_judge"]
