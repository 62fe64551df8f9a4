"""Hungarian METEOR: the best one-to-one matching of predicted to gold evidence strings.

For one claim, the official scorers fill a ``len(candidates) x len(references)`` matrix
with ``pairwise_meteor(candidate, reference)``, solve the assignment problem with
``scipy.optimize.linear_sum_assignment(..., maximize=True)``, sum the matched scores and
multiply by ``1 / n`` where ``n`` is the number of gold strings (AVeriTeC 2023/2024) or of
predicted strings (EvalAI). :func:`score_tasks` does this for many claims at once: every
distinct string is tokenised once (in worker processes for large inputs), WordNet lookups
are shared, and claims are spread over ``jobs`` processes -- with identical results.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from itertools import chain
from pathlib import Path
from typing import Any, ClassVar, Literal

import numpy as np

from averitec_tools.forking import default_termination_handlers, fork_is_safe
from averitec_tools.metrics._gc import paused_gc
from averitec_tools.metrics.base import register_metric
from averitec_tools.metrics.evidence_scorer import qa_strings
from averitec_tools.metrics.meteor import MeteorEngine, MeteorEngineScorer, default_engine
from averitec_tools.records.rated import RatedItem

Normalise = Literal["reference", "candidate"]

#: Below this many tasks a long-lived scorer's warm helpers (already forked) are not worth a round trip.
PARALLEL_MIN_TASKS = 150
#: Below this many tasks one process (scoring every pair in one vectorised batch) beats forking
#: workers (the 500 dev claims of the 2024 profile are 2,000 tasks).
AUTO_PARALLEL_MIN_TASKS = 10_000
#: Below this many new strings preparing them in this process is faster than forking.
PARALLEL_MIN_STRINGS = 20_000


@dataclass(frozen=True)
class HungarianTask:
    """One claim's matching problem.

    Attributes:
        candidates: Predicted strings (already capped, e.g. to the first 10).
        references: Gold strings.
        normalise: Divide by the number of ``"reference"`` or ``"candidate"`` strings.
    """

    candidates: tuple[str, ...]
    references: tuple[str, ...]
    normalise: Normalise = "reference"


def pairwise_matrix(*, candidates: Sequence[str], references: Sequence[str], engine: MeteorEngine) -> np.ndarray:
    """``M[i, j] = METEOR(candidate i, reference j)``, as ``compute_all_pairwise_scores``."""
    prepared = engine._prepared
    if not all(map(prepared.__contains__, candidates)) or not all(map(prepared.__contains__, references)):
        engine.prepare_many([*candidates, *references])
    refs = [prepared[r] for r in references]
    score = engine.score_prepared
    rows = [[score(hyp, ref) for ref in refs] for hyp in map(prepared.__getitem__, candidates)]
    return np.array(rows, dtype=float).reshape(len(candidates), len(references))


def hungarian_assignment(matrix: np.ndarray) -> list[tuple[int, int]]:
    """The maximum-weight assignment the utility is summed over, as ``(row, column)`` pairs
    (rows: candidates, columns: references; SciPy's solver, as :func:`assignment_utility`).

    Example:
        >>> hungarian_assignment(np.array([[0.1, 0.9], [0.8, 0.2], [0.3, 0.3]]))
        [(0, 1), (1, 0)]
    """
    from averitec_tools.metrics._lean import linear_sum_assignment

    rows, cols = linear_sum_assignment(matrix, maximize=True)
    return [(int(r), int(c)) for r, c in zip(rows, cols, strict=True)]


def assignment_utility(matrix: np.ndarray, *, normaliser: int) -> float:
    """Sum of the maximum-weight assignment times ``1 / normaliser`` (official arithmetic)."""
    from averitec_tools.metrics._lean import (
        linear_sum_assignment,  # SciPy's solver, not all of scipy.optimize
    )

    rows, cols = linear_sum_assignment(matrix, maximize=True)
    utility = matrix[rows, cols].sum()
    utility *= 1 / float(normaliser)
    return float(utility)


def solve_task(task: HungarianTask, engine: MeteorEngine) -> float:
    """One claim's Hungarian METEOR (its matrix, the assignment, the normaliser)."""
    return solve_matrix(pairwise_matrix(candidates=task.candidates, references=task.references, engine=engine), task)


def solve_matrix(matrix: np.ndarray, task: HungarianTask) -> float:
    """One claim's Hungarian METEOR from its matrix (:func:`pairwise_matrix`)."""
    n = len(task.references) if task.normalise == "reference" else len(task.candidates)
    if n == 0:
        raise ValueError(f"Hungarian METEOR is undefined with no {task.normalise} strings")
    if matrix.shape[0] == 1 or matrix.shape[1] == 1:
        # one row or column: the assignment is its largest entry, a sum of one term (the
        # solver's answer, float for float); an empty matrix sums to 0 as the solver's would
        utility = float(matrix.max()) if matrix.size else 0.0
        utility *= 1 / float(n)
        return utility
    return assignment_utility(matrix, normaliser=n)


# State shared with forked workers (set just before the pool starts).
_WORKER: dict[str, Any] = {}


def _analyse_chunk(texts: list[str]) -> list[tuple[list[str], list[str]]]:
    engine: MeteorEngine = _WORKER["engine"]
    engine.prepare_many(texts)
    return [(list(p.words), list(p.stems)) for p in map(engine._prepared.__getitem__, texts)]


def _solve_range(bounds: tuple[int, int]) -> list[float]:
    engine: MeteorEngine = _WORKER["engine"]
    tasks: Sequence[HungarianTask] = _WORKER["tasks"]
    return [solve_task(tasks[i], engine) for i in range(*bounds)]


def resolve_jobs(jobs: int | None, n_tasks: int, *, load: float | None = None) -> int:
    """Worker count: ``jobs`` if given; else, for large inputs, the idle cores (max 4).

    Idle cores are the core count minus the 1-minute load average: on a busy machine
    extra workers only add forking and pickling, so the automatic choice is then 1.

    Example:
        >>> resolve_jobs(None, 500, load=0.0) >= 1, resolve_jobs(None, 500, load=64.0)
        (True, 1)
    """
    if jobs is not None:
        return max(1, jobs)
    if n_tasks < AUTO_PARALLEL_MIN_TASKS:
        return 1
    cores = os.cpu_count() or 1
    if load is None:
        load = os.getloadavg()[0] if hasattr(os, "getloadavg") else 0.0
    idle = int(cores - load + 0.5)
    return max(1, min(idle, cores, 4))


def _fork_context() -> Any | None:
    if not fork_is_safe():  # a JVM in this process: forked helpers would hang (forking.py)
        return None
    import multiprocessing  # only when forking: start-up time

    try:
        return multiprocessing.get_context("fork")
    except ValueError:  # platforms without fork: run in one process
        return None


def _chunks(n: int, parts: int) -> list[tuple[int, int]]:
    size = max(1, -(-n // parts))
    return [(i, min(n, i + size)) for i in range(0, n, size)]


def score_tasks(
    tasks: Sequence[HungarianTask],
    *,
    engine: MeteorEngine | None = None,
    jobs: int | None = None,
    progress: bool = False,
    reference_cache: Path | None = None,
    n_claims: int | None = None,
    claims: Sequence[int] | None = None,
) -> list[float]:
    """Hungarian METEOR of every task, in order; identical whatever ``jobs`` is.

    Args:
        tasks: One :class:`HungarianTask` per claim (and per score kind).
        engine: The METEOR engine (shared caches); default: the process-wide one.
        jobs: Worker processes (``None``: automatic, both cores for large inputs).
        progress: Show a progress bar on stderr.
        reference_cache: A file of prepared reference strings (see
            :mod:`averitec_tools.metrics.prepared_cache`): read before, written after.
        n_claims: Claims the tasks belong to (several score kinds per claim): the bar then
            counts claims, not tasks.
        claims: The claim index of each task, so that warm helper processes (an engine's
            ``pool``) each get whole claims, whose strings they tokenise once (default with
            ``n_claims``: tasks laid out kind by kind, task ``i`` of claim ``i % n_claims``).

    Example:
        >>> score_tasks([HungarianTask(("a cat",), ("a cat", "a dog"))])
        [0.46875]
    """
    engine = engine or default_engine()
    if reference_cache is not None:
        from averitec_tools.metrics.prepared_cache import load_prepared

        load_prepared(engine, reference_cache)
    if claims is None and n_claims:
        claims = [i % n_claims for i in range(len(tasks))]
    with paused_gc(), engine.remembering():
        results = _score_all(tasks, engine, jobs, progress, n_claims, claims)
    if reference_cache is not None:
        from averitec_tools.metrics.prepared_cache import save_prepared

        save_prepared(engine, reference_cache, (s for t in tasks for s in t.references))
    return results


def _score_all(
    tasks: Sequence[HungarianTask], engine: MeteorEngine, jobs: int | None, progress: bool, n_claims: int | None,
    claims: Sequence[int] | None = None,
) -> list[float]:
    n_workers = resolve_jobs(jobs, len(tasks))
    context = _fork_context() if n_workers > 1 else None
    texts = list(dict.fromkeys(chain.from_iterable(chain.from_iterable((t.candidates, t.references) for t in tasks))))
    todo = engine.unprepared(texts)
    # Resources are resolved (and any download announced) once, in this process.
    engine.load()
    if engine.pool is not None and len(tasks) >= PARALLEL_MIN_TASKS:
        # a long-lived scorer's warm helper processes: each prepares and solves its own claims in one batch
        return engine.pool.solve(tasks, groups=claims)
    bar = None
    try:
        _prepare(todo, engine, context, n_workers)
        # this process alone: every pair in one batch
        matrices = _matrices_at_once(tasks, engine, texts) if context is None and engine.pool is None else None
        bar = _progress_bar(len(tasks), n_claims) if progress else None
        if context is None:
            results: list[float] = []
            for k, task in enumerate(tasks):
                results.append(solve_task(task, engine) if matrices is None else solve_matrix(matrices[k], task))
                if bar is not None:
                    bar.update(1)
            return results
        _WORKER["engine"] = engine
        _WORKER["tasks"] = tasks
        results = []
        with context.Pool(n_workers, initializer=default_termination_handlers) as pool:
            for values in pool.imap(_solve_range, _chunks(len(tasks), n_workers * 8)):
                results.extend(values)
                if bar is not None:
                    bar.update(len(values))
        return results
    finally:
        _WORKER.clear()
        if bar is not None:
            bar.close()


def _prepare(todo: list[str], engine: MeteorEngine, context: Any, n_workers: int) -> None:
    """Prepare the new strings: a very large batch analysed in forked workers, else here at once."""
    if context is not None and len(todo) > PARALLEL_MIN_STRINGS:
        _WORKER["engine"] = engine
        with context.Pool(n_workers, initializer=default_termination_handlers) as pool:
            parts = [todo[a:b] for a, b in _chunks(len(todo), n_workers * 4)]
            for part, analysed in zip(parts, pool.map(_analyse_chunk, parts), strict=True):
                engine.add_analysed_many(part, [w for w, _ in analysed], [s for _, s in analysed])
    engine.prepare_many(todo)  # all at once: new sentences and words go through in one batch


def solve_batch(tasks: Sequence[HungarianTask], engine: MeteorEngine) -> list[float]:
    """:func:`solve_task` of every task, in order, from one batch: the tasks' new strings
    prepared at once and their distinct pairs aligned at once (:func:`_matrices_at_once`);
    what a warm helper process runs on its part (:mod:`~averitec_tools.metrics.warm_pool`).

    Example:
        >>> solve_batch([HungarianTask(("a cat",), ("a cat", "a dog"))], default_engine())
        [0.46875]
    """
    if not tasks:
        return []
    texts = list(dict.fromkeys(chain.from_iterable(chain.from_iterable((t.candidates, t.references) for t in tasks))))
    engine.prepare_many(engine.unprepared(texts))
    return [solve_matrix(m, t) for m, t in zip(_matrices_at_once(tasks, engine, texts), tasks, strict=True)]


def _cell_keys(tasks: Sequence[HungarianTask], number: dict[str, int]) -> np.ndarray:
    """Per matrix cell of every task, row by row: ``n * candidate number + reference number``
    (``n`` texts), built with array operations instead of a Python step per cell."""
    candidates, references = [t.candidates for t in tasks], [t.references for t in tasks]
    n_cand = np.fromiter(map(len, candidates), dtype=np.int64, count=len(tasks))
    n_ref = np.fromiter(map(len, references), dtype=np.int64, count=len(tasks))
    at_number = number.__getitem__  # every string through map, not a generator step each
    cand = np.fromiter(map(at_number, chain.from_iterable(candidates)), dtype=np.int64, count=int(n_cand.sum()))
    ref = np.fromiter(map(at_number, chain.from_iterable(references)), dtype=np.int64, count=int(n_ref.sum()))
    size = n_cand * n_ref
    task = np.repeat(np.arange(len(tasks), dtype=np.int64), size)  # each cell's task
    at = np.arange(task.size, dtype=np.int64) - (np.cumsum(size) - size)[task]  # the cell's place in its matrix
    width = n_ref[task]
    rows = cand[(np.cumsum(n_cand) - n_cand)[task] + at // np.maximum(width, 1)]
    cols = ref[(np.cumsum(n_ref) - n_ref)[task] + at % np.maximum(width, 1)]
    return len(number) * rows + cols  # type: ignore[no-any-return]


def _matrices_at_once(tasks: Sequence[HungarianTask], engine: MeteorEngine, texts: list[str]) -> list[np.ndarray]:
    """Every task's :func:`pairwise_matrix` from one batch of the tasks' distinct pairs
    (:meth:`MeteorEngine.score_distinct`: aligned in C or vectorised), cut into matrices;
    ``texts``: the tasks' distinct strings."""
    number = {s: i for i, s in enumerate(texts)}
    n = len(texts)
    distinct, cells = np.unique(_cell_keys(tasks, number), return_inverse=True)
    prepared = engine.prepared_many(texts)
    scores = np.asarray(engine.score_distinct([(prepared[k // n], prepared[k % n]) for k in distinct.tolist()]),
                        dtype=float)
    scores = scores[cells.reshape(-1)]
    out, start = [], 0
    for task in tasks:
        rows, cols = len(task.candidates), len(task.references)
        out.append(scores[start:start + rows * cols].reshape(rows, cols))
        start += rows * cols
    return out


def _progress_bar(n_tasks: int, n_claims: int | None = None) -> Any:
    """A bar over tasks that shows claims (tasks × n_claims / n_tasks)."""
    from tqdm import tqdm

    scale = n_claims / n_tasks if n_claims and n_tasks else 1
    return tqdm(total=n_tasks, desc="Hungarian METEOR", unit="claim", unit_scale=scale, file=sys.stderr,
                leave=False, bar_format="{l_bar}{bar}| {n:.0f}/{total:.0f} claims [{elapsed}<{remaining}]")


@register_metric
class HungarianMeteor(
    MeteorEngineScorer, name="hu-meteor", higher_is_better=True,
    description="Hungarian-matched METEOR between predicted and gold evidence, normalised by the gold (or predicted) "
    "count (scipy.optimize.linear_sum_assignment(maximize=True))",
    citation="Schlichtkrull et al. (2023), AVeriTeC, Sec. 5",
):
    """Hungarian METEOR of one claim's predicted vs gold evidence strings (``normalise``:
    divide by the ``reference`` count, as AVeriTeC 2023/2024, or the ``candidate`` count, as EvalAI).

    As an evidence scorer (``averitec meta-eval``) it scores the Q+A strings of an item's
    two evidence texts (0 where either side has none).

    Example:
        >>> HU_METEOR.info.name, str(HungarianMeteor(normalise="candidate"))
        ('hu-meteor', 'hu-meteor(normalise=candidate)')
    """

    normalise: str = "reference"
    choices: ClassVar[Mapping[str, tuple[Any, ...]]] = {"normalise": ("reference", "candidate")}

    def __call__(self, *, candidates: Sequence[str], references: Sequence[str], engine: MeteorEngine | None = None) -> float:
        task = HungarianTask(tuple(candidates), tuple(references), self.normalise)  # type: ignore[arg-type]
        return solve_task(task, engine or default_engine())

    def score_item(self, item: RatedItem, ctx: Any) -> float:
        cands, refs = qa_strings(item.predicted), qa_strings(item.reference)
        if not (cands and refs):
            return 0.0
        return self(candidates=cands, references=refs, engine=ctx)


HU_METEOR = HungarianMeteor()

__all__ = [
    "HungarianMeteor", "HungarianTask", "assignment_utility", "hungarian_assignment", "pairwise_matrix",
    "resolve_jobs", "score_tasks", "solve_batch", "solve_task",
]
