"""Eager small steps against the eager peers: PyTorch and TF, same work, one run.

Rows (each framework single-threaded, the calls alternating in rounds;
ratios are jaxtape / peer, paired by round):

- the MNIST MLP's eager training step (Flatten -> Dense 128 relu ->
  Dense 10, sparse categorical cross-entropy from logits, Adam) at batch 32
  and 256, from the same weights and data: a GradientTape step in jaxtape
  and TF, `loss.backward(); opt.step()` in PyTorch;
- a nested second derivative, eager: d/dx sum(d/dx sum(sin(x)^3)), x of
  1000 elements (nested GradientTapes; `torch.autograd.grad` with
  `create_graph=True`).

Peers are optional: a row runs against each one installed (`pip install
torch` for PyTorch; the `parity` extra for TF).

Run: taskset -c 0 python benchmarks/eager_peers.py [--quick]
"""

from __future__ import annotations

import argparse
import os
import platform

import _timing  # benchmarks/_timing.py (scripts run from this folder)
import numpy as np

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

import jaxtape  # noqa: E402


def _peers():
    peers = {}
    try:
        import torch

        torch.set_num_threads(1)
        peers["PyTorch"] = torch
    except ImportError:
        pass
    try:
        import tensorflow

        tensorflow.config.threading.set_intra_op_parallelism_threads(1)
        tensorflow.config.threading.set_inter_op_parallelism_threads(1)
        peers["TF"] = tensorflow
    except ImportError:
        pass
    return peers


def _weights():
    rng = np.random.default_rng(0)
    w1 = rng.normal(0, 0.05, (784, 128)).astype(np.float32)
    w2 = rng.normal(0, 0.05, (128, 10)).astype(np.float32)
    return w1, np.zeros(128, np.float32), w2, np.zeros(10, np.float32)


def _data(batch):
    rng = np.random.default_rng(1)
    x = rng.random((batch, 28, 28), dtype=np.float32)
    y = rng.integers(0, 10, batch).astype(np.int64)
    return x, y


def _keras_step(tf, batch):
    """The seeds' eager step (jaxtape and TF run the same code)."""
    model = tf.keras.Sequential(
        [
            tf.keras.layers.Flatten(input_shape=(28, 28)),
            tf.keras.layers.Dense(128, activation="relu"),
            tf.keras.layers.Dense(10),
        ]
    )
    x, y = _data(batch)
    model(x[:1])
    model.set_weights(list(_weights()))
    loss_object = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True)
    optimizer = tf.keras.optimizers.Adam()

    def step():
        with tf.GradientTape() as tape:
            loss = loss_object(y, model(x, training=True))
        grads = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(grads, model.trainable_variables))
        return float(loss)

    return step


def _torch_step(torch, batch):
    w1, b1, w2, b2 = _weights()
    model = torch.nn.Sequential(
        torch.nn.Flatten(),
        torch.nn.Linear(784, 128),
        torch.nn.ReLU(),
        torch.nn.Linear(128, 10),
    )
    with torch.no_grad():
        model[1].weight.copy_(torch.from_numpy(w1.T.copy()))
        model[1].bias.copy_(torch.from_numpy(b1))
        model[3].weight.copy_(torch.from_numpy(w2.T.copy()))
        model[3].bias.copy_(torch.from_numpy(b2))
    x, y = (torch.from_numpy(a) for a in _data(batch))
    loss_fn = torch.nn.CrossEntropyLoss()
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3, eps=1e-7)

    def step():
        optimizer.zero_grad()
        loss = loss_fn(model(x), y)
        loss.backward()
        optimizer.step()
        return loss.item()

    return step


def _tape_second_derivative(tf):
    x = tf.constant(np.linspace(-1, 1, 1000).astype(np.float32))

    def run():
        with tf.GradientTape() as t1:
            t1.watch(x)
            with tf.GradientTape() as t2:
                t2.watch(x)
                y = tf.reduce_sum(tf.sin(x) ** 3)
            g = t2.gradient(y, x)
        return t1.gradient(g, x).numpy()

    return run


def _torch_second_derivative(torch):
    x = torch.from_numpy(np.linspace(-1, 1, 1000).astype(np.float32))
    x.requires_grad_(True)

    def run():
        y = (torch.sin(x) ** 3).sum()
        (g,) = torch.autograd.grad(y, x, create_graph=True)
        (h,) = torch.autograd.grad(g.sum(), x)
        return h.numpy()

    return run


def _row(name, ours, peers, reps, rounds):
    line = f"{name:38s} jaxtape {_median(ours, reps) * 1e6:8.0f} µs"
    for peer, fn in peers.items():
        (a, b), ratio = _timing.interleaved([ours, fn], reps, rounds)
        line += f" | {peer} {b * 1e6:8.0f} µs, ratio {ratio:5.2f}x"
    print(line)


def _median(fn, reps):
    (t,), _ = _timing.interleaved([fn], max(reps // 4, 10), 2)
    return t


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    reps, rounds = (100, 4) if args.quick else (400, 10)
    peers = _peers()
    print(
        f"jaxtape eager vs eager peers ({platform.processor() or platform.machine()})"
    )
    print(f"peers installed: {', '.join(peers) or 'none'}; ratios jaxtape / peer")
    for batch in (32, 256):
        steps = {}
        if "PyTorch" in peers:
            steps["PyTorch"] = _torch_step(peers["PyTorch"], batch)
        if "TF" in peers:
            steps["TF"] = _keras_step(peers["TF"], batch)
        _row(
            f"MNIST MLP eager step, batch {batch}",
            _keras_step(jaxtape, batch),
            steps,
            reps,
            rounds,
        )
    seconds = {}
    if "PyTorch" in peers:
        seconds["PyTorch"] = _torch_second_derivative(peers["PyTorch"])
    if "TF" in peers:
        seconds["TF"] = _tape_second_derivative(peers["TF"])
    _row(
        "nested 2nd derivative (x: 1000)",
        _tape_second_derivative(jaxtape),
        seconds,
        reps,
        rounds,
    )


if __name__ == "__main__":
    main()
