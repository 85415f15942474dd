"""jaxtape.function's tracing: what a new input size costs, and call overhead.

Cases, on an MLP training step (784-128-10, Adam, SparseCategoricalCrossentropy):
- first call at a new batch size: with `input_signature=[TensorSpec([None,
  784]), TensorSpec([None])]` (the Python function traced once, symbolically;
  a new size replays the jaxpr and compiles) vs without a signature (a new
  size traces the Python function again and compiles), ms per new size;
- steady-state call of the compiled step, fixed shapes: plain vs with the
  input_signature (both take the fast path), paired ratio;
- call overhead of a tiny function (x + 1 on float32[8]): plain, with an
  input_signature, with a Python keyword argument, under a GradientTape, µs.

Run: python benchmarks/tracing.py [--quick]
"""

from __future__ import annotations

import argparse
import platform
import statistics
import time

import _timing  # benchmarks/_timing.py (scripts run from this folder)
import jax
import numpy as np

import jaxtape as tf


def _mlp_step(signature: bool):
    tf.random.set_seed(0)
    model = tf.keras.Sequential(
        [
            tf.keras.layers.Dense(128, activation="relu"),
            tf.keras.layers.Dense(10),
        ]
    )
    loss_fn = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True)
    opt = tf.keras.optimizers.Adam(1e-3)
    spec = [tf.TensorSpec([None, 784], tf.float32), tf.TensorSpec([None], tf.int32)]

    def step(x, y):
        with tf.GradientTape() as tape:
            loss = loss_fn(y, model(x, training=True))
        grads = tape.gradient(loss, model.trainable_variables)
        opt.apply_gradients(zip(grads, model.trainable_variables))
        return loss

    return tf.function(step, input_signature=spec if signature else None)


def _batch(n, rng):
    x = tf.constant(rng.normal(size=(n, 784)).astype("float32"))
    y = tf.constant(rng.integers(0, 10, size=(n,)).astype("int32"))
    return x, y


def new_sizes(sizes):
    rng = np.random.default_rng(0)
    out = {}
    for signature in (True, False):
        step = _mlp_step(signature)
        step(*_batch(16, rng))  # the first call: builds, traces, compiles
        times = []
        for n in sizes:
            x, y = _batch(n, rng)
            t0 = time.perf_counter()
            float(step(x, y))
            times.append(time.perf_counter() - t0)
        out[signature] = (
            statistics.median(times),
            step.experimental_get_tracing_count(),
        )
    return out


def steady(reps):
    rng = np.random.default_rng(0)
    x, y = _batch(32, rng)
    plain, signed = _mlp_step(False), _mlp_step(True)
    (t_plain, t_signed), ratio = _timing.interleaved(
        [
            lambda: plain(x, y)._value.block_until_ready(),
            lambda: signed(x, y)._value.block_until_ready(),
        ],
        reps,
        rounds=10,
    )
    return t_plain, t_signed, ratio


def tiny(reps):
    x = tf.ones([8])
    f = tf.function(lambda x: x + 1.0)
    s = tf.function(lambda x: x + 1.0, input_signature=[tf.TensorSpec([8])])
    k = tf.function(lambda x, scale=1.0: x * scale)

    def taped():
        with tf.GradientTape() as t:
            t.watch(x)
            f(x)

    cases = {
        "plain f(x)": lambda: f(x),
        "input_signature f(x)": lambda: s(x),
        "Python keyword f(x, scale=2.0)": lambda: k(x, scale=2.0),
        "under a GradientTape": taped,
    }
    times, _ = _timing.interleaved(list(cases.values()), reps, rounds=10)
    return dict(zip(cases, times))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true", help="fewer repetitions")
    quick = parser.parse_args().quick
    print(
        f"# tracing  jax {jax.__version__}  {platform.machine()}  "
        f"devices {jax.devices()}"
    )
    sizes = [24, 40, 56, 72] if quick else [24, 40, 56, 72, 88, 104, 120, 136]
    new = new_sizes(sizes)
    print("## MLP step, first call at a new batch size (ms; traces after all sizes)")
    print(
        f"input_signature [None, 784] (replay + compile)  {new[True][0] * 1e3:8.1f}"
        f"   traces: {new[True][1]}"
    )
    print(
        f"no signature (Python retraced + compile)       {new[False][0] * 1e3:8.1f}"
        f"   traces: {new[False][1]}"
    )
    t_plain, t_signed, ratio = steady(200 if quick else 1000)
    print("## MLP step, batch 32, steady state (ms per step)")
    print(
        f"plain {t_plain * 1e3:.3f}   input_signature {t_signed * 1e3:.3f}   "
        f"plain/signature {ratio:.2f}x (paired)"
    )
    print("## call overhead, x + 1 on float32[8] (µs per call)")
    for name, t in tiny(2000 if quick else 10000).items():
        print(f"{name:34s} {t * 1e6:8.1f}")


if __name__ == "__main__":
    main()
