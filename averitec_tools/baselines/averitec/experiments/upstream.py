"""The upstream route: the organisers' shipped checkpoints and stage files, in this pipeline.

The shipped Lightning checkpoints (``bert_dual_encoder.ckpt``, ``bert_veracity.ckpt``) are
converted by :mod:`~averitec_tools.baselines.averitec.training.upstream_checkpoints`; this module reads
the shipped stage files.

The shipped stage files (``data_store/``, JSON lines, ``claim_id`` = position in the claims
file) start the run at any stage (:func:`run_from_stage`):

* ``dev_top_k_sentences.json`` — ``{claim_id, claim, top_<k>: [{sentence, url}]}``: the
  BM25 sentences; questions → reranker → verdict → justification run here;
* ``dev_top_k_qa.json`` — ``{claim_id, claim, bm25_qau: [[question, answer, url]]}``: the
  generated QA pairs; reranker → verdict → justification;
* ``dev_top_3_rerank_qa.json`` — ``{claim_id, claim, evidence: [{question, answer, url}]}``
  (a 2024 prediction file has the same shape): the evidence; verdict → justification.

Every computed stage goes through the stage cache (keyed by the imported record), so an
interrupted run continues where it stopped; the evidence written is the imported evidence
itself when the file is a rerank file.

Example:
    >>> import json, tempfile, pathlib
    >>> f = pathlib.Path(tempfile.mkdtemp()) / "dev_top_3_rerank_qa.json"
    >>> _ = f.write_text(json.dumps({"claim_id": 0, "claim": "C.", "evidence": [
    ...     {"question": "Q?", "answer": "A.", "url": "u"}]}) + "\\n")
    >>> stage, records = read_stage_file(f)
    >>> stage, records[0]["evidence"][0]["question"]
    ('rerank', 'Q?')
"""

from __future__ import annotations

import json
import os
import re
import time
from collections import Counter
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from averitec_tools.baselines.averitec.config import AVeriTeCConfig, cache_dir
from averitec_tools.baselines.averitec.io.data import ClaimItem, QAPair, read_claims
from averitec_tools.errors import UserError
from averitec_tools.hashing import file_sha256

#: Stage file kinds, in pipeline order, and the stages each leaves to run.
STAGE_FILES: Mapping[str, tuple[str, ...]] = {
    "sentences": ("questions", "reranker", "verdict", "justification"),
    "qa": ("reranker", "verdict", "justification"),
    "rerank": ("verdict", "justification"),
}
_TOP_K = re.compile(r"top_\d+$")


def _kind_of(record: Mapping[str, Any]) -> str | None:
    if isinstance(record.get("evidence"), list):
        return "rerank"
    if isinstance(record.get("bm25_qau"), list):
        return "qa"
    if any(_TOP_K.match(k) and isinstance(v, list) for k, v in record.items()):
        return "sentences"
    return None


def read_stage_file(path: str | os.PathLike[str]) -> tuple[str, dict[int, dict[str, Any]]]:
    """(stage kind, claim_id → record) of an upstream stage file (JSON lines, or a JSON
    array such as a 2024 prediction file).

    Raises:
        UserError: unreadable, a record without ``claim_id`` or of an unknown shape, two
            kinds mixed, or a claim id twice (naming the line).
    """
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise UserError(f"{p}: cannot be read ({type(exc).__name__})") from None
    stripped = text.lstrip()
    rows: list[tuple[int, Any]]
    if stripped.startswith("["):
        try:
            rows = list(enumerate(json.loads(text), start=1))
        except json.JSONDecodeError as exc:
            raise UserError(f"{p}: not valid JSON ({exc.msg}, line {exc.lineno})") from None
    else:
        rows = []
        for n, line in enumerate(text.splitlines(), start=1):
            if line.strip():
                try:
                    rows.append((n, json.loads(line)))
                except json.JSONDecodeError as exc:
                    raise UserError(f"{p}:{n}: not valid JSON ({exc.msg})") from None
    kinds: set[str] = set()
    out: dict[int, dict[str, Any]] = {}
    for n, rec in rows:
        kind = _kind_of(rec) if isinstance(rec, dict) else None
        if kind is None or not isinstance(rec.get("claim_id"), int) or not isinstance(rec.get("claim"), str):
            raise UserError(f"{p}:{n}: not an upstream stage record (claim_id, claim and one of evidence, "
                            "bm25_qau, top_<k>)")
        if rec["claim_id"] in out:
            raise UserError(f"{p}:{n}: claim_id {rec['claim_id']} appears twice")
        kinds.add(kind)
        out[rec["claim_id"]] = rec
    if len(kinds) > 1:
        raise UserError(f"{p}: mixes stage records ({', '.join(sorted(kinds))})")
    if not out:
        raise UserError(f"{p}: no records")
    return kinds.pop(), out


def _pairs(stage: str, rec: Mapping[str, Any]) -> list[Any]:
    """The record's payload: sentences ``[(text, url)]`` or QA pairs."""
    if stage == "rerank":
        return [QAPair(str(e.get("question", "")), str(e.get("answer", "")), str(e.get("url", "")))
                for e in rec["evidence"]]
    if stage == "qa":
        return [QAPair(str(q), str(a), str(u)) for q, a, u in rec["bm25_qau"]]
    key = next(k for k in rec if _TOP_K.match(k))
    return [(str(s.get("sentence", "")), str(s.get("url", ""))) for s in rec[key]]


class _Stages:
    """The models the remaining stages need, built on first use."""

    def __init__(self, cfg: AVeriTeCConfig, *, exclude: Sequence[str], progress: bool) -> None:
        self.cfg, self.exclude, self.progress = cfg, list(exclude), progress
        self._built: dict[str, Any] = {}

    def get(self, stage: str) -> Any:
        if stage not in self._built:
            self._built[stage] = getattr(self, f"_build_{stage}")()
        return self._built[stage]

    def _classifier(self, kind: str) -> Any:
        from averitec_tools.baselines.averitec.training.checkpoints import obtain_checkpoint
        from averitec_tools.baselines.averitec.training.classifier import PairClassifier

        section = getattr(self.cfg, kind)
        ckpt, _ = obtain_checkpoint(kind=kind, cfg=self.cfg, exclude=self.exclude, progress=self.progress)
        return PairClassifier(checkpoint=ckpt, device=section.train.device, batch_size=section.batch_size,
                              max_length=section.max_length)

    def _build_reranker(self) -> Any:
        return self._classifier("reranker")

    def _build_verdict(self) -> Any:
        return self._classifier("verdict")

    def _build_questions(self) -> Any:
        from averitec_tools.baselines.averitec.stages.questions import build_question_writer
        from averitec_tools.baselines.averitec.training.checkpoints import training_claims

        train, _ = training_claims(self.cfg, exclude=self.exclude)
        return build_question_writer(config=self.cfg.questions, train=train)

    def _build_justification(self) -> Any:
        from averitec_tools.baselines.averitec.stages.justification import build_justifier

        return build_justifier(config=self.cfg.justification, config_name=self.cfg.name)


def _claim_result(*, item: ClaimItem, stage: str, payload: list[Any], stages: _Stages, cache: Any,
                  source: str) -> Any:
    from averitec_tools.baselines.averitec.io.output import NO_EVIDENCE, ClaimResult
    from averitec_tools.baselines.averitec.io.stage_cache import stage_key
    from averitec_tools.baselines.averitec.stages.reranker import rerank_order, reranker_input
    from averitec_tools.baselines.averitec.stages.verdict import decide, verdict_input

    cfg = stages.cfg
    raw = [list(p) if isinstance(p, tuple) else [p.question, p.answer, p.url] for p in payload]
    parent = stage_key(f"upstream-{stage}", [item.claim, raw], "")
    components = {"evidence": source}
    if stage == "sentences":
        writer = stages.get("questions")
        found, _ = cache.fetch("questions", stage_key("questions", writer.component, parent),
                               lambda: {"questions": writer.write([s for s, _ in payload])})
        parent = stage_key("questions", writer.component, parent)
        payload = [QAPair(q, s.replace("\n", " "), u) for q, (s, u) in zip(found["questions"], payload, strict=True)]
        components["questions"] = writer.component
    if stage in ("sentences", "qa"):
        rr = stages.get("reranker")
        settings = [rr.component, cfg.reranker.input, cfg.reranker.keep]
        candidates = payload

        def rank() -> dict[str, Any]:
            order, scores = rerank_order(claim=item.claim, candidates=candidates, scorer=rr, keep=cfg.reranker.keep,
                                         inputs=lambda c, p: reranker_input(claim=c, pair=p, style=cfg.reranker.input))
            return {"order": order, "scores": scores}

        ranked, _ = cache.fetch("reranker", stage_key("reranker", settings, parent), rank)
        parent = stage_key("reranker", settings, parent)
        payload = [candidates[i] for i in ranked["order"]]
        components["reranker"] = rr.component
    evidence: list[QAPair] = payload
    vd = stages.get("verdict")
    v_settings = [vd.component, cfg.verdict.input, vd.max_length]
    style, rule = cfg.verdict.input, cfg.verdict.aggregation

    def judge() -> dict[str, Any]:
        if not evidence:
            return {"probs": []}
        pairs = [verdict_input(claim=item.claim, pair=p, style=style) for p in evidence]
        return {"probs": np.asarray(vd.predict(pairs), dtype=float).tolist()}

    judged, _ = cache.fetch("verdict", stage_key("verdict", v_settings, parent), judge)
    parent = stage_key("verdict", v_settings, parent)
    label, confidence, probabilities = decide(np.asarray(judged["probs"], dtype=float).reshape(-1, 4), rule=rule)
    justifier = stages.get("justification")
    written, _ = cache.fetch("justification", stage_key("justification", [justifier.component, label], parent),
                             lambda: {"text": justifier.justify([(item.claim, evidence, label)])[0]})
    components |= {"verdict": vd.component, "justification": justifier.component}
    fallbacks = [] if evidence else ["no-evidence-placeholder"]
    return ClaimResult(claim_id=item.claim_id, claim=item.claim, label=label, confidence=confidence,
                       probabilities=probabilities, evidence=evidence or [NO_EVIDENCE],
                       justification=written["text"], components=components, fallbacks=fallbacks)


def run_from_stage(*, config: AVeriTeCConfig, claims_path: str | os.PathLike[str],
                   stage_file: str | os.PathLike[str], out: str | os.PathLike[str], limit: int | None = None,
                   output_format: str = "2024", progress: bool = False) -> dict[str, Any]:
    """Run the stages after an upstream stage file's (see the module doc) on the claims of
    ``claims_path`` and write the predictions to ``out``; returns the run summary.

    Raises:
        UserError: a stage file that does not cover the claims (first missing id), whose
            claim text differs from the claims file's (naming the id), or bad files.
    """
    from averitec_tools.baselines.averitec.io.output import write_predictions
    from averitec_tools.baselines.averitec.io.stage_cache import StageCache

    t0 = time.perf_counter()
    stage, records = read_stage_file(stage_file)
    claims = read_claims(claims_path)[:limit] if limit else read_claims(claims_path)
    missing = [c.claim_id for c in claims if c.claim_id not in records]
    if missing:
        raise UserError(f"{stage_file}: no record for claim_id {missing[0]} of {claims_path} "
                        f"({len(missing)} of {len(claims)} claims missing)",
                        hint="pass --limit N to run only the claims it covers")
    for c in claims:
        if records[c.claim_id]["claim"].strip() != c.claim.strip():
            raise UserError(f"{stage_file}: claim_id {c.claim_id}: its claim differs from {claims_path}'s",
                            hint="the stage file belongs to another claims file (claim_id is the position)")
    cache = StageCache(cache_dir(config) / "stages" if config.data.stage_cache else None)
    stages = _Stages(config, exclude=[c.claim for c in claims], progress=progress)
    sha = file_sha256(stage_file)
    source = f"upstream {stage} file {Path(stage_file).name} (sha256 {sha[:12]})"
    from tqdm.auto import tqdm

    results = [_claim_result(item=c, stage=stage, payload=_pairs(stage, records[c.claim_id]), stages=stages,
                             cache=cache, source=source)
               for c in tqdm(claims, desc=f"averitec upstream ({stage})", unit="claim", disable=not progress)]
    write_predictions(results, out=out, output_format=output_format)
    return {"stage_file": str(stage_file), "stage": stage, "sha256": sha, "ran": list(STAGE_FILES[stage]),
            "config": config.name, "out": str(out), "n_claims": len(results),
            "labels": dict(Counter(r.label for r in results)), "components": results[0].components if results else {},
            "stage_cache": cache.counts(), "seconds": round(time.perf_counter() - t0, 2)}


__all__ = ["STAGE_FILES", "read_stage_file", "run_from_stage"]
