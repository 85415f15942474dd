"""One training step exactly as the seeds write it: eager, compiled, and in fit.

Cases: the seed model (Dense 32 relu -> Dense 10, batch 1000,
CategoricalCrossentropy, Adam), the MNIST MLP (784-128-10, batch 32 and 256,
SparseCategoricalCrossentropy, Adam) and a small CNN (Conv 32 3x3 -> MaxPool
-> Dense 10, batch 64). A jaxtape step is a Keras model called under a
GradientTape, `tape.gradient`, `optimizer.apply_gradients`: run eagerly, as a
`jaxtape.function`, and inside `Model.fit` (ms per step). Baselines in the
same run: `jax.jit(jax.value_and_grad)` + an optax Adam step with donated
state on the same pure function, and real tf.keras (eager and `tf.function`)
when the `parity` extra is installed. Median ms after warm-up; the fn/JAX
and fit/JAX ratios are paired (the median of per-round ratios, the two sides
alternating).

Run: python benchmarks/train_step.py [--quick] [--only seed|mlp32|mlp256|cnn] [--no-tf]
"""

from __future__ import annotations

import argparse
import functools
import gc
import platform
import statistics
import time

import _timing  # benchmarks/_timing.py (scripts run from this folder)
import jax
import jax.numpy as jnp
import numpy as np
import optax

import jaxtape


def _tensorflow():
    """Real TF (the test-only `parity` extra) if installed, or None.

    Its import leaves a large heap of Python objects that every garbage
    collection would scan again, slowing whichever side allocates more (here
    jaxtape's steps by 5%): `gc.freeze()` moves them out of the collector's way.
    """
    try:
        import tensorflow
    except ImportError:  # pragma: no cover
        return None
    gc.collect()
    gc.freeze()
    return tensorflow


def median_ms(step, reps, warmup=5):
    for _ in range(warmup):
        step()
    times = []
    for _ in range(reps):
        t0 = time.perf_counter()
        step()
        times.append(time.perf_counter() - t0)
    return statistics.median(times) * 1e3


def interleaved_ms(steps, reps, rounds=5):
    """Medians (ms) in alternating rounds and the paired ratio (`_timing`)."""
    medians, ratio = _timing.interleaved(steps, reps, rounds)
    return [m * 1e3 for m in medians], ratio


def first_ms(step):
    t0 = time.perf_counter()
    step()
    return (time.perf_counter() - t0) * 1e3


def _layers(mod, kind):
    L = mod.keras.layers
    if kind == "seed":
        return [L.Dense(32, activation="relu"), L.Dense(10)]
    if kind == "mlp":
        return [L.Flatten(), L.Dense(128, activation="relu"), L.Dense(10)]
    return [
        L.Conv2D(32, 3, activation="relu"),
        L.MaxPooling2D(),
        L.Flatten(),
        L.Dense(10),
    ]


def _data(kind, batch, rng):
    if kind == "seed":
        x = rng.random((batch, 32)).astype(np.float32)
        y = rng.random((batch, 10)).astype(np.float32)
    else:
        shape = (batch, 28, 28) if kind == "mlp" else (batch, 28, 28, 1)
        x = rng.random(shape).astype(np.float32)
        y = rng.integers(0, 10, batch).astype(np.int32)
    return x, y


def _loss(mod, kind):
    losses = mod.keras.losses
    if kind == "seed":
        return losses.CategoricalCrossentropy(from_logits=True)
    return losses.SparseCategoricalCrossentropy(from_logits=True)


def keras_step(mod, kind, x, y, compiled=False):
    model = mod.keras.Sequential(_layers(mod, kind))
    model(x[:1])
    loss_object, optimizer = _loss(mod, kind), mod.keras.optimizers.Adam()

    def train_step(images, labels):
        with mod.GradientTape() as tape:
            loss = loss_object(labels, model(images, training=True))
        grads = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(grads, model.trainable_variables))
        return loss

    if compiled:
        train_step = mod.function(train_step)

    def step():
        return float(train_step(x, y))  # forces the result, as printing would

    return model, step


def fit_vs_jax(kind, x, y, base, rounds, batches):
    """Time per step of `Model.fit` (compiled train_step, one epoch of
    `batches` batches per round) over that of the JAX step, in alternating
    rounds. The epoch's fixed cost (metric reset, the end-of-epoch sync) is
    spread over `batches` steps: a real MNIST epoch at batch 32 has 1875."""
    model = jaxtape.keras.Sequential(_layers(jaxtape, kind))
    model.compile(optimizer="adam", loss=_loss(jaxtape, kind))
    n = len(x)
    xs, ys = np.concatenate([x] * batches), np.concatenate([y] * batches)
    # Warm-up: two epochs compile every variant fit uses (plain and donating).
    model.fit(xs, ys, batch_size=n, epochs=2, verbose=0, shuffle=False)
    fit_times, jax_times = [], []
    for _ in range(rounds):
        t0 = time.perf_counter()
        model.fit(xs, ys, batch_size=n, epochs=1, verbose=0, shuffle=False)
        fit_times.append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        for i in range(batches - 1):  # the batches fit slices, as a loop would
            base.unsynced(xs[i * n : (i + 1) * n], ys[i * n : (i + 1) * n])
        float(base.unsynced(xs[-n:], ys[-n:]))  # both end waiting
        jax_times.append(time.perf_counter() - t0)
    # Paired: the median of each round's ratio (see interleaved_ms).
    return statistics.median(f / j for f, j in zip(fit_times, jax_times))


def jax_step(kind, weights, x, y, window_pool=False):
    """The same model as a pure function, `jit(value_and_grad)` + optax Adam.

    `window_pool`: max-pool with `lax.reduce_window` instead of reshape-then-max
    (to show why jaxtape uses the latter when the window tiles the input).
    """

    def forward(params, x):
        if kind == "seed":
            w1, b1, w2, b2 = params
            return jnp.maximum(x @ w1 + b1, 0) @ w2 + b2
        if kind == "mlp":
            w1, b1, w2, b2 = params
            h = jnp.maximum(x.reshape(x.shape[0], -1) @ w1 + b1, 0)
            return h @ w2 + b2
        k, b, w, b2 = params
        dn = jax.lax.conv_dimension_numbers(x.shape, k.shape, ("NHWC", "HWIO", "NHWC"))
        h = jax.lax.conv_general_dilated(x, k, (1, 1), "VALID", dimension_numbers=dn)
        h = jnp.maximum(h + b, 0)
        n, hh, ww, c = h.shape
        if window_pool:
            h = jax.lax.reduce_window(
                h, -jnp.inf, jax.lax.max, (1, 2, 2, 1), (1, 2, 2, 1), "VALID"
            )
        else:
            h = h.reshape(n, hh // 2, 2, ww // 2, 2, c).max(axis=(2, 4))
        return h.reshape(n, -1) @ w + b2

    def loss_fn(params, x, y):
        logits = forward(params, x)
        logp = jax.nn.log_softmax(logits)
        if kind == "seed":
            return -jnp.mean(jnp.sum(y * logp, -1))
        return -jnp.mean(jnp.take_along_axis(logp, y[:, None], -1))

    tx = optax.adam(1e-3, eps=1e-7)
    params = [jnp.asarray(w) for w in weights]
    state = tx.init(params)

    @functools.partial(jax.jit, donate_argnums=(0, 1))  # state updated in place
    def update(params, state, x, y):
        loss, grads = jax.value_and_grad(loss_fn)(params, x, y)
        updates, state = tx.update(grads, state, params)
        return optax.apply_updates(params, updates), state, loss

    box = {"p": params, "s": state}

    def step():  # the same NumPy batch as the jaxtape steps get (same transfer)
        return float(unsynced())

    def unsynced(xb=x, yb=y):  # what a loop that does not print each loss runs
        box["p"], box["s"], loss = update(box["p"], box["s"], xb, yb)
        return loss

    step.unsynced = unsynced
    return step


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument(
        "--only", choices=["seed", "mlp32", "mlp256", "cnn"], help="one model alone"
    )
    parser.add_argument("--no-tf", action="store_true", help="skip real TF")
    parser.add_argument(
        "--fit-batches", type=int, default=100, help="batches per fit epoch"
    )
    args = parser.parse_args()
    tf_real = None if args.no_tf else _tensorflow()
    reps = 20 if args.quick else 100
    print(
        f"# train_step  jax {jax.__version__}  {platform.machine()}"
        f"  devices {jax.devices()}"
    )
    print(
        f"{'case':34s} {'eager':>8s} {'function':>9s} {'JAX':>8s} {'fn/JAX':>7s} "
        f"{'fit/JAX':>8s} {'tf.keras':>9s} {'TF/eager':>9s} {'tf.fn':>8s} "
        f"{'tf.fn/fn':>9s}  first call (ms): eager, function"
    )
    rng = np.random.default_rng(0)
    cases = {
        "seed": ("seed model, batch 1000", "seed", 1000),
        "mlp32": ("MNIST MLP, batch 32", "mlp", 32),
        "mlp256": ("MNIST MLP, batch 256", "mlp", 256),
        "cnn": ("small CNN, batch 64", "cnn", 64),
    }
    for key, (name, kind, batch) in cases.items():
        if args.only and key != args.only:
            continue
        x, y = _data(kind, batch, rng)
        model, eager = keras_step(jaxtape, kind, x, y)
        first_eager = first_ms(eager)
        eager_ms = median_ms(eager, reps)
        _, compiled = keras_step(jaxtape, kind, x, y, compiled=True)
        first_fn = first_ms(compiled)
        base = jax_step(kind, model.get_weights(), x, y)
        # Many short alternating rounds: a ratio near 1 is easily swamped by
        # this machine's drift otherwise.
        (fn_ms, base_ms), fn_ratio = interleaved_ms(
            [compiled, base], reps * 10, rounds=20
        )
        fit_ratio = fit_vs_jax(
            kind, x, y, base, 3 if args.quick else 20, args.fit_batches
        )
        tf_cols = f"{'-':>9s} {'-':>9s} {'-':>8s} {'-':>9s}"
        if tf_real is not None:
            _, theirs = keras_step(tf_real, kind, x, y)
            tf_ms = median_ms(theirs, max(reps // 2, 10))
            _, theirs_fn = keras_step(tf_real, kind, x, y, compiled=True)
            tf_fn_ms = median_ms(theirs_fn, reps)
            tf_cols = (
                f"{tf_ms:9.2f} {tf_ms / eager_ms:8.1f}x {tf_fn_ms:8.2f} "
                f"{tf_fn_ms / fn_ms:8.2f}x"
            )
        print(
            f"{name:34s} {eager_ms:8.2f} {fn_ms:9.2f} {base_ms:8.2f} "
            f"{fn_ratio:6.2f}x {fit_ratio:7.2f}x {tf_cols}  "
            f"{first_eager:.0f}, {first_fn:.0f}"
        )
        if kind == "cnn":
            window = median_ms(jax_step(kind, model.get_weights(), x, y, True), reps)
            print(
                f"{'  (JAX with reduce_window pooling)':34s} {'':8s} {'':9s} "
                f"{window:8.2f}  ({window / base_ms:.1f}x the reshape-then-max form)"
            )


if __name__ == "__main__":
    main()
