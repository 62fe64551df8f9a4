"""The claims of one R2VC run: read (:mod:`~averitec_tools.baselines.r2vc.io.claims`), cut to
``--limit`` and, with ``--evidence given``, each claim's own evidence attached
(:mod:`~averitec_tools.baselines.r2vc.io.given_evidence`)."""

from __future__ import annotations

from averitec_tools.baselines.r2vc.io.claims import ClaimInput, read_claims
from averitec_tools.baselines.r2vc.io.given_evidence import with_given_evidence
from averitec_tools.errors import UserError


def load_claims(
    *, path: str, limit: int | None = None, evidence: str = "retrieved", corpus: str | None = None
) -> list[ClaimInput]:
    """The claims of one run: :func:`read_claims`, the first ``limit`` of them, and with
    ``evidence="given"`` each claim's own evidence attached (the oracle-document setting,
    passages looked up in the ``corpus`` store where the file cites them by id).

    Example:
        >>> import json, tempfile, pathlib
        >>> p = pathlib.Path(tempfile.mkdtemp()) / "c.json"
        >>> _ = p.write_text(json.dumps([{"claim": "A.", "label": "Refuted"}, {"claim": "B."}]))
        >>> [c.claim for c in load_claims(path=str(p), limit=1)]
        ['A.']
        >>> load_claims(path=str(p), limit=0)
        Traceback (most recent call last):
        ...
        averitec_tools.errors.UserError: --limit must be at least 1, got 0
    """
    if limit is not None and limit < 1:
        raise UserError(f"--limit must be at least 1, got {limit}")
    claims = read_claims(path)
    if limit is not None:
        claims = claims[:limit]
    if evidence == "given":
        store = None
        if corpus:
            from averitec_tools.baselines.r2vc.corpus.store import ParagraphStore

            store = ParagraphStore.open(corpus)
        claims = with_given_evidence(path=path, claims=claims, store=store)
    return claims


__all__ = ["load_claims"]
