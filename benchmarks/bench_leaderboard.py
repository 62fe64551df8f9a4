"""Benchmark: a warm leaderboard server vs the official 2024 scorer as a whole process.

In one run, on the 500-claim dev set (``baseline_dev_predictions.json`` vs ``dev.json``):

1. the reference scorer (``benchmarks/reference_scorer.py``, the official algorithm under
   a real NLTK 3.9.1 with ``--nltk-path``) runs once as a process: start-up, NLTK and
   WordNet loading, scoring;
2. ``averitec leaderboard serve --workers 1`` starts on 127.0.0.1 with a fresh SQLite
   database and the default ``--poll-seconds`` (an upload wakes the idle worker at once); one warm-up submission (the unmodified baseline; its figures are checked
   against the reference to 1e-9) is scored, then ``--n`` new submissions are uploaded
   one after another over HTTP and timed from upload to "finished" (the client asks with
   ``?wait=``: the server answers when the submission has its outcome). Each is the baseline
   with a submission-specific token appended to *every* predicted question and answer, so
   no prediction string was seen before: only the gold side and word-level caches are warm;
3. resubmissions: the baseline's evidence with 100 other labels (a common pattern: a new
   verdict model on the same retrieval), where remembered pair scores apply;
   for 2 and 3 also the CPU the server's processes (server, worker, kept helpers) spent per
   submission, beside the reference process's CPU (less moved by a loaded machine);
4. throughput: ``--burst`` new submissions uploaded at once, with 1 and with 2 workers,
   timed until all are finished (submissions per minute).

Usage::

    python benchmarks/bench_leaderboard.py --nltk-path .venv/nltk391   # make bench-leaderboard
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from bench_scorer import CPU, compare, timed  # noqa: E402


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def fresh_variant(baseline: list[dict[str, Any]], tag: str) -> bytes:
    preds = json.loads(json.dumps(baseline))
    for p in preds:
        for e in p.get("evidence", []):
            e["question"] = f"{e['question']} {tag}"
            e["answer"] = f"{e['answer']} {tag}"
    return json.dumps(preds).encode()


def post(base: str, token: str, system: str, content: bytes) -> int:
    boundary = uuid.uuid4().hex
    parts = [
        f'--{boundary}\r\nContent-Disposition: form-data; name="system"\r\n\r\n{system}\r\n'.encode(),
        f'--{boundary}\r\nContent-Disposition: form-data; name="phase"\r\n\r\ndev\r\n'.encode(),
        f'--{boundary}\r\nContent-Disposition: form-data; name="file"; filename="p.json"\r\nContent-Type: application/json\r\n\r\n'.encode(),
        content, f"\r\n--{boundary}--\r\n".encode(),
    ]
    req = urllib.request.Request(base + "/api/submissions", data=b"".join(parts), method="POST", headers={
        "Authorization": f"Bearer {token}", "Content-Type": f"multipart/form-data; boundary={boundary}"})
    with urllib.request.urlopen(req, timeout=60) as r:
        return int(json.loads(r.read())["id"])


def state(base: str, sid: int, token: str, wait: float = 0.0) -> str:
    query = f"?wait={wait:g}" if wait else ""
    req = urllib.request.Request(f"{base}/api/submissions/{sid}{query}", headers={"Authorization": f"Bearer {token}"})
    with urllib.request.urlopen(req, timeout=60) as r:
        return str(json.loads(r.read())["state"])


def wait_finished(base: str, ids: list[int], token: str, timeout: float = 600) -> None:
    """Until every submission is finished: one request per submission that the server
    answers when it has an outcome (``?wait=``: no polling interval in the figures)."""
    deadline = time.monotonic() + timeout
    for sid in ids:
        while True:
            s = state(base, sid, token, wait=30)
            if s == "failed":
                raise SystemExit(f"submission {sid} failed")
            if s == "finished":
                break
            if time.monotonic() > deadline:
                raise SystemExit("timed out waiting for the server")


class Server:
    def __init__(self, db: str, workers: int, env: dict[str, str], jobs: str = "1", extra: tuple[str, ...] = ()) -> None:
        self.port = free_port()
        self.base = f"http://127.0.0.1:{self.port}"
        cmd = [sys.executable, "-m", "averitec_tools.cli.main", "leaderboard", "serve", "--db", db, "--port", str(self.port),
               "--workers", str(workers), "--jobs", jobs, *extra]  # the default --poll-seconds: uploads wake the workers
        # the server log: a pipe nobody reads would fill up and block it (closed in stop())
        self.log = tempfile.TemporaryFile()  # noqa: SIM115
        self.proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=self.log)
        for _ in range(600):
            try:
                urllib.request.urlopen(self.base + "/submit", timeout=2)
                return
            except OSError:
                if self.proc.poll() is not None:
                    self.log.seek(0)
                    raise SystemExit(f"server failed: {self.log.read().decode(errors='replace')}") from None
                time.sleep(0.1)
        raise SystemExit("server did not start")

    def stop(self) -> None:
        self.proc.terminate()
        self.proc.wait(timeout=30)
        self.log.close()


def tree_cpu(pid: int) -> float:
    """CPU seconds (user + system) of process ``pid`` and its living descendants (Linux
    ``/proc``; NaN elsewhere): the server, its workers and their kept helpers."""
    stats: dict[int, tuple[int, float]] = {}
    for entry in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = entry.read_text().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue  # gone meanwhile
        stats[int(entry.parent.name)] = (int(fields[1]), (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK"))
    if pid not in stats:
        return float("nan")
    tree, todo = {pid}, [pid]
    while todo:
        parent = todo.pop()
        children = [p for p, (ppid, _) in stats.items() if ppid == parent and p not in tree]
        tree.update(children)
        todo.extend(children)
    return sum(stats[p][1] for p in tree)


def sequential(server: Server, token: str, contents: list[bytes], what: str, results: dict[str, Any], *, t_ref: float,
               ref_cpu: float) -> float:
    """Upload ``contents`` one after another, each timed from upload to "finished"; prints
    and stores the latencies and the server's CPU per submission; returns the median."""
    latencies = []
    cpu0 = tree_cpu(server.proc.pid)
    for i, content in enumerate(contents):
        start = time.perf_counter()
        sid = post(server.base, token, f"{what}{i}", content)
        wait_finished(server.base, [sid], token)
        latencies.append(time.perf_counter() - start)
    cpu = (tree_cpu(server.proc.pid) - cpu0) / len(contents)
    med = statistics.median(latencies)
    results[f"{what}_latency_s"] = latencies
    results[f"{what}_server_cpu_s"] = cpu
    print(f"warm server, {what} 500-claim submissions, upload -> finished: median {med:.3f} s (min {min(latencies):.3f}, "
          f"max {max(latencies):.3f}) = {t_ref / med:.1f}x; server CPU (all its processes) {1000 * cpu:.0f} ms per submission "
          f"= {ref_cpu / cpu:.1f}x the reference's CPU", flush=True)
    return med


def cli(env: dict[str, str], *args: str) -> dict[str, Any]:
    out = subprocess.run([sys.executable, "-m", "averitec_tools.cli.main", "leaderboard", *args, "--json"], env=env,
                         capture_output=True, text=True, check=True).stdout
    return dict(json.loads(out))


@dataclass
class Run:
    """What every stage of one benchmark run reads: the inputs, the environment of the
    processes it starts, the reference's figures, and the results it gathers."""

    args: argparse.Namespace
    preds_path: Path
    gold_path: Path
    env: dict[str, str]
    baseline: list[dict[str, Any]]
    results: dict[str, Any] = field(default_factory=dict)
    t_ref: float = float("nan")
    ref_cpu: float = float("nan")
    reference: dict[str, Any] = field(default_factory=dict)


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description="warm leaderboard server vs the reference 2024 scorer process")
    parser.add_argument("--data-dir", default=os.environ.get("AVERITEC_DATA_DIR", str(HERE.parent.parent / "shared" / "data")))
    parser.add_argument("--nltk-path", default=None, help="folder with NLTK 3.9.1 for the reference")
    parser.add_argument("--n", type=int, default=5, help="sequential timed submissions")
    parser.add_argument("--burst", type=int, default=8, help="submissions uploaded at once for the throughput runs")
    parser.add_argument("--jobs", default="auto", help="--jobs of the server's workers (N or auto: the idle cores)")
    return parser.parse_args(argv)


def new_run(args: argparse.Namespace) -> Run:
    """The run's inputs and the environment of the processes it starts (this checkout's package, no downloads)."""
    data = Path(args.data_dir)
    env = dict(os.environ)
    env.setdefault("NLTK_DATA", str(data.parent / "nltk_data"))
    env["AVERITEC_DATA_DIR"] = str(data)
    env["AVERITEC_NO_DOWNLOAD"] = "1"
    env["PYTHONPATH"] = os.pathsep.join([str(HERE.parent), *filter(None, [env.get("PYTHONPATH")])])
    preds_path = data / "averitec/baseline_dev_predictions.json"
    return Run(args=args, preds_path=preds_path, gold_path=data / "averitec/dev.json", env=env,
               baseline=json.loads(preds_path.read_text()))


def load_average() -> str:
    """The 1-, 5- and 15-minute load averages (NaN where the system has none)."""
    load = os.getloadavg() if hasattr(os, "getloadavg") else (float("nan"),) * 3
    return f"{load[0]:.1f} {load[1]:.1f} {load[2]:.1f}"


def run_reference(run: Run) -> None:
    """The reference 2024 scorer once, as a whole process: its wall and CPU time and figures."""
    ref_cmd = [sys.executable, str(HERE / "reference_scorer.py"), "--profile", "averitec2024", str(run.preds_path), str(run.gold_path)]
    if run.args.nltk_path:
        ref_cmd += ["--nltk-path", run.args.nltk_path]
    run.t_ref, run.reference = timed(ref_cmd, run.env)
    run.ref_cpu = CPU["last"]
    print(f"reference 2024 scorer (whole process, {run.reference.get('tokenizer')}): {run.t_ref:.2f} s ({run.ref_cpu:.2f} s CPU)",
          flush=True)
    run.results.update({"reference_s": run.t_ref, "reference_cpu_s": run.ref_cpu})


def write_competition(tmp: str) -> Path:
    """The example competition without the limits that would stop the benchmark."""
    import yaml

    spec = yaml.safe_load((HERE.parent / "examples/leaderboard/averitec-dev.yaml").read_text())
    spec["phases"][0].pop("limits", None)  # the example's quota would stop the benchmark
    # and so would the per-team post rate, uploads in flight and connections from one address
    spec["rate_limits"] = {"posts_per_team_per_minute": 10_000, "uploads_per_team": 100, "connections_per_client": 1000}
    comp_path = Path(tmp) / "bench.yaml"
    comp_path.write_text(yaml.safe_dump(spec))
    return comp_path


def check_warm_up(run: Run, db: str, sid: int) -> None:
    """The warm-up submission's figures against the reference's (to 1e-9)."""
    from averitec_tools.leaderboard.store import Store

    ours = Store(db).results([sid])[sid][0]["summary"]
    problems = compare(ours, run.reference)
    print(f"warm-up submission vs reference: {'identical figures' if not problems else 'DIFFERENT: ' + '; '.join(problems[:5])}")
    run.results["identical"] = not problems


def relabelled_variants(baseline: list[dict[str, Any]], n: int) -> list[bytes]:
    """``n`` resubmissions: the baseline's evidence with 100 labels changed in each."""
    relabelled = []
    for i in range(n):
        preds = json.loads(json.dumps(baseline))
        for k, p in enumerate(preds[i * 50 : i * 50 + 100]):
            p["pred_label"] = ("Refuted", "Supported", "Not Enough Evidence")[(k + i) % 3]
        relabelled.append(json.dumps(preds).encode())
    return relabelled


def latency_runs(run: Run, server: Server, token: str) -> None:
    """New submissions, then resubmissions, one after another (one worker)."""
    new = [fresh_variant(run.baseline, f"s{i}") for i in range(run.args.n)]
    med = sequential(server, token, new, "new", run.results, t_ref=run.t_ref, ref_cpu=run.ref_cpu)
    print(f"speed-up vs the reference process: {run.t_ref / med:.1f}x", flush=True)
    run.results["ratio"] = run.t_ref / med
    relabelled = relabelled_variants(run.baseline, run.args.n)
    med_r = sequential(server, token, relabelled, "resubmission", run.results, t_ref=run.t_ref, ref_cpu=run.ref_cpu)
    run.results["resubmission_ratio"] = run.t_ref / med_r


def burst(run: Run, server: Server, token: str, workers: int) -> None:
    """``--burst`` new submissions uploaded at once, timed until all are finished."""
    contents = [fresh_variant(run.baseline, f"b{workers}x{i}") for i in range(run.args.burst)]
    start = time.perf_counter()
    ids = [post(server.base, token, f"burst{i}", c) for i, c in enumerate(contents)]
    wait_finished(server.base, ids, token)
    elapsed = time.perf_counter() - start
    per_min = 60.0 * run.args.burst / elapsed
    run.results[f"per_minute_{workers}_workers"] = per_min
    print(f"{workers} worker(s): {run.args.burst} submissions in {elapsed:.2f} s = {per_min:.1f} submissions/minute", flush=True)


def server_runs(run: Run, tmp: str, comp_path: Path, workers: int) -> None:
    """A fresh board served with ``workers`` workers: warm-up, the latency runs (one worker), the burst."""
    db = f"sqlite:///{tmp}/lb{workers}.db"
    cli(run.env, "init", str(comp_path), "--db", db)
    token = cli(run.env, "team", "add", "bench", "--db", db)["token"]
    server = Server(db, workers, run.env, run.args.jobs)
    try:
        warm = [post(server.base, token, "baseline", run.preds_path.read_bytes())]
        warm += [post(server.base, token, f"warm{i}", fresh_variant(run.baseline, f"w{workers}x{i}")) for i in range(workers - 1)]
        wait_finished(server.base, warm, token)
        if workers == 1:
            check_warm_up(run, db, warm[0])
            latency_runs(run, server, token)
        burst(run, server, token, workers)
    finally:
        server.stop()


def main(argv: list[str] | None = None) -> int:
    run = new_run(parse_args(argv))
    print(f"cores: {os.cpu_count()}; load average at the start: {load_average()}")
    run_reference(run)
    with tempfile.TemporaryDirectory(prefix="bench-lb-") as tmp:
        run.env["AVERITEC_CACHE_DIR"] = str(Path(tmp) / "cache")
        comp_path = write_competition(tmp)
        for workers in (1, 2):
            server_runs(run, tmp, comp_path, workers)
    print(f"load average at the end: {load_average()}")
    print(json.dumps(run.results))
    return 0 if run.results.get("identical") else 1


if __name__ == "__main__":
    sys.exit(main())
