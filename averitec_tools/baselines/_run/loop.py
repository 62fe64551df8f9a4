"""The one run loop of every baseline: resume, predict the rest, append, write atomically.

:func:`run_claims` takes a baseline's claims and one ``predict_many`` hook (claims still
to do → predictions, in order: the baseline's own per-claim call, or
:func:`averitec_tools.engines.engine_predictor` on an engine), and

1. opens ``<out>.partial.jsonl`` under the partial-run policy
   (:func:`~averitec_tools.baselines._run.sidecar.open_sidecar`: refused unless
   ``resume`` or ``overwrite``; on resume the header must match and a torn last line is
   repaired);
2. predicts the claims not yet in it, with a progress bar, appending each finished
   claim (fsynced) as ``encode(prediction)``;
3. writes the final output atomically from every record, in claim order
   (``write_output``), and removes the sidecar — an interrupted run never leaves a
   half-written output.

Example:
    >>> import tempfile, pathlib, json
    >>> out = pathlib.Path(tempfile.mkdtemp()) / "preds.json"
    >>> def write(records):
    ...     out.write_text(json.dumps(records))
    >>> run = run_claims(claims=["a", "b"], claim_id=lambda c: c, kind="demo", config="c1", output_format="json",
    ...                  out=out, predict_many=lambda todo: [c.upper() for c in todo], encode=lambda p: {"label": p},
    ...                  write_output=write, progress=False)
    >>> json.loads(out.read_text()), run.n_resumed, sidecar_path(out).exists()
    ([{'label': 'A'}, {'label': 'B'}], 0, False)
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

from averitec_tools.baselines._run.sidecar import (
    claims_fingerprint,
    open_sidecar,
    sidecar_header,
    sidecar_key,
    sidecar_path,
)

C = TypeVar("C")
P = TypeVar("P")


@dataclass(frozen=True)
class ClaimsRun:
    """What :func:`run_claims` did: every record in claim order and how many were resumed."""

    records: list[Any]
    n_resumed: int


def run_claims(
    *,
    claims: Sequence[C],
    claim_id: Callable[[C], Any],
    kind: str,
    config: str,
    output_format: str,
    out: str | os.PathLike[str],
    predict_many: Callable[[list[C]], Iterable[P]],
    encode: Callable[[P], Any],
    write_output: Callable[[list[Any]], None],
    resume: bool = False,
    overwrite: bool = False,
    progress: bool = True,
    desc: str | None = None,
    header: dict[str, Any] | None = None,
    on_result: Callable[[int, P], None] | None = None,
) -> ClaimsRun:
    """Run the claims not yet in ``out``'s sidecar and write ``out`` (see the module docs).

    Args:
        claims: The run's claims, in output order.
        claim_id: A claim's id (the sidecar key).
        kind: The baseline (the sidecar's ``_<kind>_sidecar`` marker).
        config: The configuration's fingerprint (a resumed run must have the same).
        output_format: The output format (likewise).
        out: The final output file.
        predict_many: Claims still to do → their predictions, in order.
        encode: A prediction → its JSON-able sidecar record.
        write_output: Writes the final output atomically from every record, in claim order.
        resume: Continue the sidecar of an interrupted run.
        overwrite: Delete it and start over.
        progress: Show a tqdm bar (``desc`` its label).
        header: More header fields a resumed run must match (e.g. the variant).
        on_result: Called with (claims finished in this run, prediction) after each claim
            is saved (summaries count here; tests interrupt here).

    Raises:
        UserError: a partial run present without ``resume``/``overwrite``, both flags, or
            a sidecar of another run (configuration, format, claims) or a corrupt one.
    """
    from tqdm.auto import tqdm

    head = sidecar_header(kind, config=config, format=output_format,
                          claims=claims_fingerprint(claim_id(c) for c in claims), **(header or {}))
    with open_sidecar(out, header=head, resume=resume, overwrite=overwrite) as side:
        todo = [c for c in claims if sidecar_key(claim_id(c)) not in side.done]
        n_resumed = len(claims) - len(todo)
        bar = tqdm(zip(todo, predict_many(todo), strict=True), total=len(todo), desc=desc or kind, unit="claim",
                   disable=not progress)
        for n, (claim, pred) in enumerate(bar, start=1):
            side.append(claim_id(claim), encode(pred))
            if on_result is not None:
                on_result(n, pred)
        records = [side.done[sidecar_key(claim_id(c))] for c in claims]
    write_output(records)
    sidecar_path(out).unlink(missing_ok=True)
    return ClaimsRun(records=records, n_resumed=n_resumed)


__all__ = ["ClaimsRun", "run_claims"]
