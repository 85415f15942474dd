"""Timing shared by the benchmarks: alternating rounds with paired ratios."""

from __future__ import annotations

import statistics
import time


def interleaved(fns, reps, rounds):
    """Runs each call `reps` times in all, the calls alternating in `rounds`.

    Returns the median seconds of each call, and the median over rounds of
    each round's ratio fns[0] / fns[-1]: a paired figure, which this
    machine's drift (often 10% within a minute) spares. Each `fn` must wait
    for its own result.
    """
    for fn in fns:
        for _ in range(5):
            fn()
    samples = [[] for _ in fns]
    ratios = []
    for _ in range(rounds):
        round_medians = []
        for fn, out in zip(fns, samples):
            times = []
            for _ in range(max(reps // rounds, 2)):
                t0 = time.perf_counter()
                fn()
                times.append(time.perf_counter() - t0)
            out.extend(times)
            round_medians.append(statistics.median(times))
        ratios.append(round_medians[0] / round_medians[-1])
    return [statistics.median(s) for s in samples], statistics.median(ratios)
