"""Every tf.keras layer against tf.keras, one row per layer class (issue 16).

Each row puts the layer in a functional model (its `Input`s -> the layer)
built in tf.keras and in jaxtape, and checks:

- files both ways: tf.keras's `.keras` file loads into jaxtape (weights
  by Keras's paths, nested RNN cells and attention included) and jaxtape's
  `.weights.h5` and `.keras` files load into tf.keras (and tf.keras's
  `.weights.h5` into jaxtape), each giving the same outputs;
- parity: with the weights copied across by that file, the same input gives
  the same outputs in inference and (deterministic layers) training mode and
  the same input and weight gradients (ours inside `jaxtape.function`);
- `compute_output_shape` equals tf.keras's.

Random layers compare inference mode (their draws are checked by statistics
in their own tests). Adding a layer is one line.
"""

from __future__ import annotations

import re

import numpy as np
import pytest

import jaxtape as jt


def _bn(weights):
    """A positive moving variance (BatchNormalization's last weight)."""
    weights[-1] = np.abs(weights[-1]) + 0.5
    return weights


def _adapted(weights):
    """Normalization's adapted state: mean, a positive variance, a count."""
    weights[1] = np.abs(weights[1]) + 0.5
    weights[2] = np.asarray(7, weights[2].dtype).reshape(weights[2].shape)
    return weights


def _double(x):
    return x * 2.0 + 1.0


# Layers whose input and weight gradients against tf.keras are compared in
# their families' parity tables (tests/test_keras_layers.py PARITY,
# test_keras_parity.py, test_keras_recurrent.py, test_keras_attention.py,
# test_keras_conv_lstm.py): here their outputs and files only (each gradient
# check costs a compile; this file stays within CI's time).
GRADIENTS_ELSEWHERE = {
    *("Identity", "Lambda", "Masking", "LeakyReLU", "PReLU", "ELU", "ReLU"),
    *("ThresholdedReLU", "Softmax", "Dense", "Embedding", "EinsumDense"),
    *("BatchNormalization", "LayerNormalization", "GroupNormalization"),
    *("UnitNormalization", "RMSNormalization", "ActivityRegularization"),
    *("RepeatVector", "Permute", "Flatten", "UpSampling1D", "UpSampling2D"),
    *("UpSampling3D", "ZeroPadding1D", "ZeroPadding2D", "ZeroPadding3D"),
    *("Cropping1D", "Cropping2D", "Cropping3D", "MaxPooling2D", "MaxPooling3D"),
    *("AveragePooling2D", "AveragePooling3D", "GlobalAveragePooling2D"),
    *("GlobalAveragePooling3D", "Subtract", "Average", "Maximum", "Minimum"),
    *("Concatenate", "Dot", "Conv1D", "Conv2D", "Conv3D", "Conv1DTranspose"),
    *("Conv2DTranspose", "Conv3DTranspose", "DepthwiseConv1D", "DepthwiseConv2D"),
    *("SeparableConv1D", "SeparableConv2D", "SimpleRNN", "LSTM", "GRU"),
    *("Bidirectional", "MultiHeadAttention", "GroupQueryAttention"),
    *("Attention", "AdditiveAttention", "ConvLSTM1D", "ConvLSTM2D", "ConvLSTM3D"),
}


class R:
    """A row: `build(layers_module)` gives the layer; `shape` is the input's
    shape (a list: several inputs); options: `dtype` of the inputs, `train`
    (compare training mode too), `grads`, `fix` (weights fixer), `call`
    (how the layer takes its inputs: "list" or "args"), `data` (explicit
    input arrays), `tol`, `out_shape` (check compute_output_shape)."""

    def __init__(self, name, build, shape, **opts):
        self.name, self.build, self.shape = name, build, shape
        self.dtype = opts.pop("dtype", "float32")
        self.train = opts.pop("train", True)
        self.grads = opts.pop("grads", name not in GRADIENTS_ELSEWHERE)
        self.fix = opts.pop("fix", None)
        self.call = opts.pop("call", "list")
        self.data = opts.pop("data", None)
        self.tol = opts.pop("tol", 1e-4)
        self.out_shape = opts.pop("out_shape", True)
        self.custom = opts.pop("custom", None)
        self.reload = opts.pop("reload", False)
        self.xfail = opts.pop("xfail", None)
        self.tf_loads = opts.pop("tf_loads", True)
        self.id = opts.pop("id", name)
        assert not opts, opts

    def __repr__(self):
        return self.id

    def param(self):
        """The row as a test parameter; a known gap is a strict xfail."""
        marks = (
            [pytest.mark.xfail(reason=self.xfail, strict=True)] if self.xfail else []
        )
        return pytest.param(self, marks=marks, id=self.id)


# Random layers: inference mode only, where they are the identity (or a fixed
# crop); their gradients there are the identity's (checked for Dropout in
# tests/test_keras_layers.py), so not taken again here.
RANDOM = dict(train=False, grads=False)
_IMAGES = np.random.default_rng(5).random((2, 8, 8, 3)).astype(np.float32)
IMG = (2, 8, 8, 3)
ROWS = [
    # core
    R("Dense", lambda L: L.Dense(3, activation="tanh"), (2, 4)),
    R(
        "EinsumDense",
        lambda L: L.EinsumDense("abc,cd->abd", (3, 5), bias_axes="d"),
        (2, 3, 4),
    ),
    R("Embedding", lambda L: L.Embedding(10, 3), (2, 5), dtype="int32"),
    R(
        "ReversibleEmbedding",
        lambda L: L.ReversibleEmbedding(10, 3, tie_weights=False),
        (2, 5),
        dtype="int32",
    ),
    R("Identity", lambda L: L.Identity(), (2, 3)),
    R("Masking", lambda L: L.Masking(0.0), (2, 3, 2)),
    R("Activation", lambda L: L.Activation("gelu"), (2, 5)),
    R("ELU", lambda L: L.ELU(0.5), (2, 5)),
    R("LeakyReLU", lambda L: L.LeakyReLU(0.2), (2, 5)),
    R("PReLU", lambda L: L.PReLU(shared_axes=[1]), (2, 3, 4)),
    R("ReLU", lambda L: L.ReLU(1.5, 0.2, 0.3), (2, 5)),
    R("Softmax", lambda L: L.Softmax(axis=1), (2, 3, 4)),
    R("ThresholdedReLU", lambda L: L.ThresholdedReLU(0.3), (2, 5)),
    # convolution
    R("Conv1D", lambda L: L.Conv1D(4, 3, groups=2, dilation_rate=2), (2, 9, 4)),
    R("Conv2D", lambda L: L.Conv2D(3, 2, strides=2, padding="same"), (2, 5, 5, 2)),
    R("Conv3D", lambda L: L.Conv3D(2, 2), (1, 3, 4, 3, 2)),
    R("Conv1DTranspose", lambda L: L.Conv1DTranspose(2, 3, strides=2), (2, 4, 3)),
    R(
        "Conv2DTranspose",
        lambda L: L.Conv2DTranspose(2, 3, strides=2, padding="same"),
        (2, 3, 4, 2),
    ),
    R("Conv3DTranspose", lambda L: L.Conv3DTranspose(2, 2, strides=2), (1, 2, 3, 2, 2)),
    R("DepthwiseConv1D", lambda L: L.DepthwiseConv1D(3, depth_multiplier=2), (2, 6, 3)),
    R("DepthwiseConv2D", lambda L: L.DepthwiseConv2D(2), (2, 5, 5, 3)),
    R("SeparableConv1D", lambda L: L.SeparableConv1D(4, 3), (2, 7, 2)),
    R("SeparableConv2D", lambda L: L.SeparableConv2D(3, 2), (2, 5, 5, 2)),
    # pooling
    R("MaxPooling1D", lambda L: L.MaxPooling1D(2), (2, 6, 3)),
    R("MaxPooling2D", lambda L: L.MaxPooling2D(2, padding="same"), (2, 5, 5, 3)),
    R("MaxPooling3D", lambda L: L.MaxPooling3D(2), (1, 4, 4, 2, 2)),
    R("AveragePooling1D", lambda L: L.AveragePooling1D(3, 2, "same"), (2, 7, 3)),
    R("AveragePooling2D", lambda L: L.AveragePooling2D(2), (2, 4, 6, 3)),
    R("AveragePooling3D", lambda L: L.AveragePooling3D(2), (1, 4, 2, 4, 2)),
    R("GlobalMaxPooling1D", lambda L: L.GlobalMaxPooling1D(), (2, 5, 3)),
    R("GlobalMaxPooling2D", lambda L: L.GlobalMaxPooling2D(keepdims=True), IMG),
    R("GlobalMaxPooling3D", lambda L: L.GlobalMaxPooling3D(), (1, 2, 3, 2, 2)),
    R("GlobalAveragePooling1D", lambda L: L.GlobalAveragePooling1D(), (2, 5, 3)),
    R("GlobalAveragePooling2D", lambda L: L.GlobalAveragePooling2D(), IMG),
    R("GlobalAveragePooling3D", lambda L: L.GlobalAveragePooling3D(), (1, 2, 3, 2, 2)),
    R("AdaptiveMaxPooling1D", lambda L: L.AdaptiveMaxPooling1D(3), (2, 7, 2)),
    R("AdaptiveMaxPooling2D", lambda L: L.AdaptiveMaxPooling2D((2, 3)), (2, 5, 7, 2)),
    R("AdaptiveMaxPooling3D", lambda L: L.AdaptiveMaxPooling3D(2), (1, 4, 5, 3, 2)),
    R("AdaptiveAveragePooling1D", lambda L: L.AdaptiveAveragePooling1D(3), (2, 7, 2)),
    R(
        "AdaptiveAveragePooling2D",
        lambda L: L.AdaptiveAveragePooling2D((3, 2)),
        (2, 5, 7, 2),
    ),
    R(
        "AdaptiveAveragePooling3D",
        lambda L: L.AdaptiveAveragePooling3D(2),
        (1, 4, 5, 3, 2),
    ),
    # reshaping
    R("Flatten", lambda L: L.Flatten(), (2, 3, 4)),
    R("Reshape", lambda L: L.Reshape((2, -1)), (2, 3, 4)),
    R("RepeatVector", lambda L: L.RepeatVector(3), (2, 4)),
    R("Permute", lambda L: L.Permute((2, 1)), (2, 3, 4)),
    R("UpSampling1D", lambda L: L.UpSampling1D(2), (2, 3, 2)),
    R("UpSampling2D", lambda L: L.UpSampling2D(2, interpolation="bilinear"), IMG),
    R("UpSampling3D", lambda L: L.UpSampling3D(2), (1, 2, 2, 2, 1)),
    R("ZeroPadding1D", lambda L: L.ZeroPadding1D(2), (2, 3, 2)),
    R("ZeroPadding2D", lambda L: L.ZeroPadding2D((1, 2)), (2, 3, 3, 2)),
    R("ZeroPadding3D", lambda L: L.ZeroPadding3D(1), (1, 2, 2, 2, 1)),
    R("Cropping1D", lambda L: L.Cropping1D((1, 2)), (2, 5, 2)),
    R("Cropping2D", lambda L: L.Cropping2D(((1, 0), (0, 2))), (2, 5, 5, 2)),
    R("Cropping3D", lambda L: L.Cropping3D(1), (1, 4, 4, 4, 1)),
    # merging
    R("Add", lambda L: L.Add(), [(2, 3), (2, 3)]),
    R("Subtract", lambda L: L.Subtract(), [(2, 3), (2, 3)]),
    R("Multiply", lambda L: L.Multiply(), [(2, 3), (2, 3)]),
    R("Average", lambda L: L.Average(), [(2, 3), (2, 3), (2, 3)]),
    R("Maximum", lambda L: L.Maximum(), [(2, 3), (2, 3)]),
    R("Minimum", lambda L: L.Minimum(), [(2, 3), (2, 3)]),
    R("Concatenate", lambda L: L.Concatenate(axis=1), [(2, 2, 3), (2, 1, 3)]),
    R("Dot", lambda L: L.Dot(axes=(1, 2), normalize=True), [(2, 3, 4), (2, 5, 3)]),
    # normalization
    R("BatchNormalization", lambda L: L.BatchNormalization(), (4, 3), fix=_bn),
    R("LayerNormalization", lambda L: L.LayerNormalization(), (2, 5)),
    R("GroupNormalization", lambda L: L.GroupNormalization(2), (2, 3, 4)),
    R("UnitNormalization", lambda L: L.UnitNormalization(), (2, 4)),
    R("RMSNormalization", lambda L: L.RMSNormalization(), (2, 3, 4)),
    R(
        "SpectralNormalization",
        lambda L: L.SpectralNormalization(L.Dense(3)),
        (2, 4),
        train=False,  # training mode runs a power iteration with a random vector
    ),
    # regularization (random in training only)
    R("Dropout", lambda L: L.Dropout(0.3), (2, 5), **RANDOM),
    R("SpatialDropout1D", lambda L: L.SpatialDropout1D(0.3), (2, 4, 3), **RANDOM),
    R("SpatialDropout2D", lambda L: L.SpatialDropout2D(0.3), IMG, **RANDOM),
    R("SpatialDropout3D", lambda L: L.SpatialDropout3D(0.3), (1, 2, 2, 2, 2), **RANDOM),
    R("GaussianNoise", lambda L: L.GaussianNoise(0.3), (2, 5), **RANDOM),
    R("GaussianDropout", lambda L: L.GaussianDropout(0.3), (2, 5), **RANDOM),
    R("AlphaDropout", lambda L: L.AlphaDropout(0.3), (2, 5), **RANDOM),
    R("ActivityRegularization", lambda L: L.ActivityRegularization(0.1, 0.2), (2, 5)),
    # recurrent (nested cells included)
    R("SimpleRNN", lambda L: L.SimpleRNN(3, return_sequences=True), (2, 4, 3)),
    R("LSTM", lambda L: L.LSTM(3, return_state=True), (2, 4, 3)),
    R("GRU", lambda L: L.GRU(3, go_backwards=True), (2, 4, 3)),
    R("SimpleRNNCell", lambda L: L.RNN(L.SimpleRNNCell(3)), (2, 4, 3)),
    R("LSTMCell", lambda L: L.RNN(L.LSTMCell(3), return_sequences=True), (2, 4, 3)),
    R("GRUCell", lambda L: L.RNN(L.GRUCell(3, reset_after=False)), (2, 4, 3)),
    R(
        "StackedRNNCells",
        lambda L: L.RNN(L.StackedRNNCells([L.LSTMCell(3), L.GRUCell(2)])),
        (2, 4, 3),
    ),
    R("RNN", lambda L: L.RNN(L.SimpleRNNCell(2), unroll=True), (2, 3, 3)),
    R(
        "Bidirectional",
        lambda L: L.Bidirectional(L.LSTM(3, return_sequences=True)),
        (2, 4, 3),
    ),
    R("TimeDistributed", lambda L: L.TimeDistributed(L.Dense(3)), (2, 4, 3)),
    R("ConvLSTM1D", lambda L: L.ConvLSTM1D(2, 3), (1, 3, 5, 2)),
    R("ConvLSTM2D", lambda L: L.ConvLSTM2D(2, 2, padding="same"), (1, 2, 4, 4, 2)),
    R("ConvLSTM3D", lambda L: L.ConvLSTM3D(2, 2), (1, 2, 3, 3, 3, 1)),
    # attention
    R(
        "MultiHeadAttention",
        lambda L: L.MultiHeadAttention(2, 4, value_dim=3),
        [(2, 5, 8), (2, 4, 6)],
        call="args",
    ),
    R(
        "GroupQueryAttention",
        lambda L: L.GroupQueryAttention(4, 4, 2),
        [(2, 5, 8), (2, 4, 8)],
        call="args",
    ),
    R("Attention", lambda L: L.Attention(use_scale=True), [(2, 5, 4), (2, 3, 4)]),
    R("AdditiveAttention", lambda L: L.AdditiveAttention(), [(2, 5, 4), (2, 3, 4)]),
    # masks carried from layer to layer, as Keras (a file's model too)
    R(
        "Embedding",
        lambda L: [L.Embedding(10, 3, mask_zero=True), L.LSTM(2)],
        (2, 5),
        dtype="int32",
        data=[np.array([[3, 1, 0, 0, 0], [4, 0, 0, 0, 0]], np.int32)],
        id="Embedding-mask_zero-LSTM",
        out_shape=False,
    ),
    R(
        "Masking",
        lambda L: [L.Masking(0.0), L.GRU(2, return_sequences=True)],
        (2, 4, 3),
        data=[np.array([[[1, 2, 3], [0, 0, 0], [4, 5, 6], [0, 0, 0]]] * 2, "f")],
        id="Masking-GRU",
        out_shape=False,
    ),
    R(
        "Embedding",
        lambda L: [L.Embedding(10, 3, mask_zero=True), L.GlobalAveragePooling1D()],
        (2, 5),
        dtype="int32",
        data=[np.array([[3, 1, 0, 0, 0], [4, 2, 2, 0, 0]], np.int32)],
        id="Embedding-mask_zero-GlobalAveragePooling1D",
        out_shape=False,
    ),
    # preprocessing
    # (tf.keras applies set_weights to an adapted state only at finalize_state,
    # which loading runs: the reference is tf.keras's model reloaded)
    R("Normalization", lambda L: L.Normalization(), (2, 3), fix=_adapted, reload=True),
    R(
        "Normalization",
        lambda L: L.Normalization(mean=[1.0, 2.0, 3.0], variance=[2.0, 3.0, 4.0]),
        (2, 3),
        id="Normalization-given",
    ),
    R("Rescaling", lambda L: L.Rescaling(1 / 255, offset=-1.0), IMG),
    R("Resizing", lambda L: L.Resizing(5, 4), IMG),
    R("CenterCrop", lambda L: L.CenterCrop(4, 5), IMG),
    R(
        "CategoryEncoding",
        lambda L: L.CategoryEncoding(6, "multi_hot"),
        (2, 3),
        dtype="int32",
    ),
    R(
        "Discretization",
        lambda L: L.Discretization([-0.5, 0.0, 0.7]),
        (2, 4),
        grads=False,
    ),
    R("Hashing", lambda L: L.Hashing(5), (2, 3), dtype="int32"),
    R(
        "Hashing",
        lambda L: L.Hashing(5, salt=7),
        (2, 3),
        dtype="str",
        id="Hashing-str",
    ),
    R(
        "IntegerLookup",
        lambda L: L.IntegerLookup(vocabulary=[3, 1, 7]),
        (2, 4),
        dtype="int32",
    ),
    R(
        "StringLookup",
        lambda L: L.StringLookup(vocabulary=["b", "a", "c"], output_mode="one_hot"),
        (2, 3),
        dtype="str",
    ),
    R(
        "TextVectorization",
        lambda L: L.TextVectorization(
            vocabulary=["the", "cat", "sat"], output_sequence_length=4
        ),
        (2,),
        data=[np.array(["the cat sat", "a Cat, the mat"])],
    ),
    R(
        "HashedCrossing",
        lambda L: L.HashedCrossing(5),
        [(2,), (2,)],
        dtype="int32",
        call="tuple",
    ),
    R(
        "MelSpectrogram",
        lambda L: L.MelSpectrogram(fft_length=64, sequence_stride=16, num_mel_bins=8),
        (2, 256),
    ),
    R(
        "STFTSpectrogram",
        lambda L: L.STFTSpectrogram(frame_length=32, frame_step=8, fft_length=32),
        (2, 128, 1),
    ),
    # image augmentation: the identity (or a fixed crop) in inference mode
    R("RandomFlip", lambda L: L.RandomFlip(), IMG, **RANDOM),
    R("RandomRotation", lambda L: L.RandomRotation(0.2), IMG, **RANDOM),
    R("RandomZoom", lambda L: L.RandomZoom(0.2), IMG, **RANDOM),
    R("RandomTranslation", lambda L: L.RandomTranslation(0.1, 0.2), IMG, **RANDOM),
    R("RandomCrop", lambda L: L.RandomCrop(5, 6), IMG, **RANDOM),
    R("RandomContrast", lambda L: L.RandomContrast(0.3), IMG, **RANDOM),
    R("RandomBrightness", lambda L: L.RandomBrightness(0.2), IMG, **RANDOM),
    R("RandomHeight", lambda L: L.RandomHeight(0.2), IMG, **RANDOM),
    R("RandomWidth", lambda L: L.RandomWidth(0.2), IMG, **RANDOM),
    R("RandomGrayscale", lambda L: L.RandomGrayscale(0.5), IMG, **RANDOM),
    R("RandomHue", lambda L: L.RandomHue(0.2, (0, 1)), IMG, **RANDOM),
    R("RandomSaturation", lambda L: L.RandomSaturation(0.3), IMG, **RANDOM),
    R("RandomSharpness", lambda L: L.RandomSharpness(0.3), IMG, **RANDOM),
    # (tf.keras cannot load its own RandomShear: its saved x_factor range
    # fails its own check)
    R("RandomShear", lambda L: L.RandomShear(0.2, 0.1), IMG, tf_loads=False, **RANDOM),
    R("RandomInvert", lambda L: L.RandomInvert(0.5, (0, 1)), IMG, **RANDOM),
    R("RandomPosterization", lambda L: L.RandomPosterization(3, (0, 1)), IMG, **RANDOM),
    R(
        "RandomColorDegeneration",
        lambda L: L.RandomColorDegeneration(0.3),
        IMG,
        **RANDOM,
    ),
    R(
        "RandomColorJitter",
        lambda L: L.RandomColorJitter((0, 1), brightness_factor=0.2),
        IMG,
        **RANDOM,
    ),
    R("RandomErasing", lambda L: L.RandomErasing(0.5), IMG, **RANDOM),
    R("RandomGaussianBlur", lambda L: L.RandomGaussianBlur(0.5, 3), IMG, **RANDOM),
    R("RandomPerspective", lambda L: L.RandomPerspective(0.5, 0.5), IMG, **RANDOM),
    R(
        "RandomElasticTransform",
        lambda L: L.RandomElasticTransform(0.5, 0.2),
        IMG,
        **RANDOM,
    ),
    R("Solarization", lambda L: L.Solarization(0.2, 0.3, (0, 1)), IMG, **RANDOM),
    R("MixUp", lambda L: L.MixUp(0.4), IMG, **RANDOM),
    R("CutMix", lambda L: L.CutMix(0.5), IMG, **RANDOM),
    R("AugMix", lambda L: L.AugMix((0, 1), num_chains=2), IMG, **RANDOM),
    R("RandAugment", lambda L: L.RandAugment((0, 1), num_ops=2), IMG, **RANDOM),
    R(
        "Pipeline",
        lambda L: L.Pipeline([L.RandomFlip(), L.Rescaling(2.0)]),
        IMG,
        out_shape=False,  # (tf.keras's Pipeline has no compute_output_shape)
        **RANDOM,
    ),
    R("AutoContrast", lambda L: L.AutoContrast((0, 1)), IMG, data=[_IMAGES]),
    R(
        "ContrastLimitedAdaptiveHistogramEqualization",
        lambda L: L.ContrastLimitedAdaptiveHistogramEqualization(
            (0, 1), tile_grid_size=(2, 2)
        ),
        IMG,
        data=[_IMAGES],
        grads=False,
    ),
    # functions as layers
    R("Lambda", lambda L: L.Lambda(_double), (2, 3), custom={"_double": _double}),
    R(
        "Lambda",
        lambda L: L.Lambda(lambda x: x * 3.0 - 1.0, output_shape=(3,)),
        (2, 3),
        id="Lambda-lambda",
    ),
]

# Layers of tf.keras.layers without a row here, and why.
ELSEWHERE = {
    "Input": "a function; every row's model starts with it",
    "InputLayer": "every row's model holds one",
    "InputSpec": "not a layer (tests/test_keras_layers.py::test_input_spec_checks)",
    "Layer": "the base class; every row is one (subclass files: test_keras_saving)",
    "Wrapper": "abstract base of TimeDistributed/Bidirectional (their rows)",
    "TFSMLayer": "needs a SavedModel (tests/test_tfsm_layer.py)",
    "TorchModuleWrapper": "needs PyTorch; both refuse without it (test_keras_layers)",
    "JaxLayer": "tf.keras has it on the JAX backend only (test_keras_kit_more)",
    "FlaxLayer": "tf.keras has it on the JAX backend only (test_keras_kit_more)",
    "MaxNumBoundingBoxes": "takes bounding-box dicts (tests/test_bounding_boxes.py)",
    "Equalization": "tf.keras's symbolic call of it makes a cycle: no tf.keras model "
    "holds it (tests/test_keras_augment_more.py)",
}


@pytest.fixture(autouse=True, scope="module")
def _names_start_again(tf):
    """Afterwards automatic layer names start again in both: this module
    builds more tf.keras layers than jaxtape ones (ours come from files), and
    later tests compare auto-numbered weight paths."""
    yield
    tf.keras.backend.clear_session(free_memory=False)
    jt.keras.backend.clear_session()


def _inputs(row, rng):
    if row.data is not None:
        return [np.asarray(a) for a in row.data]
    shapes = row.shape if isinstance(row.shape, list) else [row.shape]
    if row.dtype == "int32":
        return [rng.integers(0, 10, s).astype(np.int32) for s in shapes]
    if row.dtype == "str":
        return [rng.choice(np.array(["a", "b", "c", "zz"]), s) for s in shapes]
    return [rng.normal(size=s).astype(np.float32) for s in shapes]


def _dtype(x):
    return "string" if x.dtype.kind == "U" else str(x.dtype)


def _model(m, row, xs):
    inputs = [m.keras.Input(x.shape[1:], dtype=_dtype(x)) for x in xs]
    layer = row.build(m.keras.layers)
    if isinstance(layer, list):  # a chain (masks carried from layer to layer)
        out = inputs[0]
        for each in layer:
            out = each(out)
        return m.keras.Model(inputs[0], out)
    if row.call == "args":
        out = layer(*inputs)
    elif row.call == "tuple":
        out = layer(tuple(inputs))
    else:
        out = layer(inputs if len(inputs) > 1 else inputs[0])
    return m.keras.Model(inputs if len(inputs) > 1 else inputs[0], out)


def _outs(y):
    return [np.asarray(t) for t in (y if isinstance(y, (list, tuple)) else [y])]


def _close(ours, theirs, tol, what):
    a, b = _outs(ours), _outs(theirs)
    assert len(a) == len(b), what
    for u, v in zip(a, b):
        assert u.shape == v.shape, (what, u.shape, v.shape)
        np.testing.assert_allclose(u, v, rtol=tol, atol=tol / 10, err_msg=what)


def _new_weights(model, rng, fix):
    weights = [rng.normal(size=w.shape).astype(w.dtype) for w in model.get_weights()]
    return fix(weights) if fix is not None and weights else weights


def _gradients(m, model, xs, float_inputs, compiled=False):
    def grads(*xs):
        with m.GradientTape() as tape:
            if float_inputs:
                tape.watch(list(xs))
            y = model(list(xs) if len(xs) > 1 else xs[0], training=False)
            total = sum(
                m.reduce_sum(m.sin(o))
                for o in (y if isinstance(y, (list, tuple)) else [y])
            )
        sources = (list(xs) if float_inputs else []) + model.trainable_weights
        return tape.gradient(total, sources)

    fn = m.function(grads) if compiled else grads
    return fn(*[m.constant(x) for x in xs])


def _weights_files_both_ways(tf, ours, theirs, feed, row, rng, tmp_path):
    """tf.keras's `.weights.h5` into jaxtape, then jaxtape's into tf.keras
    (fresh weights each way), the same outputs."""
    # tf.keras's weights file into jaxtape
    ours.set_weights(_new_weights(ours, rng, row.fix))
    theirs.save_weights(tmp_path / "t.weights.h5")
    ours.load_weights(tmp_path / "t.weights.h5")
    _close(
        ours(feed, training=False),
        theirs(feed, training=False),
        row.tol,
        "tf.keras .weights.h5 -> jaxtape",
    )
    # jaxtape's files into tf.keras
    ours.set_weights(_new_weights(ours, rng, row.fix))
    ours.save_weights(tmp_path / "j.weights.h5")
    theirs.load_weights(tmp_path / "j.weights.h5")
    _close(
        ours(feed, training=False),
        theirs(feed, training=False),
        row.tol,
        "jaxtape .weights.h5 -> tf.keras",
    )


@pytest.mark.parametrize("row", [r.param() for r in ROWS])
def test_files_both_ways_and_parity(tf, tmp_path, row):
    rng = np.random.default_rng(0)
    xs = _inputs(row, rng)
    feed = xs if len(xs) > 1 else xs[0]
    theirs = _model(tf, row, xs)
    theirs.set_weights(_new_weights(theirs, rng, row.fix))
    theirs.save(tmp_path / "t.keras")
    if row.reload:
        theirs = tf.keras.models.load_model(tmp_path / "t.keras")
    ours = jt.keras.models.load_model(
        tmp_path / "t.keras", custom_objects=row.custom, safe_mode=False
    )
    # the weights came across by Keras's paths
    assert [v.path for v in ours.weights] == [v.path for v in theirs.weights]
    for a, b in zip(ours.get_weights(), theirs.get_weights(), strict=True):
        np.testing.assert_array_equal(a, b)
    modes = (False, True) if row.train else (False,)
    for training in modes:
        _close(
            ours(feed, training=training),
            theirs(feed, training=training),
            row.tol,
            f"outputs, training={training}",
        )
    floating = all(o.dtype.kind == "f" for o in _outs(theirs(feed, training=False)))
    if row.grads and floating:
        floats = row.dtype == "float32"
        gt = _gradients(tf, theirs, xs, floats)
        gj = _gradients(jt, ours, xs, floats, compiled=True)
        assert len(gj) == len(gt)
        for i, (a, b) in enumerate(zip(gj, gt)):
            assert (a is None) == (b is None), i
            if a is not None:
                a = np.asarray(jt.convert_to_tensor(a))
                b = np.asarray(tf.convert_to_tensor(b))
                np.testing.assert_allclose(
                    a, b, rtol=row.tol * 10, atol=row.tol, err_msg=f"gradient {i}"
                )
    if theirs.weights:  # (a weightless layer's weights file is empty)
        _weights_files_both_ways(tf, ours, theirs, feed, row, rng, tmp_path)
    ours.save(tmp_path / "j.keras")
    if not row.tf_loads:
        return
    back = tf.keras.models.load_model(
        tmp_path / "j.keras", custom_objects=row.custom, safe_mode=False
    )
    _close(
        ours(feed, training=False),
        back(feed, training=False),
        row.tol,
        "jaxtape .keras -> tf.keras",
    )


def _tuples(shape):
    """A shape or structure of shapes with tuples for lists (Keras returns
    either, layer by layer)."""
    if isinstance(shape, dict):
        return {k: _tuples(v) for k, v in shape.items()}
    if isinstance(shape, (list, tuple)):
        return tuple(_tuples(d) for d in shape)
    return shape


@pytest.mark.parametrize("row", [r for r in ROWS if r.out_shape], ids=repr)
def test_compute_output_shape_matches_tf_keras(tf, row):
    shapes = row.shape if isinstance(row.shape, list) else [row.shape]
    shapes = [(None, *s[1:]) for s in shapes]
    results = []
    for m in (tf, jt):
        layer = row.build(m.keras.layers)
        try:
            if row.call == "args":
                shape = layer.compute_output_shape(*shapes)
            else:
                shape = layer.compute_output_shape(
                    shapes if len(shapes) > 1 else shapes[0]
                )
            results.append(_tuples(shape))
        except NotImplementedError:  # (tf.keras's Pipeline has none)
            results.append(NotImplementedError)
    assert results[1] == results[0]


# Bad arguments and bad inputs: (name, constructor arguments, input shapes or
# None). The same exception type as tf.keras and Keras's text ("... Received:
# ..."), at construction or at the first call; ours may add a hint after it.
ERRORS = [
    ("Dense", dict(units=0), None),
    ("Dense", dict(units=3), (2,)),
    ("Embedding", dict(input_dim=0, output_dim=2), None),
    ("Embedding", dict(input_dim=3, output_dim=2.5), None),
    ("Conv2D", dict(filters=0, kernel_size=3), None),
    ("Conv2D", dict(filters=4, kernel_size=3, groups=3), None),
    ("Conv2D", dict(filters=4, kernel_size=3, groups=2), (1, 5, 5, 3)),
    ("Conv2D", dict(filters=2, kernel_size=4), (1, 3, 3, 1)),
    ("Conv2D", dict(filters=2, kernel_size=3), (2, 5, 5)),
    ("Conv1D", dict(filters=2, kernel_size=2, padding="bad"), None),
    ("Conv3D", dict(filters=2, kernel_size=2, padding="causal"), None),
    ("Conv1D", dict(filters=2, kernel_size=2, strides=2, dilation_rate=2), None),
    (
        "Conv2DTranspose",
        dict(filters=2, kernel_size=3, strides=2, output_padding=2),
        None,
    ),
    ("DepthwiseConv2D", dict(kernel_size=3, depth_multiplier=0), None),
    ("SeparableConv2D", dict(filters=2, kernel_size=(1, 2, 3)), None),
    ("MaxPooling2D", dict(pool_size=2), (2, 4, 4)),
    ("GlobalAveragePooling2D", {}, (2, 3, 3)),
    ("LSTM", dict(units=3), (2, 3)),
    ("GRU", dict(units=-1), None),
    ("Dropout", dict(rate=1.5), None),
    ("SpatialDropout2D", dict(rate=-0.1), None),
    ("GaussianNoise", dict(stddev=2.0), None),
    ("BatchNormalization", dict(axis=5), (2, 3)),
    ("LayerNormalization", dict(axis=4), (2, 3)),
    ("GroupNormalization", dict(groups=0), None),
    ("GroupNormalization", dict(groups=4), (2, 6)),
    ("UnitNormalization", dict(axis="a"), None),
    ("Reshape", dict(target_shape=(5,)), (2, 3)),
    ("Reshape", dict(target_shape=(4, -1)), (2, 6)),
    ("RepeatVector", dict(n=2.5), None),
    ("RepeatVector", dict(n=2), (2, 3, 4)),
    ("Permute", dict(dims=(1, 3)), None),
    ("Permute", dict(dims=(1, 2)), (2, 3)),
    ("Flatten", dict(data_format="x"), None),
    ("UpSampling1D", dict(size=0), None),
    ("ZeroPadding1D", dict(padding=-1), None),
    ("ZeroPadding2D", dict(padding=(1, 2, 3)), None),
    ("Cropping1D", dict(cropping=(2, 2)), (1, 4, 2)),
    ("Cropping1D", dict(cropping=(1, 1)), (2, 3)),
    ("Cropping2D", dict(cropping=-1), None),
    ("Concatenate", dict(axis=1), [(2, 3), (3, 4)]),
    ("Dot", dict(axes="x"), None),
    ("Dot", dict(axes=(1, 2, 3)), None),
    ("Dot", dict(axes=1), [(2, 3), (2, 4)]),
    ("Subtract", {}, [(2, 3), (2, 3), (2, 3)]),
    ("Add", {}, [(2, 3), (2, 4)]),
    ("LeakyReLU", dict(negative_slope=-1), None),
    ("ReLU", dict(max_value=-1.0), None),
    ("ThresholdedReLU", dict(theta=-1.0), None),
    ("MultiHeadAttention", dict(num_heads=2, key_dim=2, attention_axes="x"), None),
    ("RandomRotation", dict(factor=2.0), None),
    ("CategoryEncoding", dict(num_tokens=3, output_mode="x"), None),
    ("TimeDistributed", dict(layer=3), None),
    ("Bidirectional", dict(layer=3), None),
]


def _message(text: str) -> str:
    """Keras's text of an error: colour codes and Keras-on-TF's call wrapper
    ("Exception encountered when calling X.call(). ... Arguments received
    by ...") removed, whitespace folded, a printed set's items sorted."""
    text = re.sub(r"\x1b\[[0-9;]*m", "", " ".join(text.split()))
    inner = re.search(
        r"Exception encountered when calling \S+\(\)\. (.*?) Arguments received by",
        text,
    )
    text = inner.group(1) if inner else text
    return re.sub(
        r"\{('[^{}]*')\}",
        lambda m: "{" + ", ".join(sorted(m.group(1).split(", "))) + "}",
        text,
    )


def _error(module, name, kwargs, shape):
    try:
        layer = getattr(module.keras.layers, name)(name="probe", **kwargs)
        if isinstance(shape, list):
            layer([np.ones(s, np.float32) for s in shape])
        elif shape is not None:
            layer(np.ones(shape, np.float32))
    except Exception as e:  # noqa: BLE001 (the type and text are compared)
        return type(e), _message(str(e))
    return None, None


@pytest.mark.parametrize(
    "name,kwargs,shape", ERRORS, ids=[f"{r[0]}-{r[1]}-{r[2]}" for r in ERRORS]
)
def test_input_validation_errors_match_tf_keras(tf, name, kwargs, shape):
    theirs_type, theirs = _error(tf, name, kwargs, shape)
    ours_type, ours = _error(jt, name, kwargs, shape)
    assert theirs_type is not None
    assert ours_type is theirs_type, (ours_type, theirs_type, ours)
    assert ours.startswith(theirs), f"\nours:   {ours}\ntheirs: {theirs}"


def test_model_training_argument_overrides_a_recorded_one(tf):
    """A `training=True` given at a layer's symbolic call (Monte Carlo
    dropout, tf.keras's augmentation layers' default) gives way to the
    model's own `training=False`/`predict`, as in Keras."""
    x = np.ones((64, 8), np.float32)
    for m in (tf, jt):
        inputs = m.keras.Input((8,))
        model = m.keras.Model(
            inputs, m.keras.layers.Dropout(0.5)(inputs, training=True)
        )
        np.testing.assert_array_equal(np.asarray(model(x, training=False)), x)
        np.testing.assert_array_equal(model.predict(x, verbose=0), x)
        assert (np.asarray(model(x)) == 0).any()  # (its own training=True)


def test_keras_layers_coverage_against_tf_keras(tf):
    """Prints jaxtape.keras.layers' coverage of tf.keras.layers' public names
    (the issue's bar: >= 95%; today all of them)."""
    theirs = {n for n in dir(tf.keras.layers) if not n.startswith("_")}
    ours = {n for n in dir(jt.keras.layers) if not n.startswith("_")}
    missing = sorted(theirs - ours)
    coverage = 1 - len(missing) / len(theirs)
    print(
        f"tf.keras.layers: {len(theirs) - len(missing)}/{len(theirs)} "
        f"({coverage:.1%}); missing: {missing or 'none'}"
    )
    assert coverage >= 0.95, missing


def test_every_tf_keras_layer_class_has_a_row(tf):
    """Each tf.keras.layers class (aliases once) is a row of the table above
    or named in ELSEWHERE with the test that covers it."""
    covered = {r.name for r in ROWS} | set(ELSEWHERE)
    classes = {}
    for n in dir(tf.keras.layers):
        obj = getattr(tf.keras.layers, n)
        if not n.startswith("_") and (isinstance(obj, type) or n == "Input"):
            classes.setdefault(obj, set()).add(n)
    lacking = sorted(min(names) for names in classes.values() if not names & covered)
    assert not lacking, f"no row for: {lacking}"
