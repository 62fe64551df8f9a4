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
from averitec_tools.baselines.averitec.data import ClaimItem, QAPair
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
            from averitec_tools.baselines.averitec.data import gold_pairs

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


def _generate(model: Any, tokenizer: Any, texts: Sequence[str], config: JustificationConfig) -> list[str]:
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
        return _generate(*self._loaded, texts, self.config)


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


def _shift_right(ids: Any, start: int) -> Any:
    shifted = ids.new_full(ids.shape, start)
    shifted[:, 1:] = ids[:, :-1]
    return shifted


def train_justifier(*, config: JustificationConfig, train: Sequence[ClaimItem], heldout: Sequence[ClaimItem],
                    out_dir: Any, data_info: dict[str, Any], progress: bool = False) -> dict[str, Any]:
    """Fine-tune the seq2seq model on the training claims; keep the epoch with the best mean
    METEOR on ``heldout`` (``train.select: meteor``; ``last`` keeps the last epoch); writes
    model + manifest."""
    import json
    import time

    import numpy as np
    import torch

    from averitec_tools.baselines.averitec.models import load_seq2seq
    from averitec_tools.baselines.averitec.training import BestEpoch
    from averitec_tools.jsonio import atomic_directory

    t0 = time.perf_counter()
    s = config.train
    torch.manual_seed(s.seed)
    model, tok, base_component = load_seq2seq(model=config.model, device=s.device,
                                              add_prefix_space=config.input == "upstream")
    opt = torch.optim.AdamW(model.parameters(), lr=s.learning_rate)
    rng = np.random.default_rng(s.seed)
    data, held = _training_examples(config, train, heldout, data_info)
    losses: list[float] = []
    keep = BestEpoch(epochs=s.epochs)
    for epoch in range(s.epochs):
        losses += _train_epoch(model, tok, opt, data, order=rng.permutation(len(data)), config=config,
                               desc=f"train justification epoch {epoch + 1}", progress=progress)
        score = _heldout_meteor(model, tok, held, config) if held and s.select == "meteor" else None
        keep.update(model, epoch, score)
    keep.restore(model)
    manifest = _manifest(config, base_component=base_component, data_info=data_info, n_train=len(data),
                         n_heldout=len(held), losses=losses, keep=keep, seconds=round(time.perf_counter() - t0, 1))
    with atomic_directory(out_dir) as tmp:
        model.save_pretrained(tmp)
        tok.save_pretrained(tmp)
        (tmp / "manifest.json").write_text(json.dumps(manifest, indent=1, default=str))
    return manifest


def _training_examples(config: JustificationConfig, train: Sequence[ClaimItem], heldout: Sequence[ClaimItem],
                       data_info: dict[str, Any]) -> tuple[list[tuple[str, str]], list[tuple[str, str]]]:
    """(input, justification) pairs to train on and to select the epoch with, capped by ``max_pairs``.

    Raises:
        UserError: No training claim has a justification.
    """
    s = config.train
    examples = justification_examples(train, style=config.input)
    data = examples[: s.max_pairs] if s.max_pairs else examples
    held = justification_examples(heldout, style=config.input)
    held = held[: max(5, s.max_pairs // 5)] if s.max_pairs else held
    if not data:
        raise UserError(f"{data_info.get('path')}: no training claims with a justification")
    return data, held


def _train_epoch(model: Any, tok: Any, opt: Any, data: Sequence[tuple[str, str]], *, order: Any,
                 config: JustificationConfig, desc: str, progress: bool) -> list[float]:
    """One pass over ``data`` in ``order``, batch by batch, stepping every ``grad_accumulation``
    batches and after the last; returns each batch's loss."""
    from tqdm.auto import tqdm

    s = config.train
    model.train()
    bs = max(1, s.batch_size)
    batches = [order[i : i + bs] for i in range(0, len(order), bs)]
    losses: list[float] = []
    for step, batch in enumerate(tqdm(batches, desc=desc, disable=not progress)):
        losses.append(_batch_backward(model, tok, [data[i] for i in batch], config))
        if (step + 1) % s.grad_accumulation == 0 or step + 1 == len(batches):
            opt.step()
            opt.zero_grad()
    return losses


def _batch_backward(model: Any, tok: Any, pairs: Sequence[tuple[str, str]], config: JustificationConfig) -> float:
    """Accumulate the gradient of one batch's loss (mean over its target tokens), in forward
    passes of at most ``micro_batch`` sequences (the same gradient); returns the loss."""
    import torch

    s = config.train
    enc = tok([src for src, _ in pairs], text_target=[tgt for _, tgt in pairs], truncation=True,
              max_length=s.max_length, padding=True, return_tensors="pt").to(model.device)
    labels = enc["labels"].masked_fill(enc["labels"] == tok.pad_token_id, -100)
    start = tok.pad_token_id if config.decoder_start == "pad" else model.config.decoder_start_token_id
    decoder_in = _shift_right(enc["labels"], start)
    # the batch's mean over target tokens, summed over micro-batches (same gradient)
    n_tokens = int((labels != -100).sum())
    size = s.micro_batch or len(pairs)
    total = 0.0
    for c0 in range(0, len(pairs), size):
        part = slice(c0, c0 + size)
        logits = model(input_ids=enc["input_ids"][part], attention_mask=enc["attention_mask"][part],
                       decoder_input_ids=decoder_in[part]).logits
        loss = torch.nn.functional.cross_entropy(logits.reshape(-1, logits.shape[-1]).float(),
                                                 labels[part].reshape(-1), ignore_index=-100,
                                                 reduction="sum") / max(1, n_tokens)
        (loss / s.grad_accumulation).backward()
        total += float(loss.detach())
    return total


def _heldout_meteor(model: Any, tok: Any, held: Sequence[tuple[str, str]], config: JustificationConfig) -> float:
    """Mean METEOR of the justifications generated for ``held`` against the gold ones."""
    import numpy as np

    from averitec_tools.metrics.meteor import default_engine

    model.eval()
    generated = _generate(model, tok, [src for src, _ in held], config)
    engine = default_engine()
    return float(np.mean([engine.score(candidate=g, reference=ref) for g, (_, ref) in zip(generated, held, strict=True)]))


def _manifest(config: JustificationConfig, *, base_component: str, data_info: dict[str, Any], n_train: int,
              n_heldout: int, losses: list[float], keep: Any, seconds: float) -> dict[str, Any]:
    """The checkpoint's ``manifest.json``: data, settings, versions, per-epoch selection, fingerprint."""
    from dataclasses import asdict

    from averitec_tools.baselines.averitec.training import fingerprint, library_versions

    s = config.train
    manifest = {"kind": "justification", "base": base_component,
                "data": {**data_info, "train_examples": n_train, "heldout_examples": n_heldout},
                "settings": asdict(s), "input": config.input, "decoder_start": config.decoder_start,
                "versions": library_versions(), "final_loss": losses[-1] if losses else None,
                "heldout_metric": s.select, "heldout_per_epoch": keep.history, "best_epoch": keep.best_epoch,
                "seconds": seconds}
    manifest["fingerprint"] = fingerprint("justification", base_component, data_info, asdict(s), config.input,
                                          config.decoder_start)
    return manifest


__all__ = ["ExtractiveJustifier", "Seq2SeqJustifier", "build_justifier", "justification_examples",
           "justification_input", "train_justifier", "upstream_input"]
