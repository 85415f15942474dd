"""`keras.Model.export` and `keras.export.ExportArchive` against Keras 3 on TF.

Each model is built the same way under both (weights from one seeded
generator), exported by each, reloaded by each (`saved_model.load`): the
reloaded `serve` matches the live jaxtape model bit for bit (batch sizes
1, 7 and 1000 through the symbolic batch size) and TF's reload to float
tolerance; the printed endpoints, signatures and variable lists match
Keras's. One export is reloaded in a fresh process that cannot import the
model's code, with `saved_model.load` and `keras.layers.TFSMLayer`.
"""

import importlib.util
import os
import re
import signal
import subprocess
import sys

import jax
import numpy as np
import pytest

import jaxtape

pytestmark = pytest.mark.skipif(
    jax.default_backend() != "cpu", reason="saved_model exports for CPU only"
)

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BATCHES = (1, 7, 1000)


# -- the models: one builder per kind, for `m` = tensorflow or jaxtape --------------
def _sequential(m):
    k = m.keras
    model = k.Sequential(
        [
            k.Input((6,), dtype="int32", name="ids"),
            k.layers.Embedding(20, 4),
            k.layers.GlobalAveragePooling1D(),
            k.layers.Dense(3),
        ]
    )
    return model, lambda r, b: r.integers(0, 20, size=(b, 6)).astype("int32")


def _functional(m):
    k = m.keras
    inp = k.Input((5,), name="feat")
    x = k.layers.Dense(8, activation="relu")(inp)
    x = k.layers.BatchNormalization()(x)
    x = k.layers.Dropout(0.5)(x)
    model = k.Model(inp, k.layers.Dense(2)(x))
    return model, lambda r, b: r.normal(size=(b, 5)).astype("float32")


def _functional_dict(m):
    k = m.keras
    a, b = k.Input((3,), name="a"), k.Input((2,), name="b")
    x = k.layers.Concatenate()([a, b])
    model = k.Model({"a": a, "b": b}, k.layers.Dense(2, activation="tanh")(x))

    def data(r, n):
        return {
            "a": r.normal(size=(n, 3)).astype("float32"),
            "b": r.normal(size=(n, 2)).astype("float32"),
        }

    return model, data


def _subclassed(m):
    class Net(m.keras.Model):
        def __init__(self):
            super().__init__()
            self.hidden = m.keras.layers.Dense(6, activation="relu")
            self.out = m.keras.layers.Dense(2)

        def call(self, x):
            return self.out(self.hidden(x))

    model = Net()
    model(np.zeros((2, 5), "float32"))  # (a subclassed model is exported once called)
    return model, lambda r, b: r.normal(size=(b, 5)).astype("float32")


CASES = {
    "sequential_int_input": _sequential,
    "functional_batchnorm": _functional,
    "functional_dict": _functional_dict,
    "subclassed": _subclassed,
}


def _built(m, case):
    model, data = CASES[case](m)
    rng = np.random.default_rng(0)
    model.set_weights(  # (positive moving variances: no NaN to compare)
        [
            (rng.normal(size=w.shape) if w.trainable else rng.uniform(0.5, 2, w.shape))
            for w in model.weights
        ]
    )
    return model, data


def _printed(text: str) -> str:
    """Keras's export message, without what differs by design: the path,
    the capture ids and their specs (TF: resources; jaxtape: the values')
    and the dtypes' module prefix."""
    text = re.sub(r"Saved artifact at '[^']*'", "Saved artifact at <path>", text)
    text = re.sub(r"\n  \d+: TensorSpec\([^\n]*", "\n  <capture>", text)
    return text.replace("dtype=tf.", "dtype=").replace("dtype=jaxtape.", "dtype=")


def _export_and_reload(m, case, path, capsys):
    model, data = _built(m, case)
    capsys.readouterr()
    model.export(path)
    printed = _printed(capsys.readouterr().out)
    loaded = m.saved_model.load(path)
    return model, data, printed, loaded


@pytest.mark.parametrize("case", list(CASES))
def test_export_reloads_like_keras(case, tf, tmp_path, capsys):
    ours = _export_and_reload(jaxtape, case, str(tmp_path / "ours"), capsys)
    theirs = _export_and_reload(tf, case, str(tmp_path / "tf"), capsys)
    (model, data, printed, loaded), (_, _, tf_printed, tf_loaded) = ours, theirs
    assert printed == tf_printed
    assert "* Endpoint 'serve'" in printed
    compiled = jaxtape.function(model)  # (XLA's program, as the export's)
    for b in BATCHES:  # one export serves every batch size
        x = data(np.random.default_rng(b), b)
        want = compiled(x).numpy()
        got = loaded.serve(x)
        assert got.dtype == jaxtape.float32 and got.shape == want.shape
        assert np.isfinite(want).all()
        np.testing.assert_array_equal(got.numpy(), want)
        np.testing.assert_allclose(got.numpy(), model(x).numpy(), rtol=1e-6, atol=1e-6)
        np.testing.assert_allclose(
            got.numpy(), tf_loaded.serve(x).numpy(), rtol=2e-5, atol=2e-5
        )
    # Signatures: `serve` and its alias `serving_default`, inputs by name.
    assert sorted(loaded.signatures) == sorted(tf_loaded.signatures)
    for key in loaded.signatures:
        sig, tf_sig = loaded.signatures[key], tf_loaded.signatures[key]
        assert _specs(sig.structured_input_signature) == _specs(
            tf_sig.structured_input_signature
        )
        assert _specs(sig.structured_outputs) == _specs(tf_sig.structured_outputs)
    x = data(np.random.default_rng(1), 7)
    kwargs = x if isinstance(x, dict) else {_input_name(tf_loaded): x}
    np.testing.assert_array_equal(
        loaded.signatures["serving_default"](**kwargs)["output_0"].numpy(),
        compiled(x).numpy(),
    )
    # The reloaded object's Variable lists, as Keras's reload shows them
    # (but for Keras's Dropout seed state, which jaxtape's layer lacks).
    for attr in ("variables", "trainable_variables", "non_trainable_variables"):
        assert [(tuple(v.shape), v.trainable) for v in getattr(loaded, attr)] == [
            (tuple(v.shape), v.trainable)
            for v in getattr(tf_loaded, attr)
            if "seed_generator" not in v.name
        ], attr
    first = loaded.trainable_variables[0]
    assert first is loaded.variables[0] and first.trainable


def _specs(structure):
    """Shapes and dtypes of a structure of TensorSpecs (names aside)."""
    return jax.tree_util.tree_map(
        lambda s: (tuple(s.shape.as_list()), s.dtype.name),
        structure,
        is_leaf=lambda s: hasattr(s, "shape") and hasattr(s, "dtype"),
    )


def _input_name(tf_loaded) -> str:
    (name,) = tf_loaded.signatures["serve"].structured_input_signature[1]
    return name


def test_loaded_export_runs_in_function_under_tape_and_trains(tmp_path):
    model, data = _built(jaxtape, "functional_batchnorm")
    model.export(str(tmp_path / "e"), verbose=False)
    loaded = jaxtape.saved_model.load(str(tmp_path / "e"))
    x = data(np.random.default_rng(3), 7)
    serve = jaxtape.function(lambda x: loaded.serve(x) * 2.0)
    np.testing.assert_array_equal(serve(x).numpy(), model(x).numpy() * 2.0)
    with jaxtape.GradientTape() as tape:
        loss = jaxtape.reduce_sum(loaded.serve(x) ** 2)
    grads = tape.gradient(loss, loaded.trainable_variables)
    with jaxtape.GradientTape() as tape:
        live_loss = jaxtape.reduce_sum(model(x) ** 2)
    live = tape.gradient(live_loss, model.trainable_variables)
    for g, want in zip(grads, live):
        np.testing.assert_allclose(g.numpy(), want.numpy(), rtol=1e-5, atol=1e-5)
    kernel = loaded.trainable_variables[-2]  # the last Dense's: assignable
    kernel.assign(np.zeros(kernel.shape, "float32"))
    bias = loaded.trainable_variables[-1].numpy()
    np.testing.assert_array_equal(loaded.serve(x).numpy(), np.tile(bias, (7, 1)))


# -- ExportArchive: endpoints, collections and Keras's errors --------------------------
def _archive_rows(m, path):
    k = m.keras
    inp = k.Input((3,), name="feat")
    model = k.Model(inp, k.layers.Dense(2)(inp))
    model.set_weights([np.arange(6, dtype="float32").reshape(3, 2) / 7, np.ones(2)])
    x = np.linspace(-1, 1, 12, dtype="float32").reshape(4, 3)
    spec = k.InputSpec(shape=(None, 3), dtype="float32")
    rows = {}

    def row(label, fn):
        try:
            fn()
            rows[label] = "ok"
        except Exception as e:  # the type and the message (objects' reprs aside)
            rows[label] = (type(e).__name__, str(e).split("<")[0])

    untracked = k.export.ExportArchive()
    row("no endpoints", lambda: untracked.write_out(path + "_none"))
    row(
        "endpoint before track",
        lambda: untracked.add_endpoint("serve", model.call, [spec]),
    )
    row("write untracked", lambda: untracked.write_out(path + "_u", verbose=False))
    reloaded = m.saved_model.load(path + "_u")
    rows["untracked variables"] = len(reloaded.variables)
    rows["untracked serve"] = reloaded.serve(x).numpy().round(5).tolist()

    archive = k.export.ExportArchive()
    row("bad format", lambda: k.export.ExportArchive(format="x"))
    row("track unbuilt", lambda: archive.track(k.layers.Dense(3)))
    row("track junk", lambda: archive.track(3))
    row("track", lambda: archive.track(model))
    row("no signature", lambda: archive.add_endpoint("serve", model.call))
    fn = m.function(lambda x: model(x) * 3.0)
    row("uncalled function", lambda: archive.add_endpoint("f", fn))
    fn(x)
    row("called function", lambda: archive.add_endpoint("f", fn))
    row("serve", lambda: archive.add_endpoint("serve", model.call, [spec]))
    row("duplicate", lambda: archive.add_endpoint("serve", model.call, [spec]))
    row(
        "jax-only kwargs",
        lambda: archive.add_endpoint("g", model.call, [spec], is_static=True),
    )
    named = [m.TensorSpec((None, 3), m.float32, name="zz")]
    row(
        "lambda", lambda: archive.add_endpoint("call2", lambda v: model(v) - 1.0, named)
    )
    row("layer", lambda: archive.add_endpoint("dense", model.layers[1], [spec]))
    row("collection junk", lambda: archive.add_variable_collection("c", [1]))
    row(
        "collection type",
        lambda: archive.add_variable_collection("c", model.variables[0]),
    )
    row(
        "collection",
        lambda: archive.add_variable_collection("my_vars", model.variables),
    )
    row(
        "collection tuple",
        lambda: archive.add_variable_collection("tup", (model.variables[1],)),
    )
    row("empty collection", lambda: archive.add_variable_collection("empty", []))
    row("write", lambda: archive.write_out(path, verbose=False))
    loaded = m.saved_model.load(path)
    rows["signatures"] = sorted(loaded.signatures)
    rows["inputs"] = {  # (a layer's endpoint: Keras's `args_0`)
        k: sorted(s.structured_input_signature[1]) for k, s in loaded.signatures.items()
    }
    rows["serve"] = loaded.serve(x).numpy().round(5).tolist()
    rows["f"] = loaded.f(x).numpy().round(5).tolist()
    rows["call2"] = (
        loaded.signatures["call2"](zz=x)["output_0"].numpy().round(5).tolist()
    )
    rows["collections"] = [len(loaded.my_vars), len(loaded.tup), len(loaded.empty)]
    rows["shared"] = loaded.my_vars[0] is loaded.variables[0]
    rows["variables"] = [len(loaded.variables), len(loaded.trainable_variables)]
    call2 = loaded.call2(x).numpy()
    loaded.my_vars[1].assign(np.full(2, 10.0, "float32"))  # the bias, shared
    rows["after assign"] = loaded.serve(x).numpy().round(5).tolist()
    return rows, model, x, call2


def test_export_archive_matches_keras(tf, tmp_path):
    ours, model, x, call2 = _archive_rows(jaxtape, str(tmp_path / "ours"))
    theirs = _archive_rows(tf, str(tmp_path / "tf"))[0]
    assert ours == theirs
    assert ours["no endpoints"][0] == "ValueError" and ours["serve"] != ours["f"]
    live = jaxtape.function(
        lambda v: model(v) - 1.0
    )  # (XLA's program, as the export's)
    np.testing.assert_array_equal(call2, live(x).numpy())


def test_export_archive_refuses_unknown_endpoint_arguments():
    archive = jaxtape.keras.export.ExportArchive()
    spec = jaxtape.TensorSpec((None, 3), jaxtape.float32)
    with pytest.raises(NotImplementedError, match="jit_compile"):
        archive.add_endpoint("serve", lambda x: x, [spec], jit_compile=True)
    with pytest.raises(NotImplementedError, match="neptune_model"):
        jaxtape.keras.export.ExportArchive(format="neptune_model")


# -- Model.export's formats and unexportable models ----------------------------------
def _format_rows(m, tmp_path):
    model, _ = _built(m, "functional_dict")
    rows = {}
    for fmt, name in (
        ("torch", "m.pt2"),
        ("bogus", "m"),
        ("openvino", "m.bin"),
        ("litert", "m.tfl"),
    ):
        with pytest.raises(Exception) as info:
            model.export(str(tmp_path / name), format=fmt)
        rows[fmt] = (type(info.value).__name__, _no_path(info.value, tmp_path))
    sub = _subclassed(m)[0].__class__()
    with pytest.raises(Exception) as info:
        sub.export(str(tmp_path / "sub"))  # never built
    rows["unbuilt"] = (type(info.value).__name__, _no_path(info.value, tmp_path))
    sub.build((None, 5))
    with pytest.raises(Exception) as info:
        sub.export(str(tmp_path / "sub"))  # built, never called
    rows["never called"] = (type(info.value).__name__, _no_path(info.value, tmp_path))
    return rows


def _no_path(error, path) -> str:
    return str(error).replace(str(path), "<path>")


@pytest.mark.filterwarnings("ignore:`build\\(\\)` was called:UserWarning")
def test_formats_and_unexportable_models_fail_as_keras(tf, tmp_path):
    ours = _format_rows(jaxtape, tmp_path / "ours")
    assert ours == _format_rows(tf, tmp_path / "tf")
    model, _ = _built(jaxtape, "functional_dict")
    for fmt, name in (
        ("onnx", "m.onnx"),
        ("openvino", "m.xml"),
        ("litert", "m.tflite"),
    ):
        with pytest.raises(NotImplementedError, match=f"format='{fmt}'"):
            model.export(str(tmp_path / name), format=fmt)
    assert not os.path.exists(tmp_path / "ours")  # nothing written


# -- a fresh process, without the model's code -----------------------------------------
_NET = """
import numpy as np
import jaxtape as tf

class Net(tf.keras.Model):
    def __init__(self):
        super().__init__()
        self.hidden = tf.keras.layers.Dense(16, activation="gelu")
        self.norm = tf.keras.layers.LayerNormalization()
        self.out = tf.keras.layers.Dense(3)

    def call(self, x):
        return self.out(self.norm(self.hidden(x)))
"""

_RELOAD = """
import importlib.util, sys, time, numpy as np, jaxtape as tf
from jaxtape._src.checkpoint import storage
assert importlib.util.find_spec("net_def") is None
path, result = sys.argv[1], sys.argv[2]
loaded = tf.saved_model.load(path)
layer = tf.keras.layers.TFSMLayer(path, call_endpoint="serve")
out = {}
for b in (1, 7, 1000):
    x = np.random.default_rng(b).normal(size=(b, 5)).astype("float32")
    out[f"load_{b}"] = loaded.serve(x).numpy()
    out[f"layer_{b}"] = layer(x).numpy()
out["weights"] = np.array([len(layer.weights), len(layer.trainable_weights)])
np.savez(result, **out)

# Then an export over it that is killed while it writes.
write = storage.write

def stalled(*args):
    write(*args)
    print("writing", flush=True)
    time.sleep(60)

storage.write = stalled
inp = tf.keras.Input((5,))
tf.keras.Model(inp, tf.keras.layers.Dense(3)(inp)).export(path, verbose=False)
"""


def test_reloaded_in_a_fresh_process_and_kept_by_a_killed_export(tmp_path):
    defs = tmp_path / "defs"
    defs.mkdir()
    (defs / "net_def.py").write_text(_NET)
    spec = importlib.util.spec_from_file_location("net_def", defs / "net_def.py")
    net_def = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(net_def)
    model = net_def.Net()
    model(np.zeros((2, 5), "float32"))
    path, result = str(tmp_path / "export"), str(tmp_path / "out.npz")
    model.export(path, verbose=False)
    env = {**os.environ, "PYTHONPATH": ROOT, "JAX_PLATFORMS": "cpu"}
    proc = subprocess.Popen(
        [sys.executable, "-c", _RELOAD, path, result],
        cwd=tmp_path,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:  # (the process reloads, then dies in the middle of the next export)
        line = proc.stdout.readline()
        assert line.strip() == "writing", proc.stderr.read()[-3000:]
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait()
    out = np.load(result)
    compiled = jaxtape.function(model)  # (XLA's program, as the export's)
    for b in BATCHES:
        x = np.random.default_rng(b).normal(size=(b, 5)).astype("float32")
        want = compiled(x).numpy()
        np.testing.assert_array_equal(out[f"load_{b}"], want)
        np.testing.assert_array_equal(out[f"layer_{b}"], want)
    assert out["weights"].tolist() == [len(model.weights), len(model.trainable_weights)]
    # The killed export left the previous one in place.
    assert any(".partial-" in n for n in os.listdir(tmp_path))
    x = np.ones((2, 5), "float32")
    reloaded = jaxtape.saved_model.load(path)
    np.testing.assert_array_equal(reloaded.serve(x).numpy(), compiled(x).numpy())
