"""Agreement between measurements of the same claims: two raters, or k repeats of one.

Used by ``averitec judge-agreement`` to put error bars on an LLM judge: Cohen's kappa and
the 2x2 table of two judges' pass/fail verdicts, Pearson and Spearman correlation of their
per-claim scores (SciPy), the spread of k repeat runs, and the items whose verdict flips.
Undefined statistics (kappa when both raters give one constant verdict, a correlation with
a constant input) are ``None``, never NaN.

Example:
    >>> a = [True, True, False, False, True]
    >>> b = [True, False, False, False, True]
    >>> t = confusion(a, b)
    >>> (t.both_pass, t.only_a, t.only_b, t.both_fail), round(cohen_kappa(a, b), 4)
    ((2, 1, 0, 2), 0.6154)
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Sequence
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Confusion:
    """Two raters' pass/fail verdicts on the same items, counted."""

    both_pass: int
    only_a: int
    only_b: int
    both_fail: int

    @property
    def n(self) -> int:
        return self.both_pass + self.only_a + self.only_b + self.both_fail

    @property
    def observed_agreement(self) -> float:
        """Share of items with the same verdict (0 for no items)."""
        return (self.both_pass + self.both_fail) / self.n if self.n else 0.0

    def as_dict(self) -> dict[str, int]:
        return {"both_pass": self.both_pass, "only_a": self.only_a, "only_b": self.only_b, "both_fail": self.both_fail}


def confusion(a: Sequence[bool], b: Sequence[bool]) -> Confusion:
    """The 2x2 table of verdicts ``a`` and ``b`` (equal length)."""
    if len(a) != len(b):
        raise ValueError(f"verdict lists differ in length: {len(a)} vs {len(b)}")
    pairs = list(zip(map(bool, a), map(bool, b), strict=True))
    return Confusion(
        both_pass=sum(x and y for x, y in pairs),
        only_a=sum(x and not y for x, y in pairs),
        only_b=sum(y and not x for x, y in pairs),
        both_fail=sum(not x and not y for x, y in pairs),
    )


def cohen_kappa(a: Sequence[bool], b: Sequence[bool]) -> float | None:
    """Cohen's kappa of two raters' binary verdicts; ``None`` when undefined (chance agreement 1).

    Example:
        >>> cohen_kappa([True, False], [True, False]), cohen_kappa([True, True], [True, True])
        (1.0, None)
    """
    t = confusion(a, b)
    if t.n == 0:
        return None
    pa, pb = (t.both_pass + t.only_a) / t.n, (t.both_pass + t.only_b) / t.n
    expected = pa * pb + (1 - pa) * (1 - pb)
    if math.isclose(expected, 1.0, rel_tol=0.0, abs_tol=1e-15):
        return None
    return (t.observed_agreement - expected) / (1 - expected)


def _finite(value: Any) -> float | None:
    v = float(value)
    return v if math.isfinite(v) else None


def correlations(x: Sequence[float], y: Sequence[float]) -> dict[str, float | None]:
    """Pearson and Spearman correlation (with two-sided p-values) by :mod:`scipy.stats`.

    ``None`` where undefined: fewer than 2 items (3 for the p-values' sake, SciPy's rule)
    or a constant input.

    Example:
        >>> c = correlations([0.0, 0.5, 1.0, 0.25], [0.1, 0.4, 0.9, 0.3])
        >>> round(c["pearson"], 4), c["spearman"]
        (0.9893, 1.0)
    """
    none: dict[str, float | None] = {"pearson": None, "pearson_p": None, "spearman": None, "spearman_p": None}
    if len(x) != len(y):
        raise ValueError(f"score lists differ in length: {len(x)} vs {len(y)}")
    if len(x) < 3 or len(set(x)) < 2 or len(set(y)) < 2:
        return none
    from scipy import stats

    pearson = stats.pearsonr(x, y)
    spearman = stats.spearmanr(x, y)
    return {
        "pearson": _finite(pearson.statistic),
        "pearson_p": _finite(pearson.pvalue),
        "spearman": _finite(spearman.statistic),
        "spearman_p": _finite(spearman.pvalue),
    }


@dataclass(frozen=True)
class RepeatSpread:
    """How k repeat runs of one measurement differ.

    Attributes:
        k: Number of runs.
        run_means: The headline (mean over items) of each run.
        headline_std: Sample standard deviation (ddof 1) of ``run_means`` (0 for k = 1).
        item_std_mean: Mean over items of each item's sample standard deviation across runs.
        item_std_max: The largest of those.
    """

    k: int
    run_means: tuple[float, ...]
    headline_std: float
    item_std_mean: float
    item_std_max: float


def _std(values: Sequence[float]) -> float:
    if len(values) < 2:
        return 0.0
    mean = sum(values) / len(values)
    return math.sqrt(sum((v - mean) ** 2 for v in values) / (len(values) - 1))


def repeat_spread(runs: Sequence[Sequence[float]]) -> RepeatSpread:
    """Spread of ``runs`` (k runs x n items, the same items in the same order).

    Example:
        >>> s = repeat_spread([[1.0, 0.0, 0.5], [1.0, 1.0, 0.5]])
        >>> s.run_means, round(s.headline_std, 4), round(s.item_std_max, 4)
        ((0.5, 0.8333333333333334), 0.2357, 0.7071)
    """
    if not runs or any(len(r) != len(runs[0]) for r in runs):
        raise ValueError("runs must be non-empty and of equal length")
    n = len(runs[0])
    means = tuple(sum(r) / n if n else 0.0 for r in runs)
    item_std = [_std([r[i] for r in runs]) for i in range(n)]
    return RepeatSpread(
        k=len(runs),
        run_means=means,
        headline_std=_std(means),
        item_std_mean=sum(item_std) / n if n else 0.0,
        item_std_max=max(item_std, default=0.0),
    )


def flips(ids: Sequence[Hashable], verdicts: Sequence[Sequence[bool]]) -> list[Hashable]:
    """The ids whose verdict is not the same in every run (``verdicts``: runs x items).

    Example:
        >>> flips(["a", "b", "c"], [[True, False, True], [True, True, True]])
        ['b']
    """
    return [ids[i] for i in range(len(ids)) if len({bool(run[i]) for run in verdicts}) > 1]


__all__ = ["cohen_kappa", "confusion", "correlations", "flips", "repeat_spread"]
