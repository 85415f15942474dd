"""Training steps of single Keras layers: jaxtape.function vs hand-written JAX.

Each row is one layer family's training step: a Keras layer called under a
GradientTape inside `jaxtape.function`, `tape.gradient`, Adam's
`apply_gradients`; the baseline is the same computation written as a pure
JAX function of its parameters, `jax.jit(jax.value_and_grad)` + an optax
Adam step with donated state. Median ms per step after warm-up; the ratio
is paired (the median of per-round ratios, the two sides alternating), so
compare ratios, not absolute times, on a busy machine.

Rows (a row is a function `quick -> (jaxtape_step, jax_step, shape[,
extra])`, `extra` a dict `label -> (step, baseline)` of more paired lines;
add yours to `ROWS`):
  mha:  MultiHeadAttention self-attention, batch 32, sequence 128, 8 heads x
        64 (model width 512), loss mean((mha(x, x) - y)^2). Extra lines:
        jaxtape eager vs tf.keras eager, jaxtape.function vs tf.function
        (when TensorFlow is installed).
  lstm: LSTM(128) + Dense(1) head, batch 64, 100 steps of 32 features, MSE,
        SGD (keras / optax); the baseline is a `lax.scan` LSTM. Extra lines:
        jaxtape eager vs tf.keras eager, jaxtape.function vs tf.function
        (when TensorFlow is installed), eager vs jaxtape.function.
  deconv: Conv2DTranspose(64, 4, strides=2, 'same', relu), batch 32,
        16x16x128 -> 32x32x64, MSE, Adam; the baseline is
        `lax.conv_transpose`. Extra lines: eager vs jaxtape.function,
        jaxtape eager vs tf.keras eager, jaxtape.function vs tf.function
        (when TensorFlow is installed).
  preproc: Rescaling -> RandomFlip -> RandomContrast in training mode, batch
        64 of 64x64x3 images, compiled; the baseline is the same arithmetic
        with `jax.random` draws. Extra lines: jaxtape eager vs tf.keras eager,
        jaxtape.function vs tf.function (when TensorFlow is installed).

Run: python benchmarks/layers.py [--quick] [--only mha|lstm|deconv|preproc] [--no-tf]
"""

from __future__ import annotations

import argparse
import functools
import gc
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
    return _optax_jax_step(loss, params, optax.adam(1e-3))


def _optax_jax_step(loss, params, tx):
    """`jax.jit(value_and_grad)` + the optax `tx` with donated parameters/state."""
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

    layer, jaxtape_step = _keras_mha_step(jaxtape, heads, key_dim, x, compiled=True)
    _, eager = _keras_mha_step(jaxtape, heads, key_dim, x, compiled=False)

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
    extra = {}
    tf = _tensorflow()
    if tf is not None:
        _, tf_eager = _keras_mha_step(tf, heads, key_dim, x, compiled=False)
        _, tf_compiled = _keras_mha_step(tf, heads, key_dim, x, compiled=True)
        xs, ys = tf.constant(x), tf.constant(y)
        extra["eager vs tf.keras eager"] = (
            lambda: eager(xt, yt).numpy(),
            lambda: tf_eager(xs, ys).numpy(),
        )
        extra["jaxtape.function vs tf.function"] = (
            lambda: jaxtape_step(xt, yt).numpy(),
            lambda: tf_compiled(xs, ys).numpy(),
        )
    return (
        lambda: jaxtape_step(xt, yt).numpy(),
        lambda: jax_step(xj, yj).block_until_ready(),
        f"batch {batch}, seq {seq}, {heads} heads x {key_dim}",
        extra,
    )


def _keras_mha_step(mod, heads, key_dim, x, compiled):
    """A MultiHeadAttention self-attention training step of `mod` (jaxtape
    or tf): tape, gradient, Adam."""
    layer = mod.keras.layers.MultiHeadAttention(num_heads=heads, key_dim=key_dim)
    layer(x[:1], x[:1])
    opt = mod.keras.optimizers.Adam(1e-3)

    def step(x, y):
        with mod.GradientTape() as tape:
            loss = mod.reduce_mean(mod.square(layer(x, x) - y))
        grads = tape.gradient(loss, layer.trainable_variables)
        opt.apply_gradients(zip(grads, layer.trainable_variables))
        return loss

    return layer, (mod.function(step) if compiled else step)


def _tensorflow():
    """Real TF (the test-only `parity` extra) if installed and wanted, or None."""
    if _NO_TF:
        return None
    try:
        import tensorflow
    except ImportError:  # pragma: no cover
        return None
    gc.collect()
    gc.freeze()  # its import's heap would slow every later collection
    return tensorflow


_NO_TF = False


def _keras_lstm_step(mod, units, x, y, compiled):
    """A Keras LSTM + Dense(1) training step of `mod` (jaxtape or tf): tape,
    gradient, SGD."""
    model = mod.keras.Sequential(
        [mod.keras.layers.LSTM(units), mod.keras.layers.Dense(1)]
    )
    model(x[:1])
    opt = mod.keras.optimizers.SGD(0.01)

    def step(x, y):
        with mod.GradientTape() as tape:
            loss = mod.reduce_mean(mod.square(model(x, training=True) - y))
        grads = tape.gradient(loss, model.trainable_variables)
        opt.apply_gradients(zip(grads, model.trainable_variables))
        return loss

    return model, (mod.function(step) if compiled else step)


def lstm_row(quick: bool):
    """LSTM(128) + Dense(1), batch 64 x 100 steps x 32 features, SGD."""
    batch, steps, features, units = (16, 20, 8, 32) if quick else (64, 100, 32, 128)
    rng = np.random.default_rng(0)
    x = rng.normal(size=(batch, steps, features)).astype(np.float32)
    y = rng.normal(size=(batch, 1)).astype(np.float32)
    model, compiled = _keras_lstm_step(jaxtape, units, x, y, compiled=True)
    _, eager = _keras_lstm_step(jaxtape, units, x, y, compiled=False)

    # The same computation in JAX: kernel (features, 4u), recurrent (u, 4u),
    # bias (4u,), gates i, f, c, o (Keras's order); head kernel (u, 1), bias.
    def loss(params, x, y):
        kernel, recurrent, bias, head_k, head_b = params

        def cell(carry, x_t):
            h, c = carry
            z = x_t @ kernel + h @ recurrent + bias
            i, f, g, o = jnp.split(z, 4, axis=-1)
            c = jax.nn.sigmoid(f) * c + jax.nn.sigmoid(i) * jnp.tanh(g)
            h = jax.nn.sigmoid(o) * jnp.tanh(c)
            return (h, c), None

        zeros = jnp.zeros((x.shape[0], units), x.dtype)
        (h, _), _ = jax.lax.scan(cell, (zeros, zeros), jnp.swapaxes(x, 0, 1))
        return jnp.mean(jnp.square(h @ head_k + head_b - y))

    params = [jnp.asarray(w) for w in model.get_weights()]
    jax_step = _optax_jax_step(loss, params, optax.sgd(0.01))
    xj, yj = jnp.asarray(x), jnp.asarray(y)
    xt, yt = jaxtape.constant(x), jaxtape.constant(y)
    np.testing.assert_allclose(  # the baseline computes what the model does
        float(loss(params, xj, yj)),
        float(jaxtape.reduce_mean(jaxtape.square(model(x) - y))),
        rtol=1e-4,
    )
    extra = {
        "eager vs jaxtape.function": (
            lambda: eager(xt, yt).numpy(),
            lambda: compiled(xt, yt).numpy(),
        )
    }
    tf = _tensorflow()
    if tf is not None:
        _, tf_eager = _keras_lstm_step(tf, units, x, y, compiled=False)
        _, tf_compiled = _keras_lstm_step(tf, units, x, y, compiled=True)
        xs, ys = tf.constant(x), tf.constant(y)
        extra["eager vs tf.keras eager"] = (
            lambda: eager(xt, yt).numpy(),
            lambda: tf_eager(xs, ys).numpy(),
        )
        extra["jaxtape.function vs tf.function"] = (
            lambda: compiled(xt, yt).numpy(),
            lambda: tf_compiled(xs, ys).numpy(),
        )
    return (
        lambda: compiled(xt, yt).numpy(),
        lambda: jax_step(xj, yj).block_until_ready(),
        f"batch {batch}, {steps} steps, {units} units",
        extra,
    )


def _keras_deconv_step(mod, filters, x, compiled):
    """A Conv2DTranspose training step of `mod` (jaxtape or tf): tape,
    gradient, Adam."""
    layer = mod.keras.layers.Conv2DTranspose(
        filters, 4, strides=2, padding="same", activation="relu"
    )
    layer(x[:1])
    opt = mod.keras.optimizers.Adam(1e-3)

    def step(x, y):
        with mod.GradientTape() as tape:
            loss = mod.reduce_mean(mod.square(layer(x) - y))
        grads = tape.gradient(loss, layer.trainable_variables)
        opt.apply_gradients(zip(grads, layer.trainable_variables))
        return loss

    return layer, (mod.function(step) if compiled else step)


def deconv_row(quick: bool):
    """Conv2DTranspose(64, 4, strides=2, 'same', relu): (32, 16, 16, 128) ->
    (32, 32, 32, 64), a DCGAN generator block."""
    batch, size, cin, cout = (8, 8, 32, 16) if quick else (32, 16, 128, 64)
    rng = np.random.default_rng(0)
    x = rng.normal(size=(batch, size, size, cin)).astype(np.float32)
    y = rng.normal(size=(batch, 2 * size, 2 * size, cout)).astype(np.float32)
    layer, compiled = _keras_deconv_step(jaxtape, cout, x, compiled=True)
    _, eager = _keras_deconv_step(jaxtape, cout, x, compiled=False)

    # The same computation in JAX: a fractionally strided convolution with the
    # kernel (4, 4, cout, cin) flipped, Keras's 'same' padding (2, 2).
    def loss(params, x, y):
        kernel, bias = params
        out = jax.lax.conv_transpose(
            x,
            kernel,
            (2, 2),
            ((2, 2), (2, 2)),
            dimension_numbers=("NHWC", "HWIO", "NHWC"),
            transpose_kernel=True,
        )
        return jnp.mean(jnp.square(jax.nn.relu(out + bias) - y))

    params = [jnp.asarray(w) for w in layer.get_weights()]
    jax_step = _adam_jax_step(loss, params)
    xj, yj = jnp.asarray(x), jnp.asarray(y)
    xt, yt = jaxtape.constant(x), jaxtape.constant(y)
    np.testing.assert_allclose(  # the baseline computes what the layer does
        float(loss(params, xj, yj)),
        float(jaxtape.reduce_mean(jaxtape.square(layer(x) - y))),
        rtol=1e-4,
    )
    extra = {
        "eager vs jaxtape.function": (
            lambda: eager(xt, yt).numpy(),
            lambda: compiled(xt, yt).numpy(),
        )
    }
    tf = _tensorflow()
    if tf is not None:
        _, tf_eager = _keras_deconv_step(tf, cout, x, compiled=False)
        _, tf_compiled = _keras_deconv_step(tf, cout, x, compiled=True)
        xs, ys = tf.constant(x), tf.constant(y)
        extra["eager vs tf.keras eager"] = (
            lambda: eager(xt, yt).numpy(),
            lambda: tf_eager(xs, ys).numpy(),
        )
        extra["jaxtape.function vs tf.function"] = (
            lambda: compiled(xt, yt).numpy(),
            lambda: tf_compiled(xs, ys).numpy(),
        )
    return (
        lambda: compiled(xt, yt).numpy(),
        lambda: jax_step(xj, yj).block_until_ready(),
        f"batch {batch}, {size}x{size}x{cin} -> x2, {cout} filters",
        extra,
    )


def preproc_row(quick: bool):
    """An augmentation pipeline in training mode: Rescaling(1/255) ->
    RandomFlip('horizontal') -> RandomContrast(0.2), batch 64 of 64x64x3
    images, compiled; the baseline draws the same kinds of random numbers
    with `jax.random` and applies the same arithmetic."""
    batch, size = (16, 32) if quick else (64, 64)
    rng = np.random.default_rng(0)
    x = (rng.random((batch, size, size, 3)) * 255).astype(np.float32)
    pipeline = _augmentation(jaxtape)
    compiled = jaxtape.function(lambda x: pipeline(x, training=True))

    @jax.jit
    def augment(key, x):
        key, k_flip, k_contrast = jax.random.split(key, 3)
        x = x / 255.0
        flip = jax.random.uniform(k_flip, (x.shape[0], 1, 1, 1)) < 0.5
        x = jnp.where(flip, x[:, :, ::-1, :], x)
        factor = jax.random.uniform(
            k_contrast, (x.shape[0], 1, 1, 1), minval=0.8, maxval=1.2
        )
        mean = jnp.mean(x, axis=(1, 2), keepdims=True)
        return key, jnp.clip((x - mean) * factor + mean, 0.0, 1.0)

    state = {"key": jax.random.key(0)}
    xj, xt = jnp.asarray(x), jaxtape.constant(x)

    def jax_step():
        state["key"], out = augment(state["key"], xj)
        out.block_until_ready()

    extra = {}
    tf = _tensorflow()
    if tf is not None:
        tf_pipeline = _augmentation(tf)
        tf_compiled = tf.function(lambda x: tf_pipeline(x, training=True))
        xs = tf.constant(x)
        extra["eager vs tf.keras eager"] = (
            lambda: pipeline(xt, training=True).numpy(),
            lambda: tf_pipeline(xs, training=True).numpy(),
        )
        extra["jaxtape.function vs tf.function"] = (
            lambda: compiled(xt).numpy(),
            lambda: tf_compiled(xs).numpy(),
        )
    return (
        lambda: compiled(xt).numpy(),
        jax_step,
        f"batch {batch}, {size}x{size}x3 images",
        extra,
    )


def _augmentation(mod):
    layers = mod.keras.layers
    return mod.keras.Sequential(
        [
            layers.Rescaling(1 / 255),
            layers.RandomFlip("horizontal", seed=1),
            layers.RandomContrast(0.2, value_range=(0, 1), seed=2),
        ]
    )


ROWS = {"mha": mha_row, "lstm": lstm_row, "deconv": deconv_row, "preproc": preproc_row}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small shapes, few reps")
    parser.add_argument("--only", choices=sorted(ROWS), default=None)
    parser.add_argument("--no-tf", action="store_true", help="skip TensorFlow")
    args = parser.parse_args(argv)
    global _NO_TF
    _NO_TF = args.no_tf
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
        ours, baseline, shape, *rest = row(args.quick)
        (t_ours, t_jax), ratio = _timing.interleaved([ours, baseline], reps, rounds)
        print(
            f"{name:6} {shape:34} {t_ours * 1e3:14.2f} ms {t_jax * 1e3:7.2f} ms "
            f"{ratio:6.2f}"
        )
        for label, (a, b) in (rest[0] if rest else {}).items():
            (t_a, t_b), ratio = _timing.interleaved([a, b], reps // 2, rounds)
            print(f"  {label:38} {t_a * 1e3:11.2f} ms {t_b * 1e3:7.2f} ms {ratio:6.2f}")


if __name__ == "__main__":
    main()
