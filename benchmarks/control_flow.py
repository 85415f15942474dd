"""Control-flow benchmarks: compiled loops and branches under a GradientTape.

1. RNN (µs per call): a tanh RNN over T steps writing a TensorArray, loss and
   gradients by a GradientTape inside `jaxtape.function` (the loop is
   `jaxtape.for_range`, one `lax.scan`), against the same model written by
   hand as `jax.jit(jax.value_and_grad(...))` over `lax.scan`; paired ratio
   (alternating rounds, `_timing`). TF's `tf.function` (AutoGraph's loop over
   `tf.range`) beside, when installed.
2. while_loop with a static `maximum_iterations` (µs per call): jaxtape lowers
   it to a `lax.scan` of `maximum_iterations` steps, each a `lax.cond` on the
   loop condition (so that reverse mode works); the baseline is
   `lax.while_loop`, which stops at once. Rows for a loop that stops after 10
   of 1000 allowed steps and one that runs all of them: the price of the
   masked scan.
3. cond (µs per call): a gradient through `jaxtape.cond` inside a compiled
   function against `jax.jit(jax.grad(...))` of `lax.cond`.

Run: python benchmarks/control_flow.py [--quick]
"""

from __future__ import annotations

import argparse
import platform
import statistics
import time

import _timing  # benchmarks/_timing.py (scripts run from this folder)
import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

import jaxtape

try:  # the test-only oracle, if installed
    import tensorflow as tf_real
except ImportError:  # pragma: no cover
    tf_real = None


def _block(x):
    for leaf in jax.tree_util.tree_leaves(x):
        v = getattr(leaf, "_value", leaf)
        if hasattr(v, "block_until_ready"):
            v.block_until_ready()
        elif hasattr(v, "numpy"):
            v.numpy()
    return x


def _waits(fn):
    return lambda: _block(fn())


def _median_us(fn, reps):
    for _ in range(5):
        fn()
    times = []
    for _ in range(reps):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times) * 1e6


# -- 1. RNN -------------------------------------------------------------------------
def rnn_cases(steps, batch, hidden):
    rng = np.random.default_rng(0)
    xs = rng.normal(size=(steps, batch, hidden)).astype("float32") * 0.1
    w0 = (rng.normal(size=(hidden, hidden)) / np.sqrt(hidden)).astype("float32")

    w = jaxtape.Variable(w0)

    @jaxtape.function
    def ours(x):
        with jaxtape.GradientTape() as t:
            ta = jaxtape.TensorArray(jaxtape.float32, size=steps)

            def body(i, ta, h):
                h = jaxtape.tanh(jaxtape.matmul(h, w) + x[i])
                return ta.write(i, h), h

            ta, _ = jaxtape.for_range(
                0, steps, 1, body, (ta, jaxtape.zeros([batch, hidden]))
            )
            loss = jaxtape.reduce_mean(ta.stack() ** 2)
        return loss, t.gradient(loss, [x, w])

    def loss_fn(x, w):
        def step(h, xt):
            h = jnp.tanh(h @ w + xt)
            return h, h

        _, hs = lax.scan(step, jnp.zeros((batch, hidden), jnp.float32), x)
        return jnp.mean(hs**2)

    baseline = jax.jit(jax.value_and_grad(loss_fn, argnums=(0, 1)))
    x_t, x_j, w_j = jaxtape.constant(xs), jnp.asarray(xs), jnp.asarray(w0)
    cases = {
        "jaxtape for_range + tape": _waits(lambda: ours(x_t)),
        "jax.jit(value_and_grad(lax.scan)) (baseline)": _waits(
            lambda: baseline(x_j, w_j)
        ),
    }
    got, want = ours(x_t), baseline(x_j, w_j)
    np.testing.assert_allclose(got[0].numpy(), want[0], rtol=1e-4)
    np.testing.assert_allclose(got[1][1].numpy(), want[1][1], rtol=1e-3, atol=1e-6)
    extra = {}
    if tf_real is not None:
        tw = tf_real.Variable(w0)

        @tf_real.function
        def theirs(x):
            with tf_real.GradientTape() as t:
                t.watch(x)
                ta = tf_real.TensorArray(tf_real.float32, size=steps)
                h = tf_real.zeros([batch, hidden])
                for i in tf_real.range(steps):
                    h = tf_real.tanh(tf_real.matmul(h, tw) + x[i])
                    ta = ta.write(i, h)
                loss = tf_real.reduce_mean(ta.stack() ** 2)
            return loss, t.gradient(loss, [x, tw])

        x_tf = tf_real.constant(xs)
        extra["TF tf.function (AutoGraph loop)"] = _waits(lambda: theirs(x_tf))
    return cases, extra


# -- 2. while_loop with a static maximum_iterations ------------------------------
def while_cases(stop, maximum):
    @jaxtape.function
    def ours(x):
        return jaxtape.while_loop(
            lambda i, s: i < stop,
            lambda i, s: (i + 1, s * 0.999 + 1.0),
            (0, x),
            maximum_iterations=maximum,
        )[1]

    @jax.jit
    def baseline(x):
        return lax.while_loop(
            lambda c: (c[0] < stop) & (c[0] < maximum),
            lambda c: (c[0] + 1, c[1] * 0.999 + 1.0),
            (0, x),
        )[1]

    x_t, x_j = jaxtape.constant(np.ones(256, "float32")), jnp.ones(256, jnp.float32)
    np.testing.assert_allclose(ours(x_t).numpy(), baseline(x_j), rtol=1e-5)
    return {
        f"jaxtape while_loop (stops at {stop} of {maximum}; masked lax.scan)": _waits(
            lambda: ours(x_t)
        ),
        "jax.jit(lax.while_loop) (baseline)": _waits(lambda: baseline(x_j)),
    }


# -- 3. cond under a tape ---------------------------------------------------------
def cond_cases(n):
    v = jaxtape.Variable(np.linspace(-1, 1, n).astype("float32"))

    @jaxtape.function
    def ours(x):
        with jaxtape.GradientTape() as t:
            t.watch(x)
            y = jaxtape.cond(
                jaxtape.reduce_sum(x) > 0,
                lambda: jaxtape.reduce_sum(jaxtape.sin(x * v)),
                lambda: jaxtape.reduce_sum(x * x),
            )
        return t.gradient(y, [x, v])

    def f(x, v):
        return lax.cond(
            jnp.sum(x) > 0, lambda: jnp.sum(jnp.sin(x * v)), lambda: jnp.sum(x * x)
        )

    baseline = jax.jit(jax.grad(f, argnums=(0, 1)))
    xs = np.linspace(0, 1, n).astype("float32")
    x_t, x_j, v_j = jaxtape.constant(xs), jnp.asarray(xs), jnp.asarray(v.numpy())
    np.testing.assert_allclose(ours(x_t)[1].numpy(), baseline(x_j, v_j)[1], rtol=1e-5)
    return {
        "jaxtape cond + tape": _waits(lambda: ours(x_t)),
        "jax.jit(grad(lax.cond)) (baseline)": _waits(lambda: baseline(x_j, v_j)),
    }


def _report(title, cases, reps, rounds, extra=None):
    times, ratio = _timing.interleaved(list(cases.values()), reps, rounds)
    print(f"\n{title}")
    for name, t in zip(cases, times):
        print(f"  {name:<64} {t * 1e6:10.1f} µs")
    for name, fn in (extra or {}).items():
        print(f"  {name:<64} {_median_us(fn, max(reps // 4, 10)):10.1f} µs")
    print(f"  ratio jaxtape / baseline (paired): {ratio:.3f}")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    reps, rounds = (60, 6) if args.quick else (300, 10)
    print(
        f"jaxtape control flow; jax {jax.__version__} on "
        f"{jax.devices()[0].platform}; {platform.processor() or platform.machine()}"
    )
    cases, extra = rnn_cases(steps=64, batch=32, hidden=128)
    _report(
        "1. RNN, T=64, batch 32, hidden 128: loss + gradients",
        cases,
        reps,
        rounds,
        extra,
    )
    _report(
        "2a. while_loop, maximum_iterations=1000", while_cases(10, 1000), reps, rounds
    )
    _report(
        "2b. while_loop, maximum_iterations=1000", while_cases(1000, 1000), reps, rounds
    )
    _report("3. cond, 4096 elements: gradient", cond_cases(4096), reps, rounds)


if __name__ == "__main__":
    main()
