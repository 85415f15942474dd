"""Training steps of single Keras layers: jaxtape.function vs hand-written JAX.

Each row is one layer family's training step: a Keras layer called under a
GradientTape inside `jaxtape.function`, `tape.gradient`, Adam's
`apply_gradients`; the baseline is the same computation written as a pure
JAX function of its parameters, `jax.jit(jax.value_and_grad)` + an optax
Adam step with donated state. Median ms per step after warm-up; the ratio
is paired (the median of per-round ratios, the two sides alternating), so
compare ratios, not absolute times, on a busy machine.

Rows (a row is a function `name -> (jaxtape_step, jax_step)`; add yours to
`ROWS`):
  mha: MultiHeadAttention self-attention, batch 32, sequence 128, 8 heads x
       64 (model width 512), loss mean((mha(x, x) - y)^2).

Run: python benchmarks/layers.py [--quick] [--only mha]
"""

from __future__ import annotations

import argparse
import functools
import math
import platform

import _timing  # benchmarks/_timing.py (scripts run from this folder)
import jax
import jax.numpy as jnp
import numpy as np
import optax

import jaxtape


def _adam_jax_step(loss, params):
    """`jax.jit(value_and_grad)` + optax Adam with donated parameters/state."""
    tx = optax.adam(1e-3)
    state = {"params": params, "opt": tx.init(params)}

    @functools.partial(jax.jit, donate_argnums=(0, 1))
    def update(params, opt, x, y):
        value, grads = jax.value_and_grad(loss)(params, x, y)
        updates, opt = tx.update(grads, opt, params)
        return optax.apply_updates(params, updates), opt, value

    def step(x, y):
        state["params"], state["opt"], value = update(
            state["params"], state["opt"], x, y
        )
        return value

    return step


def mha_row(quick: bool):
    """MultiHeadAttention(num_heads=8, key_dim=64) on (32, 128, 512)."""
    batch, seq, heads, key_dim = (8, 32, 8, 64) if quick else (32, 128, 8, 64)
    width = heads * key_dim
    rng = np.random.default_rng(0)
    x = rng.normal(size=(batch, seq, width)).astype(np.float32)
    y = rng.normal(size=(batch, seq, width)).astype(np.float32)

    layer = jaxtape.keras.layers.MultiHeadAttention(num_heads=heads, key_dim=key_dim)
    layer(x, x)
    opt = jaxtape.keras.optimizers.Adam(1e-3)

    @jaxtape.function
    def jaxtape_step(x, y):
        with jaxtape.GradientTape() as tape:
            loss = jaxtape.reduce_mean(jaxtape.square(layer(x, x) - y))
        grads = tape.gradient(loss, layer.trainable_variables)
        opt.apply_gradients(zip(grads, layer.trainable_variables))
        return loss

    # The same weights, as a pytree: q/k/v kernels (width, heads, key_dim) and
    # biases (heads, key_dim); output kernel (heads, key_dim, width), bias (width,).
    params = [jnp.asarray(w) for w in layer.get_weights()]
    scale = 1.0 / math.sqrt(key_dim)

    def loss(params, x, y):
        qk, qb, kk, kb, vk, vb, ok, ob = params
        q = jnp.einsum("abc,cde->abde", x, qk) + qb
        k = jnp.einsum("abc,cde->abde", x, kk) + kb
        v = jnp.einsum("abc,cde->abde", x, vk) + vb
        scores = jnp.einsum("aecd,abcd->acbe", k, q * scale)
        probs = jax.nn.softmax(scores, axis=-1)
        ctx = jnp.einsum("acbe,aecd->abcd", probs, v)
        out = jnp.einsum("abcd,cde->abe", ctx, ok) + ob
        return jnp.mean(jnp.square(out - y))

    jax_step = _adam_jax_step(loss, params)
    xj, yj = jnp.asarray(x), jnp.asarray(y)
    xt, yt = jaxtape.constant(x), jaxtape.constant(y)
    # Same loss at the same weights: the baseline computes what the layer does.
    np.testing.assert_allclose(
        float(loss(params, xj, yj)),
        float(jaxtape.reduce_mean(jaxtape.square(layer(x, x) - y))),
        rtol=1e-4,
    )
    return (
        lambda: jaxtape_step(xt, yt).numpy(),
        lambda: jax_step(xj, yj).block_until_ready(),
        f"batch {batch}, seq {seq}, {heads} heads x {key_dim}",
    )


ROWS = {"mha": mha_row}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small shapes, few reps")
    parser.add_argument("--only", choices=sorted(ROWS), default=None)
    args = parser.parse_args(argv)
    device = jax.devices()[0]
    print(
        f"jaxtape {jaxtape.__version__}, jax {jax.__version__}, {device.platform} "
        f"({device.device_kind}), Python {platform.python_version()}"
    )
    reps, rounds = (20, 4) if args.quick else (60, 6)
    head = f"{'row':6} {'shape':34} {'jaxtape.function':>17} {'JAX+optax':>10}"
    print(f"{head} {'ratio':>6}")
    for name, row in ROWS.items():
        if args.only and name != args.only:
            continue
        ours, baseline, shape = row(args.quick)
        (t_ours, t_jax), ratio = _timing.interleaved([ours, baseline], reps, rounds)
        print(
            f"{name:6} {shape:34} {t_ours * 1e3:14.2f} ms {t_jax * 1e3:7.2f} ms "
            f"{ratio:6.2f}"
        )


if __name__ == "__main__":
    main()
