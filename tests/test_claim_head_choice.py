"""The one grid-choice rule of both baselines' claim heads (``baselines/_run/claim_head.py``
``ChoiceRule``), with each baseline's own setting: R2VC compares unrounded means (accuracy
slack 1e-12), the AVeriTeC baseline its table's figures rounded to 4 decimals. Hand-made rows."""

from __future__ import annotations

from averitec_tools.baselines._run.claim_head import ChoiceRule
from averitec_tools.baselines.averitec.training import head_fit
from averitec_tools.baselines.r2vc.offline import head as r2vc_head

# Row 1's macro-F1 beats row 0's only past the 4th decimal; row 2 is the most accurate, row 3 is below
# any probe at 0.6; row 4's accuracy falls short of 0.6 by float noise only.
ROWS = [{"accuracy": 0.70, "macro_f1": 0.41231}, {"accuracy": 0.65, "macro_f1": 0.41234},
        {"accuracy": 0.75, "macro_f1": 0.30}, {"accuracy": 0.40, "macro_f1": 0.90}]


def test_each_baseline_keeps_its_rule() -> None:
    assert ChoiceRule(decimals=None, tolerance=1e-12) == r2vc_head.CHOICE
    assert ChoiceRule(decimals=4, tolerance=0.0) == head_fit.CHOICE


def test_the_best_macro_f1_among_settings_as_accurate_as_the_probe() -> None:
    assert r2vc_head.CHOICE.choose(ROWS, probe_accuracy=0.6) == (1, True)  # 0.41234 > 0.41231
    assert head_fit.CHOICE.choose(ROWS, probe_accuracy=0.6) == (0, True)  # both 0.4123: the first in grid order
    assert r2vc_head.CHOICE.choose(ROWS, probe_accuracy=0.68) == head_fit.CHOICE.choose(ROWS, probe_accuracy=0.68) == (
        0, True)


def test_none_as_accurate_as_the_probe_chooses_the_most_accurate() -> None:
    for rule in (r2vc_head.CHOICE, head_fit.CHOICE):
        assert rule.choose(ROWS, probe_accuracy=0.8) == (2, False)


def test_accuracy_equal_to_the_probe_but_for_float_noise() -> None:
    rows = [{"accuracy": 0.3 - 1e-15, "macro_f1": 0.5}, {"accuracy": 0.9, "macro_f1": 0.1}]
    assert r2vc_head.CHOICE.choose(rows, probe_accuracy=0.3) == (0, True)  # the 1e-12 slack keeps it
    assert head_fit.CHOICE.choose(rows, probe_accuracy=0.3) == (0, True)  # rounded to 0.3 first
    assert ChoiceRule().choose(rows, probe_accuracy=0.3) == (1, True)  # neither: it falls short
