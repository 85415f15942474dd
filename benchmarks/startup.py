"""Start-up: what a script pays before its first result, in fresh processes.

Each row is a new Python process that imports the framework, builds the seed
model (Dense 32 relu -> Dense 10, batch 1000, CategoricalCrossentropy, Adam)
and times its first eager training step and the first call of the same step
compiled (`jaxtape.function` / `tf.function`; a fresh model each). jaxtape
runs three ways: with the persistent compilation cache off, with an empty
cache (a script's first run: it compiles and writes the cache) and with that
cache (the script's second run). Real TF (the `parity` extra) runs the same
script when installed; ratios are against it, in this run.

Run: python benchmarks/startup.py [--repeat N] [--no-tf]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile

_CHILD = r"""
import sys, time, json
t0 = time.perf_counter()
import numpy as np
if sys.argv[1] == "tf":
    import tensorflow as tf
else:
    import jaxtape as tf
t_import = time.perf_counter() - t0
rng = np.random.default_rng(0)
x = rng.random((1000, 32)).astype(np.float32)
y = rng.random((1000, 10)).astype(np.float32)

def make(compiled):
    layers = tf.keras.layers
    model = tf.keras.Sequential([layers.Dense(32, activation="relu"), layers.Dense(10)])
    loss_object = tf.keras.losses.CategoricalCrossentropy(from_logits=True)
    optimizer = tf.keras.optimizers.Adam()

    def step(images, labels):
        with tf.GradientTape() as tape:
            loss = loss_object(labels, model(images, training=True))
        grads = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(grads, model.trainable_variables))
        return loss

    return tf.function(step) if compiled else step

out = {"import": t_import}
for name, compiled in (("eager", False), ("function", True)):
    step = make(compiled)
    t = time.perf_counter()
    float(step(x, y))
    out[name] = time.perf_counter() - t
print(json.dumps(out))
"""


def _child(framework: str, env: dict) -> dict:
    proc = subprocess.run(
        [sys.executable, "-c", _CHILD, framework],
        env=env,
        capture_output=True,
        text=True,
    )
    if proc.returncode:
        raise RuntimeError(proc.stderr[-3000:])
    return json.loads(proc.stdout.strip().splitlines()[-1])


def _has_tf() -> bool:
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    try:
        import tensorflow  # noqa: F401
    except ImportError:  # pragma: no cover
        return False
    return True


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=3, help="processes per row")
    parser.add_argument("--no-tf", action="store_true")
    args = parser.parse_args()
    drop = ("JAX_COMPILATION_CACHE_DIR", "PYTHONDONTWRITEBYTECODE")
    base = {k: v for k, v in os.environ.items() if k not in drop}
    base["TF_CPP_MIN_LOG_LEVEL"] = "3"
    # Imports as an installed package's: from cached bytecode (TF's wheel
    # ships it; a source tree writes it on its first import).
    subprocess.run([sys.executable, "-c", "import jaxtape"], env=base, check=True)
    rows: dict[str, list[dict]] = {"off": [], "cold": [], "warm": [], "tf": []}
    for _ in range(args.repeat):  # rows interleaved: the machine's drift is shared
        with tempfile.TemporaryDirectory() as cache:
            env = {**base, "JAXTAPE_COMPILATION_CACHE": cache}
            rows["cold"].append(_child("jaxtape", env))
            rows["warm"].append(_child("jaxtape", env))
        off = {**base, "JAXTAPE_COMPILATION_CACHE": "0"}
        rows["off"].append(_child("jaxtape", off))
        if not args.no_tf and _has_tf():
            rows["tf"].append(_child("tf", base))
    print(f"# {platform.processor() or platform.machine()}, {os.cpu_count()} CPUs")
    print(f"# median of {args.repeat} fresh processes; seconds")
    names = {
        "off": "jaxtape, compilation cache off",
        "cold": "jaxtape, first run (empty cache)",
        "warm": "jaxtape, second run (cache)",
        "tf": "TensorFlow 2 (tf.function / eager)",
    }
    med = {
        k: {m: statistics.median(r[m] for r in v) for m in v[0]}
        for k, v in rows.items()
        if v
    }
    print(f"{'':36s} {'import':>7s} {'1st eager':>10s} {'1st compiled':>13s}")
    for k, m in med.items():
        times = f"{m['import']:7.2f} {m['eager']:10.2f} {m['function']:13.2f}"
        print(f"{names[k]:36s} {times}")
    if "tf" in med:
        tf = med["tf"]
        print("\nratios to TF (first eager step, first compiled call):")
        for k in ("off", "cold", "warm"):
            m = med[k]
            print(
                f"  {names[k]:34s} {m['eager'] / tf['eager']:6.1f}x "
                f"{m['function'] / tf['function']:6.2f}x"
            )


if __name__ == "__main__":
    main()
