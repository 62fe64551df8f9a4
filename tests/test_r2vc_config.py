"""R2VC configuration: Table G.1 defaults, YAML loading, ablation switches."""

from __future__ import annotations

import pytest

from averitec_tools.baselines.r2vc.config import (
    R2VCConfig,
    builtin_config,
    config_from_mapping,
    load_config,
    resolve_config,
)
from averitec_tools.errors import UserError


def test_table_g1_defaults() -> None:
    c = R2VCConfig()
    assert (c.retrieval.top_sparse, c.retrieval.top_dense, c.retrieval.top_m) == (200, 200, 24)
    assert c.retrieval.dense_model == "BAAI/bge-large-en-v1.5"
    assert c.retrieval.encode_batch_size == 1024
    assert (c.generator.k, c.generator.subset_size, c.generator.max_new_tokens) == (16, 16, 160)
    assert c.verifier.model == "cross-encoder/nli-deberta-v3-large"
    assert (c.verifier.top_k_coverage, c.verifier.t_ent, c.verifier.t_contr, c.verifier.delta) == (6, 0.6, 0.6, 0.1)
    assert (c.calibration.tau_cal, c.calibration.tau_ver) == (0.60, 0.55)
    assert (c.calibration.fit_size, c.calibration.fit_candidates, c.calibration.max_iter) == (10000, 12, 2000)


def test_yaml_overrides_and_name(tmp_path) -> None:
    p = tmp_path / "paper.yaml"
    p.write_text("retrieval:\n  corpus: /data/wiki\n  alpha: 0.3\ngenerator:\n  model: org/gen\n"
                 "calibration:\n  path: cal.json\n")
    c = load_config(p)
    assert c.name == "paper" and c.retrieval.alpha == 0.3 and c.generator.model == "org/gen"
    assert c.retrieval.top_m == 24  # untouched defaults stay


def test_unknown_keys_named_with_suggestions(tmp_path) -> None:
    p = tmp_path / "bad.yaml"
    p.write_text("retrieval:\n  top_mm: 3\n")
    with pytest.raises(UserError, match=r"bad.yaml: retrieval: unknown key 'top_mm' \(did you mean: top_m\b"):
        load_config(p)
    p.write_text("ablations:\n  nli_only: true\n")
    with pytest.raises(UserError, match=r"unknown key 'ablations' \(did you mean: ablation\b"):
        load_config(p)
    p.write_text("zzz: 1\n")
    with pytest.raises(UserError, match=r"unknown key 'zzz' \(known: ablation, calibration, generator, name"):
        load_config(p)


def test_type_errors_and_yaml_syntax(tmp_path) -> None:
    p = tmp_path / "t.yaml"
    p.write_text("generator:\n  k: sixteen\n")
    with pytest.raises(UserError, match=r"generator.k: expected int, found str 'sixteen'"):
        load_config(p)
    p.write_text("ablation:\n  nli_only: 1\n")
    with pytest.raises(UserError, match="expected bool"):
        load_config(p)
    p.write_text("verifier:\n  model: null\n")
    with pytest.raises(UserError, match="must not be null"):
        load_config(p)
    p.write_text("retrieval: [1, 2\n")
    with pytest.raises(UserError, match=r"t.yaml:\d+:\d+: invalid YAML"):
        load_config(p)
    p.write_text("- 1\n")
    with pytest.raises(UserError, match="mapping"):
        load_config(p)
    with pytest.raises(UserError, match="no such configuration file"):
        load_config(tmp_path / "missing.yaml")


def test_ablation_switches() -> None:
    base = {"generator": {"model": "gen-dpo", "sft_model": "gen-sft"}}

    def eff(**ab):
        return config_from_mapping(base | {"ablation": ab}, source="x").effective()

    assert eff(no_dpo=True).generator.model == "gen-sft"
    assert eff(single_candidate=True).generator.k == 1
    assert eff(nli_only=True).generator.model is None
    assert eff(sparse_only=True).retrieval.dense_model is None
    assert eff(dense_only=True).retrieval.sparse is None
    cal = config_from_mapping(base | {"calibration": {"path": "c.json"}, "ablation": {"no_calibration": True}},
                              source="x").effective()
    assert cal.calibration.path is None
    assert eff(no_verifier_selection=True).ablation.no_verifier_selection
    assert eff().generator.model == "gen-dpo"
    with pytest.raises(UserError, match="exclude each other"):
        eff(sparse_only=True, dense_only=True)
    with pytest.raises(UserError, match="sft_model"):
        config_from_mapping({"generator": {"model": "g"}, "ablation": {"no_dpo": True}}, source="x").effective()


def test_builtin_offline_and_base_key(tmp_path) -> None:
    off = resolve_config("offline-minilm")
    assert off.preset == "offline-minilm" and off.retrieval.dense_model == "minilm" and off.generator.model is None
    p = tmp_path / "small.yaml"
    p.write_text("base: offline-minilm\noffline:\n  train_claims: 40\n  exclude_own_evidence: true\n")
    c = resolve_config(str(p))
    assert c.preset == "offline-minilm" and c.offline.train_claims == 40 and c.name == "offline-minilm"
    assert c.offline.exclude_own_evidence and off.ablation.nli_only  # the NLI-only row, named
    from averitec_tools.baselines.r2vc.presets import preset_for

    assert preset_for(c).fits_own_models  # offline builds its own calibrator: nothing to name
    with pytest.raises(UserError, match="did you mean: offline-minilm"):
        resolve_config("offline-minlm")
    with pytest.raises(UserError, match="did you mean: offline-minilm"):
        builtin_config("ofline-minilm")


def test_fingerprint_changes_with_settings() -> None:
    a = R2VCConfig()
    b = config_from_mapping({"calibration": {"tau_cal": 0.7}}, source="x")
    assert a.fingerprint() == R2VCConfig().fingerprint() != b.fingerprint()


def test_verifier_choices_and_defaults() -> None:
    c = R2VCConfig()
    assert (c.verifier.score, c.verifier.pair_order, c.calibration.fit_on) == ("label-aware", "evidence-claim", "all")
    lit = config_from_mapping({"verifier": {"score": "literal", "pair_order": "claim-evidence"}}, source="x")
    assert (lit.verifier.score, lit.verifier.pair_order) == ("literal", "claim-evidence")
    with pytest.raises(UserError, match=r"x: verifier.score: unknown value 'aware' \(did you mean: label-aware\?\)"):
        config_from_mapping({"verifier": {"score": "aware"}}, source="x")
    with pytest.raises(UserError, match="pair_order"):
        config_from_mapping({"verifier": {"pair_order": "premise-first"}}, source="x")


def test_unset_components_refused_unless_ablation_named() -> None:
    with pytest.raises(UserError, match="generator.model is not set.*ablation.nli_only"):
        config_from_mapping({"calibration": {"path": "c.json"}}, source="x").effective().check_components()
    with pytest.raises(UserError, match="calibration.path is not set.*ablation.no_calibration"):
        config_from_mapping({"generator": {"model": "g"}}, source="x").effective().check_components()
    config_from_mapping({"ablation": {"nli_only": True, "no_calibration": True}},
                        source="x").effective().check_components()
    config_from_mapping({"generator": {"model": "g"}, "calibration": {"path": "c.json"}},
                        source="x").effective().check_components()


def test_the_preset_name_keeps_fingerprints_and_store_keys() -> None:
    """``preset`` replaced the boolean ``offline.enabled``; files and keys keep the old layout, so
    sidecars, candidate stores and manifests written before still match (values of 5682a0c)."""
    from averitec_tools.baselines.r2vc.config import R2VCConfig
    from averitec_tools.baselines.r2vc.io.candidates import store_key
    from averitec_tools.baselines.r2vc.offline.data import offline_store_settings

    # Fingerprints of 5682a0c, except offline-minilm's, whose corpus became the honest one
    # (issue 37: ``offline.corpus: train``); offline-minilm-dev-corpus holds what offline-minilm
    # held. Store keys changed on purpose in issue 37: they name the own-evidence rule's
    # version (sibling claims of one fact-check excluded too), so stores of the old rule are
    # rebuilt rather than reused (5682a0c: 30a5e60b1839ba63, e3e82c9dac2f7823, fb3d36c1bf20a3df).
    # The three built-ins decide with issue 37's verdict head: their fingerprints name its settings
    # (were 6b7a58c1b6565547, 22944dae3cfa6713, fa50e063d64b4d3c); their store keys do not change
    # (the head is a decision setting). offline-minilm-rules decodes as offline-minilm: one store.
    pinned = {"custom": ("72f648a16b9d4f95", "66b3f5d25a0a6a76"),
              "offline-minilm": ("8e61e853535ea5f5", "2445673c4a765597"),
              "offline-minilm-oracle": ("b03fa9bf77718c1f", "e07c3a623e880aec"),
              "offline-minilm-dev-corpus": ("d1c359c01591d7c2", "6e0755009858e602"),
              "offline-minilm-rules": ("dac7d15e3595ec06", "2445673c4a765597")}
    for c in (R2VCConfig(), *map(resolve_config, ("offline-minilm", "offline-minilm-oracle", "offline-minilm-dev-corpus",
                                                   "offline-minilm-rules"))):
        settings, described = offline_store_settings(c, {"verifier": {"backend": "b"}})
        assert (c.fingerprint(), store_key(c, components=described, settings=settings)) == pinned[c.name]
        assert config_from_mapping(c.to_dict(), source="x").offline.corpus == c.offline.corpus  # read back whole
    offline = resolve_config("offline-minilm")
    assert offline.to_dict()["offline"]["enabled"] is True and "preset" not in offline.to_dict()
    assert config_from_mapping({"offline": {"enabled": True}}, source="x").preset == "offline-minilm"
    assert config_from_mapping({"preset": "offline-minilm"}, source="x").to_dict() == \
        config_from_mapping({"offline": {"enabled": True}}, source="x").to_dict()
    with pytest.raises(UserError, match="contradicts"):
        config_from_mapping({"preset": "standard", "offline": {"enabled": True}}, source="x")
    with pytest.raises(UserError, match="preset"):
        config_from_mapping({"preset": "offline"}, source="x")
