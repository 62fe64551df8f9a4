"""Every docstring example of the R2VC modules runs (ELLIPSIS allowed; ``+SKIP`` for hub models)."""

from __future__ import annotations

import doctest
import importlib

import pytest

MODULES = [
    "averitec_tools.baselines.r2vc.build",
    "averitec_tools.baselines.r2vc.calibrator",
    "averitec_tools.baselines.r2vc.config",
    "averitec_tools.baselines.r2vc.decision",
    "averitec_tools.baselines.r2vc.decoding",
    "averitec_tools.baselines.r2vc.generator",
    "averitec_tools.baselines.r2vc.lm_loading",
    "averitec_tools.baselines.r2vc.nli",
    "averitec_tools.baselines.r2vc.parsing",
    "averitec_tools.baselines.r2vc.sampling",
    "averitec_tools.cli.baseline_r2vc_train",
    "averitec_tools.baselines.r2vc.retrieval.dense",
    "averitec_tools.baselines.r2vc.retrieval.pyserini_backend",
    "averitec_tools.baselines.r2vc.training.__main__",
    "averitec_tools.baselines.r2vc.nli_fallback",
    "averitec_tools.baselines.r2vc.offline",
    "averitec_tools.baselines.r2vc.offline_data",
    "averitec_tools.baselines.r2vc.output",
    "averitec_tools.baselines.r2vc.pipeline",
    "averitec_tools.baselines.r2vc.reporting",
    "averitec_tools.baselines.r2vc.sidecar",
    "averitec_tools.baselines.r2vc.verifier",
    "averitec_tools.baselines.r2vc.calibration_slice",
    "averitec_tools.baselines.r2vc.fever_wiki",
    "averitec_tools.baselines.r2vc.given_evidence",
    "averitec_tools.baselines.r2vc.manifest",
    "averitec_tools.baselines.r2vc.paper",
    "averitec_tools.baselines.r2vc.paper_recipe",
    "averitec_tools.baselines.r2vc.paper_table",
    "averitec_tools.baselines.r2vc.prompt",
    "averitec_tools.baselines.r2vc.reasoning",
    "averitec_tools.baselines.r2vc.training.data",
    "averitec_tools.baselines.r2vc.training.layout",
    "averitec_tools.baselines.r2vc.training.weights",
    "averitec_tools.cli.baseline_r2vc_paper",
]


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name: str) -> None:
    result = doctest.testmod(importlib.import_module(name), optionflags=doctest.ELLIPSIS)
    assert result.failed == 0
