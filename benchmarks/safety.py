"""What TF's safety guarantees cost: run-time argument checks and the state lock.

The MNIST step of `examples/mnist_tape.py` (Flatten -> Dense 128 relu ->
Dense 10, batch 32, SparseCategoricalCrossentropy(from_logits=True), Adam,
two metrics) is timed with and without each guarantee, the two sides
alternating in rounds (paired ratios; `_timing`):

- run-time checks, compiled: the step as a `jaxtape.function` whose program
  checks the labels, reading one error flag per call, against the same step
  traced with `set_runtime_checks(False)`;
- run-time checks, eager: the labels checked on the host per step, against
  the same ops with their checks removed;
- the state lock (Variables updated atomically across threads): the
  compiled and eager steps, and a bare `assign_add`, with the lock against
  a no-op stand-in.

Run: python benchmarks/safety.py [--quick]
"""

from __future__ import annotations

import argparse
import contextlib
import platform

import _timing  # benchmarks/_timing.py (scripts run from this folder)
import numpy as np

import jaxtape as tf
from jaxtape._src.function import trace as _trace
from jaxtape._src.losses import losses
from jaxtape._src.ops import nn_ops
from jaxtape._src.state import variable as _variable


def _mnist_step():
    model = tf.keras.Sequential(
        [
            tf.keras.layers.Flatten(input_shape=(28, 28)),
            tf.keras.layers.Dense(128, activation="relu"),
            tf.keras.layers.Dense(10),
        ]
    )
    loss_object = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True)
    optimizer = tf.keras.optimizers.Adam()
    train_loss = tf.keras.metrics.Mean(name="train_loss")
    train_accuracy = tf.keras.metrics.SparseCategoricalAccuracy(name="train_accuracy")

    def train_step(images, labels):
        with tf.GradientTape() as tape:
            predictions = model(images, training=True)
            loss = loss_object(labels, predictions)
        gradients = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(gradients, model.trainable_variables))
        train_loss(loss)
        train_accuracy(labels, predictions)
        return loss

    return train_step


def _data(batch=32):
    rng = np.random.default_rng(0)
    x = rng.random((batch, 28, 28), dtype=np.float32)
    y = rng.integers(0, 10, batch).astype(np.uint8)
    return x, y


def _blocking(step, x, y):
    def run():
        step(x, y).numpy()

    return run


@contextlib.contextmanager
def _no_lock():
    saved = _variable.state_lock, _trace.state_lock
    _variable.state_lock = _trace.state_lock = contextlib.nullcontext()
    try:
        yield
    finally:
        _variable.state_lock, _trace.state_lock = saved


@contextlib.contextmanager
def _no_eager_checks():
    infos = [
        losses._sparse_categorical_crossentropy._jaxtape_op,
        nn_ops._sparse_softmax_xent._jaxtape_op,
    ]
    saved = [i.check for i in infos]
    for i in infos:
        i.check = None
    try:
        yield
    finally:
        for i, c in zip(infos, saved):
            i.check = c


def _within(ctx, fn):
    def run():
        with ctx():
            fn()

    return run


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    reps, rounds = (200, 4) if args.quick else (1000, 10)
    x, y = _data()
    print(f"jaxtape safety costs ({platform.processor() or platform.machine()})")
    print("MNIST step, batch 32; paired ratios (guarded / unguarded), median of rounds")

    checked = tf.function(_mnist_step())
    tf.config.experimental.set_runtime_checks(False)
    try:
        unchecked = tf.function(_mnist_step())
        _blocking(unchecked, x, y)()  # traced without checks
    finally:
        tf.config.experimental.set_runtime_checks(True)
    (a, b), ratio = _timing.interleaved(
        [_blocking(checked, x, y), _blocking(unchecked, x, y)], reps, rounds
    )
    print(
        f"  compiled step, run-time checks: {a * 1e3:.3f} vs {b * 1e3:.3f} ms"
        f"  ratio {ratio:.3f}"
    )

    eager = _mnist_step()
    eager_run = _blocking(eager, x, y)
    (a, b), ratio = _timing.interleaved(
        [eager_run, _within(_no_eager_checks, eager_run)], reps // 2, rounds
    )
    print(
        f"  eager step, run-time checks:    {a * 1e3:.3f} vs {b * 1e3:.3f} ms"
        f"  ratio {ratio:.3f}"
    )

    compiled_run = _blocking(checked, x, y)
    (a, b), ratio = _timing.interleaved(
        [compiled_run, _within(_no_lock, compiled_run)], reps, rounds
    )
    print(
        f"  compiled step, state lock:      {a * 1e3:.3f} vs {b * 1e3:.3f} ms"
        f"  ratio {ratio:.3f}"
    )
    (a, b), ratio = _timing.interleaved(
        [eager_run, _within(_no_lock, eager_run)], reps // 2, rounds
    )
    print(
        f"  eager step, state lock:         {a * 1e3:.3f} vs {b * 1e3:.3f} ms"
        f"  ratio {ratio:.3f}"
    )
    v = tf.Variable(0.0)

    def adds():
        for _ in range(100):
            v.assign_add(1.0)
        v.numpy()

    (a, b), ratio = _timing.interleaved(
        [adds, _within(_no_lock, adds)], reps // 4, rounds
    )
    print(
        f"  assign_add x100, state lock:    {a * 1e3:.3f} vs {b * 1e3:.3f} ms"
        f"  ratio {ratio:.3f}"
    )


if __name__ == "__main__":
    main()
