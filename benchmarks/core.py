"""Core benchmarks: dispatch, tape overhead, nested tapes, jacobians, a model gradient.

Each row is measured in this run beside its baseline (hand-written JAX; real TF
eager when the `parity` extra is installed). Median µs after warm-up, with
`block_until_ready`; ratio = jaxtape / JAX baseline (for every row but the
chains, measured in alternating rounds: the median of the per-round ratios).

Run: python benchmarks/core.py [--quick]
"""

from __future__ import annotations

import argparse
import gc
import platform
import statistics
import time

import _timing  # benchmarks/_timing.py (scripts run from this folder)
import jax
import jax.numpy as jnp
import numpy as np

import jaxtape

try:  # the test-only oracle, if installed
    import tensorflow as tf_real
except ImportError:  # pragma: no cover
    tf_real = None
# TF's import leaves a large heap that every full collection would walk
# again; jaxtape freezes what existed at its own import, so do the same here.
gc.collect()
gc.freeze()


def _block(x):
    for leaf in jax.tree_util.tree_leaves(x):
        v = getattr(leaf, "_value", leaf)
        if hasattr(v, "block_until_ready"):
            v.block_until_ready()
        elif hasattr(v, "numpy"):
            v.numpy()
    return x


def samples(fn, reps=200, warmup=5):
    """Seconds per call of `fn`, `reps` times after `warmup` calls."""
    for _ in range(warmup):
        _block(fn())
    times = []
    for _ in range(reps):
        t0 = time.perf_counter()
        _block(fn())
        times.append(time.perf_counter() - t0)
    return times


def timeit(fn, reps=200, warmup=5):
    return statistics.median(samples(fn, reps, warmup)) * 1e6


def first_call(fn):
    t0 = time.perf_counter()
    _block(fn())
    return (time.perf_counter() - t0) * 1e6


def row(name, ours, base, tf_us=None, note="", ratio=None):
    """One line; `ratio` (paired, from `interleaved`) replaces ours / base."""
    tf_col = f"{tf_us:10.1f}" if tf_us is not None else f"{'-':>10}"
    ratio = ours / base if ratio is None else ratio
    print(f"{name:46s} {ours:10.1f} {base:10.1f} {ratio:7.2f}x {tf_col}  {note}")


def interleaved(fns, reps, rounds=10):
    """Medians (µs) in alternating rounds and the paired ratio (`_timing`)."""
    blocking = [lambda fn=fn: _block(fn()) for fn in fns]
    medians, ratio = _timing.interleaved(blocking, reps, rounds)
    return [m * 1e6 for m in medians], ratio


def dispatch(reps):
    print("\n## dispatch (µs per op call, x = float32[100])")
    x_np = np.ones(100, np.float32)
    xj, xt = jnp.asarray(x_np), jaxtape.constant(x_np)
    (ours, base), ratio = interleaved(
        [lambda: jaxtape.sin(xt), lambda: jnp.sin(xj)], reps * 5
    )
    row(
        "jaxtape.sin outside a tape",
        ours,
        base,
        timeit(lambda: tf_real.sin(tf_real.constant(x_np)), reps) if tf_real else None,
        ratio=ratio,
    )

    # Inside: the op is recorded (deferred) and its value read, as TF's eager
    # op would compute it; a fresh tape every 100 calls, as training loops do.
    def recorded():
        with jaxtape.GradientTape() as tape:
            tape.watch(xt)
            for _ in range(100):
                out = jaxtape.sin(xt).value  # read it, as TF computes it
        return out

    (ours, base100), ratio = interleaved(
        [recorded, lambda: [jnp.sin(xj) for _ in range(100)][-1]], max(reps // 10, 20)
    )
    row("jaxtape.sin inside a recording tape", ours / 100, base100 / 100, ratio=ratio)


def chain(n, reps):
    x = jaxtape.constant(1.0001)

    def run():
        with jaxtape.GradientTape() as tape:
            tape.watch(x)
            y = x
            for _ in range(n):
                y = y * x + 1.0
        return tape.gradient(y, x)

    jaxtape.autodiff.clear_cache()
    first = first_call(run)
    times = samples(run, reps, warmup=2)
    ours = statistics.median(times) * 1e6
    mean = statistics.mean(times) * 1e6  # garbage collections included

    def f(x):
        y = x
        for _ in range(n):
            y = y * x + 1.0
        return y

    g = jax.jit(jax.grad(f))
    base = timeit(lambda: g(1.0001), reps)
    tf_us = None
    if tf_real:
        xt = tf_real.constant(1.0001)

        def tf_run():
            with tf_real.GradientTape() as tape:
                tape.watch(xt)
                y = xt
                for _ in range(n):
                    y = y * xt + 1.0
            return tape.gradient(y, xt)

        tf_us = timeit(tf_run, max(reps // 4, 3), warmup=1)
    row(
        f"chain N={n}: tape fwd+bwd",
        ours,
        base,
        tf_us,
        f"{ours / n:.1f} µs/step (mean {mean / n:.1f}); first call "
        f"{first / 1e3:.1f} ms",
    )


def nested(reps):
    x_np = np.linspace(-1, 1, 1000).astype(np.float32)
    x = jaxtape.constant(x_np)

    def run():
        with jaxtape.GradientTape() as t1:
            t1.watch(x)
            with jaxtape.GradientTape() as t2:
                t2.watch(x)
                y = jaxtape.reduce_sum(jaxtape.sin(x) ** 3)
            g = t2.gradient(y, x)
        return t1.gradient(g, x)

    f = lambda v: jnp.sum(jnp.sin(v) ** 3)
    h = jax.jit(jax.grad(lambda v: jnp.sum(jax.grad(f)(v))))
    xj = jnp.asarray(x_np)
    tf_us = None
    if tf_real:
        xt = tf_real.constant(x_np)

        def tf_run():
            with tf_real.GradientTape() as t1:
                t1.watch(xt)
                with tf_real.GradientTape() as t2:
                    t2.watch(xt)
                    y = tf_real.reduce_sum(tf_real.sin(xt) ** 3)
                g = t2.gradient(y, xt)
            return t1.gradient(g, xt)

        tf_us = timeit(tf_run, reps)
    (ours, base), ratio = interleaved([run, lambda: h(xj)], reps)
    row("2nd derivative, nested tapes (x: 1000)", ours, base, tf_us, ratio=ratio)


def jacobians(reps):
    rng = np.random.default_rng(0)
    w_np = rng.normal(size=(256, 256)).astype(np.float32) / 16
    x_np = rng.normal(size=(256,)).astype(np.float32)
    w, x = jaxtape.constant(w_np), jaxtape.constant(x_np)

    def run():
        with jaxtape.GradientTape() as tape:
            tape.watch(x)
            y = (
                jaxtape.tanh(jaxtape.linalg.matvec(w, x))
                if hasattr(jaxtape.linalg, "matvec")
                else jaxtape.tanh(
                    jaxtape.reshape(
                        jaxtape.matmul(w, jaxtape.reshape(x, [256, 1])), [256]
                    )
                )
            )
        return tape.jacobian(y, x)

    jac = jax.jit(jax.jacrev(lambda x: jnp.tanh(w_np @ x)))
    tf_us = None
    if tf_real:
        wt, xt = tf_real.constant(w_np), tf_real.constant(x_np)

        def tf_run():
            with tf_real.GradientTape() as tape:
                tape.watch(xt)
                y = tf_real.tanh(
                    tf_real.reshape(
                        tf_real.matmul(wt, tf_real.reshape(xt, [256, 1])), [256]
                    )
                )
            return tape.jacobian(y, xt)

        tf_us = timeit(tf_run, max(reps // 20, 3), warmup=1)
    (ours, base), ratio = interleaved([run, lambda: jac(jnp.asarray(x_np))], reps // 2)
    row("tape.jacobian tanh(W@x), W 256x256", ours, base, tf_us, ratio=ratio)

    xb_np = rng.normal(size=(64, 256)).astype(np.float32)
    xb = jaxtape.constant(xb_np)

    def run_b():
        with jaxtape.GradientTape() as tape:
            tape.watch(xb)
            y = jaxtape.tanh(jaxtape.matmul(xb, w, transpose_b=True))
        return tape.batch_jacobian(y, xb)

    bj = jax.jit(jax.vmap(jax.jacrev(lambda x: jnp.tanh(w_np @ x))))
    (ours, base), ratio = interleaved(
        [run_b, lambda: bj(jnp.asarray(xb_np))], reps // 4
    )
    row("tape.batch_jacobian, batch 64", ours, base, ratio=ratio)


def seed_model(reps):
    rng = np.random.default_rng(0)
    data = rng.random((1000, 32)).astype(np.float32)
    labels = rng.random((1000, 10)).astype(np.float32)
    params = [
        rng.normal(size=(32, 32)).astype(np.float32) * 0.2,
        np.zeros(32, np.float32),
        rng.normal(size=(32, 10)).astype(np.float32) * 0.2,
        np.zeros(10, np.float32),
    ]
    variables = [jaxtape.Variable(p) for p in params]
    x, y = jaxtape.constant(data), jaxtape.constant(labels)

    def loss_tape():
        w1, b1, w2, b2 = variables
        with jaxtape.GradientTape() as tape:
            h = jaxtape.nn.relu(jaxtape.matmul(x, w1) + b1)
            logits = jaxtape.matmul(h, w2) + b2
            loss = jaxtape.reduce_mean(
                jaxtape.nn.softmax_cross_entropy_with_logits(y, logits)
            )
        return tape.gradient(loss, variables)

    def loss_fn(ps, x, y):
        w1, b1, w2, b2 = ps
        h = jax.nn.relu(x @ w1 + b1)
        logits = h @ w2 + b2
        return jnp.mean(-jnp.sum(y * jax.nn.log_softmax(logits), -1))

    vg = jax.jit(jax.value_and_grad(loss_fn))
    jparams = [jnp.asarray(p) for p in params]
    xj, yj = jnp.asarray(data), jnp.asarray(labels)
    jaxtape.autodiff.clear_cache()
    first = first_call(loss_tape)
    second = first_call(loss_tape)
    base_first = first_call(lambda: vg(jparams, xj, yj))
    (ours, base), ratio = interleaved([loss_tape, lambda: vg(jparams, xj, yj)], reps)
    row(
        "seed model (Dense32 relu->Dense10, 1000x32) grad",
        ours,
        base,
        None,
        f"1st call {first / 1e3:.1f} ms (eager replay), 2nd {second / 1e3:.1f} ms "
        f"(compile); jax.jit 1st {base_first / 1e3:.1f} ms",
        ratio=ratio,
    )


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true", help="fewer repetitions")
    reps = 40 if parser.parse_args().quick else 200
    print(
        f"# jaxtape core benchmarks — {platform.processor() or platform.machine()}, "
        f"{jax.devices()[0].platform}, jax {jax.__version__}, "
        f"TF {tf_real.__version__ if tf_real else 'not installed'}"
    )
    print(
        f"{'case':46s} {'jaxtape':>10} {'JAX':>10} {'ratio':>8} {'TF eager':>10}  (µs)"
    )
    dispatch(reps * 10)
    print("\n## tape overhead, nested tapes, jacobians, seed model (µs per call)")
    chain(100, reps // 2)
    chain(1000, max(reps // 20, 5))
    nested(reps)
    jacobians(reps)
    seed_model(reps)


if __name__ == "__main__":
    main()
