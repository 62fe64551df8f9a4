"""How fast a missing model fails offline: the R2VC NLI backend vs plain ``transformers``.

With ``HF_HUB_OFFLINE=1`` a model id that is not in the local cache must fail at once with
a ``ResourceError`` (no network retries). This times ``HFNLIBackend`` on a missing id next
to ``AutoModelForSequenceClassification.from_pretrained`` on the same id, in one run, and
prints both and the ratio. (tests/test_r2vc_verifier.py checks that no connection is tried;
the time lives here because a unit test never asserts a wall-clock time.)

Usage::

    .venv/bin/python benchmarks/bench_offline_failure.py [--repeat 5] [--json]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

os.environ["HF_HUB_OFFLINE"] = "1"  # before huggingface_hub is imported: it reads this once
REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

MISSING = "no-such-org/no-such-nli"


def _median_seconds(fn: Callable[[], object], repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        try:
            fn()
        except Exception:  # noqa: BLE001 - the failure is what is timed
            pass
        else:
            raise SystemExit(f"bench_offline_failure.py: loading {MISSING!r} unexpectedly succeeded")
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)

    from transformers import AutoModelForSequenceClassification

    from averitec_tools.nli import HFNLIBackend

    ours = _median_seconds(lambda: HFNLIBackend(model_id=MISSING, device="cpu"), args.repeat)
    peer = _median_seconds(lambda: AutoModelForSequenceClassification.from_pretrained(MISSING), args.repeat)
    result = {"model_id": MISSING, "repeat": args.repeat, "hfnli_backend_s": ours, "transformers_s": peer,
              "ratio_ours_over_transformers": ours / peer if peer else None}
    if args.json:
        print(json.dumps(result))
    else:
        print(f"missing model, offline (median of {args.repeat}): HFNLIBackend {ours * 1000:.1f} ms, "
              f"transformers from_pretrained {peer * 1000:.1f} ms, ratio {result['ratio_ours_over_transformers']:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
