"""The verdict model's retrieved training evidence (issue 37 item 2): what it reads at test time.

With ``verdict.train_evidence: gold+retrieved`` the verdict model trains on the gold QA pairs
*plus*, for each training claim, the top ``verdict.retrieved_per_claim`` evidence pairs
retrieved the way a scored claim's are: BM25 (``retrieval.bm25``) over a store of the
*other* training claims' answers (``build_store(..., exclude_own_evidence=True)``: the
claim's own answers, its normalised twins', its fact-checking article's and its sibling
claims' left out), in BM25 order (``decision.reranker: bm25-order`` keeps that order at test
time), each sentence's question written by the run's question writer, labelled with the
claim's verdict. A scored claim's retrieved evidence rarely bears on it; trained on such
pairs too, the model learns to read the claim when the evidence says nothing. Conflicting
claims are left out, as from the gold pairs (upstream).

The store is cached under the cache root (``verdict-store-<key>``: the claims, the training
file's sha256, the distractor count); the composition of the training set is returned for the
checkpoint manifest (``data.retrieved_examples`` ...), which the run summary reads
(``verdict_training``).

Example:
    >>> from averitec_tools.baselines.averitec.config import builtin_config
    >>> composition(gold=10, retrieved=[("a", None, 1), ("b", None, 0)], per_claim=3, store={"claims": 2})
    {'gold_examples': 10, 'retrieved_examples': 2, 'retrieved_per_claim': 3, 'retrieved_labels': {'Supported': 1, 'Refuted': 1}, 'retrieved_store': {'claims': 2}}
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from averitec_tools.baselines.averitec.config import AVeriTeCConfig
from averitec_tools.baselines.averitec.io.data import ClaimItem, QAPair

Example = tuple[str, str | None, int]


def composition(*, gold: int, retrieved: Sequence[Example], per_claim: int, store: dict[str, Any]) -> dict[str, Any]:
    """What the verdict model's training set holds (for the manifest and the run summary)."""
    from averitec_tools.baselines.averitec.stages.verdict import LABELS

    counts = {LABELS[y]: sum(1 for *_, z in retrieved if z == y) for y in range(len(LABELS))}
    return {"gold_examples": gold, "retrieved_examples": len(retrieved), "retrieved_per_claim": per_claim,
            "retrieved_labels": {k: v for k, v in counts.items() if v}, "retrieved_store": store}


def _store(cfg: AVeriTeCConfig, claims: Sequence[ClaimItem], train_sha: str | None) -> tuple[Path, dict[str, Any]]:
    """The training claims' honest store (each claim's distractors: the other claims' answers)."""
    from averitec_tools.baselines.averitec.config import cache_dir
    from averitec_tools.baselines.averitec.corpus.store import build_store, read_leak_guard
    from averitec_tools.baselines.averitec.training.classifier import fingerprint

    ids = [c.claim_id for c in claims]
    out = cache_dir(cfg) / f"verdict-store-{fingerprint(ids, train_sha, cfg.decision.distractors)}"
    if not (out / "leak_guard.info").is_file():
        build_store(claims=[c.record for c in claims], claim_ids=ids, out=out, distractors=cfg.decision.distractors,
                    seed=0, exclude_own_evidence=True)
    # every distractor is another training claim's answer: "scored annotations" would count them all
    guard = {k: v for k, v in read_leak_guard(out).items() if k != "scored_annotations_in_store"}
    return out, {"claims": len(ids), "distractors_per_claim": cfg.decision.distractors, **guard}


def retrieved_examples(cfg: AVeriTeCConfig, *, claims: Sequence[ClaimItem], writer_claims: Sequence[ClaimItem],
                       train_sha: str | None, progress: bool = False) -> tuple[list[Example], dict[str, Any]]:
    """Each of ``claims``' top retrieved pairs as verdict examples, and the store's facts.

    ``writer_claims``: the training claims the question writer looks questions up in (the
    run's: a scored claim's questions come from the same pool).
    """
    from tqdm.auto import tqdm

    from averitec_tools.baselines.averitec.corpus.store import KnowledgeStore
    from averitec_tools.baselines.averitec.stages.questions import build_question_writer
    from averitec_tools.baselines.averitec.stages.retrieval import retrieve_sentences
    from averitec_tools.baselines.averitec.stages.verdict import LABELS, C, verdict_input

    path, info = _store(cfg, claims, train_sha)
    store = KnowledgeStore(str(path))
    writer = build_question_writer(config=cfg.questions, train=writer_claims)
    upstream_answers = cfg.questions.prompt == "upstream"
    out: list[Example] = []
    for c in tqdm(claims, desc="verdict training evidence", disable=not progress):
        if c.record.label not in LABELS or c.record.label == LABELS[C] or not store.has(c.claim_id):
            continue
        sentences = retrieve_sentences(claim=c.claim, documents=list(store.documents(c.claim_id)),
                                       k=cfg.verdict.retrieved_per_claim, bm25=cfg.retrieval.bm25)
        questions = writer.write([s.text for s in sentences]) if sentences else []
        for q, s in zip(questions, sentences, strict=True):
            pair = QAPair(question=q, answer=s.text.replace("\n", " ") if upstream_answers else s.text, url=s.url)
            out.append((*verdict_input(claim=c.claim, pair=pair, style=cfg.verdict.input),
                        LABELS.index(c.record.label)))
    return out, info


__all__ = ["composition", "retrieved_examples"]
