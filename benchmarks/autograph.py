"""AutoGraph benchmarks: a converted loop at run time, and the cost of converting.

1. Run time (µs per call): `for i in jaxtape.range(1000)` converted by
   AutoGraph inside `jaxtape.function`, against the same loop written by hand
   with `lax.fori_loop` on raw jnp under `jax.jit`; paired ratio (alternating
   rounds, `_timing`), target <= 1.05x. TF's `tf.function` of the same source
   beside, when installed.
2. First call (ms): a fresh 50-line function (Python `if`s and `for`s on
   Python values, tensor ops) through `jaxtape.function` with AutoGraph
   (convert + trace + compile + run) against `autograph=False` (trace +
   compile + run), each repetition on a new copy of the function (conversion
   is cached per function); paired ratio, target <= 2x. Conversion alone
   (`to_graph`) beside, and the same row for TF's `tf.function` (TF's own
   AutoGraph: the converter jaxtape uses).

Run: python benchmarks/autograph.py [--quick]
"""

from __future__ import annotations

import argparse
import importlib.util
import pathlib
import platform
import statistics
import sys
import tempfile
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

STEPS = 1000


def _block(x):
    v = getattr(x, "_value", x)
    if hasattr(v, "block_until_ready"):
        v.block_until_ready()
    elif hasattr(v, "numpy"):
        v.numpy()
    return x


def make_loop(tf):
    def loop(s):
        for i in tf.range(STEPS):
            s = tf.tanh(s * 0.9 + tf.cast(i, tf.float32) * 0.001)
        return s

    return loop


def fori(s):
    def body(i, s):
        return jnp.tanh(s * 0.9 + i.astype(jnp.float32) * 0.001)

    return lax.fori_loop(0, STEPS, body, s)


def run_time(reps, size):
    x_np = np.linspace(-1, 1, size).astype(np.float32)
    ours = jaxtape.function(make_loop(jaxtape))
    base = jax.jit(fori)
    xt, xj = jaxtape.constant(x_np), jnp.asarray(x_np)
    np.testing.assert_allclose(ours(xt).numpy(), np.asarray(base(xj)), rtol=1e-5)
    medians, ratio = _timing.interleaved(
        [lambda: _block(ours(xt)), lambda: _block(base(xj))], reps, rounds=10
    )
    tf_us = "-"
    if tf_real is not None:
        tf_fn = tf_real.function(make_loop(tf_real))
        xr = tf_real.constant(x_np)
        tf_fn(xr)
        times = []
        for _ in range(max(reps // 4, 5)):
            t0 = time.perf_counter()
            tf_fn(xr).numpy()
            times.append(time.perf_counter() - t0)
        tf_us = f"{statistics.median(times) * 1e6:.1f}"
    print(
        f"{f'for i in range({STEPS}), x: float32[{size}]':40s} "
        f"{medians[0] * 1e6:10.1f} {medians[1] * 1e6:10.1f} {ratio:7.3f}x {tf_us:>10}"
    )


# A 50-line function: tensor ops under Python control flow on Python values,
# valid with and without AutoGraph (which runs its `if`s and `for`s as Python).
_SOURCE = """
def f{k}(x, w, mode="train", depth=3):
    h = x
    outputs = []
    for layer in range(depth):
        h = tf.matmul(h, w) * 0.5
        if layer % 2 == 0:
            h = tf.nn.relu(h)
        else:
            h = tf.tanh(h)
        if mode == "train":
            h = h * 0.9
        elif mode == "eval":
            h = h * 1.0
        else:
            h = h * 1.1
        outputs.append(tf.reduce_mean(h, axis=0))
    total = tf.zeros([w.shape[1]])
    for o in outputs:
        total = total + o
    scale = 1.0
    while scale < 8.0:
        scale = scale * 2.0
    z = total * scale
    if depth > 2 and mode != "predict":
        z = tf.sigmoid(z)
    norms = []
    for part in (z, total, h[0]):
        n = tf.sqrt(tf.reduce_sum(part * part))
        norms.append(n)
    m = norms[0]
    for n in norms[1:]:
        m = tf.maximum(m, n)
    y = z / (m + 1e-6)
    y = tf.clip_by_value(y, -1.0, 1.0)
    if y.shape[0] == w.shape[1]:
        y = y + 1.0
    else:
        y = y - 1.0
    k = 0
    while k < 3:
        y = y * 0.5 + 0.25
        k += 1
    flag = mode == "train" and depth > 1
    if flag or depth > 10:
        y = tf.exp(-y)
    out = tf.reduce_sum(y) + tf.reduce_sum(h)
    return out
"""


def _copies(tf, n):
    """`n` copies of the 50-line function in a module file (source for AutoGraph)."""
    folder = pathlib.Path(tempfile.mkdtemp(prefix="jaxtape_autograph_bench_"))
    path = folder / "copies.py"
    path.write_text("".join(_SOURCE.format(k=k) for k in range(n)))
    spec = importlib.util.spec_from_file_location(f"copies_{id(tf)}", path)
    module = importlib.util.module_from_spec(spec)
    module.tf = tf
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    lines = len(_SOURCE.strip().splitlines())
    return [getattr(module, f"f{k}") for k in range(n)], lines


def _first_calls(module, fns, args, reps):
    """Paired first calls of fresh copies: with AutoGraph, without, converting."""
    it = iter(fns)

    def timed(run):
        t0 = time.perf_counter()
        out = run(next(it))
        _block(out)
        return time.perf_counter() - t0

    with_ag = lambda f: module.function(f)(*args)
    without = lambda f: module.function(f, autograph=False)(*args)
    convert = lambda f: module.autograph.to_graph(f)
    timed(with_ag), timed(without)  # warm imports and caches
    ag, plain, conv, ratios = [], [], [], []
    for _ in range(reps):
        a, p = timed(with_ag), timed(without)
        ag.append(a)
        plain.append(p)
        ratios.append(a / p)
        conv.append(timed(convert))
    ms = lambda v: f"{statistics.median(v) * 1e3:10.1f}"
    return f"{ms(ag)} {ms(plain)} {statistics.median(ratios):7.2f}x {ms(conv)}"


def first_call(reps):
    rng = np.random.default_rng(0)
    x_np = rng.normal(size=(8, 16)).astype(np.float32)
    w_np = rng.normal(size=(16, 16)).astype(np.float32) / 4
    fns, lines = _copies(jaxtape, 3 * reps + 3)
    args = (jaxtape.constant(x_np), jaxtape.constant(w_np))
    name = f"{lines}-line function"
    print(f"{name + ', jaxtape.function':40s} {_first_calls(jaxtape, fns, args, reps)}")
    if tf_real is not None:
        fns, _ = _copies(tf_real, 3 * reps + 3)
        args = (tf_real.constant(x_np), tf_real.constant(w_np))
        print(f"{name + ', tf.function':40s} {_first_calls(tf_real, fns, args, reps)}")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true", help="fewer repetitions")
    quick = parser.parse_args().quick
    print(
        f"# jaxtape AutoGraph benchmarks — {platform.processor() or platform.machine()}"
        f", {jax.devices()[0].platform}, jax {jax.__version__}, "
        f"TF {tf_real.__version__ if tf_real else 'not installed'}"
    )
    print("\n## run time (µs per call; ratio: paired, target <= 1.05x)")
    print(f"{'case':40s} {'AutoGraph':>10} {'fori_loop':>10} {'ratio':>8} {'TF':>10}")
    for size in (1, 256):
        run_time(100 if quick else 400, size)
    print("\n## first call (ms; ratio: paired, target <= 2x)")
    print(f"{'case':40s} {'AutoGraph':>10} {'off':>10} {'ratio':>8} {'to_graph':>10}")
    first_call(3 if quick else 10)


if __name__ == "__main__":
    main()
