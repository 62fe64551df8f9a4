"""The AVeriTeC baseline's configuration sections: one frozen dataclass per stage (and the
training, data and decision settings), composed by
:class:`~averitec_tools.baselines.averitec.config.AVeriTeCConfig`.

Example:
    >>> RerankerConfig().keep, VerdictConfig().aggregation
    (3, 'upstream')
"""

from __future__ import annotations

from dataclasses import dataclass, field

QUESTION_FALLBACK = "retrieval-fallback"
JUSTIFICATION_FALLBACK = "extractive-fallback"


@dataclass(frozen=True)
class TrainConfig:
    """Fine-tuning settings of a classifier (reranker or verdict) or the justification model.

    ``max_pairs`` caps the training examples (a seeded, class-balanced sample) so CPU
    training stays short; ``None`` uses all. ``heldout`` is the share of training *claims*
    held out for model selection: after each epoch the model is scored on them with
    ``select`` (``accuracy`` of the held-out examples, ``claim-macro-f1`` of the aggregated
    claim verdicts, ``meteor`` of generated justifications, or ``last``: keep the last epoch)
    and the best epoch is kept. ``micro_batch`` splits a batch into forward passes of at
    most that many sequences (same gradient; memory only).
    """

    learning_rate: float = 1e-5
    batch_size: int = 32
    grad_accumulation: int = 4
    epochs: int = 20
    max_pairs: int | None = None
    heldout: float = 0.1
    max_length: int = 512
    freeze_layers: int = 0
    select: str = "accuracy"
    micro_batch: int | None = None
    seed: int = 0
    device: str | None = None


@dataclass(frozen=True)
class RetrievalConfig:
    """``bm25``: ``upstream`` (rank_bm25 Okapi over NLTK tokens, every sentence ranked) or
    ``bm25s`` (Lucene BM25, lower-cased, stop words removed, positive scores only)."""

    top_k: int = 100
    bm25: str = "upstream"


@dataclass(frozen=True)
class QuestionsConfig:
    """``prompt``: ``upstream`` (10 nearest training pairs by rank_bm25 Okapi, nearest first,
    no header, Boolean answers "<answer>, because <explanation>") or ``header-nearest-last``.
    ``max_length`` bounds prompt + generation (upstream: 5000); ``max_new_tokens`` bounds the
    generation alone. ``output_cut``: ``upstream`` (first 250 characters, up to the first
    "?") or ``first-line``. ``prompt_max_tokens`` left-truncates long prompts (upstream: none).
    ``stop``: ``none`` (upstream: decode until ``max_length``) or ``question-end`` (stop at the
    first "?" of the generation, at most ``max_new_tokens`` or 256 new tokens: the bounded
    setting of ``paper-bounded``)."""

    model: str = "bigscience/bloom-7b1"
    few_shot: int = 10
    prompt: str = "upstream"
    num_beams: int = 2
    no_repeat_ngram_size: int = 2
    max_length: int | None = 5000
    max_new_tokens: int | None = None
    output_cut: str = "upstream"
    prompt_max_tokens: int | None = None
    stop: str = "none"
    batch_size: int = 1
    dtype: str = "bfloat16"
    device: str | None = None


@dataclass(frozen=True)
class RerankerConfig:
    """``input``: ``upstream`` (one text "claim </s> question </s> answer") or ``pair``
    (claim, "question answer"); ``negatives``: ``upstream`` (3 draws of another claim's pair
    x 3 swapped parts = 9 per positive, loss = mean over positives + mean over negatives)
    or ``one-swap`` (one swapped part per positive, plain mean loss). ``max_length`` is the
    inference cut (None: the training one)."""

    base: str = "bert-base-uncased"
    checkpoint: str | None = None
    auto_train: bool = False
    keep: int = 3
    batch_size: int = 64
    input: str = "upstream"
    negatives: str = "upstream"
    max_length: int | None = 512
    train: TrainConfig = field(default_factory=lambda: TrainConfig(micro_batch=64))


@dataclass(frozen=True)
class VerdictConfig:
    """``input``: ``upstream`` ("[CLAIM] c [QUESTION] q a") or ``pair``; ``aggregation``:
    ``upstream`` (a pair predicted Not Enough Evidence *or* Conflicting makes the claim NEE)
    or ``conflicting-pair`` (a pair predicted Conflicting makes the claim Conflicting).
    ``train_evidence``: ``gold`` (upstream: the training claims' gold QA pairs) or
    ``gold+retrieved`` (those plus each training claim's top ``retrieved_per_claim`` pairs
    retrieved, in BM25 order, from a store of the *other* training claims' answers — its own,
    its twins', its article's and its siblings' left out — labelled with the claim's verdict:
    what the model reads at test time; :mod:`~averitec_tools.baselines.averitec.training.verdict_evidence`)."""

    base: str = "bert-base-uncased"
    checkpoint: str | None = None
    auto_train: bool = False
    batch_size: int = 64
    input: str = "upstream"
    aggregation: str = "upstream"
    max_length: int | None = 400
    train_evidence: str = "gold"
    retrieved_per_claim: int = 3
    train: TrainConfig = field(default_factory=lambda: TrainConfig(select="claim-macro-f1"))


@dataclass(frozen=True)
class JustificationConfig:
    """``input``: ``upstream`` ("[CLAIM] c [EVIDENCE] q? a. ... [VERDICT] l") or ``plain``
    ("Claim: ... Evidence: ... Verdict: ..."). ``untrained: true`` names the ablation that
    runs ``model`` without fine-tuning; otherwise a seq2seq model needs ``checkpoint``.
    ``decoder_start``: ``pad`` (upstream trains and generates from the pad token) or
    ``model`` (the model's ``decoder_start_token_id``). ``max_new_tokens`` 99 = upstream's
    ``max_length=100``, which counts the start token."""

    model: str = "facebook/bart-large"
    checkpoint: str | None = None
    untrained: bool = False
    input: str = "upstream"
    decoder_start: str = "pad"
    num_beams: int = 2
    max_new_tokens: int = 99
    max_length: int = 512
    batch_size: int = 1
    device: str | None = None
    train: TrainConfig = field(default_factory=lambda: TrainConfig(select="meteor", micro_batch=8))


@dataclass(frozen=True)
class DataConfig:
    train: str | None = None  # default averitec/train.json under $AVERITEC_DATA_DIR or the download root
    cache_dir: str | None = None  # default: averitec_tools.cache.cache_root() (AVERITEC_CACHE_DIR, XDG_CACHE_HOME, ~/.cache)
    stage_cache: bool = True  # per-claim stage results under <cache_dir>/stages
    pseudo_test_claims: int = 0  # training claims never trained on: the pseudo-test (leakage/pseudo_test.py)


@dataclass(frozen=True)
class DecisionConfig:
    """Settings chosen on the decision slice (training claims neither model trained on;
    :mod:`~averitec_tools.baselines.averitec.training.decision_slice`). ``reranker``: ``always`` (upstream) or ``slice-choice`` (the
    reranker only where its evidence scores a higher hu-METEOR Q+A than the BM25 order on
    the slice); ``label_bias``: ``none`` (upstream) or ``slice-fit`` (per-label log offsets
    added to each QA pair's verdict log-probabilities, grid-searched for the slice's claim
    macro-F1). ``slice_claims`` caps the slice (None: every held-out claim);
    ``distractors``: per claim in the slice's ``--exclude-own-evidence`` store. ``reranker:
    bm25-order`` never uses the reranker (the verdict model's retrieved training evidence is
    in BM25 order: the scored claims' is too). ``head``: ``none`` (upstream: the aggregation
    rule's label) or ``claim-head`` (the final label from a claim-level head over the
    claim-only probe's log-probabilities and the verdict model's claim distribution, fitted
    on the slice; :mod:`~averitec_tools.baselines.averitec.training.head_fit`)."""

    reranker: str = "always"
    label_bias: str = "none"
    head: str = "none"
    slice_claims: int | None = None
    distractors: int = 200


__all__ = ["DataConfig", "DecisionConfig", "JUSTIFICATION_FALLBACK", "JustificationConfig", "QUESTION_FALLBACK", "QuestionsConfig", "RerankerConfig", "RetrievalConfig", "TrainConfig", "VerdictConfig"]
