"""Does `Dataset.prefetch` overlap input work with the training step?

One MNIST-MLP training step (a jaxtape.function: tape, Adam) is fed 256-image
uint8 batches in four ways, all in this run:

- `numpy loop`: slicing arrays by hand, the baseline;
- `dataset`: `from_tensor_slices(...).batch(256).map(decode)`, no prefetch;
- `dataset + prefetch`: the same with `.prefetch(AUTOTUNE)`;
- `dataset + parallel map + prefetch`: `map(..., num_parallel_calls=AUTOTUNE)`.

`decode` casts and scales the batch and, with `--host-ms`, waits that long per
batch to stand for reading/decoding files (I/O that releases the GIL).
Printed: median ms per step over the epoch, and each variant / numpy loop.

Run: python benchmarks/input_pipeline.py [--host-ms 2] [--steps 100]
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np

import jaxtape as tf


def main(argv=None):
    parser = argparse.ArgumentParser()
    parser.add_argument("--host-ms", type=float, default=2.0)
    parser.add_argument("--steps", type=int, default=100)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args(argv)
    batch = 256
    n = batch * args.steps
    rng = np.random.default_rng(0)
    x = rng.integers(0, 256, (n, 784), dtype=np.uint8)
    y = rng.integers(0, 10, n).astype(np.int32)

    tf.random.set_seed(0)
    model = tf.keras.Sequential(
        [tf.keras.layers.Dense(128, activation="relu"), tf.keras.layers.Dense(10)]
    )
    loss_fn = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True)
    opt = tf.keras.optimizers.Adam()

    @tf.function
    def step(images, labels):
        with tf.GradientTape() as tape:
            loss = loss_fn(labels, model(images, training=True))
        grads = tape.gradient(loss, model.trainable_variables)
        opt.apply_gradients(zip(grads, model.trainable_variables))
        return loss

    def decode(images, labels):
        if args.host_ms:
            time.sleep(args.host_ms / 1000.0)
        return tf.cast(images, tf.float32) / 255.0, labels

    def numpy_loop():
        for i in range(0, n, batch):
            images, labels = decode(x[i : i + batch], y[i : i + batch])
            loss = step(images, labels)
        return loss

    base = tf.data.Dataset.from_tensor_slices((x, y)).batch(batch)
    variants = {
        "numpy loop": None,
        "dataset": base.map(decode),
        "dataset + prefetch": base.map(decode).prefetch(tf.data.AUTOTUNE),
        "dataset + parallel map + prefetch": base.map(
            decode, num_parallel_calls=tf.data.AUTOTUNE
        ).prefetch(tf.data.AUTOTUNE),
    }

    def run(ds):
        if ds is None:
            return numpy_loop()
        for images, labels in ds:
            loss = step(images, labels)
        return loss

    run(variants["dataset"])  # compile once
    times = {k: [] for k in variants}
    for _ in range(args.repeats):  # interleaved, so noise hits all alike
        for name, ds in variants.items():
            start = time.perf_counter()
            float(run(ds))
            times[name].append((time.perf_counter() - start) / args.steps * 1e3)
    baseline = statistics.median(times["numpy loop"])
    print(
        f"host work per batch: {args.host_ms} ms; {args.steps} steps of batch {batch}"
    )
    print(f"{'variant':36s} {'ms/step':>8s} {'vs numpy loop':>14s}")
    for name, ts in times.items():
        ms = statistics.median(ts)
        print(f"{name:36s} {ms:8.2f} {ms / baseline:13.2f}x")


if __name__ == "__main__":
    main()
