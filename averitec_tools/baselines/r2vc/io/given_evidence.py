"""``--evidence given``: claims that carry their own evidence skip retrieval (oracle documents).

The paper's oracle-document setting (Table I.5: "oracle-document evaluation bypasses
retrieval and isolates downstream reasoning and verification"). Each claim's evidence
pool E(c) is read from the claim file itself:

* **VitaminC** rows (``tals/vitaminc``: ``unique_id``, ``claim``, ``evidence``, ``page``,
  ``label`` ...): the evidence sentence is one passage titled by ``page``;
* standardised rows (``{claim, evidence_text, label}``, the ``*/r2vc`` views): one
  passage, or one per ``[Title, line N] sentence`` segment of a flattened FEVER
  evidence text (:func:`averitec_tools.loaders.fever.flatten_evidence`);
* **FEVER** rows: every distinct gold ``(page, line)`` over all evidence sets, in
  first-seen order — the sentence from the item itself when it carries it (the loader's
  exported rows: ``{"page", "line", "text"}`` items) or else looked up by doc id
  ``<page>#<line>`` in a FEVER wiki-pages store (``averitec index corpus --fever-wiki``)
  passed as ``--corpus``, so ``predicted_evidence`` is FEVER evidence;
* **AVeriTeC** claims: every gold answer (:func:`~averitec_tools.baselines.r2vc.corpus.averitec_answers.answer_passages`).

Numbers from this setting are oracle-document figures and are labelled so in the run
summary (``evidence: "given"``). FEVER's NOT ENOUGH INFO claims have no gold sentences:
their pool is empty and the pipeline abstains on them, so in this setting an empty pool
*is* the NEI label — one more reason the numbers are not open-corpus numbers.

Example:
    >>> import json, tempfile, pathlib
    >>> from averitec_tools.baselines.r2vc.io.claims import read_claims
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "vitaminc.jsonl"
    >>> _ = p.write_text(json.dumps({"unique_id": "u1", "case_id": "c1", "claim": "A is 3.",
    ...     "evidence": "A is three.", "page": "A", "label": "SUPPORTS"}) + "\\n")
    >>> claims = with_given_evidence(path=str(p), claims=read_claims(str(p)))
    >>> claims[0].claim_id, claims[0].gold_label, [e.text for e in claims[0].evidence]
    ('u1', 'True', ['A is three.'])
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from averitec_tools.baselines.r2vc.io.claims import ClaimInput
from averitec_tools.baselines.r2vc.io.formats import fever_page_id
from averitec_tools.baselines.r2vc.types import Passage
from averitec_tools.errors import UserError

#: Values of ``--evidence``.
EVIDENCE_SETTINGS: tuple[str, ...] = ("retrieved", "given")

#: What the run summary's ``components.retrieval`` says in the given-evidence setting.
GIVEN_COMPONENT = "none: given evidence (oracle-document setting; retrieval skipped)"

_FLAT_SEGMENT = re.compile(r"\[([^\[\]]+?), line (\d+)\]\s*")


def split_flat_evidence(text: str, *, where: str) -> list[Passage]:
    """Passages of a standardised ``evidence_text``: one per ``[Title, line N] sentence``
    segment when the text is a flattened FEVER evidence text, else the whole text.

    Example:
        >>> [(p.doc_id, p.title, p.text) for p in split_flat_evidence(
        ...     "[Soul Food (film), line 0] It is a film. [B, line 2] Bee.", where="x")]
        [('Soul_Food_-LRB-film-RRB-#0', 'Soul Food (film)', 'It is a film.'), ('B#2', 'B', 'Bee.')]
        >>> [p.text for p in split_flat_evidence("Plain evidence.", where="x")]
        ['Plain evidence.']
    """
    segments = list(_FLAT_SEGMENT.finditer(text))
    if not segments or segments[0].start() != 0:
        return [Passage(doc_id=where, title="", url="", text=text.strip())] if text.strip() else []
    out = []
    for i, m in enumerate(segments):
        end = segments[i + 1].start() if i + 1 < len(segments) else len(text)
        sentence = text[m.end():end].strip()
        if sentence:
            title = m.group(1).strip()
            out.append(Passage(doc_id=f"{fever_page_id(title)}#{m.group(2)}", title=title, url="", text=sentence))
    return out


def _fever_passages(item: Mapping[str, Any], *, where: str, claim_id: Any, store: Any) -> list[Passage]:
    from averitec_tools.baselines.r2vc.corpus.fever_wiki import (
        detokenize_brackets,
        page_url,
        sentence_doc_id,
    )
    from averitec_tools.loaders.fever import page_title

    groups = item.get("evidence") or []
    if not isinstance(groups, list):
        raise UserError(f"{where}: field 'evidence' must be a list of evidence groups")
    seen: dict[tuple[str, int], str | None] = {}
    for group in groups:
        for e in group if isinstance(group, list) else []:
            if isinstance(e, Mapping):  # the loader's exported rows carry the sentence text
                page, line, text = e.get("page"), e.get("line"), e.get("text")
            elif isinstance(e, list) and len(e) == 4:
                page, line, text = e[2], e[3], None
            else:
                raise UserError(f"{where}: evidence item must be [annotation_id, evidence_id, page, line], "
                                f"found {e!r}")
            if page is None or line is None:
                continue
            if seen.get((str(page), int(line))) is None:
                seen[(str(page), int(line))] = text if isinstance(text, str) and text.strip() else None
    out = []
    for (page, line), text in seen.items():
        doc_id = sentence_doc_id(page, line)
        if text is None:
            if store is None:
                raise UserError(f"{where}: claim {claim_id!r}: FEVER evidence {page}#{line} carries no sentence text",
                                hint="pass --corpus with a FEVER wiki-pages store (averitec index corpus "
                                "--fever-wiki WIKI_PAGES --out DIR)")
            try:
                out.append(store.get(doc_id))
            except KeyError:
                raise UserError(f"{where}: claim {claim_id!r}: evidence sentence {doc_id!r} is not in the corpus "
                                f"{getattr(store, 'path', '')}",
                                hint="build the corpus from FEVER's wiki-pages with averitec index corpus "
                                "--fever-wiki") from None
            continue
        out.append(Passage(doc_id=doc_id, title=page_title(page), url=page_url(page), text=detokenize_brackets(text)))
    return out


def evidence_of(item: Any, *, where: str, claim: ClaimInput, store: Any = None) -> tuple[Passage, ...]:
    """The evidence passages a claim file item carries (see the module docs).

    Raises:
        UserError: the item carries no evidence, or FEVER sentences cannot be resolved.
    """
    if not isinstance(item, Mapping):
        raise UserError(f"{where}: expected a claim object")
    if "questions" in item:
        from averitec_tools.baselines.r2vc.corpus.averitec_answers import answer_passages
        from averitec_tools.records.averitec import AVeriTeCClaim

        parsed = AVeriTeCClaim.from_dict(item, where=where, claim_id=claim.claim_id)
        return tuple(p for _, p in answer_passages([parsed], split=f"given-{claim.claim_id}"))
    if isinstance(item.get("evidence_text"), str):
        return tuple(split_flat_evidence(item["evidence_text"], where=str(claim.claim_id)))
    evidence = item.get("evidence")
    if isinstance(evidence, str):  # VitaminC: one sentence, titled by its page
        page = item.get("page")
        title = page.strip() if isinstance(page, str) else ""
        return (Passage(doc_id=str(claim.claim_id), title=title, url="", text=evidence.strip()),) \
            if evidence.strip() else ()
    if isinstance(evidence, list):
        return tuple(_fever_passages(item, where=where, claim_id=claim.claim_id, store=store))
    raise UserError(f"{where}: claim {claim.claim_id!r} carries no evidence ('evidence', 'evidence_text' or "
                    "'questions')", hint="--evidence given needs claims with their own evidence; drop it to retrieve")


def with_given_evidence(*, path: str, claims: Sequence[ClaimInput], store: Any = None) -> list[ClaimInput]:
    """``claims`` (read from ``path`` by :func:`~averitec_tools.baselines.r2vc.io.claims.read_claims`,
    possibly cut to their first n) with their own evidence attached.

    Args:
        path: The claim file.
        claims: Its claims, in file order.
        store: A :class:`~averitec_tools.baselines.r2vc.corpus.store.ParagraphStore` to look
            FEVER sentences up in (a FEVER wiki-pages store), or None.
    """
    from averitec_tools.jsonio import iter_records

    out: list[ClaimInput] = []
    for claim, loc in zip(claims, iter_records(path), strict=False):
        out.append(replace(claim, evidence=evidence_of(loc.value, where=loc.where, claim=claim, store=store)))
    return out


__all__ = ["GIVEN_COMPONENT", "with_given_evidence"]
