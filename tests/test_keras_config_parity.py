"""Layer configs equal to tf.keras's: one row per layer that both have.

Each row builds the layer in Keras-on-TF and in jaxtape from the SAME
non-default arguments (initializers, regularizers, constraints, activation,
dtype and the layer's own options) and compares `get_config()` (the name
aside; tuples read as lists, as after a `.keras` file round trip). Then
`jaxtape_cls.from_config(keras_config)` and
`layers.deserialize(layers.serialize(layer))` must give the same config back:
a config that drops an argument loses it on save/load and `clone_model`.
"""

from __future__ import annotations

import numpy as np
import pytest

import jaxtape
from jaxtape._src.keras import layers as jl


def _init(seed=3):
    return {
        "class_name": "RandomNormal",
        "config": {"mean": 0.1, "stddev": 0.2, "seed": seed},
    }


def _reg(l2=0.01):
    return {"class_name": "L1L2", "config": {"l1": 0.001, "l2": l2}}


def _con(max_value=1.5):
    return {"class_name": "MaxNorm", "config": {"max_value": max_value, "axis": 0}}


def _kernel_args(prefixes=("kernel", "bias")):
    """Non-default initializer/regularizer/constraint for each weight prefix."""
    out = {}
    for i, p in enumerate(prefixes):
        out[f"{p}_initializer"] = _init(seed=i + 1)
        out[f"{p}_regularizer"] = _reg(0.01 * (i + 1))
        out[f"{p}_constraint"] = _con(1.0 + i)
    return out


_DENSE = {
    "activation": "tanh",
    "use_bias": True,
    "activity_regularizer": _reg(0.5),
    "dtype": "float64",
    **_kernel_args(),
}
_CONV = {**_DENSE, "strides": 1, "padding": "same", "dilation_rate": 1}
_RNN = {
    "activation": "relu",
    "dropout": 0.1,
    "recurrent_dropout": 0.2,
    "dtype": "float64",
    **_kernel_args(("kernel", "recurrent", "bias")),
}
_NORM = {
    "epsilon": 0.01,
    "center": True,
    "scale": True,
    **_kernel_args(("beta", "gamma")),
}

# name -> builder of the layer from a layers module (keras.layers or jaxtape's)
ROWS = {
    "Activation": lambda m: m.Activation("relu6", dtype="float16"),
    "ActivityRegularization": lambda m: m.ActivityRegularization(l1=0.1, l2=0.2),
    "AdaptiveAveragePooling1D": lambda m: m.AdaptiveAveragePooling1D(3),
    "AdaptiveAveragePooling2D": lambda m: m.AdaptiveAveragePooling2D(
        (2, 3), data_format="channels_first"
    ),
    "AdaptiveAveragePooling3D": lambda m: m.AdaptiveAveragePooling3D(2),
    "AdaptiveMaxPooling1D": lambda m: m.AdaptiveMaxPooling1D(4),
    "AdaptiveMaxPooling2D": lambda m: m.AdaptiveMaxPooling2D(2),
    "AdaptiveMaxPooling3D": lambda m: m.AdaptiveMaxPooling3D((1, 2, 3)),
    "Add": lambda m: m.Add(dtype="float64"),
    "AdditiveAttention": lambda m: m.AdditiveAttention(use_scale=False, dropout=0.2),
    "AlphaDropout": lambda m: m.AlphaDropout(0.3, noise_shape=(1, 2), seed=4),
    "Attention": lambda m: m.Attention(
        use_scale=True, score_mode="concat", dropout=0.1, seed=2
    ),
    "AugMix": lambda m: m.AugMix(value_range=(0, 1), num_chains=2, seed=1),
    "AutoContrast": lambda m: m.AutoContrast(value_range=(0, 1)),
    "Average": lambda m: m.Average(),
    "AveragePooling1D": lambda m: m.AveragePooling1D(3, strides=2, padding="same"),
    "AveragePooling2D": lambda m: m.AveragePooling2D(
        (2, 3), data_format="channels_first"
    ),
    "AveragePooling3D": lambda m: m.AveragePooling3D(2, strides=(1, 2, 1)),
    "BatchNormalization": lambda m: m.BatchNormalization(
        axis=1,
        momentum=0.9,
        moving_mean_initializer=_init(7),
        moving_variance_initializer="ones",
        **_NORM,
    ),
    "Bidirectional": lambda m: m.Bidirectional(
        m.LSTM(3, return_sequences=True), merge_mode="sum"
    ),
    "CategoryEncoding": lambda m: m.CategoryEncoding(
        num_tokens=5, output_mode="count", sparse=False
    ),
    "CenterCrop": lambda m: m.CenterCrop(4, 5, data_format="channels_first"),
    "MaxNumBoundingBoxes": lambda m: m.MaxNumBoundingBoxes(7, fill_value=-2),
    "Concatenate": lambda m: m.Concatenate(axis=1),
    "ContrastLimitedAdaptiveHistogramEqualization": lambda m: (
        m.ContrastLimitedAdaptiveHistogramEqualization(
            value_range=(0, 1), tile_grid_size=(4, 4)
        )
    ),
    "Conv1D": lambda m: m.Conv1D(4, 3, groups=2, **_CONV),
    "Conv1DTranspose": lambda m: m.Conv1DTranspose(4, 3, **_CONV),
    "Conv2D": lambda m: m.Conv2D(4, (2, 3), data_format="channels_first", **_CONV),
    "Conv2DTranspose": lambda m: m.Conv2DTranspose(4, 3, output_padding=None, **_CONV),
    "Conv3D": lambda m: m.Conv3D(2, 2, **_CONV),
    "Conv3DTranspose": lambda m: m.Conv3DTranspose(2, 2, **_CONV),
    "ConvLSTM1D": lambda m: m.ConvLSTM1D(
        2, 3, return_sequences=True, unit_forget_bias=False, **_RNN
    ),
    "ConvLSTM2D": lambda m: m.ConvLSTM2D(2, 3, padding="same", **_RNN),
    "ConvLSTM3D": lambda m: m.ConvLSTM3D(2, 2, recurrent_activation="tanh", **_RNN),
    "Cropping1D": lambda m: m.Cropping1D((2, 3)),
    "Cropping2D": lambda m: m.Cropping2D(
        ((1, 2), (3, 4)), data_format="channels_first"
    ),
    "Cropping3D": lambda m: m.Cropping3D(2),
    "CutMix": lambda m: m.CutMix(factor=0.5, seed=3),
    "Dense": lambda m: m.Dense(5, lora_rank=None, **_DENSE),
    "DepthwiseConv1D": lambda m: m.DepthwiseConv1D(
        3,
        depth_multiplier=2,
        **{k.replace("kernel", "depthwise"): v for k, v in _CONV.items()},
    ),
    "DepthwiseConv2D": lambda m: m.DepthwiseConv2D(
        (2, 3), **{k.replace("kernel", "depthwise"): v for k, v in _CONV.items()}
    ),
    "Discretization": lambda m: m.Discretization(
        bin_boundaries=[0.0, 1.0, 2.5], output_mode="one_hot"
    ),
    "Dot": lambda m: m.Dot(axes=(1, 2), normalize=True),
    "Dropout": lambda m: m.Dropout(0.4, noise_shape=(None, 1), seed=5),
    "ELU": lambda m: m.ELU(alpha=0.5),
    "EinsumDense": lambda m: m.EinsumDense(
        "ab,bc->ac", output_shape=4, bias_axes="c", activation="relu", **_kernel_args()
    ),
    "Embedding": lambda m: m.Embedding(
        10,
        3,
        mask_zero=True,
        embeddings_initializer=_init(),
        embeddings_regularizer=_reg(),
        embeddings_constraint=_con(),
        activity_regularizer=_reg(0.3),
    ),
    "Equalization": lambda m: m.Equalization(value_range=(0, 1), bins=64),
    "Flatten": lambda m: m.Flatten(data_format="channels_first"),
    "GRU": lambda m: m.GRU(
        3, reset_after=False, go_backwards=True, return_state=True, **_RNN
    ),
    "GRUCell": lambda m: m.GRUCell(3, recurrent_activation="relu", **_RNN),
    "GaussianDropout": lambda m: m.GaussianDropout(0.2, seed=1),
    "GaussianNoise": lambda m: m.GaussianNoise(0.3, seed=2),
    "GlobalAveragePooling1D": lambda m: m.GlobalAveragePooling1D(
        data_format="channels_first", keepdims=True
    ),
    "GlobalAveragePooling2D": lambda m: m.GlobalAveragePooling2D(keepdims=True),
    "GlobalAveragePooling3D": lambda m: m.GlobalAveragePooling3D(
        data_format="channels_first"
    ),
    "GlobalMaxPooling1D": lambda m: m.GlobalMaxPooling1D(keepdims=True),
    "GlobalMaxPooling2D": lambda m: m.GlobalMaxPooling2D(data_format="channels_first"),
    "GlobalMaxPooling3D": lambda m: m.GlobalMaxPooling3D(keepdims=True),
    "GroupNormalization": lambda m: m.GroupNormalization(groups=2, axis=1, **_NORM),
    "GroupQueryAttention": lambda m: m.GroupQueryAttention(
        head_dim=4,
        num_query_heads=4,
        num_key_value_heads=2,
        dropout=0.1,
        use_bias=False,
        **_kernel_args(),
    ),
    "HashedCrossing": lambda m: m.HashedCrossing(num_bins=7, output_mode="one_hot"),
    "Hashing": lambda m: m.Hashing(num_bins=5, mask_value=0, output_mode="count"),
    "Identity": lambda m: m.Identity(dtype="float64"),
    "InputLayer": lambda m: m.InputLayer(shape=(3, 4), batch_size=2, dtype="int32"),
    "IntegerLookup": lambda m: m.IntegerLookup(
        max_tokens=10,
        num_oov_indices=2,
        mask_token=0,
        vocabulary=[3, 4, 5],
        output_mode="multi_hot",
    ),
    "LSTM": lambda m: m.LSTM(
        3, unit_forget_bias=False, return_sequences=True, stateful=False, **_RNN
    ),
    "LSTMCell": lambda m: m.LSTMCell(3, recurrent_activation="tanh", **_RNN),
    "Layer": lambda m: m.Layer(trainable=False, dtype="float64"),
    "LayerNormalization": lambda m: m.LayerNormalization(
        axis=[1, 2], rms_scaling=False, **_NORM
    ),
    "LeakyReLU": lambda m: m.LeakyReLU(negative_slope=0.1),
    "Masking": lambda m: m.Masking(mask_value=-1.0),
    "MaxPooling1D": lambda m: m.MaxPooling1D(3, strides=1, padding="same"),
    "MaxPooling2D": lambda m: m.MaxPooling2D((2, 3), data_format="channels_first"),
    "MaxPooling3D": lambda m: m.MaxPooling3D(2, strides=(1, 2, 1)),
    "Maximum": lambda m: m.Maximum(),
    "MelSpectrogram": lambda m: m.MelSpectrogram(
        fft_length=512, num_mel_bins=40, power_to_db=False
    ),
    "Minimum": lambda m: m.Minimum(),
    "MixUp": lambda m: m.MixUp(alpha=0.4, seed=2),
    "MultiHeadAttention": lambda m: m.MultiHeadAttention(
        num_heads=2,
        key_dim=4,
        value_dim=3,
        dropout=0.1,
        use_bias=True,
        output_shape=(5,),
        attention_axes=(1,),
        **_kernel_args(),
    ),
    "Multiply": lambda m: m.Multiply(),
    "Normalization": lambda m: m.Normalization(
        axis=(1, 2), mean=[1.0, 2.0], variance=[3.0, 4.0]
    ),
    "PReLU": lambda m: m.PReLU(
        alpha_initializer=_init(),
        alpha_regularizer=_reg(),
        alpha_constraint=_con(),
        shared_axes=[1],
    ),
    "Permute": lambda m: m.Permute((2, 1)),
    "RMSNormalization": lambda m: m.RMSNormalization(axis=1, epsilon=0.01),
    "RNN": lambda m: m.RNN(m.SimpleRNNCell(3), return_sequences=True, unroll=True),
    "RandAugment": lambda m: m.RandAugment(
        value_range=(0, 1), num_ops=3, factor=0.3, seed=1
    ),
    "RandomBrightness": lambda m: m.RandomBrightness(0.2, value_range=(0, 1), seed=1),
    "RandomColorDegeneration": lambda m: m.RandomColorDegeneration(0.3, seed=1),
    "RandomColorJitter": lambda m: m.RandomColorJitter(
        value_range=(0, 1), brightness_factor=0.2, seed=2
    ),
    "RandomContrast": lambda m: m.RandomContrast(0.3, seed=2),
    "RandomCrop": lambda m: m.RandomCrop(4, 5, seed=3),
    "RandomElasticTransform": lambda m: m.RandomElasticTransform(
        factor=0.5, scale=0.2, seed=1
    ),
    "RandomErasing": lambda m: m.RandomErasing(factor=0.5, seed=1),
    "RandomFlip": lambda m: m.RandomFlip("vertical", seed=4),
    "RandomGaussianBlur": lambda m: m.RandomGaussianBlur(
        factor=0.5, kernel_size=5, seed=1
    ),
    "RandomGrayscale": lambda m: m.RandomGrayscale(factor=0.3),
    "RandomHue": lambda m: m.RandomHue(0.2, value_range=(0, 1), seed=1),
    "RandomInvert": lambda m: m.RandomInvert(factor=0.4, value_range=(0, 1), seed=1),
    "RandomPerspective": lambda m: m.RandomPerspective(factor=0.5, scale=0.5, seed=1),
    "RandomPosterization": lambda m: m.RandomPosterization(
        3, value_range=(0, 1), seed=1
    ),
    "RandomRotation": lambda m: m.RandomRotation(0.2, fill_mode="nearest", seed=1),
    "RandomSaturation": lambda m: m.RandomSaturation(0.3, seed=1),
    "RandomSharpness": lambda m: m.RandomSharpness(0.3, seed=1),
    "RandomShear": lambda m: m.RandomShear(x_factor=0.2, y_factor=0.1, seed=1),
    "RandomTranslation": lambda m: m.RandomTranslation(
        0.1, 0.2, fill_mode="constant", seed=1
    ),
    "RandomZoom": lambda m: m.RandomZoom(0.2, width_factor=(-0.1, 0.1), seed=1),
    "ReLU": lambda m: m.ReLU(max_value=6.0, negative_slope=0.1, threshold=0.5),
    "RepeatVector": lambda m: m.RepeatVector(4),
    "Rescaling": lambda m: m.Rescaling(1 / 255, offset=-1.0),
    "Reshape": lambda m: m.Reshape((2, -1)),
    "Resizing": lambda m: m.Resizing(
        8, 9, interpolation="nearest", crop_to_aspect_ratio=True
    ),
    "ReversibleEmbedding": lambda m: m.ReversibleEmbedding(
        10,
        3,
        tie_weights=False,
        reverse_dtype="float32",
        embeddings_initializer=_init(),
    ),
    "STFTSpectrogram": lambda m: m.STFTSpectrogram(
        mode="magnitude", frame_length=64, frame_step=16
    ),
    "SeparableConv1D": lambda m: m.SeparableConv1D(
        4,
        3,
        depth_multiplier=2,
        **{k: v for k, v in _CONV.items() if "kernel" not in k},
        **_kernel_args(("depthwise", "pointwise")),
    ),
    "SeparableConv2D": lambda m: m.SeparableConv2D(
        4,
        3,
        **{k: v for k, v in _CONV.items() if "kernel" not in k},
        **_kernel_args(("depthwise", "pointwise")),
    ),
    "SimpleRNN": lambda m: m.SimpleRNN(3, return_sequences=True, unroll=True, **_RNN),
    "SimpleRNNCell": lambda m: m.SimpleRNNCell(3, **_RNN),
    "Softmax": lambda m: m.Softmax(axis=1),
    "Solarization": lambda m: m.Solarization(
        addition_factor=0.2, threshold_factor=0.3, value_range=(0, 1), seed=1
    ),
    "SpatialDropout1D": lambda m: m.SpatialDropout1D(0.2, seed=1),
    "SpatialDropout2D": lambda m: m.SpatialDropout2D(0.2, data_format="channels_first"),
    "SpatialDropout3D": lambda m: m.SpatialDropout3D(0.2),
    "SpectralNormalization": lambda m: m.SpectralNormalization(
        m.Dense(3), power_iterations=2
    ),
    "StackedRNNCells": lambda m: m.StackedRNNCells([m.SimpleRNNCell(2), m.GRUCell(3)]),
    "StringLookup": lambda m: m.StringLookup(
        max_tokens=10, num_oov_indices=1, vocabulary=["a", "b"], output_mode="int"
    ),
    "Subtract": lambda m: m.Subtract(),
    "TextVectorization": lambda m: m.TextVectorization(
        max_tokens=20, output_sequence_length=5, ngrams=2, split="whitespace"
    ),
    "TimeDistributed": lambda m: m.TimeDistributed(m.Dense(3, activation="relu")),
    "UnitNormalization": lambda m: m.UnitNormalization(axis=(1, 2)),
    "UpSampling1D": lambda m: m.UpSampling1D(3),
    "UpSampling2D": lambda m: m.UpSampling2D((2, 3), interpolation="bilinear"),
    "UpSampling3D": lambda m: m.UpSampling3D(2, data_format="channels_first"),
    "Wrapper": None,  # abstract base (no `call`)
    "TorchModuleWrapper": None,  # needs PyTorch (both refuse without it)
    "ZeroPadding1D": lambda m: m.ZeroPadding1D((2, 3)),
    "ZeroPadding2D": lambda m: m.ZeroPadding2D(((1, 2), (3, 4))),
    "ZeroPadding3D": lambda m: m.ZeroPadding3D(2, data_format="channels_first"),
}

# Layers both have whose configs hold Python callables or modules, not data.
SKIPPED = {
    "FlaxLayer": "wraps a flax module object (not serializable data)",
    "JaxLayer": "wraps Python functions (call_fn/init_fn)",
    "Lambda": "wraps a Python function (its config holds bytecode)",
    "Pipeline": "a list of other layers' objects (covered by its own rows' layers)",
    "InputSpec": "not a layer",
}


def _plain(value):
    """A config as after a JSON round trip: tuples as lists."""
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return value


def _config(layer) -> dict:
    cfg = _plain(layer.get_config())
    cfg.pop("name", None)
    for sub in ("layer", "backward_layer", "cell"):  # (wrapped layers' names)
        if isinstance(cfg.get(sub), dict):
            cfg[sub].get("config", {}).pop("name", None)
    for cell in cfg.get("cells", []) or []:
        cell.get("config", {}).pop("name", None)
    return cfg


def test_the_table_covers_every_shared_layer():
    import keras

    ours = {n for n in jl.__all__ if isinstance(getattr(jl, n), type)}
    shared = {n for n in ours if isinstance(getattr(keras.layers, n, None), type)}
    # one row per distinct Keras class (aliases such as MaxPool2D share a row)
    by_class = {}
    for n in sorted(shared):
        by_class.setdefault(getattr(keras.layers, n), n)
    names = {n for cls, n in by_class.items()}
    covered = set(ROWS) | set(SKIPPED)
    missing = {
        n
        for n in names
        if n not in covered
        and not any(
            getattr(keras.layers, r, None) is getattr(keras.layers, n) for r in covered
        )
    }
    assert not missing, f"no row for: {sorted(missing)}"


# Known differences, each a strict xfail (it fails loudly once fixed).
KNOWN = {
    # Keras's plain Layer lists its auto-captured init arguments (autocast,
    # activity_regularizer); jaxtape's base config lists the common ones only.
    "Layer": "plain Layer's auto-captured config",
}


def _row(name):
    if name in KNOWN:
        return pytest.param(
            name, marks=pytest.mark.xfail(reason=KNOWN[name], strict=True)
        )
    return name


@pytest.mark.parametrize("name", [_row(n) for n in ROWS if ROWS[n] is not None])
def test_config_equals_keras(name, tf):
    import keras

    build = ROWS[name]
    k_layer = build(keras.layers)
    j_layer = build(jl)
    expected = _config(k_layer)
    assert _config(j_layer) == expected
    # a tf.keras config loads into jaxtape and gives the same config back
    again = type(j_layer).from_config(k_layer.get_config())
    assert _config(again) == expected
    # and so does jaxtape's own serialize/deserialize
    back = jaxtape.keras.layers.deserialize(jaxtape.keras.layers.serialize(j_layer))
    assert type(back) is type(j_layer)
    assert _config(back) == expected


def test_default_configs_equal_keras(tf):
    """Configs with every default (Keras lists some entries only when set)."""
    import keras

    for build in (
        lambda m: m.Dense(3),
        lambda m: m.Embedding(4, 2),
        lambda m: m.Conv2D(2, 3),
        lambda m: m.BatchNormalization(),
        lambda m: m.LayerNormalization(),
        lambda m: m.PReLU(),
    ):
        assert _config(build(jl)) == _config(build(keras.layers))


@pytest.mark.parametrize(
    "case", ["20_values", "2d_eps", "coarse_eps", "dataset", "list"]
)
def test_discretization_adapt_equals_keras(case, tf):
    """Keras's approximate-quantile summary, batch by batch: the same bin
    boundaries (exactly) and buckets; the adapted config loads back."""
    import keras

    rng = np.random.default_rng(0)
    x20 = rng.uniform(0, 10, 20).astype("float32")
    big = rng.normal(size=(1000, 3)).astype("float32")
    col = big[:, 0]
    data_k, data_j, num_bins, eps = {
        "20_values": (x20, x20, 4, 0.01),
        "2d_eps": (big, big, 7, 0.01),
        "coarse_eps": (big, big, 5, 0.3),
        "dataset": (
            tf.data.Dataset.from_tensor_slices(col).batch(64),
            jaxtape.data.Dataset.from_tensor_slices(col).batch(64),
            6,
            0.05,
        ),
        "list": ([big[:300], big[300:]], [big[:300], big[300:]], 4, 0.01),
    }[case]
    theirs = keras.layers.Discretization(num_bins=num_bins, epsilon=eps)
    theirs.adapt(data_k)
    ours = jl.Discretization(num_bins=num_bins, epsilon=eps)
    ours.adapt(data_j)
    assert ours.bin_boundaries == theirs.bin_boundaries
    np.testing.assert_array_equal(ours(big).numpy(), np.asarray(theirs(big)))
    assert _config(ours) == _config(theirs)
    again = jl.Discretization.from_config(theirs.get_config())
    assert again.bin_boundaries == theirs.bin_boundaries
    if case == "20_values":  # inside jaxtape.function too
        f = jaxtape.function(lambda x: ours(x))
        np.testing.assert_array_equal(f(big).numpy(), np.asarray(theirs(big)))


def test_optimizer_default_names_are_numbered_as_keras(tf):
    """Keras numbers automatic optimizer names (`adam`, `adam_1`);
    `clear_session` starts again; an explicit name is kept."""
    import keras

    names = []
    for m in (keras, jaxtape.keras):
        m.backend.clear_session()
        names.append(
            [
                m.optimizers.Adam().name,
                m.optimizers.Adam().name,
                m.optimizers.SGD().name,
                m.optimizers.Adam(name="adam").name,
                m.optimizers.Adam().name,
            ]
        )
    assert names[0] == names[1]


def _with_constraints(m):
    """Layers with NonNeg constraints and L2 regularizers (LayerNormalization's
    on `beta` only: regularized weights once came first in `weights`)."""
    reg, con = {"l2": 0.1}, "non_neg"
    x3 = np.linspace(-1, 1, 2 * 4 * 6, dtype="float32").reshape(2, 4, 6)
    ids = np.array([[1, 2, 0, 3]])
    layers = [
        (m.layers.Embedding(5, 3, embeddings_constraint=con,
                            embeddings_regularizer=m.regularizers.L2(**reg),
                            activity_regularizer=m.regularizers.L2(**reg)), ids),
        (m.layers.LayerNormalization(gamma_constraint=con, beta_constraint=con,
                                     beta_regularizer=m.regularizers.L2(**reg)), x3),
        (m.layers.SeparableConv1D(2, 2, pointwise_constraint=con,
                                  depthwise_constraint=con, bias_constraint=con), x3),
        (m.layers.EinsumDense("abc,cd->abd", (4, 2), bias_axes="d",
                              kernel_constraint=con,
                              activity_regularizer=m.regularizers.L2(**reg)), x3),
    ]  # fmt: skip
    return layers


def test_constraints_and_regularizers_apply_as_keras(tf):
    """The arguments the configs list do what Keras's do: constraints project
    each weight after an optimizer update; regularizers add the same losses."""
    import keras

    theirs, ours = _with_constraints(keras), _with_constraints(jaxtape.keras)
    for (k_layer, x), (j_layer, _) in zip(theirs, ours):
        k_layer(x)
        j_layer(x)
        weights = [w - 0.5 for w in k_layer.get_weights()]  # some negative
        k_layer.set_weights(weights)
        j_layer.set_weights(weights)
        for v in k_layer.trainable_weights:  # (what Keras's optimizers do after
            if v.constraint is not None:  # an update, without tracing one)
                v.assign(v.constraint(v))
        zeros = [np.zeros(w.shape, "float32") for w in j_layer.trainable_weights]
        opt = jaxtape.keras.optimizers.SGD(0.1)
        opt.apply_gradients(zip(zeros, j_layer.trainable_weights))
        for k_w, j_w in zip(k_layer.get_weights(), j_layer.get_weights()):
            np.testing.assert_allclose(j_w, k_w, rtol=1e-6, atol=1e-6)
        k_layer(x)
        j_layer(x)
        np.testing.assert_allclose(
            [float(np.asarray(v)) for v in j_layer.losses],
            [float(np.asarray(v)) for v in k_layer.losses],
            rtol=1e-5,
        )


def test_embedding_weights_and_constraint_inside_function(tf):
    """Embedding(weights=...) starts from those weights (Keras's); inside
    `jaxtape.function` a step's update is projected by the constraint."""
    w = np.arange(12, dtype="float32").reshape(4, 3) - 6.0
    layer = jl.Embedding(4, 3, weights=w, embeddings_constraint="non_neg")
    np.testing.assert_array_equal(layer.get_weights()[0], w)
    opt = jaxtape.keras.optimizers.SGD(1.0)

    @jaxtape.function
    def step(ids):
        with jaxtape.GradientTape() as tape:
            loss = jaxtape.reduce_sum(layer(ids))
        grads = tape.gradient(loss, layer.trainable_weights)
        opt.apply_gradients(zip(grads, layer.trainable_weights))
        return loss

    step(np.array([[0, 1]]))
    expected = w.copy()
    expected[[0, 1]] -= 1.0
    np.testing.assert_array_equal(layer.get_weights()[0], np.maximum(expected, 0))
