"""Claim input and prediction output formats of the R2VC pipeline.

Input: an AVeriTeC file (``dev.json``-style array of claims; ``claim_id`` is the
claim's position unless the item has one) or a FEVER/VitaminC-style file (JSON array or
JSONL of ``{id, claim, label?}``).

Output:

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

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from averitec_tools.baselines.r2vc.types import Passage
from averitec_tools.errors import UserError
from averitec_tools.jsonio import iter_records
from averitec_tools.labels import map_label

#: The label space an output format is scored in (``averitec score`` compares there).
FORMAT_SPACES: dict[str, str] = {"averitec2024": "averitec", "ternary": "fever"}
#: The label space a claim file's ``label`` field is written in, by :attr:`ClaimInput.kind`.
KIND_SPACES: dict[str, str] = {"averitec": "averitec", "ternary": "fever"}
#: Evidence items listed when the prediction cites nothing.
FALLBACK_EVIDENCE = 3


@dataclass(frozen=True)
class ClaimInput:
    """One claim to check.

    Attributes:
        claim_id: AVeriTeC: the position in the file (or the item's ``claim_id``);
            FEVER/VitaminC: the item's ``id``.
        claim: Claim text.
        gold_label: Gold label in the R2VC space (True/False/Uncertain), if known.
        gold_label_raw: Gold label as written in the file.
        kind: ``"averitec"`` or ``"ternary"`` (FEVER ``id`` / VitaminC ``unique_id``
            rows) — selects the default output format.
        evidence: The claim's own evidence passages (``--evidence given``), or ``None``.
    """

    claim_id: Any
    claim: str
    gold_label: str | None = None
    gold_label_raw: str | None = None
    kind: str = "averitec"
    #: The claim's own evidence (``--evidence given``, the oracle-document setting):
    #: retrieval is skipped and these passages are the pool E(c). ``None``: retrieve.
    evidence: tuple[Passage, ...] | None = field(default=None, repr=False)


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
        from averitec_tools.baselines.r2vc.given_evidence import with_given_evidence

        store = None
        if corpus:
            from averitec_tools.baselines.r2vc.corpus import ParagraphStore

            store = ParagraphStore.open(corpus)
        claims = with_given_evidence(path=path, claims=claims, store=store)
    return claims


def read_claims(path: str) -> list[ClaimInput]:
    """Read claims from an AVeriTeC or FEVER/VitaminC file (errors name file and item).

    Example:
        >>> import json, tempfile, pathlib
        >>> p = pathlib.Path(tempfile.mkdtemp()) / "c.json"
        >>> _ = p.write_text(json.dumps([{"claim": "A.", "label": "Refuted"}]))
        >>> read_claims(str(p))[0]
        ClaimInput(claim_id=0, claim='A.', gold_label='False', gold_label_raw='Refuted', kind='averitec')
    """
    out: list[ClaimInput] = []
    seen: set[Any] = set()
    for loc in iter_records(path):
        item = loc.value
        if not isinstance(item, Mapping):
            raise UserError(f"{loc.where}: expected a claim object, found {type(item).__name__}")
        claim = item.get("claim")
        if not isinstance(claim, str) or not claim.strip():
            raise UserError(f"{loc.where}: missing or empty 'claim' text")
        # FEVER rows have an ``id``, VitaminC rows (``tals/vitaminc``) a ``unique_id``.
        ternary_key = next((key for key in ("id", "unique_id") if key in item), None)
        kind = "ternary" if ternary_key is not None and "questions" not in item else "averitec"
        claim_id = item[ternary_key] if kind == "ternary" else item.get("claim_id", loc.index)
        if not isinstance(claim_id, (int, str)) or isinstance(claim_id, bool):
            raise UserError(f"{loc.where}: claim id must be an integer or string, found {claim_id!r}")
        if claim_id in seen:
            raise UserError(f"{loc.where}: duplicate claim id {claim_id!r}")
        seen.add(claim_id)
        raw = item.get("label")
        gold = None
        if raw is not None:
            space = "averitec" if kind == "averitec" else "fever"
            gold = map_label(str(raw), source=space, target="r2vc", where=f"{loc.where} (claim {claim_id!r})")
        out.append(ClaimInput(claim_id=claim_id, claim=claim, gold_label=gold,
                              gold_label_raw=None if raw is None else str(raw), kind=kind))
    if not out:
        raise UserError(f"{path}: no claims in file")
    return out


def scored_gold(claim: ClaimInput, *, space: str | None = None) -> str | None:
    """The claim's gold label in the space it is scored in (``None`` without a label).

    ``space`` defaults to the claim file's own space (AVeriTeC's four labels, FEVER's
    three): Conflicting Evidence/Cherrypicking stays itself, so no R2VC label matches it,
    exactly as ``averitec score`` counts it.

    Example:
        >>> c = ClaimInput(0, "x", "Uncertain", "Conflicting Evidence/Cherrypicking")
        >>> scored_gold(c), scored_label("Uncertain", space="averitec")
        ('Conflicting Evidence/Cherrypicking', 'Not Enough Evidence')
    """
    if claim.gold_label_raw is None:
        return None
    source = KIND_SPACES[claim.kind]
    return map_label(claim.gold_label_raw, source=source, target=space or source)


def scored_label(label: str, *, space: str) -> str:
    """An R2VC label (True/False/Uncertain) written in ``space``, as an output file has it."""
    return map_label(label, source="r2vc", target=space)


class QuestionWriter(Protocol):
    """Writes the evidence question a passage answers for a claim."""

    def write(self, *, claim: str, passages: Sequence[Passage]) -> list[str]:
        ...


def fallback_question(claim: str) -> str:
    """The question used when no generator is configured: ``Is it true that <claim>?``.

    Example:
        >>> fallback_question("The sky is green.")
        'Is it true that the sky is green?'
    """
    text = claim.strip().rstrip(".!?").strip()
    if text and text[0].isupper() and not text[:2].isupper():
        text = text[0].lower() + text[1:]
    return f"Is it true that {text}?"


class FallbackQuestionWriter:
    """Every evidence item gets :func:`fallback_question` of the claim."""

    name = "template:'Is it true that <claim>?'"

    def write(self, *, claim: str, passages: Sequence[Passage]) -> list[str]:
        return [fallback_question(claim) for _ in passages]


class LMQuestionWriter:
    """Asks the generator's causal LM, greedily, for the question each passage answers.

    Only with ``generator.question_writer: lm``: SFT/DPO never train the generator to
    write questions, so the default is :class:`FallbackQuestionWriter`.

    Args:
        model: A transformers causal LM (e.g. ``HFGenerator.model``).
        tokenizer: Its tokenizer (with a chat template).
        max_new_tokens: Budget per question.

    Outputs that do not look like a question fall back to :func:`fallback_question`;
    ``n_fallback`` counts them (the run summary reports them as ``template_question``).
    """

    def __init__(self, *, model: Any, tokenizer: Any, max_new_tokens: int = 32, system: str | None = None) -> None:
        self.name = f"lm:{getattr(getattr(model, 'config', None), '_name_or_path', type(model).__name__)}"
        self.n_fallback = 0
        self.model = model
        self.tokenizer = tokenizer
        self.max_new_tokens = max_new_tokens
        #: A reasoning switch ("detailed thinking off") goes first; the instruction follows.
        self.system = system

    def write(self, *, claim: str, passages: Sequence[Passage]) -> list[str]:
        import torch

        out = []
        for p in passages:
            instruction = "You write the question a fact-checker asked to find a piece of evidence."
            user = f"Claim: {claim}\nEvidence: {p.text[:1000]}\nWrite one short question that this evidence answers."
            messages = ([{"role": "system", "content": self.system}, {"role": "user", "content": f"{instruction}\n{user}"}]
                        if self.system else
                        [{"role": "system", "content": instruction}, {"role": "user", "content": user}])
            prompt = self.tokenizer.apply_chat_template(messages, tokenize=False, add_generation_prompt=True)
            # The chat template already wrote the begin-of-text token: adding special tokens
            # again would give Llama tokenizers a second one. token_type_ids (BERT-style
            # tokenizers) are not a causal LM input.
            enc = self.tokenizer(prompt, return_tensors="pt", return_token_type_ids=False,
                                 add_special_tokens=False).to(self.model.device)
            with torch.inference_mode():
                ids = self.model.generate(**enc, max_new_tokens=self.max_new_tokens, do_sample=False,
                                          pad_token_id=self.tokenizer.pad_token_id)
            text = self.tokenizer.decode(ids[0, enc["input_ids"].shape[1]:], skip_special_tokens=True)
            question = text.strip().splitlines()[0].strip() if text.strip() else ""
            if question.endswith("?") and len(question) > 5:
                out.append(question)
            else:
                self.n_fallback += 1
                out.append(fallback_question(claim))
        return out


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
        "n_candidates": pred.n_candidates,
        "n_malformed": pred.n_malformed,
        "evidence": "top_retrieved" if pred.fallbacks.get("uncited_top_evidence") else "cited",
    }


def to_averitec2024(pred: ClaimPrediction) -> dict[str, Any]:
    """Format one prediction in the AVeriTeC 2024 submission format."""
    return {
        "claim_id": pred.claim.claim_id,
        "claim": pred.claim.claim,
        "pred_label": map_label(pred.label, source="r2vc", target="averitec"),
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


FORMATTERS = {"averitec2024": to_averitec2024, "ternary": to_ternary}


def default_format(claims: Sequence[ClaimInput]) -> str:
    """``averitec2024`` for AVeriTeC claims, ``ternary`` for FEVER/VitaminC claims."""
    return "ternary" if claims and claims[0].kind == "ternary" else "averitec2024"


__all__ = [
    "FALLBACK_EVIDENCE",
    "FORMATTERS",
    "FORMAT_SPACES",
    "KIND_SPACES",
    "ClaimInput",
    "ClaimPrediction",
    "FallbackQuestionWriter",
    "LMQuestionWriter",
    "QuestionWriter",
    "default_format",
    "fallback_question",
    "fever_page_id",
    "load_claims",
    "read_claims",
    "scored_gold",
    "scored_label",
    "to_averitec2024",
    "to_ternary",
]
