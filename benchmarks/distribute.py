"""MirroredStrategy step time on 1/2/4/8 virtual CPU devices, the HLO's
all-reduce count and bytes per step against the ring all-reduce bound
2(N-1)/N x parameter bytes, and the N=1 strategy overhead against a plain
jaxtape.function step.

    python benchmarks/distribute.py            # every N, one child process each
    python benchmarks/distribute.py --gpu      # the devices JAX finds (one GPU: N=1)

Each N runs in its own process (XLA_FLAGS must be set before JAX starts).
Median ms after warm-up with `block_until_ready`-equivalent reads.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time

BATCH, DIM, HIDDEN, CLASSES, STEPS = 256, 256, 512, 10, 60
_BYTES = {"f32": 4, "f16": 2, "bf16": 2, "f64": 8, "s32": 4, "s64": 8}


def _all_reduce_bytes(text: str) -> tuple[int, int]:
    count = total = 0
    for line in text.splitlines():
        if " all-reduce(" not in line and " all-reduce-start(" not in line:
            continue
        count += 1
        lhs = line.split("=", 1)[1].split("all-reduce")[0]
        for dtype, dims in re.findall(r"(\w+)\[([\d,]*)\]", lhs):
            n = 1
            for d in filter(None, dims.split(",")):
                n *= int(d)
            total += n * _BYTES.get(dtype, 4)
    return count, total


def child(n: int | None) -> dict:
    import numpy as np

    import jaxtape as tf

    rng = np.random.default_rng(0)
    x = rng.normal(size=(BATCH, DIM)).astype("float32")
    y = rng.integers(0, CLASSES, size=BATCH)
    shapes = [(DIM, HIDDEN), (HIDDEN,), (HIDDEN, CLASSES), (CLASSES,)]
    init = [(rng.normal(size=s) * 0.05).astype("float32") for s in shapes]

    def build(strategy):
        with strategy.scope():
            ws = [tf.Variable(w) for w in init]
            opt = tf.keras.optimizers.SGD(0.01)

        def step(x, y):
            with tf.GradientTape() as tape:
                h = tf.nn.relu(tf.matmul(x, ws[0]) + ws[1])
                logits = tf.matmul(h, ws[2]) + ws[3]
                per = tf.nn.sparse_softmax_cross_entropy_with_logits(y, logits)
                loss = tf.nn.compute_average_loss(per, global_batch_size=BATCH)
            opt.apply_gradients(zip(tape.gradient(loss, ws), ws))
            return loss

        return ws, step

    def timed(*cases):
        """Median ms of each `(fn, *args)`, the cases interleaved step by step
        (a shared machine's load then weighs on all of them alike)."""
        for fn, *args in cases:
            for _ in range(3):
                float(fn(*args))
        times: list[list[float]] = [[] for _ in cases]
        for _ in range(STEPS):
            for out, (fn, *args) in zip(times, cases):
                t0 = time.perf_counter()
                float(fn(*args))
                out.append(time.perf_counter() - t0)
        return [float(np.median(t)) * 1e3 for t in times]

    strategy = tf.distribute.MirroredStrategy()
    n = strategy.num_replicas_in_sync
    ws, step = build(strategy)

    @tf.function
    def dstep(x, y):
        per = strategy.run(step, args=(x, y))
        return strategy.reduce("SUM", per, axis=None)

    ds = tf.data.Dataset.from_tensor_slices((x, y)).batch(BATCH)
    dx, dy = next(iter(strategy.experimental_distribute_dataset(ds)))
    if n == 1:  # the plain step: same model, no strategy
        _, plain = build(tf.distribute.get_strategy())
        tx, ty = tf.constant(x), tf.constant(y)
        ms, plain_ms = timed((dstep, dx, dy), (tf.function(plain), tx, ty))
    else:
        (ms,) = timed((dstep, dx, dy))
    trace = dstep.get_concrete_function(dx, dy)._trace
    leaves = [getattr(a, "_global", a)._value for a in (dx, dy)]
    text = trace._plain.lower(*trace.var_values(), *leaves).compile().as_text()
    count, nbytes = _all_reduce_bytes(text)
    param_bytes = sum(w.numpy().nbytes for w in ws)
    row = {
        "n": n,
        "device": str(tf.distribute.MirroredStrategy().extended.worker_devices[0]),
        "step_ms": ms,
        "all_reduce": count,
        "all_reduce_bytes": nbytes,
        "param_bytes": param_bytes,
        "ring_bytes_per_device": 2 * (n - 1) / n * param_bytes,
        "ring_bytes_from_hlo": 2 * (n - 1) / n * nbytes,
    }
    if n == 1:
        row["plain_step_ms"] = plain_ms
        row["overhead"] = ms / plain_ms
    return row


def main():
    if len(sys.argv) > 1 and sys.argv[1] == "--child":
        print("JSON" + json.dumps(child(None)))
        return
    counts = [None] if "--gpu" in sys.argv else [1, 2, 4, 8]
    print(
        f"{'N':>3} {'step ms':>9} {'all-reduce':>10} {'AR bytes':>10} "
        f"{'param bytes':>11} {'ring/dev HLO':>12} {'ring bound':>11} {'vs plain':>9}"
    )
    print("    (ring/dev HLO: 2(N-1)/N x the all-reduced bytes, what each device")
    print("     sends in a ring all-reduce; ring bound: 2(N-1)/N x parameter bytes)")
    for n in counts:
        env = dict(os.environ)
        if n is not None:
            env["XLA_FLAGS"] = f"--xla_force_host_platform_device_count={n}"
            env["JAX_PLATFORMS"] = "cpu"
        text = subprocess.run(
            [sys.executable, __file__, "--child"],
            env=env,
            capture_output=True,
            text=True,
        ).stdout
        line = [ln for ln in text.splitlines() if ln.startswith("JSON")]
        if not line:
            print(f"N={n}: failed\n{text[-2000:]}")
            continue
        r = json.loads(line[-1][4:])
        ratio = f"{r['overhead']:.3f}x" if "overhead" in r else ""
        print(
            f"{r['n']:>3} {r['step_ms']:>9.3f} {r['all_reduce']:>10} "
            f"{r['all_reduce_bytes']:>10} {r['param_bytes']:>11} "
            f"{r['ring_bytes_from_hlo']:>12.0f} "
            f"{r['ring_bytes_per_device']:>11.0f} {ratio:>9}"
        )
        if "plain_step_ms" in r:
            print(f"    plain jaxtape.function step: {r['plain_step_ms']:.3f} ms")


if __name__ == "__main__":
    main()
