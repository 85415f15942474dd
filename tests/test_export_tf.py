"""A genuine TF SavedModel from jaxtape's export (`SaveOptions(tf_saved_model=True)`).

Real TensorFlow is the reader: `tensorflow.saved_model.load` runs the
exported functions and signatures (the same `jax.export` programs, through
jax2tf) and must give what the live jaxtape model and
`jaxtape.saved_model.load` of the same directory give; `saved_model_cli`
(a fresh process that never imports jaxtape) lists the signatures. Those tests
skip without TensorFlow (the `export-tf` extra); the platforms that the
programs are lowered for (CPU and CUDA) are checked without it.
"""

import json
import os
import subprocess
import sys

import jax
import numpy as np
import pytest

import jaxtape

pytestmark = pytest.mark.skipif(
    jax.default_backend() != "cpu", reason="the comparisons run on CPU"
)

TF_OPTIONS = jaxtape.saved_model.SaveOptions(tf_saved_model=True)


class _Dense(jaxtape.Module):
    def __init__(self, n_in, n_out, seed, name=None):
        super().__init__(name=name)
        rng = np.random.default_rng(seed)
        self.kernel = jaxtape.Variable(rng.normal(size=(n_in, n_out)).astype("float32"))
        self.bias = jaxtape.Variable(np.linspace(-0.5, 0.5, n_out).astype("float32"))

    def __call__(self, x):
        return jaxtape.matmul(x, self.kernel) + self.bias


class _Net(jaxtape.Module):
    """A tf.Module-style model: a serving call, a train step that assigns
    (and returns an integer), and a function saved with its traces."""

    def __init__(self):
        super().__init__()
        self.hidden = _Dense(4, 8, 0)
        self.out = _Dense(8, 3, 1)
        self.steps = jaxtape.Variable(0, trainable=False)

    @jaxtape.function(
        input_signature=[jaxtape.TensorSpec([None, 4], jaxtape.float32, name="x")]
    )
    def __call__(self, x):
        return self.out(jaxtape.nn.relu(self.hidden(x)))

    @jaxtape.function(
        input_signature=[
            jaxtape.TensorSpec([None, 4], jaxtape.float32),
            jaxtape.TensorSpec([None, 3], jaxtape.float32),
        ]
    )
    def train_step(self, x, y):
        with jaxtape.GradientTape() as tape:
            loss = jaxtape.reduce_mean((self(x) - y) ** 2)
        variables = self.trainable_variables
        for v, g in zip(variables, tape.gradient(loss, variables)):
            v.assign_sub(0.1 * g)
        self.steps.assign_add(1)
        return {"loss": loss, "steps": self.steps.read_value()}

    @jaxtape.function
    def scale(self, x, factor):
        return x * factor + self.out.bias


def _keras_model(kind):
    keras, layers = jaxtape.keras, jaxtape.keras.layers
    if kind == "mlp":
        inputs = keras.Input((6,), name="features")
        h = layers.Dense(16, activation="relu")(inputs)
        h = layers.BatchNormalization()(h)
        h = layers.Dropout(0.3)(h)
    else:
        inputs = keras.Input((8, 8, 1), name="features")
        h = layers.Conv2D(4, 3, activation="relu")(inputs)
        h = layers.MaxPooling2D()(h)
        h = layers.Conv2D(4, 3, padding="same")(h)
        h = layers.GlobalAveragePooling2D()(h)
    outputs = layers.Dense(3, activation="softmax")(h)
    model = keras.Model(inputs, outputs)
    rng = np.random.default_rng(3)
    model.set_weights(
        [rng.normal(size=w.shape).astype("float32") for w in model.get_weights()]
    )
    return model


_INPUT_SHAPES = {"mlp": (6,), "cnn": (8, 8, 1)}


@pytest.fixture(scope="module")
def tf():
    """Real TensorFlow (module scope, for the module's exports)."""
    return pytest.importorskip("tensorflow")


@pytest.fixture(scope="module", params=["mlp", "cnn"])
def keras_export(tf, tmp_path_factory, request):
    model = _keras_model(request.param)
    path = str(tmp_path_factory.mktemp("tf") / request.param)
    model.export(path, verbose=False, options=TF_OPTIONS)
    return model, path, _INPUT_SHAPES[request.param]


@pytest.fixture(scope="module")
def keras_loaded(tf, keras_export):
    """The Keras export loaded by TensorFlow and by jaxtape."""
    _, path, _ = keras_export
    return tf.saved_model.load(path), jaxtape.saved_model.load(path)


@pytest.fixture(scope="module")
def net_export(tf, tmp_path_factory):
    net = _Net()
    ones = np.ones((2, 3), np.float32)
    net.scale(ones, 2.0)  # (two traces, saved as TF saves concrete functions)
    net.scale(ones, 3.0)
    path = str(tmp_path_factory.mktemp("tf") / "net")
    sigs = {"serving_default": net.__call__, "train": net.train_step}
    jaxtape.saved_model.save(net, path, signatures=sigs, options=TF_OPTIONS)
    return net, path


def _rows(n, width, seed):
    return np.random.default_rng(seed).normal(size=(n, width)).astype("float32")


@pytest.mark.parametrize("batch", [1, 7, 1000])
def test_tensorflow_serves_the_keras_export_as_jaxtape_does(
    tf, keras_export, keras_loaded, batch
):
    model, _, shape = keras_export
    x = np.random.default_rng(batch).normal(size=(batch, *shape)).astype("float32")
    want = model(x).numpy()
    by_tf, by_jaxtape = keras_loaded
    out = by_tf.signatures["serving_default"](features=tf.constant(x))
    assert list(out) == ["output_0"]
    # (TF compiles the same StableHLO with its own XLA: equal here, within
    # float32 rounding wherever the two XLAs fuse differently)
    np.testing.assert_allclose(out["output_0"].numpy(), want, rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(by_tf.serve(x).numpy(), want, rtol=1e-6, atol=1e-7)
    sig = by_jaxtape.signatures["serving_default"](features=x)["output_0"]
    np.testing.assert_array_equal(sig.numpy(), want)


def test_tensorflow_sees_the_exported_variables(tf, keras_export, keras_loaded):
    model, _, _ = keras_export
    loaded, _ = keras_loaded
    for group in ("variables", "trainable_variables", "non_trainable_variables"):
        got = getattr(loaded, group)
        want = getattr(model, group)
        assert [isinstance(v, tf.Variable) for v in got] == [True] * len(want)
        assert [v.name.split(":")[0] for v in got] == [v.name for v in want], group
        for g, w in zip(got, want):
            assert g.trainable == w.trainable
            np.testing.assert_array_equal(g.numpy(), w.numpy())


def test_tensorflow_runs_the_module_functions_and_their_assignments(tf, net_export):
    net, path = net_export
    loaded = tf.saved_model.load(path)
    x, y = _rows(5, 4, 0), _rows(5, 3, 1)
    np.testing.assert_allclose(loaded(x).numpy(), net(x).numpy(), 1e-6, 1e-6)
    for name in ("hidden", "out"):
        for attr in ("kernel", "bias"):
            got = getattr(getattr(loaded, name), attr)
            want = getattr(getattr(net, name), attr)
            np.testing.assert_array_equal(got.numpy(), want.numpy())
    # Saved traces: TF picks the concrete function by its Python argument.
    ones = np.ones((2, 3), np.float32)
    for factor in (2.0, 3.0):
        got = loaded.scale(tf.constant(ones), factor).numpy()
        np.testing.assert_allclose(got, net.scale(ones, factor).numpy(), 1e-6)
    # A train step on a copy of the live state: same loss, same assignments.
    mirror = jaxtape.saved_model.load(path)
    for step in range(2):
        got = loaded.signatures["train"](x=tf.constant(x), y=tf.constant(y))
        want = mirror.train_step(x, y)
        assert sorted(got) == ["loss", "steps"]
        assert got["steps"].dtype == tf.int32 and int(got["steps"]) == step + 1
        np.testing.assert_allclose(got["loss"].numpy(), want["loss"].numpy(), 1e-6)
    np.testing.assert_allclose(
        loaded.hidden.kernel.numpy(), mirror.hidden.kernel.numpy(), 1e-6, 1e-6
    )


# A fresh process without jaxtape: TF's `saved_model_cli show --dir D --all`
# (its `main`, as the console script runs it), then TensorFlow alone serves and
# differentiates the export.
_TF_ONLY = """
import contextlib, io, sys
import numpy as np
import tensorflow as tf
from tensorflow.python.tools import saved_model_cli
path, x_file, out_file, cli_file = sys.argv[1:5]
sys.argv = ["saved_model_cli", "show", "--dir", path, "--all"]
text = io.StringIO()
with contextlib.redirect_stdout(text):
    try:
        saved_model_cli.main()
    except SystemExit as e:
        assert not e.code, e.code
open(cli_file, "w").write(text.getvalue())
loaded = tf.saved_model.load(path)
x = np.load(x_file)
with tf.GradientTape() as tape:
    y = loaded.signatures["serving_default"](x=tf.constant(x))["output_0"]
    loss = tf.reduce_sum(y ** 2)
kernel, bias = tape.gradient(loss, [loaded.hidden.kernel, loaded.out.bias])
assert "jaxtape" not in sys.modules
np.savez(out_file, y=y.numpy(), kernel=kernel.numpy(), bias=bias.numpy())
"""


@pytest.fixture(scope="module")
def tf_only_run(tf, net_export, tmp_path_factory):
    """What the fresh TF-only process printed and computed, and its input."""
    _, path = net_export
    tmp = tmp_path_factory.mktemp("tf_only")
    x = _rows(7, 4, 2)
    np.save(tmp / "x.npy", x)
    files = [str(tmp / n) for n in ("x.npy", "out.npz", "cli.txt")]
    proc = subprocess.run(
        [sys.executable, "-c", _TF_ONLY, path, *files],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "TF_CPP_MIN_LOG_LEVEL": "2"},
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    with open(files[2]) as f:
        return x, dict(np.load(files[1])), f.read()


def test_tensorflow_alone_serves_and_differentiates_the_export(net_export, tf_only_run):
    net, _ = net_export
    x, got, _ = tf_only_run
    with jaxtape.GradientTape() as tape:
        y = net(x)
        loss = jaxtape.reduce_sum(y**2)
    kernel, bias = tape.gradient(loss, [net.hidden.kernel, net.out.bias])
    np.testing.assert_allclose(got["y"], y.numpy(), rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(got["kernel"], kernel.numpy(), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(got["bias"], bias.numpy(), rtol=1e-5, atol=1e-6)


def test_saved_model_cli_lists_the_signatures(tf_only_run):
    text = tf_only_run[2]
    assert "signature_def['serving_default']" in text
    assert "signature_def['train']" in text
    serving = text.split("signature_def['serving_default']")[1].split("signature_def[")[
        0
    ]
    assert "inputs['x'] tensor_info:" in serving
    assert "shape: (-1, 4)" in serving
    assert "outputs['output_0'] tensor_info:" in serving
    assert "Method name is: tensorflow/serving/predict" in serving


class _Plain(jaxtape.Module):
    def __init__(self):
        super().__init__()
        self.w = jaxtape.Variable(np.eye(3, dtype="float32") * 2)

    @jaxtape.function(input_signature=[jaxtape.TensorSpec([None, 3], jaxtape.float32)])
    def apply(self, x):
        return jaxtape.nn.softmax(jaxtape.matmul(x, self.w))


class _Spectra(_Plain):
    @jaxtape.function(input_signature=[jaxtape.TensorSpec([3, 3], jaxtape.float32)])
    def spectrum(self, a):  # (no CUDA lowering: `eig` is LAPACK's)
        return jaxtape.math.real(jaxtape.linalg.eigvals(a + self.w))


@pytest.mark.parametrize("with_eig", [False, True])
def test_programs_are_lowered_for_cpu_and_cuda(tmp_path, caplog, with_eig):
    model = _Spectra() if with_eig else _Plain()
    path = str(tmp_path / "export")
    jaxtape.saved_model.save(model, path)
    with open(os.path.join(path, "manifest.json")) as f:
        manifest = json.load(f)
    platforms = {}
    for entry in manifest["programs"]:
        with open(os.path.join(path, entry["file"]), "rb") as f:
            platforms[entry["function"]] = jax.export.deserialize(
                bytearray(f.read())
            ).platforms
    assert platforms["apply"] == ("cpu", "cuda")
    if with_eig:
        assert platforms["spectrum"] == ("cpu",)
        assert manifest["platforms"] == ["cpu"]
        assert "could not be lowered for CUDA" in caplog.text
        assert "spectrum" in caplog.text
    else:
        assert manifest["platforms"] == ["cpu", "cuda"]
    loaded = jaxtape.saved_model.load(path)  # (and it runs here, on CPU)
    x = np.array([[1.0, 2.0, 3.0]], np.float32)
    np.testing.assert_array_equal(loaded.apply(x).numpy(), model.apply(x).numpy())
    if with_eig:
        a = np.diag([1.0, 3.0, 2.0]).astype("float32")
        np.testing.assert_allclose(
            np.sort(loaded.spectrum(a).numpy()), [3.0, 4.0, 5.0], rtol=1e-6
        )


def test_without_tensorflow_the_save_fails_and_keeps_the_earlier_export(
    tmp_path, monkeypatch
):
    path = str(tmp_path / "export")
    model = _Dense(2, 2, 0)
    model.call = jaxtape.function(
        lambda x: model(x),
        input_signature=[jaxtape.TensorSpec([None, 2], jaxtape.float32)],
    )
    jaxtape.saved_model.save(model, path)
    before = sorted(os.listdir(path))
    monkeypatch.setitem(sys.modules, "tensorflow", None)
    with pytest.raises(ImportError, match=r"jaxtape\[export-tf\]"):
        jaxtape.saved_model.save(model, path, options=TF_OPTIONS)
    assert sorted(os.listdir(path)) == before
    assert sorted(os.listdir(tmp_path)) == ["export"]


def test_errors_name_the_spec_or_the_way_out(tf, keras_export, keras_loaded, tmp_path):
    _, _, shape = keras_export
    by_tf, by_jaxtape = keras_loaded
    wrong = np.ones((2, shape[0] - 1, *shape[1:]), np.float32)
    with pytest.raises(jaxtape.errors.InvalidArgumentError, match="'features'"):
        by_jaxtape.signatures["serving_default"](features=wrong)
    with pytest.raises((ValueError, TypeError)):  # (TF's own check)
        by_tf.signatures["serving_default"](features=wrong)
    # A SavedModel TensorFlow wrote: jaxtape reads its Variables, not its graph.
    tf_only = str(tmp_path / "tf_only")
    tf.saved_model.save(tf.Module(), tf_only)
    with pytest.raises(NotImplementedError, match=r"Checkpoint\(root=model\)"):
        jaxtape.saved_model.load(tf_only)
