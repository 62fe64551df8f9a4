"""One claim of one submission, as the per-claim viewer shows it; the paginated claim list.

What is shown follows the board's visibility rules: only claims the board counts now
(:func:`~averitec_tools.leaderboard.ranking.claim_mask`: a hidden phase shows none until it
is revealed, a private split only its public claims) are listed or can be opened (any
other id is "not found", like an id that does not exist); the gold label, the gold
question–answer pairs and the Hu-METEOR matrix against them (which would reveal how close
each prediction is to each gold pair) only when
:func:`~averitec_tools.leaderboard.web.views.gold_visible` allows them.

The matrix and assignment are computed with the scoring package's public functions
(:func:`~averitec_tools.scoring.evidence_strings.predicted_qa_strings`,
:func:`~averitec_tools.scoring.evidence_strings.qa_strings`,
:func:`~averitec_tools.metrics.hungarian_meteor.pairwise_matrix`,
:func:`~averitec_tools.metrics.hungarian_meteor.hungarian_assignment`,
:func:`~averitec_tools.metrics.hungarian_meteor.assignment_utility`); the recomputed Q+A
score is returned beside the stored one (they agree; tested).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from averitec_tools.errors import UserError

#: Claims per page of the claim list.
PAGE_SIZE = 50
#: Profiles whose evidence score is the 2024 Hu-METEOR over "question answer" strings.
HU_METEOR_PROFILES = ("averitec2024",)
#: Longest accepted claim-id search / page number text.
MAX_QUERY_CHARS = 12


def parse_page(text: str | None, *, n_items: int) -> int:
    """A 1-based page number of a list of ``n_items`` (UserError when it is not one).

    Example:
        >>> parse_page(None, n_items=120), parse_page("3", n_items=120)
        (1, 3)
        >>> parse_page("4", n_items=120)
        Traceback (most recent call last):
        ...
        averitec_tools.errors.UserError: page 4 is past the last page (3)
    """
    if text is None or text == "":
        return 1
    if len(text) > MAX_QUERY_CHARS or not text.isascii() or not text.isdigit() or int(text) < 1:
        raise UserError(f"page must be a whole number from 1, got {text[:MAX_QUERY_CHARS]!r}")
    pages = max(1, -(-n_items // PAGE_SIZE))
    if int(text) > pages:
        raise UserError(f"page {int(text)} is past the last page ({pages})")
    return int(text)


def parse_claim_query(text: str | None) -> int | None:
    """A claim-id search (digits only, at most :data:`MAX_QUERY_CHARS`); ``None``: no search.

    Example:
        >>> parse_claim_query("17"), parse_claim_query("")
        (17, None)
    """
    if text is None or text.strip() == "":
        return None
    text = text.strip()
    if len(text) > MAX_QUERY_CHARS or not text.isascii() or not text.isdigit():
        raise UserError(f"search by claim id: digits only (at most {MAX_QUERY_CHARS}), got {text[:MAX_QUERY_CHARS]!r}")
    return int(text)


def claim_page(claims: Sequence[Mapping[str, Any]], *, page: str | None, query: str | None) -> dict[str, Any]:
    """One page of the visible claims (their id, predicted label and stored scores),
    filtered by claim id.

    Example:
        >>> rows = [{"id": i, "pred": "Refuted", "values": {"m": 1.0}} for i in range(60)]
        >>> p = claim_page(rows, page="2", query=None)
        >>> p["page"], p["pages"], [c["id"] for c in p["claims"]][:2], p["total"]
        (2, 2, [50, 51], 60)
        >>> claim_page(rows, page=None, query="7")["claims"][0]["id"]
        7
    """
    wanted = parse_claim_query(query)
    selected = [c for c in claims if wanted is None or int(c["id"]) == wanted]
    number = parse_page(page, n_items=len(selected))
    chunk = selected[(number - 1) * PAGE_SIZE : number * PAGE_SIZE]
    return {"page": number, "pages": max(1, -(-len(selected) // PAGE_SIZE)), "total": len(selected),
            "query": wanted, "claims": [{"id": int(c["id"]), "pred": c.get("pred"), "values": dict(c["values"])} for c in chunk]}


def prediction_items(content: bytes) -> list[Any]:
    """The items of a stored submission, a JSON array or JSON lines (both are accepted
    uploads; the scorer read them the same way), parsed by the bounded parser.

    Example:
        >>> prediction_items(b'{"claim_id": 0}\\n\\n{"claim_id": 1}\\n')
        [{'claim_id': 0}, {'claim_id': 1}]
    """
    from averitec_tools.jsonbounds import loads

    text = content.decode("utf-8-sig", errors="replace")
    try:
        data = loads(text, where="submission")
    except (UserError, ValueError):  # JSON lines: one item a line
        return [loads(line, where="submission", line=k) for k, line in enumerate(text.splitlines(), start=1) if line.strip()]
    return data if isinstance(data, list) else data.get("predictions", []) if isinstance(data, dict) else [data]


def _prediction(content: bytes, claim_id: int) -> Mapping[str, Any]:
    try:
        items = prediction_items(content)
    except (UserError, ValueError, RecursionError):
        raise UserError(f"claim {claim_id}: the submission's file cannot be read again") from None
    for item in items:
        if isinstance(item, dict) and item.get("claim_id") == claim_id:
            return item
    raise UserError(f"claim {claim_id} is not in the submission's file")


def claim_detail(
    *, profile: str, content: bytes, row: Mapping[str, Any], gold: Any, show_gold: bool, engine: Callable[[], Any]
) -> dict[str, Any]:
    """Everything the viewer shows for one claim.

    Args:
        profile: The phase's ranking profile.
        content: The submission's file.
        row: The claim's stored per-claim row (``id``, ``pred``, ``values``, ...).
        gold: The gold claim (an :class:`~averitec_tools.records.averitec.AVeriTeCClaim`).
        show_gold: Whether gold labels and gold question–answer pairs may be shown.
        engine: Returns the METEOR engine (called only when a matrix is computed).

    Returns:
        ``claim``, ``pred_label``, ``predicted_qa``, ``gold_label``, ``gold_qa``,
        ``matrix`` (rows: predicted strings, columns: gold strings), ``assignment``
        (``[row, column]`` pairs), ``scores`` (the stored per-claim values, every λ),
        ``questions_answers_recomputed``, ``judge`` and ``withheld`` (why something is not shown).

    Example:
        >>> import json
        >>> from averitec_tools.records.averitec import AVeriTeCClaim
        >>> g = AVeriTeCClaim.from_dict({"claim": "c", "label": "Refuted", "questions": [{"question": "Q?",
        ...     "answers": [{"answer": "A", "answer_type": "Extractive"}]}]}, where="g")
        >>> content = json.dumps([{"claim_id": 0, "pred_label": "Refuted", "evidence": [{"question": "Q?", "answer": "A"}]}])
        >>> d = claim_detail(profile="averitec2024", content=content.encode(), row={"id": 0, "pred": "Refuted",
        ...     "values": {"questions_answers": 0.0}}, gold=g, show_gold=False, engine=lambda: None)
        >>> d["claim"], d["pred_label"], d["gold_label"], d["matrix"], d["predicted_qa"]
        ('c', 'Refuted', None, None, ['Q? A'])
    """
    from averitec_tools.scoring.evidence_strings import predicted_qa_strings, qa_strings

    claim_id = int(row["id"])
    item = _prediction(content, claim_id)
    evidence = [(str(e.get("question", "")), str(e.get("answer", ""))) for e in item.get("evidence") or () if isinstance(e, dict)]
    predicted = predicted_qa_strings(evidence=evidence, string_evidence=item.get("string_evidence"))
    out: dict[str, Any] = {"claim_id": claim_id, "claim": gold.claim, "pred_label": row.get("pred"), "predicted_qa": predicted,
                           "gold_label": None, "gold_qa": None, "matrix": None, "assignment": None,
                           "scores": dict(row["values"]), "questions_answers_recomputed": None, "judge": None, "withheld": None}
    if not show_gold:
        out["withheld"] = "gold labels, gold question-answer pairs and the matrix against them are shown once the phase is revealed"
        return out
    gold_qa = qa_strings(gold.questions)
    out.update(gold_label=gold.label, gold_qa=gold_qa)
    if profile not in HU_METEOR_PROFILES:
        out["withheld"] = f"no Hu-METEOR matrix for profile {profile!r}"
        return out
    from averitec_tools.metrics.hungarian_meteor import (
        assignment_utility,
        hungarian_assignment,
        pairwise_matrix,
    )

    matrix = pairwise_matrix(candidates=predicted, references=gold_qa, engine=engine())
    out.update(matrix=matrix.round(6).tolist(), assignment=[list(p) for p in hungarian_assignment(matrix)],
               questions_answers_recomputed=assignment_utility(matrix, normaliser=len(gold_qa)))
    return out


__all__ = ["HU_METEOR_PROFILES", "MAX_QUERY_CHARS", "claim_detail", "claim_page"]
