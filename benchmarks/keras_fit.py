"""Keras training kit: `fit` with `steps_per_execution`, and mixed precision.

- `Model.fit` on the MNIST MLP (784-128-10, batch 32, Adam,
  SparseCategoricalCrossentropy) with `compile(steps_per_execution=N)` for
  N = 1 and 32, per step against the hand-written JAX loop on the same
  batches (`jax.jit(value_and_grad)` + optax Adam with donated state, one
  call per batch, as `train_step.py`'s baseline): the paired median of the
  per-round ratios, the two sides alternating.
- The compiled training step (a Keras model under a GradientTape in a
  `jaxtape.function`) under `keras.mixed_precision` policy `mixed_bfloat16`
  against `float32`, on the MNIST MLP at batch 256 and the small CNN at
  batch 64: the same alternating rounds, ratio bf16 / float32 (below 1 is a
  speed-up; on CPUs without bfloat16 arithmetic it is usually above 1), and
  the same ratio for the hand-written JAX step computing in bfloat16.

Run: python benchmarks/keras_fit.py [--quick]
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
import optax
from train_step import _data, _layers, _loss, jax_step, keras_step

import jaxtape


def fit_per_step(steps_per_execution, x, y, base, rounds, batches):
    """Seconds per step of one `fit` epoch of `batches` batches, and the
    paired median ratio to the JAX loop over the same batches."""
    model = jaxtape.keras.Sequential(_layers(jaxtape, "mlp"))
    model.compile(
        optimizer="adam",
        loss=_loss(jaxtape, "mlp"),
        steps_per_execution=steps_per_execution,
    )
    n = len(x)
    xs, ys = np.concatenate([x] * batches), np.concatenate([y] * batches)
    model.fit(xs, ys, batch_size=n, epochs=2, verbose=0, shuffle=False)  # compiles
    fit_times, ratios = [], []
    for _ in range(rounds):
        t0 = time.perf_counter()
        model.fit(xs, ys, batch_size=n, epochs=1, verbose=0, shuffle=False)
        fit_s = time.perf_counter() - t0
        t0 = time.perf_counter()
        for i in range(batches - 1):
            base.unsynced(xs[i * n : (i + 1) * n], ys[i * n : (i + 1) * n])
        float(base.unsynced(xs[-n:], ys[-n:]))  # both end waiting
        jax_s = time.perf_counter() - t0
        fit_times.append(fit_s / batches)
        ratios.append(fit_s / jax_s)
    return statistics.median(fit_times), statistics.median(ratios)


def policy_step(policy, kind, x, y):
    jaxtape.keras.mixed_precision.set_global_policy(policy)
    try:
        _, step = keras_step(jaxtape, kind, x, y, compiled=True)
        step()  # traced and compiled under this policy
    finally:
        jaxtape.keras.mixed_precision.set_global_policy("float32")
    return step


def jax_mixed_step(kind, weights, x, y, dtype):
    """The hand-written JAX step with float32 parameters and `dtype` compute
    (what a mixed policy does: cast the weights and inputs per step, the loss
    in float32), jitted with donated state, as `train_step.jax_step`."""

    def forward(params, x):
        p = [w.astype(dtype) for w in params]
        x = x.astype(dtype)
        if kind == "mlp":
            h = jnp.maximum(x.reshape(x.shape[0], -1) @ p[0] + p[1], 0)
            return h @ p[2] + p[3]
        layout = ("NHWC", "HWIO", "NHWC")
        dn = jax.lax.conv_dimension_numbers(x.shape, p[0].shape, layout)
        h = jax.lax.conv_general_dilated(x, p[0], (1, 1), "VALID", dimension_numbers=dn)
        h = jnp.maximum(h + p[1], 0)
        n, hh, ww, c = h.shape
        h = h.reshape(n, hh // 2, 2, ww // 2, 2, c).max(axis=(2, 4))
        return h.reshape(n, -1) @ p[2] + p[3]

    def loss_fn(params, x, y):
        logp = jax.nn.log_softmax(forward(params, x).astype(jnp.float32))
        return -jnp.mean(jnp.take_along_axis(logp, y[:, None], -1))

    tx = optax.adam(1e-3, eps=1e-7)
    box = {"p": [jnp.asarray(w) for w in weights]}
    box["s"] = tx.init(box["p"])

    @jax.jit
    def update(params, state, x, y):
        loss, grads = jax.value_and_grad(loss_fn)(params, x, y)
        updates, state = tx.update(grads, state, params)
        return optax.apply_updates(params, updates), state, loss

    def step():
        box["p"], box["s"], loss = update(box["p"], box["s"], x, y)
        return float(loss)

    return step


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--fit-batches", type=int, default=320)
    args = parser.parse_args()
    rounds = 3 if args.quick else 10
    print(f"# keras_fit  jax {jax.__version__}  {platform.machine()}  {jax.devices()}")
    rng = np.random.default_rng(0)

    x, y = _data("mlp", 32, rng)
    weights = jaxtape.keras.Sequential(_layers(jaxtape, "mlp"))
    weights(x[:1])
    base = jax_step("mlp", weights.get_weights(), x, y)
    print("## Model.fit, MNIST MLP batch 32 (ms per step; ratio to the JAX loop)")
    for spe in (1, 32):
        per_step, ratio = fit_per_step(spe, x, y, base, rounds, args.fit_batches)
        print(
            f"fit steps_per_execution={spe:<3d}  {per_step * 1e3:7.3f} ms/step  "
            f"fit/JAX {ratio:5.2f}x"
        )

    print("## compiled train step, mixed_bfloat16 vs float32 (ms per step)")
    cases = [("MNIST MLP, batch 256", "mlp", 256), ("small CNN, batch 64", "cnn", 64)]
    for name, kind, batch in cases:
        x, y = _data(kind, batch, rng)
        f32 = policy_step("float32", kind, x, y)
        bf16 = policy_step("mixed_bfloat16", kind, x, y)
        model = jaxtape.keras.Sequential(_layers(jaxtape, kind))
        model(x[:1])
        jax_f32 = jax_mixed_step(kind, model.get_weights(), x, y, jnp.float32)
        jax_bf16 = jax_mixed_step(kind, model.get_weights(), x, y, jnp.bfloat16)
        reps = 100 if args.quick else 400
        (bf_s, f_s), ratio = _timing.interleaved([bf16, f32], reps, rounds=10)
        (jbf_s, jf_s), jratio = _timing.interleaved([jax_bf16, jax_f32], reps, 10)
        print(
            f"{name:22s} float32 {f_s * 1e3:7.3f}  mixed_bfloat16 {bf_s * 1e3:7.3f}"
            f"  bf16/f32 {ratio:5.2f}x   JAX: {jf_s * 1e3:7.3f} / "
            f"{jbf_s * 1e3:7.3f}  {jratio:5.2f}x"
        )


if __name__ == "__main__":
    main()
