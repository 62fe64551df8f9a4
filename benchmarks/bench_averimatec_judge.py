"""AVerImaTeC judge throughput: ``averitec score --profile averimatec`` against the organisers' loop.

The organisers' evaluator (``prepare_submission/eval_offline.py``) makes its judge calls one
at a time, in its own order, including image ratings that change no reported figure. This
script starts the test suite's OpenAI-compatible judge (``tests/_judge_server.py``, a
separate process) answering every request after a fixed delay, builds a synthetic val set
in the published layout (152 claims by default, generated images; ``tests/_averimatec_fixtures.py``)
and a submission with images, then times in one run, against the same server:

* **ours**: the profile at the default ``--judge-concurrency``, cold (empty cache), then warm;
* **the organisers' loop**: an independent restatement of their code
  (``tests/_averimatec_reference.py``) sending each of its calls over HTTP, one after the
  other, as their loop does (``--reference-claims K`` runs it on the first K claims only and
  says that its time is extrapolated).

Both use the same stand-in "official" prompt files, so the requests are alike in size.

    python benchmarks/bench_averimatec_judge.py                  # 152 claims, 0.5 s per call
    python benchmarks/bench_averimatec_judge.py --n 40 --reference-claims 10 --json
"""

from __future__ import annotations

import argparse
import base64
import dataclasses
import json
import sys
import tempfile
import time
import urllib.request
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

REPLY = ("[PRED in REF]: 2; (PRED_1, REF_1), (PRED_2, REF_2)\n[PRED in REF Exp]: 1. a fact. \n"
         "[REF in PRED]: 2; (REF_1, PRED_1), (REF_2, PRED_2)\n[REF in PRED Exp]: 1. x. 2. y.")


def _data_url(image: str, images: Path) -> str:
    """A gold image (a file name) or a submitted one (base64) as a data URL."""
    data = (images / image).read_bytes() if (images / image).is_file() else base64.b64decode(image)
    mime = "jpeg" if data[:2] == b"\xff\xd8" else "png"
    return f"data:image/{mime};base64," + base64.b64encode(data).decode()


def _organisers_loop(gold: list[dict[str, Any]], preds: list[dict[str, Any]], *, url: str, clone: Path,
                     images: Path) -> int:
    """Their loop, restated, one HTTP request at a time; returns the number of calls."""
    import _averimatec_reference as ref
    from _averimatec_quirks import BETWEEN, INSTRUCTION, INTRO

    calls = 0

    def ask(content: Any) -> str:
        nonlocal calls
        calls += 1
        parts = [{"type": "text", "text": content}] if isinstance(content, str) else [
            {"type": "text", "text": v} if k == "text" else {"type": "image_url", "image_url": {"url": _data_url(v, images)}}
            for k, v in content]
        body = json.dumps({"messages": [{"role": "user", "content": parts}], "model": "bench-judge",
                           "temperature": 0, "max_tokens": 1024}).encode()
        request = urllib.request.Request(url + "/chat/completions", data=body,
                                         headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(request, timeout=60) as response:
            return str(json.loads(response.read())["choices"][0]["message"]["content"])

    templates = ref.read_templates(clone)
    for g, p in zip(gold, preds, strict=True):
        ref.evaluate_claim(g, p, templates, ask, (INTRO, BETWEEN, INSTRUCTION))
    return calls


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=int, default=152, help="claims (default 152, the val split's size)")
    parser.add_argument("--latency", type=float, default=0.5, help="seconds the judge takes per call (default 0.5)")
    parser.add_argument("--concurrency", type=int, default=None, help="--judge-concurrency (default: the profile's)")
    parser.add_argument("--reference-claims", type=int, default=None,
                        help="run the organisers' loop on the first K claims only and extrapolate (default: all)")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()

    from _averimatec_fixtures import prediction, write_dataset
    from _averimatec_quirks import write_clone
    from _judge_server import running

    from averitec_tools.metrics import averimatec_official
    from averitec_tools.scoring.profiles import get_profile
    from averitec_tools.scoring.profiles.averimatec import OPTIONS

    concurrency = args.concurrency or OPTIONS["judge_concurrency"].default
    fixtures = {"rules": [{"match": ["[IMG_SET_2]:"], "responses": [{"delay": args.latency, "content": "9"}]},
                          {"match": ["[QUES]: "], "responses": [{"delay": args.latency, "content": "[STAT]: A fact."}]}],
                "default": {"delay": args.latency, "content": REPLY}}
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        hashes = write_clone(work / "clone")
        averimatec_official.AVERIMATEC_SOURCES = {
            role: dataclasses.replace(s, sha256=hashes[s.paths[0]]) for role, s in averimatec_official.AVERIMATEC_SOURCES.items()}
        gold_path = write_dataset(work / "data", args.n)
        preds = [prediction(i) for i in range(args.n)]
        (work / "sub.json").write_text(json.dumps(preds), encoding="utf-8")
        opts = {"judge_model": "bench-judge", "judge_prompt": f"official:{work / 'clone'}", "judge_concurrency": concurrency,
                "judge_cache": str(work / "cache"), "gold_images": str(work / "data" / "images")}
        with running(fixtures, work / "server") as (url, log):
            times = {}
            for state in ("cold", "warm"):
                start = time.perf_counter()
                result = get_profile("averimatec").score(predictions=work / "sub.json", references=gold_path,
                                                         judge_url=url, **opts)
                times[state] = time.perf_counter() - start
                judge = result.summary["judge"]
                assert judge["sent"] == (judge["calls"] if state == "cold" else 0), judge
                if state == "cold":
                    ours = judge["calls"]
            k = args.reference_claims or args.n
            gold = json.loads(gold_path.read_text(encoding="utf-8"))
            start = time.perf_counter()
            theirs = _organisers_loop(gold[:k], preds[:k], url=url, clone=work / "clone", images=work / "data" / "images")
            loop_s = (time.perf_counter() - start) * args.n / k
            theirs = round(theirs * args.n / k)
    row = {"n_claims": args.n, "latency_s": args.latency, "concurrency": concurrency, "calls_ours": ours,
           "calls_organisers": theirs, "cold_s": times["cold"], "warm_s": times["warm"], "organisers_s": loop_s,
           "organisers_extrapolated_from": k if k < args.n else None,
           "speedup_cold": loop_s / times["cold"], "speedup_warm": loop_s / times["warm"]}
    print(json.dumps(row) if args.json else _text(row))


def _text(row: dict[str, Any]) -> str:
    k = row["organisers_extrapolated_from"]
    note = f" (extrapolated from {k} claims)" if k else ""
    return "\n".join([
        f"{row['n_claims']} claims, {row['latency_s']:g} s per judge call, --judge-concurrency {row['concurrency']}",
        f"organisers' loop: {row['calls_organisers']} calls one at a time, {row['organisers_s']:.1f} s{note}",
        f"averimatec profile: {row['calls_ours']} calls, cold {row['cold_s']:.1f} s ({row['speedup_cold']:.1f}x faster), "
        f"warm {row['warm_s']:.1f} s ({row['speedup_warm']:.1f}x)"])


if __name__ == "__main__":
    main()
