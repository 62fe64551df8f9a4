"""The gold-evidence row of the offline table: the verifier alone on each claim's gold QA pairs.

An **oracle** setting: each AVeriTeC claim's own annotated answers (as
:func:`~averitec_tools.baselines.r2vc.corpus.averitec_answers.answer_passages` writes them, the
same text the corpus holds) are the evidence; no retrieval, no generator, no
calibrator. The verdict is the verifier's y_NLI over them with the configuration's
(fitted) thresholds; ``confidence`` is the NLI probability of that verdict (max
entailment for Supported, max contradiction for Refuted, 1 − the larger of the two for
Not Enough Evidence). The evidence items are the gold question–answer pairs, so the
evidence scores of this row are 1 by construction. It measures how far the verifier
is from the retrieval-based rows when the evidence is perfect.

Example:
    >>> import numpy as np
    >>> from averitec_tools.records.averitec import AVeriTeCClaim
    >>> class N:
    ...     name = "fake"
    ...     def predict(self, pairs):
    ...         return np.array([[0.8, 0.1, 0.1]] * len(pairs))
    >>> c = AVeriTeCClaim.from_dict({"claim": "x", "label": "Refuted", "questions": [
    ...     {"question": "q?", "answers": [{"answer": "No.", "answer_type": "Extractive"}]}]}, where="t")
    >>> rec = gold_evidence_records(claims=[c], nli=N(), t_ent=0.6, t_contr=0.6, delta=0.1)[0]
    >>> rec["pred_label"], rec["confidence"], rec["evidence"][0]["question"]
    ('Refuted', 0.8, 'q?')
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from averitec_tools.baselines.r2vc.corpus.averitec_answers import answer_passages
from averitec_tools.baselines.r2vc.stages.verification.signals import nli_label
from averitec_tools.labels import map_label
from averitec_tools.nli import CONTR, ENT, CachedNLI
from averitec_tools.records.averitec import AVeriTeCClaim

ORACLE_NOTE = "oracle: gold evidence (each claim's annotated QA pairs), the verifier alone"


def gold_evidence_records(*, claims: Sequence[AVeriTeCClaim], nli: Any, t_ent: float, t_contr: float,
                          delta: float) -> list[dict[str, Any]]:
    """One AVeriTeC 2024 prediction per claim from its gold QA pairs (see the module docs)."""
    cached = nli if isinstance(nli, CachedNLI) else CachedNLI(nli)
    out = []
    for i, claim in enumerate(claims):
        passages = [p for _, p in answer_passages([claim])]
        qa = [(q.question, a) for q in claim.questions for a in q.answers
              if a.answer_type != "Unanswerable" and a.answer.strip()]
        probs = cached.probs(claim.claim, [p.text for p in passages])
        s_ent = float(probs[:, ENT].max()) if len(probs) else 0.0
        s_contr = float(probs[:, CONTR].max()) if len(probs) else 0.0
        label = nli_label(s_ent=s_ent, s_contr=s_contr, t_ent=t_ent, t_contr=t_contr, delta=delta)
        conf = {"True": s_ent, "False": s_contr}.get(label, 1.0 - max(s_ent, s_contr))
        out.append({
            "claim_id": claim.claim_id if claim.claim_id is not None else i,
            "claim": claim.claim,
            "pred_label": map_label(label, source="r2vc", target="averitec"),
            "evidence": [{"question": q, "answer": p.text, "url": p.url} for (q, _), p in zip(qa, passages, strict=True)],
            "confidence": conf,
            "r2vc": {"label": label, "abstained": False, "oracle": ORACLE_NOTE, "s_ent": s_ent, "s_contr": s_contr},
        })
    return out


__all__ = ["ORACLE_NOTE", "gold_evidence_records"]
