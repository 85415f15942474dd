"""A trained MNIST model and the seed model, exported, served and fine-tuned
in a fresh process that cannot import the code that defined them.

The MNIST model is the quick start's (Flatten -> Dense 128 relu -> Dense
10), trained for a few Adam steps on real MNIST; the seed model is the
subclassed `MyModel` of the seed tutorial (Dense 32 relu -> Dense 10),
trained on its random data. Each is exported with `Model.export` (a `None`
batch), loaded in a subprocess, served at batch 1 and 7 (compared bit for
bit with the live model compiled, as the export is), and fine-tuned there
for three SGD steps with a GradientTape on the loaded object's
`trainable_variables`; the same steps on the live model give the same
weights.
"""

from __future__ import annotations

import importlib.util
import os
import pathlib
import subprocess
import sys

import numpy as np
import pytest

import jaxtape

ROOT = str(pathlib.Path(__file__).resolve().parents[1])

_SEED_MODEL = """
import jaxtape as tf


class MyModel(tf.keras.Model):
    def __init__(self, num_classes=10):
        super().__init__(name="my_model")
        self.dense_1 = tf.keras.layers.Dense(32, activation="relu")
        self.dense_2 = tf.keras.layers.Dense(num_classes)

    def call(self, inputs):
        return self.dense_2(self.dense_1(inputs))
"""

# Run by the loading process and by this one: serve, then fine-tune.
_STEPS = """
def serve_and_fine_tune(tf, np, serve, variables, data, out):
    for name, (x, y, loss_name) in data.items():
        for b in (1, 7):
            out[f"{name}_serve_{b}"] = serve[name](x[:b]).numpy()
        loss_fn = getattr(tf.keras.losses, loss_name)(from_logits=True)
        for _ in range(3):
            with tf.GradientTape() as tape:
                loss = loss_fn(y, serve[name](x))
            grads = tape.gradient(loss, variables[name])
            for v, g in zip(variables[name], grads):
                v.assign_sub(0.1 * g)
        out[f"{name}_loss"] = loss.numpy()
        for i, v in enumerate(variables[name]):
            out[f"{name}_w{i}"] = v.numpy()
"""

_LOAD = (
    """
import importlib.util, sys
import numpy as np
import jaxtape as tf
assert importlib.util.find_spec("seed_def") is None  # no defining code here
paths, data_file, result = sys.argv[1:4]
data = np.load(data_file)
names = ("mnist", "seed")
loaded = {n: tf.saved_model.load(p) for n, p in zip(names, paths.split(","))}
serve = {n: m.serve for n, m in loaded.items()}
variables = {n: list(m.trainable_variables) for n, m in loaded.items()}
batches = {
    "mnist": (data["mnist_x"], data["mnist_y"], "SparseCategoricalCrossentropy"),
    "seed": (data["seed_x"], data["seed_y"], "CategoricalCrossentropy"),
}
out = {}
"""
    + _STEPS
    + """
serve_and_fine_tune(tf, np, serve, variables, batches, out)
np.savez(result, **out)
"""
)


def _train(model, x, y, loss_fn, steps):
    optimizer = jaxtape.keras.optimizers.Adam(1e-3)
    for _ in range(steps):
        with jaxtape.GradientTape() as tape:
            loss = loss_fn(y, model(x, training=True))
        grads = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(grads, model.trainable_variables))


def test_trained_models_served_and_fine_tuned_without_their_code(tmp_path, mnist_path):
    with np.load(mnist_path) as f:
        images = (f["x_train"][:256] / 255.0).astype("float32")
        labels = f["y_train"][:256].astype("int64")
    mnist = jaxtape.keras.Sequential(
        [
            jaxtape.keras.layers.Flatten(input_shape=(28, 28)),
            jaxtape.keras.layers.Dense(128, activation="relu"),
            jaxtape.keras.layers.Dense(10),
        ]
    )
    sparse = jaxtape.keras.losses.SparseCategoricalCrossentropy(from_logits=True)
    for i in range(0, 256, 64):
        _train(mnist, images[i : i + 64], labels[i : i + 64], sparse, 1)

    defs = tmp_path / "defs"  # the seed model's module, outside every import path
    defs.mkdir()
    (defs / "seed_def.py").write_text(_SEED_MODEL)
    spec = importlib.util.spec_from_file_location("seed_def", defs / "seed_def.py")
    seed_def = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(seed_def)
    rng = np.random.default_rng(0)
    data, targets = rng.random((1000, 32)), rng.random((1000, 10))
    seed = seed_def.MyModel(num_classes=10)
    dense = jaxtape.keras.losses.CategoricalCrossentropy(from_logits=True)
    _train(seed, data, targets, dense, 3)

    paths = [str(tmp_path / "mnist"), str(tmp_path / "seed")]
    mnist.export(paths[0], verbose=False)
    seed.export(paths[1], verbose=False)
    x_mnist = (np.load(mnist_path)["x_test"][:7] / 255.0).astype("float32")
    y_mnist = np.load(mnist_path)["y_test"][:7].astype("int64")
    x_seed, y_seed = data[:7].astype("float32"), targets[:7].astype("float32")
    data_file = tmp_path / "data.npz"
    np.savez(data_file, mnist_x=x_mnist, mnist_y=y_mnist, seed_x=x_seed, seed_y=y_seed)

    result = tmp_path / "loaded.npz"
    env = {**os.environ, "PYTHONPATH": ROOT, "JAX_PLATFORMS": "cpu"}
    proc = subprocess.run(
        [sys.executable, "-c", _LOAD, ",".join(paths), str(data_file), str(result)],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    loaded = np.load(result)

    # The live models, compiled (the export's program is XLA's), the same steps.
    models = {"mnist": mnist, "seed": seed}
    serve = {n: jaxtape.function(m) for n, m in models.items()}
    variables = {n: list(m.trainable_variables) for n, m in models.items()}
    batches = {
        "mnist": (x_mnist, y_mnist, "SparseCategoricalCrossentropy"),
        "seed": (x_seed, y_seed, "CategoricalCrossentropy"),
    }
    live: dict = {}
    namespace: dict = {}
    exec(_STEPS, namespace)
    namespace["serve_and_fine_tune"](jaxtape, np, serve, variables, batches, live)
    assert sorted(live) == sorted(loaded.files)
    for key in live:
        if "_serve_" in key:  # before fine-tuning: bit for bit
            np.testing.assert_array_equal(loaded[key], live[key], err_msg=key)
        else:  # after three steps: the same math, compiled apart
            np.testing.assert_allclose(
                loaded[key], live[key], rtol=1e-5, atol=1e-6, err_msg=key
            )
    assert live["mnist_loss"] < 2.3  # (trained: below chance's log(10))


@pytest.fixture(autouse=True)
def _no_stray_defs():
    yield
    sys.modules.pop("seed_def", None)
