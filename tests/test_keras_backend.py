"""`jaxtape.keras.backend` against `tf.keras.backend` (Keras 3's legacy backend).

One row per name: the same NumPy inputs through both, values, dtypes and shapes
compared; a few rows also compare gradients and run inside `jaxtape.function`.
"""

import numpy as np
import pytest

import jaxtape


def _f(*shape):
    """Normal draws, the same for the same shape (rows build inputs per call)."""
    return np.random.default_rng(list(shape)).normal(size=shape).astype("float32")


X = _f(2, 3)
Y = _f(3, 4)
P = np.abs(_f(2, 3)) + 0.1
PROB = (P / P.sum(-1, keepdims=True)).astype("float32")
ONEHOT = np.eye(3, dtype="float32")[[0, 2]]
IMG = _f(2, 5, 5, 3)
VOL = _f(1, 4, 4, 4, 2)
SEQ = _f(2, 6, 3)
I32 = np.array([[1, 0, 2], [2, 2, 1]], "int32")
BOOL = np.array([[True, False, True], [False, False, True]])


def _c(K, a):
    return K.constant(a, dtype=str(a.dtype))


# name -> fn(K, c) where K is the backend module and c makes a tensor of it.
ROWS = {
    "abs": lambda K, c: K.abs(c(X)),
    "all": lambda K, c: K.all(c(BOOL), axis=1),
    "any": lambda K, c: K.any(c(X), keepdims=True),
    "arange": lambda K, c: K.arange(2, 9, 2, dtype="float32"),
    "arange_neg": lambda K, c: K.arange(-3),
    "argmax": lambda K, c: K.argmax(c(X)),
    "argmin": lambda K, c: K.argmin(c(X), axis=0),
    "backend": lambda K, c: K.backend(),
    "batch_dot": lambda K, c: K.batch_dot(c(_f(2, 3, 4)), c(_f(2, 4, 5)), axes=(2, 1)),
    "batch_dot_2d": lambda K, c: K.batch_dot(c(X), c(X)),
    "batch_dot_4d": lambda K, c: K.batch_dot(c(_f(2, 3, 4, 5)), c(_f(2, 5, 2)), (3, 1)),
    "batch_dot_axes": lambda K, c: K.batch_dot(c(_f(2, 4, 3)), c(_f(2, 5, 4)), (1, 2)),
    "batch_flatten": lambda K, c: K.batch_flatten(c(IMG)),
    "batch_get_value": lambda K, c: K.batch_get_value([K.variable(X), K.variable(P)]),
    "batch_normalization": lambda K, c: K.batch_normalization(
        c(X), c(X[0]), c(P[0]), c(X[1]), c(P[1]), epsilon=0.01
    ),
    "bias_add": lambda K, c: K.bias_add(c(IMG), c(X[0]), data_format="channels_last"),
    "bias_add_first": lambda K, c: K.bias_add(
        c(IMG), c(_f(5)), data_format="channels_first"
    ),
    "bias_add_nd": lambda K, c: K.bias_add(c(SEQ), c(_f(6, 3))),
    "binary_crossentropy": lambda K, c: K.binary_crossentropy(c(PROB), c(P / 3)),
    "binary_crossentropy_logits": lambda K, c: K.binary_crossentropy(
        c(PROB), c(X), from_logits=True
    ),
    "binary_focal_crossentropy": lambda K, c: K.binary_focal_crossentropy(
        c(PROB), c(P / 3), apply_class_balancing=True
    ),
    "cast": lambda K, c: K.cast(c(X), "float16"),
    "cast_to_floatx": lambda K, c: K.cast_to_floatx([1, 2]),
    "categorical_crossentropy": lambda K, c: K.categorical_crossentropy(
        c(ONEHOT), c(PROB)
    ),
    "categorical_crossentropy_logits": lambda K, c: K.categorical_crossentropy(
        c(ONEHOT), c(X), from_logits=True
    ),
    "categorical_focal_crossentropy": lambda K, c: K.categorical_focal_crossentropy(
        c(ONEHOT), c(X), from_logits=True
    ),
    "clip": lambda K, c: K.clip(c(X), 0.5, -1),
    "clip_none": lambda K, c: K.clip(c(X), None, 0.2),
    "concatenate": lambda K, c: K.concatenate([c(X), c(P)], axis=-1),
    "constant": lambda K, c: K.constant([[1, 2]]),
    "conv1d": lambda K, c: K.conv1d(c(SEQ), c(_f(2, 3, 4)), padding="same"),
    "conv1d_causal": lambda K, c: K.conv1d(
        c(SEQ), c(_f(3, 3, 2)), padding="causal", dilation_rate=2
    ),
    "conv2d": lambda K, c: K.conv2d(c(IMG), c(_f(3, 3, 3, 2)), strides=(2, 2)),
    "conv2d_dilated": lambda K, c: K.conv2d(
        c(IMG), c(_f(2, 2, 3, 2)), padding="same", dilation_rate=(2, 2)
    ),
    "conv2d_transpose": lambda K, c: K.conv2d_transpose(
        c(IMG), c(_f(3, 3, 4, 3)), (2, 10, 10, 4), strides=(2, 2), padding="same"
    ),
    "conv3d": lambda K, c: K.conv3d(c(VOL), c(_f(2, 2, 2, 2, 3))),
    "cos": lambda K, c: K.cos(c(X)),
    "count_params": lambda K, c: K.count_params(K.variable(IMG)),
    "ctc_batch_cost": lambda K, c: K.ctc_batch_cost(
        c(np.array([[1, 2, 0], [3, 3, 1]], "int32")),
        K.softmax(c(_f(2, 8, 5))),
        c(np.array([[8], [6]], "int32")),
        c(np.array([[2], [3]], "int32")),
    ),
    "ctc_decode": lambda K, c: K.ctc_decode(
        K.softmax(c(_f(2, 6, 4))), c(np.array([6, 4], "int32"))
    ),
    "ctc_decode_beam": lambda K, c: K.ctc_decode(
        K.softmax(c(_f(3, 7, 4) * 3)),
        c(np.array([7, 5, 6], "int32")),
        greedy=False,
        beam_width=8,
        top_paths=2,
    ),
    "ctc_label_dense_to_sparse": lambda K, c: K.to_dense(
        K.ctc_label_dense_to_sparse(c(I32), c(np.array([2, 3], "int32")))
    ),
    "cumprod": lambda K, c: K.cumprod(c(X), axis=1),
    "cumsum": lambda K, c: K.cumsum(c(X)),
    "depthwise_conv2d": lambda K, c: K.depthwise_conv2d(
        c(IMG), c(_f(3, 3, 3, 2)), padding="same"
    ),
    "dot": lambda K, c: K.dot(c(X), c(Y)),
    "dot_3d": lambda K, c: K.dot(c(_f(2, 3, 4)), c(_f(5, 4, 2))),
    "dtype": lambda K, c: K.dtype(c(I32)),
    "elu": lambda K, c: K.elu(c(X), alpha=0.5),
    "equal": lambda K, c: K.equal(c(I32), 2),
    "eval": lambda K, c: K.eval(K.variable(X)),
    "exp": lambda K, c: K.exp(c(X)),
    "expand_dims": lambda K, c: K.expand_dims(c(X)),
    "eye": lambda K, c: K.eye(3, dtype="int32").numpy(),
    "flatten": lambda K, c: K.flatten(c(X)),
    "foldl": lambda K, c: K.foldl(lambda a, x: a + x, c(X)),
    "foldr": lambda K, c: K.foldr(lambda a, x: a * x, c(X), initializer=c(X[0])),
    "gather": lambda K, c: K.gather(c(Y), c(np.array([2, 0], "int32"))),
    "get_uid": lambda K, c: K.get_uid("jaxtape_test_prefix"),
    "get_value": lambda K, c: K.get_value(K.variable(X)),
    "greater": lambda K, c: K.greater(c(X), 0.0),
    "greater_equal": lambda K, c: K.greater_equal(c(I32), 1),
    "hard_sigmoid": lambda K, c: K.hard_sigmoid(c(X * 4)),
    "in_top_k": lambda K, c: K.in_top_k(c(X), c(np.array([0, 2], "int32")), 2),
    "int_shape": lambda K, c: K.int_shape(c(IMG)),
    "is_float_dtype": lambda K, c: [K.is_float_dtype(d) for d in ("float16", "int8")],
    "is_int_dtype": lambda K, c: [K.is_int_dtype(d) for d in ("uint8", "bool")],
    "is_keras_tensor": lambda K, c: K.is_keras_tensor(c(X)),
    "is_sparse": lambda K, c: K.is_sparse(c(X)),
    "l2_normalize": lambda K, c: K.l2_normalize(c(X), axis=1),
    "less": lambda K, c: K.less(c(X), 0.0),
    "less_equal": lambda K, c: K.less_equal(c(I32), 1),
    "log": lambda K, c: K.log(c(P)),
    "map_fn": lambda K, c: K.map_fn(lambda r: r * 2.0, c(X)),
    "max": lambda K, c: K.max(c(X), axis=0),
    "maximum": lambda K, c: K.maximum(c(X), c(P)),
    "mean": lambda K, c: K.mean(c(BOOL), axis=1),
    "min": lambda K, c: K.min(c(X), keepdims=True),
    "minimum": lambda K, c: K.minimum(c(X), c(P)),
    "moving_average_update": lambda K, c: _moving_average(K, c),
    "ndim": lambda K, c: K.ndim(c(IMG)),
    "not_equal": lambda K, c: K.not_equal(c(I32), 2),
    "one_hot": lambda K, c: K.one_hot(c(I32), 3),
    "ones": lambda K, c: K.ones((2, 3), dtype="int32").numpy(),
    "ones_like": lambda K, c: K.ones_like(c(X), dtype="int32"),
    "permute_dimensions": lambda K, c: K.permute_dimensions(c(IMG), (0, 3, 1, 2)),
    "pool2d": lambda K, c: K.pool2d(c(IMG), (2, 2), strides=(2, 2), padding="same"),
    "pool2d_avg": lambda K, c: K.pool2d(c(IMG), (3, 2), pool_mode="avg"),
    "pool3d": lambda K, c: K.pool3d(c(VOL), (2, 2, 2), (2, 2, 2), pool_mode="avg"),
    "pow": lambda K, c: K.pow(c(P), 1.5),
    "prod": lambda K, c: K.prod(c(X), axis=1),
    "relu": lambda K, c: K.relu(c(X)),
    "relu_alpha": lambda K, c: K.relu(c(X), alpha=0.1),
    "relu_max": lambda K, c: K.relu(c(X * 8), max_value=6.0),
    "relu_full": lambda K, c: K.relu(c(X), alpha=0.2, max_value=1.0, threshold=0.1),
    "repeat": lambda K, c: K.repeat(c(X), 3),
    "repeat_elements": lambda K, c: K.repeat_elements(c(X), 2, axis=1),
    "reshape": lambda K, c: K.reshape(c(X), (3, 2)),
    "resize_images": lambda K, c: K.resize_images(c(IMG), 2, 3, "channels_last"),
    "resize_images_bilinear": lambda K, c: K.resize_images(
        c(IMG), 2, 2, "channels_first", interpolation="bilinear"
    ),
    "resize_volumes": lambda K, c: K.resize_volumes(c(VOL), 1, 2, 2, "channels_last"),
    "result_type": lambda K, c: K.result_type("int8", "float16", int),
    "reverse": lambda K, c: K.reverse(c(X), 1),
    "rnn": lambda K, c: _rnn(K, c),
    "rnn_masked": lambda K, c: _rnn(K, c, mask=True),
    "rnn_masked_zero_backwards": lambda K, c: _rnn(
        K, c, mask=True, zero_output_for_mask=True, go_backwards=True
    ),
    "rnn_last_only": lambda K, c: _rnn(K, c, return_all_outputs=False, unroll=True),
    "rnn_input_length": lambda K, c: _rnn(
        K, c, input_length=c(np.array([4, 2], "int32"))
    ),
    "rnn_input_length_backwards_zero": lambda K, c: _rnn(
        K,
        c,
        input_length=c(np.array([3, 5], "int32")),
        go_backwards=True,
        zero_output_for_mask=True,
    ),
    "rnn_input_length_last_only": lambda K, c: _rnn(
        K, c, input_length=c(np.array([4, 2], "int32")), return_all_outputs=False
    ),
    "rnn_input_length_unrolled": lambda K, c: _rnn(
        K, c, input_length=c(np.array([4, 2], "int32")), unroll=True
    ),
    "rnn_input_length_int_with_mask": lambda K, c: _rnn(
        K, c, mask=True, input_length=4
    ),
    "round": lambda K, c: K.round(c(X * 3)),
    "separable_conv2d": lambda K, c: K.separable_conv2d(
        c(IMG), c(_f(3, 3, 3, 2)), c(_f(1, 1, 6, 4))
    ),
    "set_value": lambda K, c: _set_value(K),
    "shape": lambda K, c: K.shape(c(IMG)),
    "sigmoid": lambda K, c: K.sigmoid(c(X)),
    "sign": lambda K, c: K.sign(c(X)),
    "sin": lambda K, c: K.sin(c(X)),
    "softmax": lambda K, c: K.softmax(c(X)),
    "softmax_axes": lambda K, c: K.softmax(c(IMG), axis=(1, 2)),
    "softplus": lambda K, c: K.softplus(c(X)),
    "softsign": lambda K, c: K.softsign(c(X)),
    "sparse_categorical_crossentropy": lambda K, c: K.sparse_categorical_crossentropy(
        c(np.array([0, 2], "int32")), c(PROB)
    ),
    "sparse_categorical_crossentropy_axis": lambda K, c: (
        K.sparse_categorical_crossentropy(
            c(I32), c(_f(2, 3, 3)), from_logits=True, axis=1
        )
    ),
    "sparse_categorical_crossentropy_ignore": lambda K, c: (
        K.sparse_categorical_crossentropy(
            c(I32), c(_f(2, 3, 3)), from_logits=True, ignore_class=2
        )
    ),
    "spatial_2d_padding": lambda K, c: K.spatial_2d_padding(c(IMG), ((1, 0), (0, 2))),
    "spatial_3d_padding": lambda K, c: K.spatial_3d_padding(
        c(VOL), data_format="channels_first"
    ),
    "sqrt": lambda K, c: K.sqrt(c(X)),
    "square": lambda K, c: K.square(c(X)),
    "squeeze": lambda K, c: K.squeeze(c(X[:, None]), 1),
    "stack": lambda K, c: K.stack([c(X), c(P)], axis=1),
    "standardize_dtype": lambda K, c: [K.standardize_dtype(d) for d in (None, "int")],
    "std": lambda K, c: K.std(c(X), axis=0),
    "stop_gradient": lambda K, c: list(K.stop_gradient([c(X), c(P)])),
    "sum": lambda K, c: K.sum(c(X), axis=1, keepdims=True),
    "switch": lambda K, c: K.switch(c(np.array(True)), c(X), c(P)),
    "switch_tensor": lambda K, c: K.switch(c(BOOL[:, :1]), c(X), c(P)),
    "tanh": lambda K, c: K.tanh(c(X)),
    "temporal_padding": lambda K, c: K.temporal_padding(c(SEQ), (2, 1)),
    "tile": lambda K, c: K.tile(c(X), (2, 1)),
    "to_dense": lambda K, c: K.to_dense(c(X)),
    "transpose": lambda K, c: K.transpose(c(X)),
    "update": lambda K, c: K.update(K.variable(X), P).numpy(),
    "update_add": lambda K, c: K.update_add(K.variable(X), P).numpy(),
    "update_sub": lambda K, c: K.update_sub(K.variable(X), P).numpy(),
    "var": lambda K, c: K.var(c(X), axis=1),
    "variable": lambda K, c: K.variable([[1, 2]], dtype="float16").numpy(),
    "zeros": lambda K, c: K.zeros((2, 0)),
    "zeros_like": lambda K, c: K.zeros_like(c(X)),
}


def _moving_average(K, c):
    v = K.variable(X)
    K.moving_average_update(v, c(P), 0.9)
    return v.numpy()


def _set_value(K):
    v = K.variable(X)
    K.set_value(v, [[1, 2, 3], [4, 5, 6]])
    K.batch_set_value([(v, v.numpy() * 2)])
    return v.numpy()


def _rnn(K, c, mask=False, **kwargs):
    w = c(_f(3, 4))
    u = c(_f(4, 4))

    def step(x, states):
        h = K.tanh(K.dot(x, w) + K.dot(states[0], u))
        return h, [h]

    m = c(np.array([[1, 1, 0, 1, 0, 0], [1, 0, 1, 1, 1, 0]], "bool")) if mask else None
    return K.rnn(step, c(SEQ), [c(np.zeros((2, 4), "float32"))], mask=m, **kwargs)


def _numpy(x):
    if isinstance(x, (list, tuple)):
        return [_numpy(v) for v in x]
    if hasattr(x, "numpy"):
        return x.numpy()
    return x


def _compare(got, want):
    if isinstance(want, (list, tuple)):
        assert isinstance(got, (list, tuple)) and len(got) == len(want)
        for g, w in zip(got, want):
            _compare(g, w)
        return
    if isinstance(want, (str, bool, int, float, type(None))) or (
        isinstance(want, tuple) and not want
    ):
        assert got == want
        return
    got, want = np.asarray(got), np.asarray(want)
    assert got.dtype == want.dtype, (got.dtype, want.dtype)
    assert got.shape == want.shape, (got.shape, want.shape)
    if want.dtype.kind in "fc":
        np.testing.assert_allclose(got, want, rtol=2e-4, atol=2e-5)
    else:
        np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("row", sorted(ROWS))
def test_matches_tf_keras_backend(row, tf):
    fn = ROWS[row]
    want = _numpy(fn(tf.keras.backend, lambda a: tf.constant(a)))
    got = _numpy(fn(jaxtape.keras.backend, lambda a: jaxtape.constant(a)))
    if row == "get_uid":  # a counter: both count up from where they are
        assert isinstance(got, int) and got >= 1
        return
    _compare(got, want)


GRAD_ROWS = {
    "batch_dot": lambda K, a: K.sum(K.batch_dot(a, a, axes=(2, 2)) ** 2),
    "sqrt": lambda K, a: K.sum(K.sqrt(a)),
    "relu_full": lambda K, a: K.sum(K.relu(a, alpha=0.2, max_value=1.0, threshold=0.1)),
    "categorical_crossentropy": lambda K, a: K.sum(
        K.categorical_crossentropy(K.softmax(a), K.softmax(a * 2))
    ),
    "pool2d": lambda K, a: K.sum(K.pool2d(a[..., None], (2, 2), padding="same")),
    "rnn": lambda K, a: K.sum(
        K.rnn(lambda x, s: (x + s[0], [x + s[0]]), a, [a[:, 0]])[1]
    ),
}


@pytest.mark.parametrize("row", sorted(GRAD_ROWS))
def test_gradients_match_tf(row, tf):
    x = _f(2, 3, 4)
    fn = GRAD_ROWS[row]

    def grad(m):
        a = m.constant(x)
        with m.GradientTape() as tape:
            tape.watch(a)
            y = fn(m.keras.backend, a)
        return tape.gradient(y, a).numpy()

    np.testing.assert_allclose(grad(jaxtape), grad(tf), rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize(
    "row", ["batch_dot", "conv2d", "rnn_masked", "switch_tensor", "resize_images"]
)
def test_inside_function(row, tf):
    fn = ROWS[row]
    want = _numpy(fn(tf.keras.backend, lambda a: tf.constant(a)))
    traced = jaxtape.function(
        lambda: fn(jaxtape.keras.backend, lambda a: jaxtape.constant(a))
    )
    _compare(_numpy(traced()), want)


def test_random_functions_dtype_shape_and_range():
    K = jaxtape.keras.backend
    n = (400,)
    for f in (K.random_uniform, K.random_normal, K.truncated_normal):
        a = f(n, seed=1)
        assert a.shape == n and a.dtype == jaxtape.float32
    u = K.random_uniform(n, 2.0, 3.0, dtype="float16").numpy()
    assert u.dtype == np.float16 and np.all((u >= 2) & (u <= 3))
    assert np.abs(K.truncated_normal(n, stddev=2.0).numpy()).max() <= 4.0
    bern = K.random_bernoulli(n, p=0.3, seed=2).numpy()
    assert set(np.unique(bern)) <= {0.0, 1.0}
    assert abs(bern.mean() - 0.3) < 5 * (0.3 * 0.7 / bern.size) ** 0.5  # 5 sigma
    v = K.random_uniform_variable(n, 1.0, 2.0, dtype="float16", seed=3)
    assert isinstance(v, jaxtape.Variable) and v.dtype == jaxtape.float16
    assert np.all((v.numpy() >= 1) & (v.numpy() <= 2))
    v = K.random_normal_variable(n, 5.0, 0.01, seed=3)
    assert np.allclose(v.numpy(), 5.0, atol=0.1)
    d = K.dropout(K.ones(n), 0.5, seed=4).numpy()
    assert set(np.unique(d)) <= {0.0, 2.0}


ERROR_ROWS = {
    "gradients": lambda K, c: K.gradients(K.sum(K.variable(X)), []),
    "batch_dot_rank": lambda K, c: K.batch_dot(c(X[0]), c(X)),
    "batch_dot_batch": lambda K, c: K.batch_dot(c(X), c(Y)),
    "batch_dot_axis0": lambda K, c: K.batch_dot(c(X), c(X), axes=(0, 1)),
    "batch_dot_dims": lambda K, c: K.batch_dot(
        c(_f(2, 3, 4)), c(_f(2, 5, 4)), axes=(1, 1)
    ),
    "softmax_1d": lambda K, c: K.softmax(c(X[0])),
    "conv2d_format": lambda K, c: K.conv2d(
        c(IMG), c(_f(1, 1, 3, 1)), data_format="NHWC"
    ),
    "conv1d_padding": lambda K, c: K.conv1d(c(SEQ), c(_f(2, 3, 4)), padding="full"),
    "pool2d_mode": lambda K, c: K.pool2d(c(IMG), (2, 2), pool_mode="sum"),
    "pool2d_size": lambda K, c: K.pool2d(c(IMG), (2, 2, 2)),
    "resize_images_interpolation": lambda K, c: K.resize_images(
        c(IMG), 2, 2, "channels_last", "cubic"
    ),
    "resize_images_format": lambda K, c: K.resize_images(c(IMG), 2, 2, "NHWC"),
    "resize_volumes_format": lambda K, c: K.resize_volumes(c(VOL), 1, 1, 1, "x"),
    "bias_add_dims": lambda K, c: K.bias_add(c(IMG), c(X)),
    "repeat_rank": lambda K, c: K.repeat(c(SEQ), 2),
    "switch_rank": lambda K, c: K.switch(c(BOOL[None]), c(X), c(P)),
    "temporal_padding": lambda K, c: K.temporal_padding(c(SEQ), (1, 2, 3)),
    "spatial_2d_padding": lambda K, c: K.spatial_2d_padding(c(IMG), ((1, 1),)),
    "spatial_3d_padding": lambda K, c: K.spatial_3d_padding(c(VOL), ((1, 1),) * 2),
    "conv2d_transpose_dilation": lambda K, c: K.conv2d_transpose(
        c(IMG), c(_f(3, 3, 4, 3)), (2, 10, 10, 4), dilation_rate=(1, 2)
    ),
}


@pytest.mark.parametrize("row", sorted(ERROR_ROWS))
def test_errors_match_tf(row, tf):
    def error(K, c):
        try:
            ERROR_ROWS[row](K, c)
        except (ValueError, RuntimeError) as e:
            return type(e).__name__, str(e)
        return None

    want = error(tf.keras.backend, lambda a: tf.constant(a))
    got = error(jaxtape.keras.backend, lambda a: jaxtape.constant(a))
    assert want is not None and got is not None
    assert got[0] == want[0]
    if row not in ("softmax_1d", "batch_dot_rank", "batch_dot_batch"):
        assert got[1] == want[1]  # (those print the tensors / TF's shape type)


def test_backend_variables_are_jaxtape_variables():
    K = jaxtape.keras.backend
    assert isinstance(K.zeros((2, 2)), jaxtape.Variable)
    assert isinstance(K.eye(2), jaxtape.Variable)
    assert not isinstance(K.zeros((2, 0)), jaxtape.Variable)
    with K.name_scope("outer"):
        pass


def test_sparse_categorical_crossentropy_ignore_class_attaches_mask(tf):
    from jaxtape._src.keras.layers.base import get_keras_mask

    args = (I32, _f(2, 3, 3))
    want = tf.keras.backend.sparse_categorical_crossentropy(
        *map(tf.constant, args), from_logits=True, ignore_class=2
    )._keras_mask
    got = jaxtape.keras.backend.sparse_categorical_crossentropy(
        *map(jaxtape.constant, args), from_logits=True, ignore_class=2
    )
    np.testing.assert_array_equal(get_keras_mask(got).numpy(), want.numpy())


def test_sparse_inputs_match_tf(tf):
    import scipy.sparse

    dense = np.array([[0.0, 1.0, 0.0], [2.0, 0.0, 3.0]], "float32")
    results = []
    for m in (tf, jaxtape):
        K = m.keras.backend
        s = m.sparse.from_dense(dense)
        v = K.variable(scipy.sparse.coo_matrix(dense))
        results.append(
            [
                K.is_sparse(s),
                K.is_sparse(v),
                K.to_dense(K.concatenate([s, s], axis=0)).numpy(),
                K.dot(s, m.constant(Y)).numpy(),
                K.eval(v),
                K.concatenate([s, m.constant(dense)], axis=-1).numpy(),
            ]
        )
    for got, want in zip(results[1], results[0]):
        np.testing.assert_allclose(got, want, rtol=1e-6)


def test_get_uid_shares_layer_names_and_clear_session_resets(tf):
    def run(m):
        m.keras.backend.clear_session()
        m.keras.layers.Dense(2)
        m.keras.layers.Dense(2)
        uid = m.keras.backend.get_uid("dense")
        name = m.keras.layers.Dense(2).name
        return uid, name, m.keras.backend.get_uid("x"), m.keras.backend.get_uid("x")

    assert run(jaxtape) == run(tf) == (3, "dense_3", 1, 2)


def test_data_dependent_sizes_raise_not_implemented_inside_function():
    K = jaxtape.keras.backend

    def labels(a, n):
        return K.ctc_label_dense_to_sparse(a, n)

    def rnn(x, n):
        return K.rnn(lambda a, s: (a, [a]), x, [x[:, 0]], input_length=n)[1]

    with pytest.raises(NotImplementedError, match="label_lengths"):
        jaxtape.function(labels)(jaxtape.constant(I32), jaxtape.constant([2, 3]))
    with pytest.raises(NotImplementedError, match="input_length"):
        jaxtape.function(rnn)(jaxtape.ones((2, 3, 2)), jaxtape.constant([2, 1]))
