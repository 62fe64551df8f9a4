"""The docs/r2vc.md table in one process: the four offline-minilm variants share one NLI cache.

Same variants and outputs as ``r2vc_offline_table.py`` (which runs one CLI process per
variant), but the verifier's (claim, passage) NLI probabilities are computed once and
shared by every variant (literal and label-aware score the same probabilities; the
exclude_own_evidence pools overlap the oracle ones), single-threaded — the variant that
fits a busy shared CPU. Then each prediction file is scored with ``averitec score`` and
``averitec calibration`` (gated, and ungated as in ``r2vc_offline_table.py``).

Usage::

    python benchmarks/r2vc_offline_shared.py --n 100 --out results/r2vc-table
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from r2vc_offline_table import VARIANTS, label_counts, render, score, ungated  # noqa: E402


def main() -> int:
    import torch

    import averitec_tools.baselines.r2vc.stages.verification.verifier as verifier_module
    from averitec_tools.baselines.r2vc.config import config_from_mapping
    from averitec_tools.baselines.r2vc.io.claims import read_claims
    from averitec_tools.baselines.r2vc.offline.preset import build_offline, describe
    from averitec_tools.baselines.r2vc.request import BuildRequest
    from averitec_tools.nli import CachedNLI, HFNLIBackend

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=int, default=100)
    parser.add_argument("--out", required=True)
    args = parser.parse_args()
    torch.set_num_threads(1)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    data = Path(os.environ["AVERITEC_DATA_DIR"]) / "averitec"
    dev = json.loads((data / "dev.json").read_text())
    gold = out / f"gold_first_{args.n}.json"
    gold.write_text(json.dumps(dev[: args.n]))
    claims = read_claims(str(data / "dev.json"))[: args.n]

    shared: dict[str, CachedNLI] = {}

    def shared_backend(**kwargs):  # one cached backend per model directory
        key = kwargs["model_id"]
        if key not in shared:
            shared[key] = CachedNLI(HFNLIBackend(**kwargs), max_entries=10_000_000)
        return shared[key]

    verifier_module.HFNLIBackend = shared_backend  # type: ignore[assignment,misc]
    table_file = out / "table.json"
    table = json.loads(table_file.read_text()) if table_file.is_file() else {}
    for i, (name, settings) in enumerate(VARIANTS.items()):
        if name in table:
            continue
        cfg = config_from_mapping({"base": "offline-minilm", **settings}, source=name).effective()
        pipe = build_offline(cfg, BuildRequest(progress=False))
        pred = out / f"variant{i}.json"
        summary = pipe.run(claims, out=pred, output_format="averitec2024", progress=False)
        summary.extra["offline"] = describe(cfg)
        summary.extra["calibrator_fit_info"] = {k: v for k, v in pipe.calibrator.fit_info.items()
                                                if k != "gate_frontier"}
        free = out / f"variant{i}_ungated.json"
        ungated(pred, free)
        table[name] = {"run": summary.to_dict(), "gated": score(pred, gold) | {"labels": label_counts(pred)},
                       "ungated": score(free, gold) | {"labels": label_counts(free)}}
        table_file.write_text(json.dumps(table, indent=1))
        print(f"done: {name}", file=sys.stderr, flush=True)
    official_src = data / "baseline_dev_predictions.json"
    sub = out / f"official_first_{args.n}.json"
    sub.write_text(json.dumps(json.loads(official_src.read_text())[: args.n]))
    from r2vc_offline_table import averitec

    official = {"score": averitec("score", str(sub), str(gold), "--profile", "averitec2024"), "labels": label_counts(sub)}
    (out / "official.json").write_text(json.dumps(official))
    print(render(table, official))
    return 0


if __name__ == "__main__":
    sys.exit(main())
