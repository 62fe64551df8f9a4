"""Write the pseudo-test claims (training claims held out from the start) as a claims file.

The offline configurations of both baselines hold these claims out of every training and
fitting set (``offline.pseudo_test_claims`` in R2VC, ``data.pseudo_test_claims`` in the
AVeriTeC baseline; :mod:`averitec_tools.leakage.pseudo_test`), so they can be run and
scored like dev with the frozen configuration::

    python benchmarks/pseudo_test_claims.py --out results/pseudo_test.json
    averitec baseline r2vc --config offline-minilm --claims results/pseudo_test.json --out pt.json
    averitec score pt.json results/pseudo_test.json --profile averitec2024

Prints the claims' indices in ``averitec/train.json`` and their label counts as JSON; the
held-out claims that are dev claims' normalised twins are held out but not written.
"""

from __future__ import annotations

import argparse
import json
import os
from collections import Counter
from pathlib import Path

from averitec_tools.leakage.pseudo_test import (
    PSEUDO_TEST_CLAIMS,
    PSEUDO_TEST_SEED,
    pseudo_test_records,
)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", required=True, type=Path)
    ap.add_argument("--train", type=Path, default=None, help="default: $AVERITEC_DATA_DIR/averitec/train.json")
    ap.add_argument("--n", type=int, default=PSEUDO_TEST_CLAIMS)
    args = ap.parse_args()
    root = Path(os.environ["AVERITEC_DATA_DIR"]) / "averitec"
    train = args.train or root / "train.json"
    dev = [str(c.get("claim") or "") for c in json.loads((root / "dev.json").read_text())]
    records, idx, unscored = pseudo_test_records(json.loads(train.read_text()), n=args.n, avoid=dev)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(records))
    print(json.dumps({"out": str(args.out), "n": len(records), "seed": PSEUDO_TEST_SEED, "train_indices": idx,
                      "held_out_not_scored_dev_twins": unscored,
                      "labels": dict(Counter(r.get("label") for r in records))}))


if __name__ == "__main__":
    main()
