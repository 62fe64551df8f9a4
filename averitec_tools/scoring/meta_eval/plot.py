"""One picture of a meta-evaluation: scorers × human dimensions, Spearman ρ with its interval.

One panel per dimension, one horizontal bar per scorer (LLM scorers hatched), the claim-
clustered bootstrap interval as an error bar and a line at 0, so which scorer tracks
people on which dimension reads at a glance. Written atomically (matplotlib, Agg).

    >>> import tempfile, pathlib
    >>> rows = [{"spec": "bleu", "llm": False, "dimension": "coherence", "spearman": 0.2,
    ...          "ci": {"spearman": {"low": 0.1, "high": 0.3}}}]
    >>> plot_correlations(rows=rows, path=pathlib.Path(tempfile.mkdtemp()) / "m.png").suffix
    '.png'
"""

from __future__ import annotations

import math
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from averitec_tools.jsonio import atomic_writer


def plot_correlations(*, rows: Sequence[dict[str, Any]], path: str | os.PathLike[str],
                      statistic: str = "spearman", title: str = "") -> Path:
    """Write the PNG of ``rows`` (report ``scorers`` rows) to ``path``; returns it."""
    import matplotlib

    matplotlib.use("Agg", force=True)
    import matplotlib.pyplot as plt

    dims = list(dict.fromkeys(r["dimension"] for r in rows))
    specs = list(dict.fromkeys(r["spec"] for r in rows))
    by = {(r["spec"], r["dimension"]): r for r in rows}
    fig, axes = plt.subplots(1, len(dims), figsize=(2.6 * len(dims) + 1.8, 0.42 * len(specs) + 1.4),
                             sharey=True, squeeze=False)
    for ax, dim in zip(axes[0], dims, strict=True):
        for y, spec in enumerate(specs):
            r = by.get((spec, dim))
            if r is None or r[statistic] is None or math.isnan(r[statistic]):
                continue
            ci = r["ci"][statistic]
            v = r[statistic]
            ax.barh(y, v, color="#c44e52" if r["llm"] else "#4c72b0", hatch="//" if r["llm"] else None, alpha=0.85)
            if ci.get("low") is not None and ci.get("high") is not None:  # a percentile CI can miss the estimate
                ax.errorbar(v, y, xerr=[[max(0.0, v - ci["low"])], [max(0.0, ci["high"] - v)]], fmt="none",
                            ecolor="black", capsize=2, lw=1)
        ax.axvline(0, color="grey", lw=0.8)
        ax.set_title(dim.replace("_", " "), fontsize=9)
        ax.set_xlim(-0.5, 0.8)
        ax.tick_params(labelsize=8)
    axes[0][0].set_yticks(range(len(specs)))
    axes[0][0].set_yticklabels(specs, fontsize=8)
    axes[0][0].invert_yaxis()
    fig.suptitle(title or f"{statistic} with people (bars) and 95% claim-clustered bootstrap CI", fontsize=10)
    fig.tight_layout()
    target = Path(path)
    with atomic_writer(target, "wb") as fh:
        fig.savefig(fh, format="png", dpi=110, bbox_inches="tight")
    plt.close(fig)
    return target


__all__ = ["plot_correlations"]
