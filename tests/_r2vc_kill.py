"""Run one R2VC stage in this process and SIGKILL it at a chosen point (the kill-and-resume tests).

``python tests/_r2vc_kill.py train STAGE BASE ROWS OUT KILL_AT``: train ``STAGE`` (sft/dpo)
from the model folder ``BASE`` on the JSONL ``ROWS`` into ``OUT`` with the tests' fast
settings (:data:`TRAIN`), killing itself with SIGKILL right after the checkpoint of optimizer
step ``KILL_AT`` was written. ``python tests/_r2vc_kill.py decode N -- CMD...``: run the
``averitec`` command line ``CMD`` and SIGKILL the process when the generator is asked to
decode more after ``N`` claims (a batch of claims counts all its claims). Nothing is cleaned up: the point is what a kill leaves behind.
"""

from __future__ import annotations

import os
import signal
import sys
from typing import Any

#: Four optimizer steps, a checkpoint every two (each step is one batch of two rows).
TRAIN: dict[str, Any] = {"max_steps": 4, "save_steps": 2, "per_device_train_batch_size": 2,
                         "gradient_accumulation_steps": 1, "max_length": 512, "logging_steps": 1,
                         "n_passages": 3, "warmup_ratio": 0.0}


def train(stage: str, base: str, rows: str, out: str, *, kill_at: int | None) -> Any:
    """Train ``stage`` with :data:`TRAIN` (killed after checkpoint ``kill_at`` when given)."""
    from transformers import TrainerCallback

    from averitec_tools.baselines.r2vc.training import _common
    from averitec_tools.baselines.r2vc.training.config import DPOSettings, SFTSettings
    from averitec_tools.baselines.r2vc.training.rows import read_training_rows
    from averitec_tools.baselines.r2vc.training.stages import train as train_stage

    if kill_at is not None:
        class Kill(TrainerCallback):  # type: ignore[misc]
            def on_save(self, args: Any, state: Any, control: Any, **kwargs: Any) -> Any:
                if state.global_step >= kill_at:
                    os.kill(os.getpid(), signal.SIGKILL)
                return control

        original = _common.train_checked

        def killing(trainer: Any, **kwargs: Any) -> Any:
            trainer.add_callback(Kill())
            return original(trainer, **kwargs)

        _common.train_checked = killing  # type: ignore[assignment]
    cls: Any = SFTSettings if stage == "sft" else DPOSettings
    settings = cls.from_dict({**TRAIN, "model": base, "local_files_only": True})
    return train_stage(stage=stage, settings=settings, rows=read_training_rows(rows), output_dir=out)


def decode_then_kill(n: int, argv: list[str]) -> int:
    """Run ``averitec ARGV`` and SIGKILL this process after ``n`` LM decodings (generator calls)."""
    from averitec_tools.baselines.r2vc.stages.generation.generator import HFGenerator
    from averitec_tools.cli.main import main

    one, many = HFGenerator.generate, HFGenerator.generate_many
    decoded = [0]

    def before(n_claims: int) -> None:
        if decoded[0] >= n:
            os.kill(os.getpid(), signal.SIGKILL)
        decoded[0] += n_claims

    def generate(self: Any, *args: Any, **kwargs: Any) -> Any:
        before(1)
        return one(self, *args, **kwargs)

    def generate_many(self: Any, requests: Any, **kwargs: Any) -> Any:
        before(len(requests))
        return many(self, requests, **kwargs)

    HFGenerator.generate, HFGenerator.generate_many = generate, generate_many  # type: ignore[method-assign]
    return main(argv)


if __name__ == "__main__":
    if sys.argv[1] == "train":
        _, _, stage, base, rows, out, kill = sys.argv
        train(stage, base, rows, out, kill_at=int(kill))
    else:
        sys.exit(decode_then_kill(int(sys.argv[2]), sys.argv[4:]))
