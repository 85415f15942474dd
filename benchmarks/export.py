"""Serving a `Model.export`: reloading the export vs re-tracing the model's code.

Each row is a fresh Python process (persistent compilation cache off, so
both sides compile) that gets a callable for the same trained model and
calls it on one batch:

  loaded:   `jaxtape.saved_model.load(export)` and `loaded.serve(x)` (the
            deserialized `jax.export` program; no model code);
  retraced: the model built from its Python code, `load_weights` of its
            `.weights.h5`, and `jaxtape.function(model)(x)` (traces the
            layers' Python, then compiles);
  retraced_sig: the same with the export's input signature (batch size
            None: one symbolic trace for all batch sizes, as the export).
  tf_loaded: (`--tf`) the export's TF SavedModel (written through jax2tf)
            read by real TensorFlow, `signatures['serving_default']` called:
            a process without jaxtape (the export's time includes
            importing TensorFlow and writing the TF SavedModel).

Columns: seconds to get the callable ("load": the export read, or the
model built and its weights loaded), to its first result ("1st call":
tracing and compilation), their sum, and the median steady call in
microseconds (dispatch plus compute). The ratios are loaded over each
retraced row, per process pair (the rows alternate), median over pairs.
The model: a functional MLP 784 -> 4 x Dense(512, relu) -> 10 on a batch
of 128 float32 rows; `--quick` uses 2 layers of 64.

Run: python benchmarks/export.py [--repeat N] [--quick] [--tf]
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
import time

_MODEL = """
import jaxtape as tf

def build(width, depth):
    inp = tf.keras.Input((784,), name="pixels")
    x = inp
    for _ in range(depth):
        x = tf.keras.layers.Dense(width, activation="relu")(x)
    return tf.keras.Model(inp, tf.keras.layers.Dense(10)(x))
"""

_CHILD = (
    r"""
import json, statistics, sys, time
import numpy as np
import jaxtape as tf
mode, export, weights, width, depth = sys.argv[1:6]
x = np.random.default_rng(0).normal(size=(128, 784)).astype(np.float32)
t0 = time.perf_counter()
if mode == "loaded":
    serve = tf.saved_model.load(export).serve
else:
"""
    + "\n".join("    " + line for line in _MODEL.strip().splitlines())
    + r"""
    model = build(int(width), int(depth))
    model.load_weights(weights)
    if mode == "retraced":
        serve = tf.function(model)
    else:  # (as the export's endpoint: batch size None)
        spec = tf.TensorSpec((None, 784), tf.float32)
        serve = tf.function(model, input_signature=[spec])
t1 = time.perf_counter()
serve(x).numpy()
t2 = time.perf_counter()
steady = []
for _ in range(50):
    t = time.perf_counter()
    serve(x).numpy()
    steady.append(time.perf_counter() - t)
steady = statistics.median(steady)
print(json.dumps({"load": t1 - t0, "first": t2 - t1, "steady": steady}))
"""
)


# The same export read by real TensorFlow (its TF SavedModel, `--tf`): no
# jaxtape in the process (TensorFlow runs the XlaCallModule ops), as TF Serving would.
_TF_CHILD = r"""
import json, os, statistics, sys, time
os.environ["TF_CPP_MIN_LOG_LEVEL"] = "2"
import numpy as np
import tensorflow as tf
export = sys.argv[2]
x = tf.constant(np.random.default_rng(0).normal(size=(128, 784)).astype(np.float32))
t0 = time.perf_counter()
serve = tf.saved_model.load(export).signatures["serving_default"]
t1 = time.perf_counter()
serve(pixels=x)["output_0"].numpy()
t2 = time.perf_counter()
steady = []
for _ in range(50):
    t = time.perf_counter()
    serve(pixels=x)["output_0"].numpy()
    steady.append(time.perf_counter() - t)
assert "jaxtape" not in sys.modules
steady = statistics.median(steady)
print(json.dumps({"load": t1 - t0, "first": t2 - t1, "steady": steady}))
"""


def _child(mode: str, export: str, weights: str, width: int, depth: int) -> dict:
    env = {**os.environ, "JAXTAPE_COMPILATION_CACHE": "0", "JAX_PLATFORMS": "cpu"}
    env.pop("JAX_COMPILATION_CACHE_DIR", None)
    code = _TF_CHILD if mode == "tf_loaded" else _CHILD
    proc = subprocess.run(
        [sys.executable, "-c", code, mode, export, weights, str(width), str(depth)],
        env=env,
        capture_output=True,
        text=True,
    )
    if proc.returncode:
        raise RuntimeError(proc.stderr[-3000:])
    return json.loads(proc.stdout.strip().splitlines()[-1])


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=3, help="process pairs")
    parser.add_argument("--quick", action="store_true")
    parser.add_argument(
        "--tf",
        action="store_true",
        help="also write the TF SavedModel (export-tf) and time TF reading it",
    )
    args = parser.parse_args()
    width, depth = (64, 2) if args.quick else (512, 4)

    os.environ.setdefault("JAX_PLATFORMS", "cpu")  # (exports are for CPU)
    import jax
    import numpy as np

    import jaxtape

    namespace: dict = {}
    exec(_MODEL, namespace)
    model = namespace["build"](width, depth)
    rng = np.random.default_rng(1)
    model.set_weights([rng.normal(size=w.shape) * 0.05 for w in model.get_weights()])
    rows: dict[str, list[dict]] = {"loaded": [], "retraced": [], "retraced_sig": []}
    options = None
    if args.tf:
        rows["tf_loaded"] = []
        options = jaxtape.saved_model.SaveOptions(tf_saved_model=True)
    with tempfile.TemporaryDirectory() as tmp:
        export, weights = os.path.join(tmp, "export"), os.path.join(tmp, "m.weights.h5")
        t = time.perf_counter()
        model.export(export, verbose=False, options=options)
        export_s = time.perf_counter() - t
        model.save_weights(weights)
        for _ in range(args.repeat):  # alternating: the machine's drift is shared
            for mode in rows:
                rows[mode].append(_child(mode, export, weights, width, depth))
    print(
        f"# {platform.processor() or platform.machine()}, {os.cpu_count()} CPUs; "
        f"jaxtape {jaxtape.__jaxtape_version__}, jax {jax.__version__}"
    )
    print(
        f"# MLP 784 -> {depth} x {width} -> 10, batch 128; median of {args.repeat} "
        f"fresh processes per row; export took {export_s:.2f} s"
    )
    header = f"{'load s':>8s} {'1st call s':>11s} {'total s':>8s} {'steady us':>10s}"
    print(f"{'':13s} {header}")
    med = {}
    for mode, results in rows.items():
        m = {k: statistics.median(r[k] for r in results) for k in results[0]}
        med[mode] = m
        total = m["load"] + m["first"]
        print(
            f"{mode:13s} {m['load']:8.3f} {m['first']:11.3f} {total:8.3f} "
            f"{m['steady'] * 1e6:10.0f}"
        )
    print()
    for other in ("retraced", "retraced_sig", "tf_loaded"):
        if other not in rows:
            continue
        pairs = zip(rows["loaded"], rows[other])
        ratio = statistics.median(
            (a["load"] + a["first"]) / (b["load"] + b["first"]) for a, b in pairs
        )
        steady = med["loaded"]["steady"] / med[other]["steady"]
        print(
            f"loaded / {other}: time to first result {ratio:.2f}x, "
            f"steady call {steady:.2f}x"
        )


if __name__ == "__main__":
    main()
