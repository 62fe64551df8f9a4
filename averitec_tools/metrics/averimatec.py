"""AVerImaTeC (FEVER-9) arithmetic: from the judge's replies to the four leaderboard columns.

Everything here is what the organisers' ``prepare_submission`` code (``abril4416/
AVerImaTec_Shared_Task`` at ``f6f361d``) does with a reply, restated: no I/O, no judge.
File and line of each rule are in ``docs/averimatec.md``.

* :func:`score_extraction` -- the ``[PRED in REF]: N; ...`` / ``[REF in PRED]: N; ...``
  lines of a reply: the last occurrence of each marker, the first line after it, the part
  before the first ``;`` is the count (``str.isdigit`` else 0), the rest are the details;
  a reply without a marker is read from its first line, as ``str.split`` gives there.
* :func:`recall_plan` -- which listed ``(REF_i, PRED_j)`` tuples count for evidence recall:
  every ``(...)`` of the ``[REF in PRED]`` details split at ``,``; a tuple whose two indices
  do not parse as ``int`` (after the last ``_``) is skipped; a gold index counts once, by its
  first tuple. Each counted tuple needs an image rating, except that it passes (``"10"``)
  when either item has no images or an index does not resolve as a Python list index
  (``REF_0`` is the last item, as ``list[-1]``; ``REF_9`` of three is out of range).
* :func:`rating_passes` -- a rating counts when ``int(reply) >= 9`` (``"8/10"``, ``"9.5"``:
  skipped, as their ``except: continue``).
* :func:`evidence_recall` -- matched gold items / gold items, clipped to 1; ``None`` (their
  code) when either side has no item.
* :func:`question_score`, :func:`justification_score` -- the ``[REF in PRED]`` count over
  the gold questions, or over the ``\\b\\d+\\.\\s`` enumerations of the judge's own
  ``[REF in PRED Exp]`` text (0 when either count is 0), clipped to [0, 1].
* :func:`verdict_score`, :func:`aggregate` -- ``pred.lower().strip() == gold.lower()``; the
  notebook's means: question and evidence over all claims, verdict and justification
  summed only where evidence clears the threshold rule, divided by all claims.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from averitec_tools.metrics.ev2r import ThresholdPreset, preset_registry

PRED_IN_REF, REF_IN_PRED = "[PRED in REF]: ", "[REF in PRED]: "
#: The justification reply's explanation markers (``utils.py:27-28``; the second without a space).
PRED_EXP, REF_EXP, REF_IN_PRED_BARE = "[PRED in REF Exp]: ", "[REF in PRED Exp]:", "[REF in PRED]:"
#: A passing image rating (``utils.py:3``: ``threshold=9``, compared with ``<``).
RATING_PASS = 9
#: The rating given without a judge call (``ref_eval.py``: ``feedback='10'``).
FREE_PASS = "10"
_TUPLE = re.compile(r"\(.*?\)")
_ENUMERATION = re.compile(r"\b\d+\.\s")


@dataclass(frozen=True)
class Extraction:
    """The counts and detail strings of one reply (``ref_eval.py`` ``score_extraction``)."""

    pred_in_ref: int
    ref_in_pred: int
    detailed_pred_in_ref: str
    detailed_ref_in_pred: str


def _marker_line(reply: str, marker: str) -> list[str]:
    return reply.split(marker)[-1].split("\n")[0].split(";")


def score_extraction(reply: str) -> Extraction:
    """Counts and details of a reply, as the organisers' ``score_extraction``.

    Example:
        >>> e = score_extraction("[PRED in REF]: 2; (PRED_1, REF_1)\\n[REF in PRED]: 1; (REF_2, PRED_1); x")
        >>> e.pred_in_ref, e.ref_in_pred, e.detailed_ref_in_pred
        (2, 1, '(REF_2, PRED_1); x')
        >>> score_extraction("no markers at all").ref_in_pred
        0
    """
    pred, ref = _marker_line(reply, PRED_IN_REF), _marker_line(reply, REF_IN_PRED)
    head_pred, head_ref = pred[0].strip(), ref[0].strip()
    return Extraction(
        pred_in_ref=int(head_pred) if head_pred.isdigit() else 0,
        ref_in_pred=int(head_ref) if head_ref.isdigit() else 0,
        detailed_pred_in_ref=";".join(pred[1:]).strip(),
        detailed_ref_in_pred=";".join(ref[1:]).strip(),
    )


def listed_tuples(details: str) -> list[list[str]]:
    """Each ``(...)`` of a detail string, split at ``,`` (the organisers' ``info``).

    Example:
        >>> listed_tuples("(REF_1, PRED_2), (REF_3,PRED_1) and (oops)")
        [['REF_1', ' PRED_2'], ['REF_3', 'PRED_1'], ['oops']]
    """
    return [m[1:-1].split(",") for m in _TUPLE.findall(details)]


def _index(part: str) -> int | None:
    try:
        return int(part.split("_")[-1])
    except ValueError:
        return None


def _resolves(index: int, n: int) -> bool:
    """Whether ``items[index - 1]`` exists for a list of ``n`` items (negative indices included)."""
    return -n <= index - 1 < n


@dataclass(frozen=True)
class RecallTuple:
    """A tuple that counts for evidence recall: the gold item ``ref`` matched by ``pred``
    (1-based as listed), and whether it needs an image rating (else it passes)."""

    ref: int
    pred: int
    needs_rating: bool


def counted_tuples(listed: Sequence[Sequence[str]]) -> list[tuple[int, int, int]]:
    """``(position, ref, pred)`` of each listed tuple that counts for recall: both indices
    parse, and its gold index was not counted before (``utils.py`` ``get_auto_recall``).

    Example:
        >>> counted_tuples([["REF_1", " PRED_2"], ["REF_1", "PRED_1"], ["REF_x", "PRED_1"], ["REF_3"], ["REF_2", "PRED_1"]])
        [(0, 1, 2), (4, 2, 1)]
    """
    seen: set[int] = set()
    out = []
    for position, info in enumerate(listed):
        if len(info) < 2:
            continue
        pred, ref = _index(info[1]), _index(info[0])
        if pred is None or ref is None or ref in seen:
            continue
        seen.add(ref)
        out.append((position, ref, pred))
    return out


def recall_plan(details: str, *, pred_images: Sequence[int], gold_images: Sequence[int]) -> list[RecallTuple]:
    """The ``[REF in PRED]`` tuples that count, first per gold index, in listed order.

    ``pred_images`` and ``gold_images`` are the number of images of each predicted and gold
    evidence item (their lengths are the item counts).

    Example:
        >>> plan = recall_plan("(REF_1, PRED_1), (REF_1, PRED_2), (REF_0, PRED_9), (REF_2)",
        ...                    pred_images=[1, 0], gold_images=[1, 2])
        >>> [(t.ref, t.pred, t.needs_rating) for t in plan]
        [(1, 1, True), (0, 9, False)]
    """
    plan = []
    for _, ref, pred in counted_tuples(listed_tuples(details)):
        resolved = _resolves(pred, len(pred_images)) and _resolves(ref, len(gold_images))
        needs = resolved and pred_images[pred - 1] > 0 and gold_images[ref - 1] > 0
        plan.append(RecallTuple(ref, pred, needs))
    return plan


def rating_passes(rating: str) -> bool:
    """Whether an image rating counts: ``int(rating) >= 9`` with Python's ``int`` (else skipped).

    Example:
        >>> [rating_passes(r) for r in ("10", " 9\\n", "8", "8/10", "9.5", "")]
        [True, True, False, False, False, False]
    """
    try:
        return int(rating) >= RATING_PASS
    except ValueError:
        return False


def _clipped_recall(count: int, total: int) -> float:
    return min(max(count / total, 0.0), 1.0)


def evidence_recall(plan: Sequence[RecallTuple], ratings: Sequence[str], *, n_gold: int, n_pred: int) -> float | None:
    """Matched gold items / gold items, clipped; ``None`` when either side is empty (their code).

    ``ratings`` holds one reply per tuple of ``plan`` that needs a rating, in order.

    Example:
        >>> plan = [RecallTuple(1, 1, True), RecallTuple(2, 1, False), RecallTuple(3, 2, True)]
        >>> evidence_recall(plan, ["9", "3"], n_gold=4, n_pred=2)
        0.5
        >>> evidence_recall([], [], n_gold=3, n_pred=0) is None
        True
    """
    if n_gold == 0 or n_pred == 0:
        return None
    replies = iter(ratings)
    matched = sum(1 for t in plan if rating_passes(next(replies) if t.needs_rating else FREE_PASS))
    return _clipped_recall(matched, n_gold)


def question_score(reply: str, *, n_gold: int, n_pred: int) -> float:
    """The ``[REF in PRED]`` count over the gold questions, clipped (0 if either list is empty).

    Example:
        >>> question_score("[PRED in REF]: 2\\n[REF in PRED]: 5", n_gold=4, n_pred=3)
        1.0
    """
    if n_gold == 0 or n_pred == 0:
        return 0.0
    return _clipped_recall(score_extraction(reply).ref_in_pred, n_gold)


def justification_score(reply: str) -> float | None:
    """The ``[REF in PRED]`` count over the enumerated reference facts of the judge's own
    ``[REF in PRED Exp]`` text, clipped; ``None`` when the reply has no ``[PRED in REF Exp]: ``
    marker (the organisers' code raises there, ``utils.py:27``).

    Example:
        >>> r = ("[PRED in REF]: 1\\n[PRED in REF Exp]: 1. a. 2. b.\\n[REF in PRED]: 2\\n"
        ...      "[REF in PRED Exp]: 1. x. 2. y. 3. z.")
        >>> round(justification_score(r), 4), justification_score("[REF in PRED]: 2") is None
        (0.6667, True)
    """
    text = reply.strip()
    parts = text.split(PRED_EXP)
    if len(parts) < 2:
        return None
    pred_facts = parts[1].split(REF_IN_PRED_BARE)[0].strip()
    ref_facts = text.split(REF_EXP)[-1].strip()
    n_gold, n_pred = len(_ENUMERATION.findall(ref_facts)), len(_ENUMERATION.findall(pred_facts))
    if n_gold == 0 or n_pred == 0:
        return 0.0
    return _clipped_recall(score_extraction(reply).ref_in_pred, n_gold)


def verdict_score(pred: str, gold: str) -> float:
    """1.0 when ``pred.lower().strip() == gold.lower()`` (the gold side is not stripped).

    Example:
        >>> verdict_score(" refuted ", "Refuted"), verdict_score("Refuted", "Refuted ")
        (1.0, 0.0)
    """
    return 1.0 if pred.lower().strip() == gold.lower() else 0.0


@dataclass(frozen=True)
class ClaimScores:
    """The four per-claim values (``evidence`` ``None``: no predicted or no gold evidence)."""

    question: float
    evidence: float | None
    verdict: float
    justification: float


#: The published threshold rules for the AVerImaTeC score (``--averimatec-preset``).
AVERIMATEC_PRESETS = preset_registry(
    "AVerImaTeC threshold preset",
    ThresholdPreset("notebook", 0.4, ">", "abril4416/AVerImaTec_Shared_Task@f6f361d "
                    "prepare_submission/ipython/Eval_Score_Compute.ipynb: threshold=0.4, evid_score>threshold"),
    ThresholdPreset("fork-0.3", 0.3, ">", "Enicul/AIC_AVerImaTec@569f3be prepare_submission/"
                    "eval_evidence_conditioned_safe.py: --evidence_threshold 0.3, evid_acc > threshold"),
    ThresholdPreset("at-least-0.3", 0.3, ">=", "'at least 0.3', as teams' re-implementations state it "
                    "(no public file found; docs/averimatec.md)"),
)
DEFAULT_AVERIMATEC_PRESET = "notebook"


def passes(evidence: float | None, rule: ThresholdPreset) -> bool:
    """Whether a claim's evidence score clears ``rule``; a claim without a score never does.

    Example:
        >>> rule = AVERIMATEC_PRESETS.get("notebook")
        >>> passes(0.5, rule), passes(0.4, rule), passes(None, rule)
        (True, False, False)
    """
    return evidence is not None and rule.passes(evidence)


def aggregate(rows: Sequence[ClaimScores], rule: ThresholdPreset) -> dict[str, float]:
    """The four leaderboard columns and label accuracy, summed in claim order as the notebook does.

    A claim without an evidence score counts 0 and never passes (their notebook raises).

    Example:
        >>> rows = [ClaimScores(1.0, 0.5, 1.0, 0.5), ClaimScores(0.5, 0.4, 1.0, 1.0), ClaimScores(0.0, None, 1.0, 1.0)]
        >>> aggregate(rows, AVERIMATEC_PRESETS.get("notebook"))["verdict"]
        0.3333333333333333
    """
    n = len(rows)
    if n == 0:
        return dict.fromkeys(("question", "evidence", "verdict", "justification", "label_accuracy"), float("nan"))
    q = e = v = j = acc = 0.0
    for r in rows:
        q += r.question
        e += r.evidence or 0.0
        acc += r.verdict
        if passes(r.evidence, rule):
            v += r.verdict
            j += r.justification
    return {"question": q / n, "evidence": e / n, "verdict": v / n, "justification": j / n, "label_accuracy": acc / n}


__all__ = [
    "AVERIMATEC_PRESETS",
    "DEFAULT_AVERIMATEC_PRESET",
    "FREE_PASS",
    "ClaimScores",
    "Extraction",
    "RecallTuple",
    "aggregate",
    "counted_tuples",
    "evidence_recall",
    "justification_score",
    "listed_tuples",
    "passes",
    "question_score",
    "rating_passes",
    "recall_plan",
    "score_extraction",
    "verdict_score",
]
