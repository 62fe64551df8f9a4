"""Prediction output formats of the R2VC pipeline, in the :data:`OUTPUT_FORMATS` registry.

* ``averitec2024`` — the AVeriTeC 2024 submission format, one JSON array::

      {claim_id, claim, pred_label, evidence: [{question, answer, url}],
       confidence, rationale, citations}

  ``pred_label`` is the R2VC verdict mapped to the 4-way space (True → Supported,
  False → Refuted, Uncertain → Not Enough Evidence). R2VC retrieves passages while
  AVeriTeC scores question–answer pairs, so each passage cited by the chosen candidate
  becomes one evidence item: the passage text is the ``answer``, its URL the ``url``,
  and the ``question`` is written by the configured question writer or, without one,
  the fallback :func:`fallback_question` (``"Is it true that <claim>?"``). When the
  chosen candidate cites no passage (an NLI verdict with nothing cited, an LM output
  without citation markers, or an abstention), the top 3 retrieved passages are listed
  instead; this fallback is counted in the run summary (``fallbacks.uncited_top_evidence``)
  and each such record has ``r2vc.evidence: "top_retrieved"``. With empty retrieval the
  evidence list is empty.
  This adaptation is ours: the paper evaluates on FEVER and VitaminC only.
* ``ternary`` — FEVER/VitaminC, JSON lines::

      {id, predicted_label, predicted_evidence: [[page, line]], confidence, rationale, citations}

  with ``predicted_label`` in SUPPORTS/REFUTES/NOT ENOUGH INFO. ``page`` is the
  passage's Wikipedia page title written as a FEVER page id (:func:`fever_page_id`:
  spaces → ``_``, ``(``/``)``/``:`` → ``-LRB-``/``-RRB-``/``-COLON-``), never the corpus
  doc id; the doc id's stem is used only for a passage without a title. Our corpus units
  are paragraphs, so ``line`` comes from a doc id ending in ``#n`` / ``:n`` / ``_n`` and
  is 0 otherwise.

``confidence`` is π of the chosen candidate i* (§3.5: the calibrated probability that
its label is correct), also when the decision abstained; ``r2vc`` holds the decision's
diagnostics (the R2VC label, the chosen candidate's label before the gates, whether it
abstained and why, s_ver).
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from averitec_tools.baselines.r2vc.io.claims import ClaimInput
from averitec_tools.baselines.r2vc.stages.questions import fallback_question
from averitec_tools.baselines.r2vc.types import Passage
from averitec_tools.labels import map_label
from averitec_tools.registry import Registry

#: Evidence items listed when the prediction cites nothing.
FALLBACK_EVIDENCE = 3


#: The fields a :class:`ClaimPrediction` takes over from the claim's
#: :class:`~averitec_tools.baselines.r2vc.stages.calibration.decision.Decision`.
VERDICT_FIELDS: tuple[str, ...] = ("label", "confidence", "rationale", "abstained", "reason", "s_ver")


@dataclass(frozen=True)
class ClaimPrediction:
    """The pipeline's result for one claim, before formatting."""

    claim: ClaimInput
    label: str
    confidence: float
    rationale: str
    cited: tuple[Passage, ...]
    questions: tuple[str, ...]
    abstained: bool
    reason: str
    s_ver: float | None
    n_candidates: int
    n_malformed: int
    timings: dict[str, float] = field(default_factory=dict)
    #: Label of the chosen candidate i* before the abstention gates (None without candidates).
    candidate_label: str | None = None
    #: Per-claim fallback counts (kinds: ``pipeline.FALLBACK_KINDS``).
    fallbacks: dict[str, int] = field(default_factory=dict)
    #: A claim-level rule's AVeriTeC label (the Conflicting rule), replacing the candidate's
    #: label in ``pred_label`` unless the claim abstained as Uncertain.
    rule_label: str | None = None
    #: The claim-level verdict head's AVeriTeC label (``offline.verdict_head``), replacing the
    #: candidate's and the rule's in ``pred_label`` unless the claim abstained as Uncertain.
    head_label: str | None = None


_DOC_LINE = re.compile(r"^(.*?)(?:#|:|_)(\d+)$")


def fever_page_id(title: str) -> str:
    """A Wikipedia page title as FEVER writes page ids.

    Example:
        >>> fever_page_id("Savages (2012 film)")
        'Savages_-LRB-2012_film-RRB-'
        >>> fever_page_id("Star Wars: Episode I")
        'Star_Wars-COLON-_Episode_I'
    """
    return (title.strip().replace(" ", "_").replace("(", "-LRB-").replace(")", "-RRB-")
            .replace(":", "-COLON-"))


_FEVER_SENTENCE = re.compile(r"^(.+)#(\d+)$")


def _page_line(p: Passage) -> list[Any]:
    """``[page, line]`` of a passage: its title as a FEVER page id, the line from its doc id.

    A FEVER wiki-pages sentence unit (doc id ``<FEVER page id>#<line>`` whose page id reads
    as the passage's title) keeps its page id verbatim, so ``predicted_evidence`` is the
    FEVER evidence id itself.

    Example:
        >>> _page_line(Passage("doc-17#3", "Barack Obama", "", "x"))
        ['Barack_Obama', 3]
        >>> _page_line(Passage("Barack_Obama:2", "", "", "x"))
        ['Barack_Obama', 2]
        >>> _page_line(Passage("Star_Wars-COLON-_Episode_I_-LSB-x-RSB-#4", "Star Wars: Episode I [x]", "", "x"))
        ['Star_Wars-COLON-_Episode_I_-LSB-x-RSB-', 4]
    """
    from averitec_tools.loaders.fever import page_title

    fever = _FEVER_SENTENCE.match(p.doc_id)
    if fever is not None and page_title(fever.group(1)) == p.title:
        return [fever.group(1), int(fever.group(2))]
    m = _DOC_LINE.match(p.doc_id)
    line = int(m.group(2)) if m and m.group(1) else 0
    if p.title.strip():
        return [fever_page_id(p.title), line]
    return [m.group(1) if m and m.group(1) else p.doc_id, line]


def _citations(passages: Sequence[Passage]) -> list[dict[str, str]]:
    return [{"doc_id": p.doc_id, "title": p.title, "url": p.url} for p in passages]


def _diagnostics(pred: ClaimPrediction) -> dict[str, Any]:
    return {
        "label": pred.label,
        "candidate_label": pred.candidate_label,
        "abstained": pred.abstained,
        "reason": pred.reason,
        "s_ver": pred.s_ver,
        "rule_label": pred.rule_label,
        "n_candidates": pred.n_candidates,
        "n_malformed": pred.n_malformed,
        "evidence": "top_retrieved" if pred.fallbacks.get("uncited_top_evidence") else "cited",
        **({"head_label": pred.head_label} if pred.head_label is not None else {}),
    }


def averitec_label(pred: ClaimPrediction) -> str:
    """``pred_label``: the R2VC label in the 4-way space, or the verdict head's, or the claim rule's (Conflicting).

    A claim that abstained *as Uncertain* (``on_abstain: uncertain``) stays Not Enough
    Evidence: the gates decide before the rule.
    """
    if pred.head_label is not None:  # the verdict head's label (``label``: it, or Uncertain where it abstained so)
        return map_label("Uncertain", source="r2vc", target="averitec") if pred.label == "Uncertain" else pred.head_label
    label = map_label(pred.label, source="r2vc", target="averitec")
    if pred.rule_label is None or (pred.abstained and pred.label == "Uncertain"):
        return label
    return pred.rule_label


def to_averitec2024(pred: ClaimPrediction) -> dict[str, Any]:
    """Format one prediction in the AVeriTeC 2024 submission format."""
    return {
        "claim_id": pred.claim.claim_id,
        "claim": pred.claim.claim,
        "pred_label": averitec_label(pred),
        "evidence": [
            {"question": q, "answer": p.text, "url": p.url}
            # FEVER/VitaminC claims get no written question (counted as questions_not_written)
            for q, p in zip(pred.questions or [fallback_question(pred.claim.claim)] * len(pred.cited),
                            pred.cited, strict=True)
        ],
        "confidence": pred.confidence,
        "rationale": pred.rationale,
        "citations": _citations(pred.cited),
        "r2vc": _diagnostics(pred),
    }


def to_ternary(pred: ClaimPrediction) -> dict[str, Any]:
    """Format one prediction for FEVER/VitaminC."""
    return {
        "id": pred.claim.claim_id,
        "claim": pred.claim.claim,
        "predicted_label": map_label(pred.label, source="r2vc", target="fever"),
        "predicted_evidence": [_page_line(p) for p in pred.cited],
        "confidence": pred.confidence,
        "rationale": pred.rationale,
        "citations": _citations(pred.cited),
        "r2vc": _diagnostics(pred),
    }


@dataclass(frozen=True)
class OutputFormat:
    """One prediction output format (an entry of :data:`OUTPUT_FORMATS`).

    Attributes:
        name: The format's name (``--format``).
        format: One prediction → its output record.
        space: The label space the file is scored in (``averitec score`` compares there).
        label_key: The record field holding the predicted label.
        json_lines: JSON lines (one record a line); otherwise one JSON array.
    """

    name: str
    format: Callable[[ClaimPrediction], dict[str, Any]]
    space: str
    label_key: str
    json_lines: bool

    @property
    def suffix(self) -> str:
        """The file suffix of a prediction file in this format."""
        return ".jsonl" if self.json_lines else ".json"


#: Output format name → :class:`OutputFormat`.
OUTPUT_FORMATS: Registry[OutputFormat] = Registry("output format")
OUTPUT_FORMATS.add("averitec2024", OutputFormat("averitec2024", to_averitec2024, space="averitec",
                                                label_key="pred_label", json_lines=False))
OUTPUT_FORMATS.add("ternary", OutputFormat("ternary", to_ternary, space="fever", label_key="predicted_label",
                                           json_lines=True))


def default_format(claims: Sequence[ClaimInput]) -> str:
    """``averitec2024`` for AVeriTeC claims, ``ternary`` for FEVER/VitaminC claims.

    Example:
        >>> fmt = OUTPUT_FORMATS.get(default_format([ClaimInput("x1", "A claim.", kind="ternary")]))
        >>> fmt.name, fmt.space, fmt.label_key, fmt.suffix
        ('ternary', 'fever', 'predicted_label', '.jsonl')
        >>> OUTPUT_FORMATS.get("averitec2024").format(ClaimPrediction(
        ...     claim=ClaimInput(0, "A claim."), label="Uncertain", confidence=0.2, rationale="", cited=(),
        ...     questions=(), abstained=True, reason="tau_cal", s_ver=None, n_candidates=0,
        ...     n_malformed=0))["pred_label"]
        'Not Enough Evidence'
    """
    return "ternary" if claims and claims[0].kind == "ternary" else "averitec2024"


def write_predictions(records: Sequence[dict[str, Any]], *, out: str | os.PathLike[str], output_format: str) -> None:
    """Write the final prediction file atomically: a JSON array (``averitec2024``) or JSON lines."""
    from averitec_tools.baselines._run.output import write_rows

    write_rows(records, out=out, json_lines=OUTPUT_FORMATS.get(output_format).json_lines)


__all__ = ["write_predictions", "FALLBACK_EVIDENCE", "OUTPUT_FORMATS", "VERDICT_FIELDS", "ClaimPrediction",
           "default_format", "fever_page_id", "to_ternary"]
