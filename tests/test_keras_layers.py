"""The everyday Keras layers (issue 16), table-driven: each configuration is
one line of the harness table (`check_layer`: shapes, weights, a training
step, config and weights-file round trips) and/or of the parity table
(`check_layer_parity`: tf.keras with the same weights gives the same outputs
in training and inference and the same input and weight gradients)."""

import numpy as np
import pytest
from layer_checks import check_layer, check_layer_parity

import jaxtape as jt

L = jt.keras.layers

# (make, input shape, number of weights)
HARNESS = [
    (lambda: L.MaxPooling3D(), (2, 4, 4, 4, 2), 0),
    (lambda: L.GlobalAveragePooling3D(keepdims=True), (2, 2, 3, 2, 2), 0),
    (lambda: L.Conv3D(2, 2, padding="same"), (2, 3, 4, 4, 2), 2),
    (lambda: L.Conv2D(4, 3, groups=2, dilation_rate=2), (2, 7, 7, 4), 2),
    (lambda: L.Conv2DTranspose(3, 3, strides=2), (2, 4, 4, 2), 2),
    (lambda: L.Conv1DTranspose(2, 3, use_bias=False), (2, 5, 3), 1),
    (lambda: L.DepthwiseConv2D(3, depth_multiplier=2), (2, 5, 5, 3), 2),
    (lambda: L.SeparableConv1D(4, 3, activation="relu"), (2, 7, 3), 3),
]


def P(name, shape, options=None, **kwargs):  # noqa: N802
    """A parity row: tf.keras.layers name, input shape, constructor arguments
    (and `check_layer_parity` options)."""
    return (name, kwargs, shape, options or {})


PARITY = [
    # pooling
    P("MaxPooling3D", (2, 4, 4, 4, 2), pool_size=2),
    P("AveragePooling3D", (2, 5, 4, 3, 2), pool_size=(2, 2, 1), padding="same"),
    P(
        "MaxPool3D",
        (1, 2, 4, 4, 3),
        pool_size=2,
        strides=1,
        data_format="channels_first",
    ),
    P("GlobalAveragePooling3D", (2, 2, 3, 2, 2), keepdims=True),
    P("GlobalMaxPool3D", (2, 2, 3, 2, 2)),
    P("GlobalAveragePooling1D", (2, 3, 5), data_format="channels_first"),
    # merging
    P("Subtract", [(2, 3), (2, 3)]),
    P("Average", [(2, 3, 2), (2, 3, 2), (2, 1, 2)]),
    P("Maximum", [(2, 4), (2, 4)]),
    P("Minimum", [(2, 2, 3), (2, 3)]),
    P("Add", [(2, 4), (2, 4), (2, 4)]),
    P("Multiply", [(2, 4), (2, 1)]),
    P("Concatenate", [(2, 3, 2), (2, 3, 4)]),
    P("Concatenate", [(2, 2, 3), (2, 1, 3)], axis=1),
    P("Dot", [(2, 4), (2, 4)], axes=1),
    P("Dot", [(2, 3, 4), (2, 5, 3)], axes=(1, 2), normalize=True),
    P("Dot", [(2, 3, 4), (2, 3, 4)], axes=-1),
    # convolution
    P("Conv3D", (2, 3, 4, 5, 2), filters=2, kernel_size=2, strides=(1, 2, 1)),
    P("Conv2D", (2, 5, 5, 4), filters=4, kernel_size=3, groups=2, padding="same"),
    P("Conv2D", (2, 6, 6, 3), filters=2, kernel_size=2, dilation_rate=2),
    P("Conv1D", (2, 7, 3), filters=2, kernel_size=3, padding="causal", dilation_rate=2),
    P("Conv2DTranspose", (2, 4, 4, 2), filters=3, kernel_size=3, strides=2),
    P(
        "Conv2DTranspose",
        (2, 3, 5, 2),
        filters=2,
        kernel_size=3,
        strides=2,
        padding="same",
    ),
    P(
        "Conv2DTranspose",
        (2, 3, 3, 2),
        filters=2,
        kernel_size=4,
        strides=3,
        output_padding=1,
    ),
    P(
        "Conv2DTranspose",
        (2, 3, 4, 2),
        filters=2,
        kernel_size=3,
        strides=2,
        padding="same",
        output_padding=1,
    ),
    P(
        "Conv2DTranspose",
        (2, 4, 4, 2),
        filters=2,
        kernel_size=3,
        dilation_rate=2,
        activation="relu",
    ),
    P("Conv1DTranspose", (2, 4, 3), filters=2, kernel_size=2, strides=3),
    P(
        "Conv3DTranspose",
        (1, 2, 3, 2, 2),
        filters=2,
        kernel_size=2,
        strides=2,
        padding="same",
    ),
    P(
        "DepthwiseConv2D",
        (2, 5, 5, 3),
        kernel_size=3,
        depth_multiplier=2,
        padding="same",
    ),
    P("DepthwiseConv2D", (2, 5, 5, 3), kernel_size=2, strides=2, activation="tanh"),
    P("DepthwiseConv1D", (2, 8, 3), kernel_size=3, dilation_rate=2),
    P("SeparableConv2D", (2, 6, 6, 3), filters=4, kernel_size=3, depth_multiplier=2),
    P(
        "SeparableConv1D",
        (2, 7, 2),
        filters=3,
        kernel_size=2,
        strides=2,
        padding="same",
    ),
    P("Convolution2D", (2, 4, 4, 2), filters=2, kernel_size=2, use_bias=False),
]


@pytest.mark.parametrize(
    "make,shape,n_vars", HARNESS, ids=[str(i) for i in range(len(HARNESS))]
)
def test_layer_harness(tmp_path, make, shape, n_vars):
    check_layer(tmp_path, make, shape, n_vars)


def _id(row):
    name, kwargs = row[:2]
    return name + "-" + ",".join(f"{k}={v}" for k, v in kwargs.items())


@pytest.mark.parametrize("row", PARITY, ids=[_id(r) for r in PARITY])
def test_layer_matches_tf_keras(tf, row):
    name, kwargs, shape, options = row
    check_layer_parity(tf, name, kwargs, shape, **options)


@pytest.mark.parametrize(
    "fn,cls,kwargs",
    [
        ("add", "Add", {}),
        ("subtract", "Subtract", {}),
        ("multiply", "Multiply", {}),
        ("average", "Average", {}),
        ("maximum", "Maximum", {}),
        ("minimum", "Minimum", {}),
        ("concatenate", "Concatenate", dict(axis=0)),
        ("dot", "Dot", dict(axes=1)),
    ],
)
def test_functional_merge_forms_match_tf_keras(tf, fn, cls, kwargs):
    """`keras.layers.add([a, b])` is `Add()([a, b])`, eagerly and on Inputs."""
    rng = np.random.default_rng(1)
    a, b = (rng.normal(size=(3, 4)).astype(np.float32) for _ in range(2))
    ours = getattr(L, fn)([a, b], **kwargs).numpy()
    np.testing.assert_allclose(
        ours, getattr(tf.keras.layers, fn)([a, b], **kwargs), rtol=1e-6
    )
    np.testing.assert_allclose(ours, getattr(L, cls)(**kwargs)([a, b]).numpy())
    x1, x2 = jt.keras.Input((4,)), jt.keras.Input((4,))
    model = jt.keras.Model([x1, x2], getattr(L, fn)([x1, x2], **kwargs))
    if fn != "concatenate":
        np.testing.assert_allclose(model([a, b]).numpy(), ours, rtol=1e-6)
