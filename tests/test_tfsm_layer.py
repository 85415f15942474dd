"""`keras.layers.TFSMLayer` reloads a `jaxtape.saved_model` export as a layer
whose weights are the export's Variables (fine-tunable), as Keras's."""

import numpy as np
import pytest

import jaxtape


def _export(m, path):
    class Model(m.Module):
        def __init__(self):
            self.w = m.Variable(np.arange(6, dtype=np.float32).reshape(3, 2) / 10)

        @m.function(input_signature=[m.TensorSpec([None, 3], m.float32)])
        def __call__(self, x):
            return m.matmul(x, self.w)

    m.saved_model.save(Model(), path)


def test_reloaded_layer_matches_tf_keras(tf, tmp_path):
    x = np.ones((2, 3), np.float32)
    outs, configs = [], []
    for m in (tf, jaxtape):
        path = str(tmp_path / m.__name__)
        _export(m, path)
        layer = m.keras.layers.TFSMLayer(path, call_endpoint="serving_default")
        outs.append(layer(x)["output_0"].numpy())
        assert [tuple(w.shape) for w in layer.trainable_weights] == [(3, 2)]
        config = layer.get_config()
        configs.append(sorted(k for k in config if k not in ("dtype",)))
    np.testing.assert_allclose(outs[1], outs[0], rtol=1e-6)
    assert configs[0] == configs[1]


def test_training_the_layer_trains_the_export(tmp_path):
    _export(jaxtape, str(tmp_path))
    layer = jaxtape.keras.layers.TFSMLayer(str(tmp_path), "serving_default")
    x = np.ones((2, 3), np.float32)
    before = layer(x)["output_0"].numpy()
    opt = jaxtape.keras.optimizers.SGD(0.1)
    with jaxtape.GradientTape() as tape:
        loss = jaxtape.reduce_sum(layer(x)["output_0"])
    grads = tape.gradient(loss, layer.trainable_weights)
    np.testing.assert_allclose(grads[0].numpy(), np.full((3, 2), 2.0))  # d sum(xW)/dW
    opt.apply_gradients(zip(grads, layer.trainable_weights))
    np.testing.assert_allclose(
        layer(x)["output_0"].numpy(), before - 0.1 * 2 * 3, rtol=1e-5, atol=1e-6
    )


def test_unknown_endpoint_raises_keras_value_error(tmp_path):
    _export(jaxtape, str(tmp_path))
    with pytest.raises(ValueError, match="serving_default"):
        jaxtape.keras.layers.TFSMLayer(str(tmp_path))  # default 'serve'
