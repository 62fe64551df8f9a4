"""Stage 6: the justification, from "claim + evidence QA + verdict" to text.

``Seq2SeqJustifier`` runs a fine-tuned seq2seq checkpoint (``justification.checkpoint``,
trained from ``facebook/bart-large`` by ``averitec baseline averitec train justification``;
2 beams, at most 99 new tokens = upstream's ``max_length=100``, which counts the decoder
start token). A seq2seq model without a checkpoint is refused unless the config names that
ablation (``justification.untrained: true``). ``ExtractiveJustifier`` is the named
fallback without BART weights: the verdict followed by the top evidence, verbatim.

Inputs (``justification.input``): ``upstream`` — ``[CLAIM] <claim> [EVIDENCE] <q>? <a>. …
[VERDICT] <label>`` built as the 2023 data loader builds it (a "?" added to each question, a
"." to each answer, Boolean answers as "<answer>. <explanation>", one space after each
question's answers, and one more before ``[VERDICT]``); ``plain`` — ``Claim: … Evidence: …
Verdict: …``.

Training (``justification.train``; upstream: lr 1e-5, batch 32, gradient accumulation 4,
20 epochs): inputs and targets cut at ``max_length`` tokens; the decoder starts from the
pad token (``decoder_start: pad``, as upstream) or the model's start token; after each
epoch the held-out training claims' justifications are generated and the epoch with the
best mean METEOR against the gold ones is kept (upstream: on dev).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from averitec_tools.baselines.averitec.config import JUSTIFICATION_FALLBACK, JustificationConfig
from averitec_tools.baselines.averitec.io.data import ClaimItem, QAPair
from averitec_tools.errors import UserError


def upstream_input(*, claim: str, questions: Iterable[tuple[str, Sequence[str]]], verdict: str) -> str:
    """The upstream justification input from (question, answer texts) groups.

    Example:
        >>> upstream_input(claim="C", questions=[("Was it", ["No. X"]), ("", ["skipped"])], verdict="Refuted")
        '[CLAIM] C [EVIDENCE] Was it? No. X.  [VERDICT] Refuted'
    """
    text = f"[CLAIM] {claim} [EVIDENCE] "
    for question, answers in questions:
        q = question.strip()
        if not q:
            continue
        text += q if q.endswith("?") else q + "?"
        for a in answers:
            if a and not a.endswith("."):
                a += "."
            text += " " + a.strip()
        text += " "
    return text + f" [VERDICT] {verdict}"


def _grouped(evidence: Sequence[QAPair]) -> list[tuple[str, list[str]]]:
    """Consecutive pairs with the same question as one question with several answers."""
    groups: list[tuple[str, list[str]]] = []
    for p in evidence:
        answer = p.with_explanation(". ")
        if groups and groups[-1][0] == p.question:
            groups[-1][1].append(answer)
        else:
            groups.append((p.question, [answer]))
    return groups


def justification_input(*, claim: str, evidence: Sequence[QAPair], verdict: str, style: str = "upstream") -> str:
    """The seq2seq input text.

    Example:
        >>> justification_input(claim="C.", evidence=[QAPair("Q?", "A")], verdict="Refuted")
        '[CLAIM] C. [EVIDENCE] Q? A.  [VERDICT] Refuted'
        >>> justification_input(claim="C.", evidence=[QAPair("Q?", "A.")], verdict="Refuted", style="plain")
        'Claim: C. Evidence: Q? A. Verdict: Refuted'
    """
    if style == "upstream":
        return upstream_input(claim=claim, questions=_grouped(evidence), verdict=verdict)
    qa = " ".join(p.text for p in evidence)
    return f"Claim: {claim} Evidence: {qa} Verdict: {verdict}"


def justification_examples(claims: Sequence[ClaimItem], *, style: str) -> list[tuple[str, str]]:
    """(input from the gold evidence and label, gold justification) of labelled claims.

    Example:
        >>> from averitec_tools.records.averitec import AVeriTeCClaim
        >>> c = AVeriTeCClaim.from_dict({"claim": "C", "label": "Refuted", "justification": " J. ", "questions": [
        ...     {"question": "Q", "answers": [{"answer": "No", "answer_type": "Boolean",
        ...                                     "boolean_explanation": "X"}]}]}, where="x")
        >>> justification_examples([ClaimItem(0, c)], style="upstream")
        [('[CLAIM] C [EVIDENCE] Q? No. X.  [VERDICT] Refuted', 'J.')]
    """
    out = []
    for c in claims:
        r = c.record
        if not r.justification or not r.justification.strip() or not r.label:
            continue
        if style == "upstream":
            groups = [(q.question, [f"{a.answer}. {a.boolean_explanation}" if a.answer_type == "Boolean"
                                    else a.answer for a in q.answers]) for q in r.questions]
            source = upstream_input(claim=c.claim, questions=groups, verdict=r.label)
        else:
            from averitec_tools.baselines.averitec.io.data import gold_pairs

            source = justification_input(claim=c.claim, evidence=gold_pairs(r), verdict=r.label, style="plain")
        out.append((source, r.justification.strip()))
    return out


class ExtractiveJustifier:
    """The fallback: verdict + the top ``n`` evidence QA pairs.

    Example:
        >>> ExtractiveJustifier().justify([("C.", [QAPair("Q?", "A.")], "Refuted")])
        ['Refuted. The evidence says: Q? A.']
    """

    component = JUSTIFICATION_FALLBACK

    def __init__(self, n: int = 2) -> None:
        self.n = n

    def justify(self, items: Sequence[tuple[str, Sequence[QAPair], str]]) -> list[str]:
        out = []
        for _, evidence, verdict in items:
            top = " ".join(p.text for p in evidence[: self.n])
            out.append(f"{verdict}. The evidence says: {top}" if top else f"{verdict}. No evidence was found.")
        return out


def generate(model: Any, tokenizer: Any, texts: Sequence[str], config: JustificationConfig) -> list[str]:
    import torch

    out: list[str] = []
    bs = max(1, config.batch_size)
    start = {"decoder_start_token_id": tokenizer.pad_token_id} if config.decoder_start == "pad" else {}
    for i in range(0, len(texts), bs):
        enc = tokenizer(list(texts[i : i + bs]), return_tensors="pt", padding=True, truncation=True,
                        max_length=config.max_length).to(model.device)
        enc = {k: v for k, v in enc.items() if k in ("input_ids", "attention_mask")}
        with torch.no_grad():
            gen = model.generate(**enc, num_beams=config.num_beams, max_new_tokens=config.max_new_tokens,
                                 do_sample=False, **start)
        out.extend(t.strip() for t in tokenizer.batch_decode(gen, skip_special_tokens=True))
    return out


class Seq2SeqJustifier:
    """Justification generated by a seq2seq LM (a checkpoint trained with ``averitec
    baseline averitec train justification``, or the named untrained ablation), loaded on
    the first :meth:`justify`."""

    def __init__(self, *, config: JustificationConfig) -> None:
        from averitec_tools.baselines.averitec.models import describe

        self.config = config
        _, component = describe(model=config.checkpoint or config.model)
        self.component = component if config.checkpoint else f"{component} (untrained ablation)"
        self._loaded: tuple[Any, Any] | None = None
        self.load_seconds = 0.0

    def justify(self, items: Sequence[tuple[str, Sequence[QAPair], str]]) -> list[str]:
        if self._loaded is None:
            import time

            from averitec_tools.baselines.averitec.models import load_seq2seq

            t0 = time.perf_counter()
            model, tok, _ = load_seq2seq(model=self.config.checkpoint or self.config.model, device=self.config.device,
                                         add_prefix_space=self.config.input == "upstream")
            self._loaded = (model, tok)
            self.load_seconds = time.perf_counter() - t0
        texts = [justification_input(claim=c, evidence=e, verdict=v, style=self.config.input) for c, e, v in items]
        return generate(*self._loaded, texts, self.config)


def build_justifier(*, config: JustificationConfig, config_name: str = "config") -> Any:
    """The configured justifier; a seq2seq model without ``checkpoint`` is refused unless
    ``untrained: true`` names the ablation."""
    if config.model == JUSTIFICATION_FALLBACK and not config.checkpoint:
        return ExtractiveJustifier()
    if config.checkpoint:
        from pathlib import Path

        if not Path(config.checkpoint).is_dir():
            raise UserError(f"config {config_name!r}: justification.checkpoint {config.checkpoint!r}: no such directory")
    elif not config.untrained:
        raise UserError(
            f"config {config_name!r}: justification.checkpoint is not set",
            hint=f"train one with 'averitec baseline averitec train justification --config {config_name} --out DIR' "
            f"and set justification.checkpoint: DIR, or set justification.untrained: true to run the "
            f"un-fine-tuned {config.model} as a named ablation")
    return Seq2SeqJustifier(config=config)


__all__ = ["ExtractiveJustifier", "build_justifier", "generate", "justification_examples", "justification_input"]
