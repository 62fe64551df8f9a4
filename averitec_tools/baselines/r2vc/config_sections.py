"""The R2VC configuration's sections, one frozen dataclass per stage (defaults: Table G.1).

:class:`~averitec_tools.baselines.r2vc.config.R2VCConfig` holds one of each; YAML loading,
the choices of each setting and the built-in configurations are in
:mod:`averitec_tools.baselines.r2vc.config`, which re-exports these classes.

    >>> VerifierConfig().model, CalibrationConfig().select_by
    ('cross-encoder/nli-deberta-v3-large', 'pi')
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class RetrievalConfig:
    """Hybrid retrieval (§3.2, Algorithm C.2; Table G.1)."""

    corpus: str | None = None  #: paragraph-store directory (the CLI's ``--corpus`` overrides it)
    index_dir: str | None = None  #: where indexes are built once, then loaded (default ``<corpus>/indexes``)
    sparse: str | None = "bm25s"
    dense_model: str | None = "BAAI/bge-large-en-v1.5"
    dense_index: str = "hnsw"
    alpha: float = 0.5
    epsilon: float = 1e-6
    top_sparse: int = 200
    top_dense: int = 200
    top_m: int = 24
    encode_batch_size: int = 1024
    device: str | None = None


@dataclass(frozen=True)
class GeneratorConfig:
    """Candidate generation (§3.3; Table G.1 inference rows)."""

    model: str | None = None  #: the SFT+DPO generator (hub id or directory); ``None`` → NLI-only fallback
    sft_model: str | None = None  #: the SFT-only checkpoint, used by the ``no_dpo`` ablation
    k: int = 16
    subset_size: int = 16
    max_new_tokens: int = 160
    device: str = "auto"
    dtype: str = "auto"
    seed: int = 0
    #: Reasoning mode of models that switch it in the system prompt (Llama-3.1-Nemotron-
    #: Nano): ``auto`` (the trained model's recorded mode, else off), ``off``, ``on``, ``none``.
    reasoning: str = "auto"
    #: ``auto`` (FlashAttention-2 on CUDA where flash-attn is installed, else SDPA) or a
    #: transformers attention implementation; the summary's components say which ran.
    attn_implementation: str = "auto"
    #: Evidence questions of AVeriTeC output: ``template`` ("Is it true that <claim>?") or
    #: ``lm`` (ask the generator, which SFT/DPO never trained to write questions).
    question_writer: str = "template"
    #: An OpenAI-compatible server decoding the candidates (``http://host:8000/v1``; vLLM serving
    #: ``model``, which names the served model and its tokenizer); ``None``: decode here
    #: (:mod:`~averitec_tools.baselines.r2vc.stages.generation.server`).
    server: str | None = None


@dataclass(frozen=True)
class VerifierConfig:
    """NLI verifier (§3.4)."""

    model: str = "cross-encoder/nli-deberta-v3-large"
    #: ``label-aware`` (support for the candidate's label) or ``literal`` (§3.4 as written).
    score: str = "label-aware"
    #: Which side of an NLI pair is the premise: ``evidence-claim`` or ``claim-evidence``.
    pair_order: str = "evidence-claim"
    top_k_coverage: int = 6
    t_ent: float = 0.60
    t_contr: float = 0.60
    delta: float = 0.10
    batch_size: int = 32
    max_length: int = 256
    device: str | None = None


@dataclass(frozen=True)
class CalibrationConfig:
    """SLC calibrator and the decision thresholds (§3.5)."""

    #: A calibrator JSON saved by :meth:`Calibrator.save`; ``None`` → monotone map of s_ver.
    path: str | None = None
    tau_cal: float = 0.60
    tau_ver: float = 0.55
    #: At most this many labelled claims are used to fit the calibrator (the first ones).
    fit_size: int = 10000
    fit_candidates: int = 12
    #: Which candidates the calibrator is fitted on: ``all`` (every candidate of a fit
    #: claim, weighted 1/k so each claim counts once; consistent with i* = argmax π at
    #: inference) or ``max_s_ver`` (only the candidate with the highest s_ver).
    fit_on: str = "all"
    #: Fraction of the fit claims held out (by claim) to report Brier/ECE not measured
    #: on the fit data; the final calibrator is then refitted on all of them.
    heldout_fraction: float = 0.2
    max_iter: int = 2000
    abstain: bool = True
    #: What an abstention emits: ``uncertain`` (Algorithm C.1: the label Uncertain) or
    #: ``candidate`` (the chosen candidate's label, flagged ``abstained``; see decision.py).
    on_abstain: str = "uncertain"
    #: Add label indicators (True / False candidate) to the seven §3.5 features (ours).
    label_features: bool = False
    #: How i* is chosen: ``pi`` (argmax π, the paper) or ``s_ver`` (the verifier's pick,
    #: π kept for ranking and the gates; see ``stages/calibration/decision.py``).
    select_by: str = "pi"


@dataclass(frozen=True)
class AblationConfig:
    """Switches for every row of the paper's ablation table (§5)."""

    no_dpo: bool = False
    no_verifier_selection: bool = False
    single_candidate: bool = False
    no_calibration: bool = False
    nli_only: bool = False
    sparse_only: bool = False
    dense_only: bool = False


@dataclass(frozen=True)
class OfflineConfig:
    """The built-in offline CPU configuration (see :mod:`averitec_tools.baselines.r2vc.offline.preset`).

    Everything it learns comes from the AVeriTeC *training* split; dev is only scored.
    """

    #: Use only the first N training claims (corpus, verifier and calibrator); None = all 3,068.
    train_claims: int | None = None
    #: Training claims held out from the start, trained and fitted on by nothing: the
    #: pseudo-test (:mod:`averitec_tools.leakage.pseudo_test`; drawn from all of train.json).
    pseudo_test_claims: int = 0
    #: Training claims held out from the verifier: the calibration slice everything
    #: decision-related is fitted on (thresholds, calibrator, gates).
    calibration_claims: int = 400
    #: Which own answers of a training claim carry its verdict: ``decisive`` or ``verdict``
    #: (:func:`~averitec_tools.baselines.r2vc.offline.data.verifier_epochs`).
    pair_labels: str = "decisive"
    pairs_per_class: int | None = None  #: pairs per NLI class and epoch (None: all of the smallest class)
    epochs: int = 3
    learning_rate: float = 5e-5
    train_batch_size: int = 16
    #: FEVER dev claims added to the corpus as distractor passages.
    distractors: int = 1000
    #: Whose gold answers the corpus holds: ``train`` — the training claims' answers, the
    #: pseudo-test's left out: no dev (or pseudo-test) annotation anywhere, the honest corpus —
    #: or ``train+dev`` — every training and dev answer, the *dev-annotation corpus* of the named
    #: configurations ``offline-minilm-dev-corpus`` and ``offline-minilm-oracle`` (labelled in
    #: every summary: ``leak_guard.dev_annotations_in_corpus``, the signature's ``corpus:``).
    corpus: str = "train"
    #: Remove each claim's own gold answers (any claim with the same normalised text) and
    #: every answer from its own fact-checking article from its retrieval results (the
    #: honest setting, ``offline-minilm``; false: an oracle corpus, ``offline-minilm-oracle``).
    exclude_own_evidence: bool = False
    #: Fit T_ent, T_contr, δ and τ_cal, τ_ver on the calibration slice (offline/fit.py),
    #: replacing the configured values; false keeps them.
    fit_thresholds: bool = True
    #: The gates' target: the largest covered accuracy with at least this coverage.
    target_coverage: float = 0.5
    #: Folds of the out-of-fold π the gates are fitted on.
    gate_folds: int = 5
    #: Evidence regimes with their own fitted y_NLI thresholds (split at quantiles of the
    #: slice pools' decisiveness, ``stages/verification/regimes.py``); 1 = one global set.
    threshold_regimes: int = 1
    #: Fit the claim-level Conflicting rule on the slice (``stages/calibration/claim_rules.py``;
    #: off where no setting beats none there).
    conflict_rule: bool = False
    #: The final verdict: ``off`` (the chosen candidate, the gates on π and the claim rules) or
    #: ``prior+pool`` (a claim-level head over the claim-only probe's log-probabilities and the
    #: pool's NLI statistics, fitted on the slice; ``stages/calibration/verdict_head.py``).
    verdict_head: str = "off"
    #: The head's ``C`` values and offsets objectives, chosen by grouped 5-fold cross-validation
    #: on the slice over ``head_cv_seeds`` seeded splits (``offline/head.py``).
    head_c_grid: tuple[float, ...] = (0.03, 0.1, 0.3, 1.0)
    head_objectives: tuple[str, ...] = ("none", "macro-f1", "macro-f1-keep-accuracy")
    head_cv_seeds: int = 3
    #: Verifier-training claims the head is fitted on beside the slice (``TrainingPlan.head_claims``:
    #: seeded, never a scored claim's twin or the pseudo-test), their pools retrieved as a scored
    #: claim's. Their NLI probabilities come from a verifier trained on their own answers, so the
    #: head's settings and gate are still cross-validated and fitted on the slice claims alone.
    head_extra_claims: int = 0
    cache_dir: str | None = None  #: where verifiers, corpus and indexes are cached (default: user cache)
    seed: int = 13


__all__ = ["AblationConfig", "CalibrationConfig", "GeneratorConfig", "OfflineConfig", "RetrievalConfig", "VerifierConfig"]
