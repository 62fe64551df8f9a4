"""Benchmark: how much log 100 failing requests write (issue 39), bounded and unbounded side by side.

A board with one scored submission of the bundled demo (50 claims); the per-claim viewer's
``claim_detail`` is replaced by a function that raises, so every
``GET /api/submissions/ID/claims/K`` is an internal error (HTTP 500). The same 100 requests
run twice in one process against the app's own handler (one line per failure, the traceback
once per route and exception, at most 20 lines a minute: ``leaderboard/web/errorlog.py``) and
against the handler the app had before (``logger.exception`` per failure, the full traceback
every time); the log bytes and lines of each are printed, with the ratio.

Usage::

    python benchmarks/bench_error_log.py           # needs the leaderboard extra and NLTK data
    python benchmarks/bench_error_log.py --json
"""

from __future__ import annotations

import argparse
import io
import json
import logging
import sys
import tempfile
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]


def _board() -> tuple[str, str, int]:
    sys.path.insert(0, str(REPO))
    from averitec_tools.leaderboard.processing import Scorer
    from averitec_tools.leaderboard.store import Store
    from averitec_tools.leaderboard.worker import process_one

    preds, gold = REPO / "examples" / "demo_predictions.json", REPO / "examples" / "demo_gold.json"
    url = f"sqlite:///{tempfile.mkdtemp()}/lb.db"
    store = Store(url)
    store.init(json.dumps({"name": "bench", "phases": [{"name": "dev", "gold": str(gold), "primary_metric": "averitec_score@0.25"}]}),
               where="bench.yaml")
    token = store.add_team("blue")
    sid = store.submit(team="blue", system="s", phase="dev", content=preds.read_bytes(), file_name="p.json").id
    process_one(store, Scorer(cache_dir=False, n_resamples=20), submission_id=sid)
    return url, token, sid


def measure(url: str, token: str, sid: int, *, bounded: bool, n: int = 100) -> dict[str, Any]:
    from fastapi.testclient import TestClient

    from averitec_tools.leaderboard.web import app as app_module
    from averitec_tools.leaderboard.web import claims

    def broken(**kwargs: Any) -> None:
        raise RuntimeError("injected failure")

    claims.claim_detail = broken  # type: ignore[assignment]  # the route fails on every request
    logger = logging.getLogger("averitec.leaderboard")
    buffer = io.StringIO()
    handler = logging.StreamHandler(buffer)
    logger.addHandler(handler)
    logger.setLevel(logging.INFO)
    logger.propagate = False
    if not bounded:  # the handler before issue 39: the whole traceback for every failure
        class Unbounded:
            def __init__(self, log: logging.Logger, **_: Any) -> None:
                self.log = log

            def failure(self, method: str, route: str, exc: BaseException) -> None:
                self.log.error("internal error on %s %s", method, route, exc_info=exc)

        app_module.ErrorLog = Unbounded  # type: ignore[misc,assignment]
    client = TestClient(app_module.create_app(url), base_url="http://127.0.0.1", raise_server_exceptions=False)
    codes = {client.get(f"/api/submissions/{sid}/claims/{k % 50}", headers={"Authorization": f"Bearer {token}"}).status_code
             for k in range(n)}
    logger.removeHandler(handler)
    text = buffer.getvalue()
    return {"requests": n, "statuses": sorted(codes), "log_bytes": len(text.encode()), "log_lines": text.count("\n")}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    url, token, sid = _board()
    bounded = measure(url, token, sid, bounded=True)
    unbounded = measure(url, token, sid, bounded=False)
    out = {"bounded": bounded, "unbounded": unbounded, "ratio": round(unbounded["log_bytes"] / max(1, bounded["log_bytes"]), 1)}
    if args.json:
        print(json.dumps(out))
    else:
        for name in ("bounded", "unbounded"):
            r = out[name]
            print(f"{name:9}: {r['requests']} requests (HTTP {r['statuses']}) wrote {r['log_bytes']:,} bytes in {r['log_lines']} lines")
        print(f"ratio: {out['ratio']}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
