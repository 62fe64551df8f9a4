"""``averitec score`` options of the ``fever8`` profile's LLM judge (kept out of score.py).

Imports nothing heavy: the CLI builds every sub-parser on start.
"""

from __future__ import annotations

import argparse
from typing import Any

from averitec_tools.argtypes import NON_NEGATIVE, POSITIVE, SECONDS, UNIT, number

#: option name -> (flag, argparse keyword arguments)
JUDGE_FLAGS: dict[str, tuple[str, dict[str, Any]]] = {
    "judge_backend": ("--judge-backend", {"choices": ("openai", "transformers"),
                                          "help": "fever8/averimatec: 'openai' (any OpenAI-compatible endpoint, default) or 'transformers' (local model)"}),
    "judge_url": ("--judge-url", {"metavar": "URL", "help": "fever8/averimatec: OpenAI-compatible base URL, e.g. http://127.0.0.1:8000/v1"}),
    "judge_model": ("--judge-model", {"metavar": "NAME", "help": "fever8/averimatec: judge model (default: fever8 meta-llama/Llama-3.3-70B-Instruct, averimatec google/gemma-3-27b-it)"}),
    "judge_api_key_env": ("--judge-api-key-env", {"metavar": "VAR", "help": "fever8/averimatec: environment variable holding the API key (default AVERITEC_JUDGE_API_KEY)"}),
    "judge_prompt": ("--judge-prompt", {"metavar": "FILE|official[:PATH]",
                                        "help": "fever8/averimatec: 'official' = the organisers' prompt (downloaded at a pinned commit, or "
                                        "official:PATH from your clone of Raldir/FEVER-8-Shared-Task or abril4416/AVerImaTec_Shared_Task; "
                                        "verified by SHA-256), or a prompt file (fever8: [qa] and [questions] sections; averimatec: "
                                        "see averitec_tools/data/averimatec_prompt_v1.txt); name and hash go in the signature"}),
    "judge_cache": ("--judge-cache", {"metavar": "DIR", "help": "fever8/averimatec: folder of the judgement cache (default: the cache root, $AVERITEC_CACHE_DIR, else $XDG_CACHE_HOME/averitec-tools, else ~/.cache/averitec-tools)"}),
    "judge_concurrency": ("--judge-concurrency", {"type": POSITIVE, "metavar": "N", "help": "fever8/averimatec: requests in flight (default 32; 1 for a local model)"}),
    "judge_retries": ("--judge-retries", {"type": NON_NEGATIVE, "metavar": "N", "help": "fever8/averimatec: retries of a failed request (default 5)"}),
    "judge_backoff": ("--judge-backoff", {"type": number(0, 60), "metavar": "S", "help": "fever8/averimatec: first retry wait in seconds, doubled each time (default 1)"}),
    "judge_timeout": ("--judge-timeout", {"type": SECONDS, "metavar": "S", "help": "fever8/averimatec: seconds per request (default: fever8 120, averimatec 300)"}),
    "judge_max_tokens": ("--judge-max-tokens", {"type": POSITIVE, "metavar": "N", "help": "fever8: reply length limit (default 3000, as the organisers)"}),
    "ev2r_preset": ("--ev2r-preset", {"metavar": "NAME",
                                      "help": "fever8: published threshold rule: leaderboard (> 0.5, default), evalai-2025-04 "
                                      "(>= 0.5), evalai-2025-01-debug (> 0.46), commented-0.44 (> 0.44); see docs/fever8.md"}),
    "ev2r_threshold": ("--ev2r-threshold", {"type": UNIT, "metavar": "T", "help": "fever8: override the preset's Q+A recall threshold"}),
    "ev2r_comparison": ("--ev2r-comparison", {"choices": (">=", ">"), "help": "fever8: override the preset's comparison"}),
    "official_failure_mode": ("--official-failure-mode", {"action": "store_true", "default": None,
                                                          "help": "fever8/averimatec: a request that still fails after its retries scores 0, "
                                                          "as in the organisers' scorer (counted in the summary and signature) "
                                                          "instead of stopping the run"}),
    "judge_unscored": ("--judge-unscored", {"action": "store_true", "default": None,
                                            "help": "fever8/averimatec: a claim whose judge request still fails on the judge's side "
                                            "(timeout, connection, 5xx) is left unscored: excluded from the judge means, "
                                            "counted (judge.unscored), the result incomplete; the leaderboard's default. "
                                            "A refusal for the content and an unparseable reply score 0 in every mode"}),
    "judge_max_items": ("--judge-max-items", {"type": POSITIVE, "metavar": "N",
                                              "help": "fever8/averimatec: the judge sees only the first N predicted pairs (averimatec: "
                                              "evidence items and questions) (default: all, "
                                              "as the organisers; the leaderboard shows 10); in the signature"}),
    "judge_item_chars": ("--judge-item-chars", {"type": POSITIVE, "metavar": "N",
                                                "help": "fever8/averimatec: each predicted question and answer (averimatec: evidence "
                                                "item, question, justification) the judge sees is cut to N "
                                                "characters (default: whole; the leaderboard cuts at 2000); in the signature"}),
    "judge_snapshot": ("--judge-snapshot", {"metavar": "FILE.json",
                                            "help": "fever8/averimatec: re-use the replies stored in FILE (same judge, prompt and settings), "
                                            "then write every reply the score depends on there; its digest is in the signature"}),
    "dry_run": ("--dry-run", {"action": "store_true", "default": None,
                              "help": "fever8/averimatec: print the judge calls and estimated prompt tokens; send nothing"}),
}


#: The ``averimatec`` profile's own options (its judge takes the ``--judge-*`` flags above too).
AVERIMATEC_FLAGS: dict[str, tuple[str, dict[str, Any]]] = {
    "gold_images": ("--gold-images", {"metavar": "DIR", "help": "averimatec: the dataset's images folder (default: "
                                      "images/ beside the gold file or beside its folder)"}),
    "judge_sampling": ("--judge-sampling", {"choices": ("greedy", "organisers"),
                                            "help": "averimatec: greedy (temperature 0, default) or the organisers' "
                                            "Gemma 3 sampling (temperature 1, top_p 0.95, top_k 64)"}),
    "averimatec_preset": ("--averimatec-preset", {"choices": ("notebook", "fork-0.3", "at-least-0.3"),
                                                  "help": "averimatec: threshold rule: notebook (> 0.4, the organisers' "
                                                  "notebook, default), fork-0.3 (> 0.3), at-least-0.3 (>= 0.3)"}),
    "averimatec_threshold": ("--averimatec-threshold", {"type": UNIT, "metavar": "T",
                                                        "help": "averimatec: override the preset's evidence threshold"}),
    "averimatec_comparison": ("--averimatec-comparison", {"choices": (">", ">="),
                                                          "help": "averimatec: override the preset's comparison"}),
    "averimatec_align": ("--averimatec-align", {"choices": ("id", "position"),
                                                "help": "averimatec: pair claims by 'id' (default) or by position "
                                                "(the official loop)"}),
    "replay": ("--replay", {"metavar": "FILE|DIR", "help": "averimatec: aggregate the official evaluator's "
                            "intermediate file (intermediate_eval_results/*.json) instead of calling a judge"}),
    "replay_rows": ("--replay-rows", {"choices": ("all", "last"),
                                      "help": "averimatec: 'last' takes the last N rows of a resumed official file"}),
}


def add_judge_arguments(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("fever8 and averimatec judge (Ev2R, AVerImaTeC)")
    for name, (flag, kwargs) in JUDGE_FLAGS.items():
        group.add_argument(flag, dest=name, **{"default": None, **kwargs})
    group = parser.add_argument_group("averimatec")
    for name, (flag, kwargs) in AVERIMATEC_FLAGS.items():
        group.add_argument(flag, dest=name, **{"default": None, **kwargs})


def judge_options(args: argparse.Namespace) -> dict[str, Any]:
    """The judge options given on the command line (the profile checks them)."""
    return {name: getattr(args, name) for name in {**JUDGE_FLAGS, **AVERIMATEC_FLAGS}
            if getattr(args, name, None) is not None}


def judge_files(options: dict[str, Any]) -> list[tuple[str, str]]:
    """Files a judged run reads besides the submission and the gold file: the prompt file
    (``--judge-prompt FILE`` or ``official:PATH``) and the judgement cache; an output must not be one."""
    import os

    out = []
    prompt = options.get("judge_prompt")
    if isinstance(prompt, str):
        path = prompt.split(":", 1)[1] if prompt.startswith("official:") else prompt
        if path and os.path.exists(path):
            out.append((path, "the judge prompt file"))
    cache = options.get("judge_cache") or options.get("cache_dir")
    if "judge_backend" in options or "judge_url" in options or cache:
        from averitec_tools.cache import cache_root

        for name in ("ev2r-judgements.sqlite", "averimatec-judgements.sqlite"):
            out.append((os.path.join(str(cache or cache_root()), name), "the judgement cache"))
    return out


__all__ = ["AVERIMATEC_FLAGS", "JUDGE_FLAGS", "add_judge_arguments", "judge_files", "judge_options"]
