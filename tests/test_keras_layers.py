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


def _positive_variance(name, weights):
    weights[-1] = np.abs(weights[-1]) + 0.5  # BatchNormalization's moving variance
    return weights


@jt.keras.saving.register_keras_serializable(package="tests")
def _double(x):  # (found by name when a config is read: Keras's rule)
    return x * 2.0 + 1.0


_MASK = np.array([[1, 1, 0, 1], [0, 1, 1, 0]], bool)

# (make, input shape, number of weights); the first _FULL_HARNESS rows get
# the whole harness.
_FULL_HARNESS = 5
HARNESS = [
    (lambda: L.GroupNormalization(2), (2, 3, 4), 2),
    (lambda: L.SpectralNormalization(L.Dense(3)), (2, 4), 3),
    (lambda: L.TimeDistributed(L.Dense(3)), (2, 4, 5), 2),
    (lambda: L.Conv2DTranspose(3, 3, strides=2), (2, 4, 4, 2), 2),
    (lambda: L.SeparableConv1D(4, 3, activation="relu"), (2, 7, 3), 3),
    # without weights (or cheap): shapes, dtypes and the config round trip
    (lambda: L.RMSNormalization(), (2, 3, 4), 1),
    (lambda: L.PReLU(), (2, 3, 4), 1),
    (lambda: L.Conv3D(2, 2, padding="same"), (2, 3, 4, 4, 2), 2),
    (lambda: L.DepthwiseConv2D(3, depth_multiplier=2), (2, 5, 5, 3), 2),
    (lambda: L.UnitNormalization(), (2, 4), 0),
    (lambda: L.SpatialDropout2D(0.3), (2, 3, 3, 4), 0),
    (lambda: L.AlphaDropout(0.2), (2, 4), 0),
    (lambda: L.GaussianNoise(0.1), (2, 4), 0),
    (lambda: L.ActivityRegularization(l2=0.1), (2, 4), 0),
    (lambda: L.LeakyReLU(0.1), (2, 5), 0),
    (lambda: L.Lambda(_double), (2, 3), 0),
    (lambda: L.UpSampling2D(interpolation="bilinear"), (2, 3, 3, 2), 0),
    (lambda: L.Cropping2D(1), (2, 4, 4, 2), 0),
    (lambda: L.ZeroPadding3D(1), (1, 2, 2, 2, 1), 0),
    (lambda: L.MaxPooling3D(), (2, 4, 4, 4, 2), 0),
    (lambda: L.GlobalAveragePooling3D(keepdims=True), (2, 2, 3, 2, 2), 0),
]


def P(name, shape, options=None, **kwargs):  # noqa: N802
    """A parity row: tf.keras.layers name, input shape, constructor arguments
    (and `check_layer_parity` options)."""
    return (name, kwargs, shape, options or {})


PARITY = [
    # core and activations
    P("Identity", (2, 3)),
    P("Lambda", (2, 3), function=_double),
    P("Masking", (2, 3, 2), mask_value=0.0),
    P("LeakyReLU", (2, 5)),
    P("PReLU", (2, 3, 4), shared_axes=[1]),
    P("ELU", (2, 5), alpha=0.5),
    P("ThresholdedReLU", (2, 5), theta=0.3),
    P("ReLU", (3, 6), negative_slope=0.2, threshold=0.3, max_value=1.5),
    P("Softmax", (2, 3, 4), axis=(1, 2)),
    P("Softmax", (2, 4), dict(call_kwargs=dict(mask=_MASK))),
    # normalization
    P("GroupNormalization", (2, 3, 6), groups=3),
    P("BatchNormalization", (4, 3), dict(fix_weights=_positive_variance), scale=False),
    P("LayerNormalization", (2, 5), center=False),
    P("GroupNormalization", (2, 4, 3, 3), groups=-1, axis=1, scale=False),
    P("UnitNormalization", (2, 3, 4), axis=[1, 2]),
    P("RMSNormalization", (2, 3, 4), axis=[1, 2], epsilon=1e-3),
    # regularization: random only in training; inference is the identity
    P("GaussianNoise", (2, 5), dict(modes=(False,)), stddev=0.5),
    P("GaussianDropout", (2, 5), dict(modes=(False,)), rate=0.3),
    P("AlphaDropout", (2, 5), dict(modes=(False,)), rate=0.3),
    P("SpatialDropout2D", (2, 3, 3, 2), dict(modes=(False,)), rate=0.5),
    P("ActivityRegularization", (2, 5), l1=0.1, l2=0.2),
    # reshaping
    P("RepeatVector", (2, 3), n=3),
    P("Permute", (2, 3, 4, 5), dims=(3, 1, 2)),
    P("UpSampling1D", (2, 3, 2), size=3),
    P("UpSampling2D", (2, 2, 3, 2), size=(2, 3), data_format="channels_first"),
    P("UpSampling2D", (2, 3, 4, 2), interpolation="bilinear"),
    P("UpSampling3D", (1, 2, 2, 3, 2), size=(1, 2, 2)),
    P("ZeroPadding1D", (2, 3, 2), padding=(1, 2)),
    P(
        "ZeroPadding2D",
        (2, 2, 3, 3),
        padding=((1, 0), (2, 1)),
        data_format="channels_first",
    ),
    P("ZeroPadding3D", (1, 2, 2, 2, 1), padding=(1, 0, 2)),
    P("Cropping1D", (2, 5, 2), cropping=(1, 2)),
    P("Cropping2D", (2, 5, 6, 2), cropping=((1, 2), (0, 3))),
    P(
        "Cropping3D",
        (1, 2, 4, 4, 5),
        cropping=((1, 1), (0, 2), (2, 1)),
        data_format="channels_first",
    ),
    P("Flatten", (2, 3, 4, 2), data_format="channels_first"),
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
    # merging
    P("Subtract", [(2, 3), (2, 3)]),
    P("Average", [(2, 3, 2), (2, 3, 2), (2, 1, 2)]),
    P("Maximum", [(2, 4), (2, 4)]),
    P("Minimum", [(2, 2, 3), (2, 3)]),
    P("Concatenate", [(2, 2, 3), (2, 1, 3)], axis=1),
    P("Dot", [(2, 4), (2, 4)], axes=1),
    P("Dot", [(2, 3, 4), (2, 5, 3)], axes=(1, 2), normalize=True),
    # convolution
    P("Conv3D", (2, 3, 4, 5, 2), filters=2, kernel_size=2, strides=(1, 2, 1)),
    P(
        "Conv2D",
        (2, 4, 6, 6),
        data_format="channels_first",
        filters=4,
        kernel_size=2,
        groups=2,
        dilation_rate=2,
        padding="same",
    ),
    P("Conv1D", (2, 7, 3), filters=2, kernel_size=3, padding="causal", dilation_rate=2),
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
        (2, 2, 3, 4),
        filters=2,
        kernel_size=3,
        strides=2,
        padding="same",
        output_padding=1,
        data_format="channels_first",
    ),
    P(
        "Conv2DTranspose",
        (2, 4, 4, 2),
        filters=2,
        kernel_size=3,
        dilation_rate=2,
        activation="relu",
    ),
    P(
        "Conv1DTranspose",
        (2, 4, 3),
        filters=2,
        kernel_size=2,
        strides=3,
        use_bias=False,
    ),
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
        strides=2,
        activation="tanh",
    ),
    P(
        "DepthwiseConv1D",
        (2, 3, 8),
        kernel_size=3,
        dilation_rate=2,
        padding="same",
        data_format="channels_first",
    ),
    P("SeparableConv2D", (2, 6, 6, 3), filters=4, kernel_size=3, depth_multiplier=2),
    P("DepthwiseConv2D", (2, 9, 9, 2), kernel_size=2, strides=2, dilation_rate=2),
    P(
        "SeparableConv1D",
        (2, 7, 2),
        filters=3,
        kernel_size=2,
        strides=2,
        padding="same",
    ),
]


@pytest.mark.parametrize(
    "make,shape,n_vars,head",
    [(*row, i < _FULL_HARNESS) for i, row in enumerate(HARNESS)],
    ids=[str(i) for i in range(len(HARNESS))],
)
def test_layer_harness(tmp_path, make, shape, n_vars, head):
    # The first rows also take a training step and the weights-file round
    # trip (each kind of weight layout once: a few seconds each); the others
    # check shapes, dtypes, weights and the config round trip (their values
    # and gradients are in the parity table).
    check_layer(tmp_path, make, shape, n_vars, head=head)


def _id(row):
    name, kwargs = row[:2]
    # (a function by its name: ids must not hold addresses, see conftest)
    items = (f"{k}={getattr(v, '__name__', v)}" for k, v in kwargs.items())
    return name + "-" + ",".join(items)


@pytest.mark.parametrize("row", PARITY, ids=[_id(r) for r in PARITY])
def test_layer_matches_tf_keras(tf, row):
    name, kwargs, shape, options = row
    # Our gradients inside jaxtape.function: one compile per row (the eager
    # first replay compiles each primitive; the harness rows take that path).
    check_layer_parity(tf, name, kwargs, shape, compiled_gradients=True, **options)


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


def test_time_distributed_matches_tf_keras(tf):
    """TimeDistributed(Conv2D) on (batch, steps, h, w, c): tf.keras's outputs,
    input and weight gradients with the same weights."""
    x = np.random.default_rng(2).normal(size=(2, 3, 5, 5, 2)).astype(np.float32)
    theirs = tf.keras.layers.TimeDistributed(tf.keras.layers.Conv2D(3, 2))
    ours = L.TimeDistributed(L.Conv2D(3, 2))
    theirs(x), ours(x)
    ours.set_weights(theirs.get_weights())
    assert [v.name for v in ours.weights] == [v.name for v in theirs.weights]
    xt, xj = tf.constant(x), jt.constant(x)
    with tf.GradientTape() as tape:
        tape.watch(xt)
        yt = theirs(xt)
        st = tf.reduce_sum(tf.sin(yt))
    with jt.GradientTape() as tape2:
        tape2.watch(xj)
        yj = ours(xj)
        sj = jt.reduce_sum(jt.sin(yj))
    np.testing.assert_allclose(yj.numpy(), yt.numpy(), rtol=1e-5, atol=1e-5)
    gt = tape.gradient(st, [xt, *theirs.trainable_weights])
    gj = tape2.gradient(sj, [xj, *ours.trainable_weights])
    for a, b in zip(gj, gt, strict=True):
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-4, atol=1e-4)


def test_masking_compute_mask_matches_tf_keras(tf):
    """Masking's compute_mask is Keras's: false where every feature is the
    mask value."""
    x = np.ones((2, 3, 2), np.float32)
    x[0, 1] = 0.0
    x[1, 2] = 0.0
    ours, theirs = L.Masking(), tf.keras.layers.Masking()
    np.testing.assert_array_equal(
        ours.compute_mask(jt.constant(x)).numpy(),
        theirs.compute_mask(tf.constant(x)).numpy(),
    )


def test_lambda_output_shape_and_arguments():
    layer = L.Lambda(lambda x, k: x * k, output_shape=(3,), arguments={"k": 3.0})
    np.testing.assert_allclose(layer(np.ones((2, 3), np.float32)).numpy(), 3.0)
    assert tuple(layer.compute_output_shape((None, 3))) == (None, 3)


def _moments_in_training(layer, shape=(400, 50)):
    x = np.ones(shape, np.float32)
    y = layer(x, training=True).numpy()
    assert not np.array_equal(layer(x, training=True).numpy(), y)  # fresh noise
    return y


@pytest.mark.parametrize(
    "make,mean,std",
    [
        (lambda: L.GaussianNoise(0.5), 1.0, 0.5),
        (lambda: L.GaussianDropout(0.3), 1.0, (0.3 / 0.7) ** 0.5),
        # AlphaDropout keeps zero mean and unit variance of SELU activations;
        # on ones: kept a*1+b, dropped a*alpha_p+b, with probability 1 - rate.
        (lambda: L.AlphaDropout(0.2), None, None),
    ],
)
def test_random_layers_statistics_in_training(make, mean, std):
    y = _moments_in_training(make())
    if mean is None:  # AlphaDropout: two values, in Keras's proportions
        alpha_p = -1.6732632423543772 * 1.0507009873554805
        a = ((1 - 0.2) * (1 + 0.2 * alpha_p**2)) ** -0.5
        b = -a * alpha_p * 0.2
        values = np.unique(np.round(y, 5))
        np.testing.assert_allclose(
            sorted(values), sorted([a + b, a * alpha_p + b]), rtol=1e-5
        )
        # The kept fraction is binomial(n, 0.8) / n: five standard deviations.
        assert abs(np.mean(np.isclose(y, a + b)) - 0.8) < 5 * (0.16 / y.size) ** 0.5
        return
    # Normal noise: the sample mean's standard error is std / sqrt(n), the
    # sample std's std / sqrt(2 n); five of each either side.
    assert abs(y.mean() - mean) < 5 * std / y.size**0.5
    assert abs(y.std() - std) < 5 * std / (2 * y.size) ** 0.5


@pytest.mark.parametrize(
    "layer,shape,spatial",
    [
        (lambda: L.SpatialDropout1D(0.5), (64, 5, 8), (1,)),
        (lambda: L.SpatialDropout2D(0.5), (64, 3, 4, 8), (1, 2)),
        (
            lambda: L.SpatialDropout2D(0.5, data_format="channels_first"),
            (64, 8, 3, 4),
            (2, 3),
        ),
        (lambda: L.SpatialDropout3D(0.5), (16, 2, 3, 2, 8), (1, 2, 3)),
    ],
)
def test_spatial_dropout_drops_whole_feature_maps(layer, shape, spatial):
    y = layer()(np.ones(shape, np.float32), training=True).numpy()
    # Each feature map is all 0 or all 1 / (1 - rate); about half are dropped.
    assert set(np.unique(y)) == {0.0, 2.0}
    maps = y.min(axis=spatial)
    assert (maps == y.max(axis=spatial)).all()
    # The dropped fraction of the feature maps is binomial(n, 0.5) / n:
    # five standard deviations either side.
    assert abs((maps == 0).mean() - 0.5) < 5 * (0.25 / maps.size) ** 0.5


def test_activity_regularization_losses_match_tf_keras(tf):
    """l1 * sum|x| + l2 * sum x**2, divided by the batch size (Keras 3)."""
    x = np.random.default_rng(3).normal(size=(4, 5)).astype(np.float32)
    for kwargs in (dict(l1=0.1, l2=0.2), dict(l2=0.5)):
        ours = L.ActivityRegularization(**kwargs)
        theirs = tf.keras.layers.ActivityRegularization(**kwargs)
        ours(x), theirs(x)
        np.testing.assert_allclose(
            [float(v) for v in ours.losses],
            [float(v) for v in theirs.losses],
            rtol=1e-6,
        )
    dense = L.Dense(3, activity_regularizer="l2")
    their_dense = tf.keras.layers.Dense(3, activity_regularizer="l2")
    their_dense(x)
    dense(x)
    dense.set_weights(their_dense.get_weights())
    dense(x), their_dense(x)
    np.testing.assert_allclose(
        float(dense.losses[0]), float(their_dense.losses[0]), rtol=1e-5
    )


def test_spectral_normalization_matches_tf_keras(tf):
    """SpectralNormalization(Dense): the same vector_u and kernel after a
    training call, the same outputs and gradients."""
    x = np.random.default_rng(5).normal(size=(3, 4)).astype(np.float32)
    theirs = tf.keras.layers.SpectralNormalization(
        tf.keras.layers.Dense(3), power_iterations=2
    )
    ours = L.SpectralNormalization(L.Dense(3), power_iterations=2)
    theirs(x), ours(x)
    assert [v.name for v in ours.weights] == [v.name for v in theirs.weights]
    ours.set_weights(theirs.get_weights())
    for training in (False, True, True):
        np.testing.assert_allclose(
            ours(x, training=training).numpy(),
            theirs(x, training=training).numpy(),
            rtol=1e-5,
            atol=1e-6,
        )
    for a, b in zip(ours.get_weights(), theirs.get_weights(), strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)
    with tf.GradientTape() as tape:
        st = tf.reduce_sum(tf.sin(theirs(x, training=True)))
    gt = tape.gradient(st, theirs.trainable_weights)
    with jt.GradientTape() as tape2:
        sj = jt.reduce_sum(jt.sin(ours(x, training=True)))
    gj = tape2.gradient(sj, ours.trainable_weights)
    for a, b in zip(gj, gt, strict=True):
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-4, atol=1e-5)


# Bad arguments: (name, constructor arguments, input shapes or None); the
# same exception type as tf.keras, at construction or at the first call.
BAD = [
    ("Conv2D", dict(filters=0, kernel_size=3), None),
    ("Conv2D", dict(filters=4, kernel_size=3, groups=3), None),
    ("Conv2D", dict(filters=4, kernel_size=3, groups=2), (1, 5, 5, 3)),
    ("Conv2D", dict(filters=2, kernel_size=4), (1, 3, 3, 1)),
    (
        "Conv2DTranspose",
        dict(filters=2, kernel_size=3, strides=2, output_padding=2),
        None,
    ),
    ("Conv1D", dict(filters=2, kernel_size=2, strides=2, dilation_rate=2), None),
    ("DepthwiseConv2D", dict(kernel_size=3, depth_multiplier=0), None),
    ("SeparableConv2D", dict(filters=2, kernel_size=(1, 2, 3)), None),
    ("Conv3D", dict(filters=2, kernel_size=2, padding="causal"), None),
    ("RepeatVector", dict(n=2.5), None),
    ("Permute", dict(dims=(1, 3)), None),
    ("UpSampling1D", dict(size=0), None),
    ("ZeroPadding2D", dict(padding=(1, 2, 3)), None),
    ("Cropping2D", dict(cropping=-1), None),
    ("Cropping1D", dict(cropping=(2, 2)), (1, 4, 2)),
    ("Dot", dict(axes="x"), None),
    ("Dot", dict(axes=(1, 2, 3)), None),
    ("Dot", dict(axes=1), [(2, 3), (2, 4)]),
    ("Subtract", {}, [(2, 3), (2, 3), (2, 3)]),
    ("Add", {}, [(2, 3), (2, 4)]),
    ("LeakyReLU", dict(negative_slope=-1), None),
    ("ReLU", dict(max_value=-1.0), None),
    ("GroupNormalization", dict(groups=0), None),
    ("GroupNormalization", dict(groups=4), (2, 6)),
    ("UnitNormalization", dict(axis="a"), None),
    ("GaussianNoise", dict(stddev=2.0), None),
    ("SpatialDropout2D", dict(rate=-0.1), None),
    ("ThresholdedReLU", dict(theta=-1.0), None),
]


def _raise_type(make, call):
    try:
        layer = make()
        call(layer)
    except Exception as e:  # noqa: BLE001 (the type is what is compared)
        return type(e)
    return None


@pytest.mark.parametrize("name,kwargs,shape", BAD, ids=[_id(b) for b in BAD])
def test_bad_arguments_raise_tf_keras_exception_types(tf, name, kwargs, shape):
    def call(module):
        def run(layer):
            if shape is None:
                return
            if isinstance(shape, list):
                layer([np.ones(s, np.float32) for s in shape])
            else:
                layer(np.ones(shape, np.float32))

        return run

    theirs = _raise_type(lambda: getattr(tf.keras.layers, name)(**kwargs), call(tf))
    ours = _raise_type(lambda: getattr(L, name)(**kwargs), call(jt))
    assert theirs is not None
    assert ours is theirs, (ours, theirs)


def test_keras_aliases_are_the_same_classes(tf):
    """Keras's aliases name the same class here as in tf.keras."""
    pairs = [
        ("Convolution1D", "Conv1D"),
        ("Convolution2D", "Conv2D"),
        ("Convolution3D", "Conv3D"),
        ("Convolution2DTranspose", "Conv2DTranspose"),
        ("Convolution3DTranspose", "Conv3DTranspose"),
        ("SeparableConvolution1D", "SeparableConv1D"),
        ("SeparableConvolution2D", "SeparableConv2D"),
        ("MaxPool3D", "MaxPooling3D"),
        ("AvgPool3D", "AveragePooling3D"),
        ("GlobalMaxPool3D", "GlobalMaxPooling3D"),
        ("GlobalAvgPool3D", "GlobalAveragePooling3D"),
    ]
    for alias, name in pairs:
        assert getattr(tf.keras.layers, alias) is getattr(tf.keras.layers, name)
        assert getattr(L, alias) is getattr(L, name)


@pytest.mark.parametrize(
    "make",
    [
        lambda f: L.Conv3D(2, 2, data_format=f),
        lambda f: L.Conv3DTranspose(2, 2, strides=2, data_format=f),
        lambda f: L.UpSampling3D(data_format=f),
    ],
)
def test_channels_first_is_channels_last_transposed(make):
    """channels_first gives the channels_last result with the channel axis
    moved (tf.keras 3.15's Conv3D adds the bias on the last axis of
    channels_first outputs on CPU, so TF is no oracle for this one)."""
    x = np.random.default_rng(6).normal(size=(2, 3, 4, 3, 2)).astype(np.float32)
    last, first = make("channels_last"), make("channels_first")
    y_last = last(x)
    first(np.moveaxis(x, -1, 1))
    weights = [w + 0.5 for w in last.get_weights()]  # a nonzero bias
    last.set_weights(weights)
    first.set_weights(weights)
    np.testing.assert_allclose(
        np.moveaxis(first(np.moveaxis(x, -1, 1)).numpy(), 1, -1),
        last(x).numpy(),
        rtol=1e-5,
        atol=1e-5,
    )
    assert y_last.shape == last(x).shape


def test_weight_from_a_numpy_initializer_built_inside_a_function():
    # A custom initializer may return NumPy; a layer first built inside
    # jaxtape.function still gets a concrete weight (and the same value).
    class Scale(jt.keras.layers.Layer):
        def build(self, shape):
            self.w = self.add_weight(
                shape=(shape[-1], 2),
                initializer=lambda shape, dtype=None: np.full(shape, 0.5, "float32"),
            )

        def call(self, x):
            return x @ self.w

    layer = Scale()
    out = jt.function(lambda x: layer(x))(jt.ones((1, 3)))
    np.testing.assert_allclose(out.numpy(), [[1.5, 1.5]])
    np.testing.assert_allclose(layer.w.numpy(), np.full((3, 2), 0.5))


@pytest.mark.parametrize(
    "spec",
    [
        {"ndim": 3},
        {"max_ndim": 2},
        {"max_ndim": 1},
        {"min_ndim": 3},
        {"dtype": "int32"},
        {"axes": {-1: 4}},
        {"shape": (None, 5)},
        {"shape": (None, 3, 1), "allow_last_axis_squeeze": True},
        {"shape": (None, 4, 1), "allow_last_axis_squeeze": True},
    ],
    ids=str,
)
def test_input_spec_checks_as_keras_3(tf, spec):
    # Keras 3's InputSpec (its argument order, max_ndim, dtype, shape and
    # squeeze checks) with its error texts.
    x = np.ones((2, 3), np.float32)
    results = []
    for m in (tf, jt):

        class Checked(m.keras.layers.Layer):
            def __init__(self, **kwargs):
                super().__init__(name="checked", **kwargs)
                self.input_spec = m.keras.layers.InputSpec(**spec)

            def call(self, x):
                return x

        try:
            Checked()(x)
            results.append("accepted")
        except ValueError as e:
            results.append(str(e).split("\n")[0])
    assert results[0] == results[1]


def test_torch_module_wrapper_refuses_as_tf_keras(tf):
    # tf.keras needs PyTorch (and its torch backend) for it: the same error here
    errors = []
    for m in (tf, jt):
        with pytest.raises(Exception) as info:  # noqa: PT011 - compared below
            m.keras.layers.TorchModuleWrapper(object())
        errors.append(type(info.value))
    assert errors[0] is errors[1] or issubclass(errors[1], NotImplementedError)
