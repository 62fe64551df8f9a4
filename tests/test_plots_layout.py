"""Plot layout (issue 12): the reliability legend never covers a bar; the risk–coverage
y-range is not set by the noisy risk of the first few claims."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from averitec_tools.metrics import plots
from averitec_tools.metrics.ece import reliability_diagram
from averitec_tools.metrics.selective import risk_coverage_curve


@pytest.fixture()
def kept_figures(monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    import matplotlib.pyplot as plt

    figures: list[Any] = []
    monkeypatch.setattr(plt, "close", figures.append)
    return figures


def test_reliability_legend_is_outside_the_axes(tmp_path: Path, kept_figures: list[Any]) -> None:
    conf = [0.25 + 0.7 * i / 99 for i in range(100)]
    correct = [1] * 100  # every bar reaches 1.0: anything inside the axes would cover one
    path = plots.plot_reliability_diagram(
        diagram=reliability_diagram(confidences=conf, correct=correct, n_bins=15), path=tmp_path / "r.png"
    )
    assert path.read_bytes()[:4] == b"\x89PNG"
    (fig,) = kept_figures
    ax = fig.axes[0]
    renderer = fig.canvas.get_renderer()
    axes_box = ax.get_window_extent(renderer)
    assert ax.get_legend().get_window_extent(renderer).x0 >= axes_box.x1
    for text in ax.texts:
        assert text.get_window_extent(renderer).x0 >= axes_box.x1


def test_risk_coverage_ignores_the_first_claims_for_the_y_range(tmp_path: Path, kept_figures: list[Any]) -> None:
    n = 200
    conf = [1.0 - i / n for i in range(n)]
    correct = [0] + [1] * 160 + [0] * 39  # the most confident claim is wrong: risk 1.0 at coverage 1/n
    curve = risk_coverage_curve(confidences=conf, correct=correct)
    plots.plot_risk_coverage(curve=curve, path=tmp_path / "rc.png")
    (fig,) = kept_figures
    ax = fig.axes[0]
    assert ax.get_ylim()[1] < 0.5  # set by the stable part (max risk 0.2), not by the 1.0 spike
    labels = [t.get_text() for t in ax.get_legend().get_texts()]
    assert any(label.startswith("first 10 claims") for label in labels)
