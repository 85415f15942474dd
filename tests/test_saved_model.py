"""`jaxtape.saved_model`: save on jax.export, load without the model's code.

The fresh-process test saves a model whose module lies outside every import
path, so the loader process cannot import its class; the rest save and load
in this process (the loaded object never touches the saved one's Python code
either). Real TF is the oracle for the signature output keys, the default
signature, restored functions without input_signature and the error types.
"""

import importlib.util
import json
import os
import shutil
import signal
import subprocess
import sys

import jax
import numpy as np
import pytest

import jaxtape

# Exports are for CPU only so far: loading needs a CPU backend.
pytestmark = pytest.mark.skipif(
    jax.default_backend() != "cpu", reason="saved_model exports for CPU only"
)

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# The model's module (written to a file): the loader never sees this source.
_NET = """
import jaxtape as tf

class Dense(tf.Module):
    def __init__(self, n_in, n_out, seed, name=None):
        super().__init__(name=name)
        rng = np.random.default_rng(seed)
        self.kernel = tf.Variable(rng.normal(size=(n_in, n_out)).astype("float32"))
        self.bias = tf.Variable(np.linspace(-0.5, 0.5, n_out).astype("float32"))

    def __call__(self, x):
        return tf.matmul(x, self.kernel) + self.bias

class Net(tf.Module):
    def __init__(self):
        super().__init__()
        self.hidden = Dense(4, 8, 0)
        self.out = Dense(8, 3, 1)
        self.steps = tf.Variable(0, trainable=False)

    @tf.function(input_signature=[tf.TensorSpec([None, 4], tf.float32)])
    def __call__(self, x):
        return self.out(tf.nn.relu(self.hidden(x)))

    @tf.function(input_signature=[
        tf.TensorSpec([None, 4], tf.float32), tf.TensorSpec([None, 3], tf.float32)])
    def train_step(self, x, y):
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean((self(x) - y) ** 2)
        variables = self.trainable_variables
        for v, g in zip(variables, tape.gradient(loss, variables)):
            v.assign_sub(0.1 * g)
        self.steps.assign_add(1)
        return {"loss": loss, "steps": self.steps.read_value()}
"""

# The same steps on the live model and on the loaded one.
_STEPS = """
rng = np.random.default_rng(7)
x = {b: rng.normal(size=(b, 4)).astype("float32") for b in (1, 7, 100)}
y = rng.normal(size=(7, 3)).astype("float32")
out = {}
for b in (1, 7, 100):
    out[f"call_{b}"] = model(x[b]).numpy()
    out[f"sig_{b}"] = serve(x[b]).numpy()
for i in range(2):
    r = model.train_step(x[7], y=y)
    out[f"loss_{i}"], out[f"steps_{i}"] = r["loss"].numpy(), r["steps"].numpy()
for i in range(3):  # fine-tuning under a GradientTape
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean((model(x[7]) - y) ** 2)
    grads = tape.gradient(loss, model.trainable_variables)
    for v, g in zip(model.trainable_variables, grads):
        v.assign_sub(0.05 * g)
    out[f"tape_loss_{i}"] = loss.numpy()
for v in model.variables:
    out["var_" + v.name] = v.numpy()
out["after"] = model(x[7]).numpy()
np.savez(RESULT, **out)
"""


def _run(code: str, cwd):
    env = {**os.environ, "PYTHONPATH": ROOT, "JAX_PLATFORMS": "cpu"}
    proc = subprocess.run(
        [sys.executable, "-c", code],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]


def test_loaded_in_a_fresh_process_matches_the_live_model(tmp_path):
    # The model's module lives in a file outside every import path: the loader
    # process cannot import it (it checks), this process loads it by path.
    defs = tmp_path / "defs"
    defs.mkdir()
    (defs / "net_def.py").write_text("import numpy as np\n" + _NET)
    spec = importlib.util.spec_from_file_location("net_def", defs / "net_def.py")
    net_def = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(net_def)
    export = str(tmp_path / "export")
    model = net_def.Net()
    jaxtape.saved_model.save(model, export, signatures=model.__call__)
    steps = {"tf": jaxtape, "np": np, "model": model, "serve": model.__call__}
    exec(_STEPS, {**steps, "RESULT": str(tmp_path / "live.npz")})
    load = (
        "import importlib.util, sys, numpy as np, jaxtape as tf\n"
        "assert importlib.util.find_spec('net_def') is None\n"
        f"model = tf.saved_model.load({export!r})\n"
        "assert isinstance(model, tf.Module)\n"
        "serve = lambda x: model.signatures['serving_default'](x=x)['output_0']\n"
        f"RESULT = {str(tmp_path / 'loaded.npz')!r}\n" + _STEPS
    )
    _run(load, tmp_path)
    live, loaded = np.load(tmp_path / "live.npz"), np.load(tmp_path / "loaded.npz")
    assert sorted(live.files) == sorted(loaded.files)
    for key in live.files:
        want, got = live[key], loaded[key]
        assert got.dtype == want.dtype and got.shape == want.shape, key
        if key.startswith(("call_", "sig_", "loss_", "steps_")):
            np.testing.assert_array_equal(got, want, err_msg=key)
        else:  # after training steps: the same math, compiled apart
            np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6, err_msg=key)


class _Affine(jaxtape.Module):
    def __init__(self):
        super().__init__()
        self.w = jaxtape.Variable(np.arange(12, dtype="float32").reshape(4, 3) / 7)
        self.b = jaxtape.Variable(np.array([0.5, -1.0, 2.0], "float32"))

    @jaxtape.function(input_signature=[jaxtape.TensorSpec([None, 4], jaxtape.float32)])
    def __call__(self, x):
        return jaxtape.matmul(x, self.w) + self.b


@pytest.fixture(scope="module")
def affine(tmp_path_factory):
    """A live module, its export and the loaded object."""
    model = _Affine()
    path = str(tmp_path_factory.mktemp("sm") / "affine")
    jaxtape.saved_model.save(model, path)
    return model, path, jaxtape.saved_model.load(path)


def test_symbolic_batch_serves_batches_1_7_100(affine):
    model, path, loaded = affine
    manifest = json.load(open(os.path.join(path, "manifest.json")))
    sig = manifest["signatures"]["serving_default"]["inputs"]["dict"]
    assert sig == [
        [
            "x",
            {
                "tensor": {
                    "shape": [None, 4],
                    "dtype": "float32",
                    "name": "x",
                    "index": 0,
                }
            },
        ]
    ]
    for b in (1, 7, 100):
        x = np.random.default_rng(b).normal(size=(b, 4)).astype("float32")
        want = model(x).numpy()
        np.testing.assert_array_equal(loaded(x).numpy(), want)
        out = loaded.signatures["serving_default"](x=x)
        assert list(out) == ["output_0"]
        np.testing.assert_array_equal(out["output_0"].numpy(), want)
    assert loaded.__call__.experimental_get_tracing_count() == 1  # one for all sizes


def test_loaded_function_inside_function_and_under_tape(affine):
    model, _, loaded = affine
    x = np.ones((2, 4), "float32")

    @jaxtape.function
    def twice(x):
        return loaded(x) * 2.0

    np.testing.assert_array_equal(twice(x).numpy(), 2 * model(x).numpy())
    with jaxtape.GradientTape() as tape:
        y = jaxtape.reduce_sum(twice(x) ** 2)
    got = tape.gradient(y, [loaded.w, loaded.b])
    with jaxtape.GradientTape() as tape:
        y = jaxtape.reduce_sum((model(x) * 2.0) ** 2)
    want = tape.gradient(y, [model.w, model.b])
    for g, w in zip(got, want):
        np.testing.assert_allclose(g.numpy(), w.numpy(), rtol=1e-6)
    assert [v.shape.as_list() for v in loaded.trainable_variables] == [[3], [4, 3]]


def _outputs_module(m):
    """The signature output kinds TF names (`output_<i>`, dict keys), in
    TF (`m` = tensorflow) or jaxtape."""
    obj = m.Module()
    obj.w = m.Variable(np.float32(2.0))
    spec = [m.TensorSpec([None, 3], m.float32)]
    obj.single = m.function(lambda x: x * obj.w, input_signature=spec)
    obj.pair = m.function(lambda x: (x, x * obj.w), input_signature=spec)
    obj.named = m.function(lambda x: {"b": x, "a": x * obj.w}, input_signature=spec)
    obj.nested = m.function(lambda x: (x, (x, x)), input_signature=spec)
    return obj


def _save_and_load(m, obj, path, signatures):
    try:
        m.saved_model.save(obj, path, signatures=signatures)
    except ValueError:
        return ValueError
    return m.saved_model.load(path)


def test_signature_outputs_and_errors_match_tensorflow(tf, tmp_path):
    results = {}
    for name, m in (("tf", tf), ("jaxtape", jaxtape)):
        obj = _outputs_module(m)
        sigs = {k: getattr(obj, k) for k in ("single", "pair", "named")}
        loaded = _save_and_load(m, obj, str(tmp_path / name), sigs)
        x = np.ones((2, 3), "float32")
        row = {k: sorted(loaded.signatures[k](x=x)) for k in sigs}
        row["nested"] = _save_and_load(
            m, obj, str(tmp_path / f"{name}_n"), {"n": obj.nested}
        )
        # No signatures given: several candidates, so no default (TF's rule).
        row["default"] = list(
            _save_and_load(m, obj, str(tmp_path / f"{name}_d"), None).signatures
        )
        serve = loaded.signatures["single"]
        # (A wrong shape: TF's signature only fails where an op does; ours
        # checks the spec, `test_errors_name_the_file_or_the_spec`.)
        with pytest.raises(Exception) as info:
            serve(x=m.constant(np.ones((2, 3), "float64")))
        row["dtype"] = type(info.value).__name__
        with pytest.raises(Exception) as info:
            m.saved_model.load(str(tmp_path))  # not an export
        row["not_export"] = type(info.value).__name__
        shutil.rmtree(tmp_path / name / "variables")
        with pytest.raises(Exception) as info:
            m.saved_model.load(str(tmp_path / name))
        row["no_variables"] = type(info.value).__name__
        results[name] = row
    assert results["jaxtape"] == results["tf"]
    assert results["tf"]["single"] == ["output_0"]
    assert results["tf"]["pair"] == ["output_0", "output_1"]
    assert results["tf"]["named"] == ["a", "b"]


def test_errors_name_the_file_or_the_spec(affine, tmp_path):
    _, path, loaded = affine
    with pytest.raises(TypeError, match=r"Can not cast .*\(None, 4\)"):
        loaded(np.ones((2, 5), "float32"))
    with pytest.raises(jaxtape.errors.InvalidArgumentError, match=r"\(None, 4\)"):
        loaded.signatures["serving_default"](x=np.ones((2, 5), "float32"))
    copy = str(tmp_path / "copy")
    shutil.copytree(path, copy)
    manifest = os.path.join(copy, "manifest.json")
    data = json.load(open(manifest))
    data["version"] = 99
    json.dump(data, open(manifest, "w"))
    with pytest.raises(ValueError, match="version 99.*manifest|manifest.*version 99"):
        jaxtape.saved_model.load(copy)
    with pytest.raises(OSError, match="manifest.json"):
        jaxtape.saved_model.load(str(tmp_path))
    (tmp_path / "notes.txt").write_text("mine")  # never deleted by a save
    with pytest.raises(jaxtape.errors.FailedPreconditionError, match="notes.txt"):
        jaxtape.saved_model.save(_Affine(), str(tmp_path))
    assert (tmp_path / "notes.txt").read_text() == "mine"
    (tmp_path / "saved_model.pb").write_bytes(b"")
    with pytest.raises(NotImplementedError, match="TensorFlow SavedModel"):
        jaxtape.saved_model.load(str(tmp_path))
    with pytest.raises(NotImplementedError, match="experimental_image_format"):
        jaxtape.saved_model.save(
            _Affine(),
            str(tmp_path / "x"),
            options=jaxtape.saved_model.SaveOptions(experimental_image_format=True),
        )

    class Untracked(jaxtape.Module):
        @jaxtape.function(input_signature=[jaxtape.TensorSpec([], jaxtape.float32)])
        def f(self, x):
            return x * hidden

    hidden = jaxtape.Variable(1.0)
    with pytest.raises(ValueError, match="not tracked"):
        jaxtape.saved_model.save(Untracked(), str(tmp_path / "u"))
    assert not os.path.exists(tmp_path / "u")


_KILLED = """
import sys, time, numpy as np, jaxtape as tf
from jaxtape._src.checkpoint import storage

class M(tf.Module):
    def __init__(self, v):
        super().__init__()
        self.w = tf.Variable(np.full([3], v, "float32"))

    @tf.function(input_signature=[tf.TensorSpec([3], tf.float32)])
    def __call__(self, x):
        return x * self.w

tf.saved_model.save(M(1.0), sys.argv[1])
write = storage.write

def stalled(*args):
    write(*args)
    print("writing", flush=True)
    time.sleep(60)

storage.write = stalled
tf.saved_model.save(M(2.0), sys.argv[1])
"""


def test_killed_save_leaves_the_previous_export(tmp_path):
    export = str(tmp_path / "export")
    env = {**os.environ, "PYTHONPATH": ROOT, "JAX_PLATFORMS": "cpu"}
    proc = subprocess.Popen(
        [sys.executable, "-c", _KILLED, export],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        line = proc.stdout.readline()
        assert line.strip() == "writing", proc.stderr.read()[-3000:]
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait()
    assert any(".partial-" in n for n in os.listdir(tmp_path))  # the dead save's
    loaded = jaxtape.saved_model.load(export)
    np.testing.assert_array_equal(loaded(np.ones(3, "float32")).numpy(), [1, 1, 1])
    jaxtape.saved_model.save(_Affine(), export)  # a later save cleans up
    assert os.listdir(tmp_path) == ["export"]
    assert jaxtape.saved_model.contains_saved_model(export)


class _Scale(jaxtape.Module):
    def __init__(self, v):
        super().__init__()
        self.w = jaxtape.Variable(np.full([3], v, "float32"))

    @jaxtape.function(input_signature=[jaxtape.TensorSpec([None, 3], jaxtape.float32)])
    def apply(self, x):
        return x * self.w


class _Tree(jaxtape.Module):
    def __init__(self):
        super().__init__()
        self.blocks = [_Scale(2.0), _Scale(3.0)]
        self.head = _Scale(5.0)
        self.table = {"k": jaxtape.Variable(1.0, trainable=False)}

    @jaxtape.function(
        input_signature=[
            jaxtape.TensorSpec([None, 3], jaxtape.float32),
            jaxtape.TensorSpec([None, 3], jaxtape.float32),
        ]
    )
    def loss(self, x, y):
        for block in self.blocks:
            x = block.apply(x)
        return jaxtape.reduce_sum((self.head.apply(x) - y) ** 2) * self.table["k"]


def test_object_paths_and_submodule_functions(tmp_path):
    model, path = _Tree(), str(tmp_path / "tree")
    jaxtape.saved_model.save(model, path)
    loaded = jaxtape.saved_model.load(path)
    manifest = json.load(open(os.path.join(path, "manifest.json")))
    saved = {v["path"]: v["trainable"] for v in manifest["variables"]}
    assert saved == {"blocks/0/w": 1, "blocks/1/w": 1, "head/w": 1, "table/k": 0}
    assert float(loaded.blocks[1].w[0]) == 3.0 and float(loaded.table["k"]) == 1.0
    x = np.ones((2, 3), "float32")
    np.testing.assert_array_equal(loaded.head.apply(x), model.head.apply(x))
    # One function: the default signature (TF's rule), its output named output_0.
    out = loaded.signatures["serving_default"](x=x, y=x)
    assert float(out["output_0"]) == float(model.loss(x, x))
    assert len(loaded.trainable_variables) == 3
    with pytest.raises(jaxtape.errors.InvalidArgumentError, match="equal"):
        loaded.loss(x, np.ones((4, 3), "float32"))  # (x - y needs one batch size)


class _KerasTrainer(jaxtape.Module):
    """A Keras model with dropout and Adam inside a Module: the optimizer's
    slots and dropout's seed state are saved too (captured state)."""

    def __init__(self):
        super().__init__()
        keras = jaxtape.keras
        self.model = keras.Sequential(
            [
                keras.Input((4,)),
                keras.layers.Dense(8, activation="relu"),
                keras.layers.Dropout(0.3, seed=1),
                keras.layers.Dense(3),
            ]
        )
        self.opt = keras.optimizers.Adam(1e-2)
        self.loss_fn = keras.losses.SparseCategoricalCrossentropy(from_logits=True)

    @jaxtape.function(input_signature=[jaxtape.TensorSpec([None, 4], jaxtape.float32)])
    def __call__(self, x):
        return self.model(x, training=False)

    @jaxtape.function(
        input_signature=[
            jaxtape.TensorSpec([None, 4], jaxtape.float32),
            jaxtape.TensorSpec([None], jaxtape.int32),
        ]
    )
    def train(self, x, y):
        with jaxtape.GradientTape() as tape:
            loss = self.loss_fn(y, self.model(x, training=True))
        variables = self.model.trainable_variables
        self.opt.apply_gradients(zip(tape.gradient(loss, variables), variables))
        return loss


def test_keras_model_with_optimizer_and_dropout_keeps_training(tmp_path):
    live = _KerasTrainer()
    x = np.random.default_rng(0).normal(size=(16, 4)).astype("float32")
    y = np.arange(16, dtype="int32") % 3
    live.train(x, y)  # (creates the optimizer's slots)
    jaxtape.saved_model.save(live, str(tmp_path / "k"), signatures=live.__call__)
    loaded = jaxtape.saved_model.load(str(tmp_path / "k"))
    manifest = json.load(open(tmp_path / "k" / "manifest.json"))
    assert sum(".slots/" in v["path"] for v in manifest["variables"]) == 8
    for _ in range(2):  # same slots, same dropout masks: the same losses
        np.testing.assert_array_equal(loaded.train(x, y), live.train(x, y))
    np.testing.assert_array_equal(loaded(x), live(x))
    assert len(loaded.trainable_variables) == 4


def _traced_module(m):
    """A function without input_signature, saved with the traces it has."""
    obj = m.Module()
    obj.w = m.Variable(np.full([3], 2.0, "float32"))
    obj.f = m.function(lambda x, training=False: x * obj.w if training else x + obj.w)
    x = np.ones([2, 3], "float32")
    obj.f(m.constant(x))
    obj.f(m.constant(x), training=True)
    obj.f(m.constant([1.0, 2.0, 3.0]))
    return obj


def test_function_without_signature_keeps_its_traces_like_tensorflow(tf, tmp_path):
    results = {}
    for name, m in (("tf", tf), ("jaxtape", jaxtape)):
        m.saved_model.save(_traced_module(m), str(tmp_path / name))
        loaded = m.saved_model.load(str(tmp_path / name))
        f = loaded.f
        x = m.constant(np.full([2, 3], 3.0, "float32"))
        row = [
            f(x).numpy(),
            f(x, training=True).numpy(),
            f(x, True).numpy(),
            f(m.constant([1.0, 1.0, 1.0])).numpy(),
        ]
        for bad in ([5], [2, 4]):  # no trace of that shape
            with pytest.raises(Exception) as info:
                f(m.constant(np.ones(bad, "float32")))
            row.append(type(info.value).__name__)
        results[name] = row
    for got, want in zip(results["jaxtape"], results["tf"]):
        np.testing.assert_array_equal(got, want)
    assert results["tf"][-1] == "ValueError"
