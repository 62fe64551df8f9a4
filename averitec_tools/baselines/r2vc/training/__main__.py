"""``python -m averitec_tools.baselines.r2vc.training sft|dpo ...``: the documented entry point
of ``averitec baseline r2vc train`` (the command lives in :mod:`averitec_tools.cli.baseline_r2vc_train`)."""

import sys

from averitec_tools.cli.baseline_r2vc_train import main

if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
