"""R2VC throughput: claims/s and per-stage latency of a configuration on N dev claims.

Prints our measured figures next to the runtime rows of the paper's Table G.1
(Llama-3.1-Nemotron-8B generator + DeBERTa-v3-large verifier on one H100). The two are
not the same system — by default this runs the offline CPU configuration (MiniLM
verifier, NLI-only generator, no LM) — so the ratio says where the time goes, not who
is faster.

Usage::

    AVERITEC_DATA_DIR=../shared/data python benchmarks/bench_r2vc.py --n 20
    python benchmarks/bench_r2vc.py --config my-gpu.yaml --claims dev.json --corpus wiki/ --n 100 --json

Model building (indexing, fine-tuning, calibrator fitting) is reported separately and
cached between runs; the per-claim figures exclude it.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

#: Table G.1 "Runtime" rows of the R2VC paper (FEVER run, H100).
PAPER_RUNTIME = {
    "retrieval latency per claim (s)": 0.0316,
    "generation latency per candidate (s)": 1.2567,
    "verifier latency per candidate (s)": 0.0251,
    "full k-sample latency per claim (s)": 20.8248,
    "claims per second": 0.0480,
}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--config", default="offline-minilm", help="built-in name or YAML (default offline-minilm)")
    parser.add_argument("--claims", help="claims file (default: the dev set for offline-minilm)")
    parser.add_argument("--corpus", help="paragraph store (not for offline-minilm)")
    parser.add_argument("--n", type=int, default=20, help="claims to run (default 20)")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    args = parser.parse_args(argv)

    from averitec_tools.baselines.r2vc.build import build_pipeline
    from averitec_tools.baselines.r2vc.config import resolve_config
    from averitec_tools.baselines.r2vc.io.claims import read_claims
    from averitec_tools.baselines.r2vc.request import BuildRequest

    cfg = resolve_config(args.config)
    if args.claims:
        claims_path = args.claims
    else:
        from averitec_tools.baselines.r2vc.offline.data import default_claims_path

        claims_path = str(default_claims_path())
    claims = read_claims(claims_path)[: args.n]
    t0 = time.perf_counter()
    pipe = build_pipeline(cfg, BuildRequest(corpus=args.corpus, claims=claims, progress=not args.json))
    build = time.perf_counter() - t0
    with tempfile.TemporaryDirectory() as tmp:
        summary = pipe.run(claims, out=Path(tmp) / "pred.json", output_format="averitec2024",
                           progress=not args.json).to_dict()
    per_claim = summary["seconds_per_claim"]
    per_cand = summary["seconds_per_candidate"]
    ours = {
        "retrieval latency per claim (s)": per_claim["retrieve"],
        "generation latency per candidate (s)": per_cand["generate"],
        "verifier latency per candidate (s)": per_cand["verify"],
        "full k-sample latency per claim (s)": sum(per_claim.values()),
        "claims per second": summary["claims_per_second"],
    }
    result = {
        "config": cfg.name,
        "n_claims": len(claims),
        "k": pipe.config.generator.k,
        "build_seconds": build,
        "build_breakdown": pipe.build_seconds,
        "ours": ours,
        "paper_table_g1": PAPER_RUNTIME,
        "ratio_ours_over_paper": {k: ours[k] / v for k, v in PAPER_RUNTIME.items()},
        "seconds_per_claim": per_claim,
    }
    if args.json:
        print(json.dumps(result))
        return 0
    print(f"R2VC {cfg.name}: {len(claims)} claims, k = {result['k']}; build {build:.1f} s "
          f"(cached after the first run) {pipe.build_seconds}")
    print(f"{'figure':42s} {'ours':>12s} {'Table G.1':>12s} {'ratio':>10s}")
    for key, paper in PAPER_RUNTIME.items():
        print(f"{key:42s} {ours[key]:12.4f} {paper:12.4f} {ours[key] / paper:10.3f}")
    print("per-stage seconds per claim: " + ", ".join(f"{k} {v:.4f}" for k, v in per_claim.items()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
