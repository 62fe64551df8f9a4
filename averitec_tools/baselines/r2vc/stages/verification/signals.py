"""The verifier's text and label signals (paper §3.4): the claim–passage citation similarity
behind s_cit, the NLI verdict y_NLI with its thresholds and margin, and the label
consistency s_cons (:mod:`~averitec_tools.baselines.r2vc.stages.verification.verifier`
combines them into s_ver). y_NLI and s_cons are :mod:`averitec_tools.nli`'s ``nli_label`` and
``label_consistency`` (the meta-eval ``nli-verdict`` scorer reads them there)."""

from __future__ import annotations

import re

from averitec_tools.nli import label_consistency, nli_label

_TOKEN = re.compile(r"[a-z0-9]+(?:[.,][0-9]+)*")
_NUMBER = re.compile(r"\d+(?:[.,]\d+)*")
_STOPWORDS = frozenset(
    ["a", "an", "the", "of", "to", "in", "on", "at", "for", "by", "with", "and", "or", "but", "is", "are", "was", "were", "be", "been", "being", "it", "its", "this", "that", "these", "those", "as", "from", "has", "have", "had", "not", "no", "than", "then", "so", "if", "into", "over", "under", "he", "she", "they", "we", "you", "i", "his", "her", "their", "our", "your"]
)


def _content_tokens(text: str) -> set[str]:
    return {t for t in _TOKEN.findall(text.casefold()) if t not in _STOPWORDS}


def _numbers(text: str) -> set[str]:
    return {n.replace(",", "") for n in _NUMBER.findall(text)}


def citation_similarity(*, claim: str, passage: str) -> float:
    """Heuristic claim–passage similarity in [0, 1]: string overlap + numeric matching.

    ``overlap`` is the fraction of the claim's content tokens (lower-cased, stopwords
    removed) found in the passage. If the claim contains numbers, the score is
    ``0.5 · overlap + 0.5 · (fraction of the claim's numbers found in the passage)``,
    otherwise it is ``overlap``. A claim with no content tokens scores 0.

    Example:
        >>> citation_similarity(claim="Obama won 2008", passage="In 2008 Obama won.")
        1.0
        >>> citation_similarity(claim="Obama won 2012", passage="In 2008 Obama won.")
        0.3333333333333333
    """
    claim_tokens = _content_tokens(claim)
    if not claim_tokens:
        return 0.0
    passage_tokens = _content_tokens(passage)
    overlap = len(claim_tokens & passage_tokens) / len(claim_tokens)
    claim_numbers = _numbers(claim)
    if not claim_numbers:
        return overlap
    numeric = len(claim_numbers & _numbers(passage)) / len(claim_numbers)
    return 0.5 * overlap + 0.5 * numeric


__all__ = ["citation_similarity", "label_consistency", "nli_label"]  # the last two: averitec_tools.nli
