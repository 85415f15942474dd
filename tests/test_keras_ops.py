"""`jaxtape.keras.ops` / `jaxtape.keras.random` against Keras 3's own ops on
the TensorFlow backend (`tf.keras.ops`): one parity table (values, dtypes,
shapes; gradients through a tape for the differentiable rows), a few rows
compiled by `jaxtape.function`, Keras's errors, and the random samplers'
distributions and seeding."""

import numpy as np
import pytest

import jaxtape
from jaxtape.keras import ops as jk
from jaxtape.keras import random as jr

_R = np.random.default_rng(0)
A = _R.normal(size=(3, 4)).astype("float32")
B = _R.normal(size=(3, 4)).astype("float32")
P = (_R.uniform(size=(3, 4)) + 0.5).astype("float32")  # positive
U = _R.uniform(-0.9, 0.9, size=(3, 4)).astype("float32")  # in (-1, 1)
V = _R.normal(size=(4,)).astype("float32")
M = _R.normal(size=(4, 5)).astype("float32")
SQ = _R.normal(size=(3, 3)).astype("float32")
SPD = (SQ @ SQ.T + 3 * np.eye(3)).astype("float32")
I32 = _R.integers(-5, 6, size=(3, 4)).astype("int32")
I8 = _R.integers(-5, 6, size=(3, 4)).astype("int8")
POS_I = _R.integers(1, 6, size=(3, 4)).astype("int32")
BOOL = _R.uniform(size=(3, 4)) > 0.5
F64 = _R.normal(size=(3, 4))
F16 = A.astype("float16")
IDX = np.array([2, 0, 1], "int32")
IMG = _R.normal(size=(2, 6, 6, 3)).astype("float32")
K3 = _R.normal(size=(3, 3, 3, 4)).astype("float32")
DW = _R.normal(size=(3, 3, 3, 2)).astype("float32")
PW = _R.normal(size=(1, 1, 6, 4)).astype("float32")
SEQ = _R.normal(size=(2, 8, 3)).astype("float32")
K1 = _R.normal(size=(3, 3, 5)).astype("float32")
PROBS = np.abs(A) / np.abs(A).sum(-1, keepdims=True)
ONEHOT = np.eye(4, dtype="float32")[[0, 3, 1]]
NONFINITE = np.array([1.0, np.nan, np.inf, -np.inf], "float32")
Q4 = _R.normal(size=(2, 3, 2, 4)).astype("float32")

UNARY_FLOAT = {
    "sin": A,
    "cos": A,
    "tan": U,
    "arcsin": U,
    "arccos": U,
    "arctan": A,
    "arcsinh": A,
    "arccosh": P + 1,
    "arctanh": U,
    "sinh": A,
    "cosh": A,
    "tanh": A,
    "exp": A,
    "exp2": A,
    "expm1": A,
    "log": P,
    "log10": P,
    "log1p": P,
    "log2": P,
    "sqrt": P,
    "cbrt": P,
    "deg2rad": A,
    "rad2deg": A,
    "reciprocal": P,
    "abs": A,
    "absolute": A,
    "fabs": A,
    "negative": A,
    "square": A,
    "sinc": A,
    "erf": A,
    "erfinv": U,
    "rsqrt": P,
    "sigmoid": A,
    "relu": A,
    "relu6": A * 4,
    "softplus": A,
    "softsign": A,
    "silu": A,
    "swish": A,
    "log_sigmoid": A,
    "hard_sigmoid": A * 3,
    "hard_silu": A * 3,
    "hard_swish": A * 3,
    "selu": A,
    "tanh_shrink": A,
    "hard_tanh": A * 2,
    "sparse_plus": A * 2,
    "sparse_sigmoid": A * 2,
    "gelu": A,
    "elu": A,
    "celu": A,
    "leaky_relu": A,
    "hard_shrink": A,
    "soft_shrink": A,
    "squareplus": A,
    "softmax": A,
    "log_softmax": A,
    "sparsemax": A,
    "glu": A,
    "i0": A,
}
UNARY_NOGRAD = {
    "ceil": A,
    "floor": A,
    "trunc": A,
    "sign": A,
    "round": A * 3,
    "isnan": A,
    "isinf": A,
    "isfinite": A,
    "isneginf": A,
    "isposinf": A,
    "signbit": A,
    "logical_not": BOOL,
    "bitwise_invert": I32,
    "bitwise_not": I32,
    "conj": A,
    "real": A,
    "imag": A,
    "isreal": A,
    "copy": A,
    "ravel": A,
}
# Keras's dtype rules on integer, bool and other float inputs.
DTYPE_UNARY = [
    ("sin", I32),
    ("sqrt", I8),
    ("exp", BOOL),
    ("abs", I8),
    ("square", BOOL),
    ("negative", I32),
    ("floor", I32),
    ("ceil", I8),
    ("sign", I32),
    ("trunc", I32),
    ("log", F64),
    ("tanh", F16),
    ("relu", I32),
    ("sigmoid", F64),
    ("cbrt", I32),
    ("mean", I32),
    ("mean", BOOL),
    ("sum", I8),
    ("sum", BOOL),
    ("prod", I8),
    ("max", I32),
    ("var", I32),
    ("std", I8),
    ("argmax", A),
    ("argmin", I32),
    ("cumsum", I8),
    ("cumprod", BOOL),
    ("count_nonzero", A),
    ("median", I32),
    ("all", I32),
    ("any", A),
]
BINARY = {
    "add": (A, B),
    "subtract": (A, B),
    "multiply": (A, B),
    "divide": (A, P),
    "true_divide": (A, P),
    "divide_no_nan": (A, B * (B > 0)),
    "power": (P, B),
    "maximum": (A, B),
    "minimum": (A, B),
    "fmax": (A, B),
    "fmin": (A, B),
    "arctan2": (A, B),
    "hypot": (A, B),
    "logaddexp": (A, B),
    "mod": (A, P),
    "fmod": (A, P),
}
BINARY_NOGRAD = {
    "floor_divide": (A, P),
    "equal": (I32, POS_I),
    "not_equal": (I32, POS_I),
    "less": (A, B),
    "less_equal": (A, B),
    "greater": (A, B),
    "greater_equal": (A, B),
    "logical_and": (BOOL, ~BOOL),
    "logical_or": (BOOL, BOOL),
    "logical_xor": (BOOL, ~BOOL),
    "bitwise_and": (I32, POS_I),
    "bitwise_or": (I32, POS_I),
    "bitwise_xor": (I32, POS_I),
    "left_shift": (POS_I, POS_I),
    "right_shift": (I32, POS_I),
    "bitwise_left_shift": (POS_I, POS_I),
    "bitwise_right_shift": (I32, POS_I),
    "isclose": (A, A + 1e-6),
    "gcd": (I32, POS_I),
    "lcm": (I32, POS_I),
    "heaviside": (A, B),
    "nextafter": (A, B),
    "logaddexp2": (A, B),
}
# Keras's promotion in binary ops: (x1, x2) of mixed dtypes and Python numbers.
DTYPE_BINARY = [
    ("add", I32, 1.5),
    ("add", I32, 2),
    ("add", I8, I32),
    ("add", I32, A),
    ("multiply", F16, A),
    ("subtract", 3, A),
    ("divide", I32, POS_I),
    ("divide", I8, 2),
    ("add", F64, 0.1),
    ("maximum", BOOL, I8),
    ("power", I32, 2),
    ("mod", I32, 3),
    ("floor_divide", I32, 2.0),
    ("equal", I32, 2.0),
    ("matmul", I8, I8.T),
    ("arctan2", I32, POS_I),
    ("add", I32.astype("uint8"), I8),
]


def _kind(v):
    return str(np.asarray(v).dtype) if np.ndim(v) else type(v).__name__


def _reduce(name, **kw):
    return name, (lambda o, x: getattr(o, name)(x, **kw)), [A], True


ROWS = (
    [(n, lambda o, x, n=n: getattr(o, n)(x), [x], True) for n, x in UNARY_FLOAT.items()]
    + [
        (n, lambda o, x, n=n: getattr(o, n)(x), [x], False)
        for n, x in UNARY_NOGRAD.items()
    ]
    + [
        (f"{n}_{np.asarray(x).dtype}", lambda o, x, n=n: getattr(o, n)(x), [x], False)
        for n, x in DTYPE_UNARY
    ]
    + [
        (n, lambda o, a, b, n=n: getattr(o, n)(a, b), list(xs), True)
        for n, xs in BINARY.items()
    ]
    + [
        (n, lambda o, a, b, n=n: getattr(o, n)(a, b), list(xs), False)
        for n, xs in BINARY_NOGRAD.items()
    ]
    + [
        (
            f"{n}_{_kind(a)}_{_kind(b)}",
            lambda o, a, n=n, b=b: getattr(o, n)(a, b),
            [a],
            False,
        )
        for n, a, b in DTYPE_BINARY
    ]
    + [
        _reduce("sum", axis=1),
        _reduce("sum", axis=(0, 1), keepdims=True),
        _reduce("mean", axis=0),
        _reduce("max", axis=1),
        _reduce("min"),
        _reduce("amax", axis=0),
        _reduce("amin", axis=1, keepdims=True),
        _reduce("prod", axis=1),
        _reduce("std", axis=1),
        _reduce("var"),
        _reduce("logsumexp", axis=-1),
        _reduce("cumsum", axis=1),
        _reduce("cumprod"),
        _reduce("median", axis=1),
        _reduce("ptp", axis=1),
        _reduce("norm"),
        _reduce("norm", axis=1, ord=1),
        _reduce("nansum", axis=0),
        _reduce("nanmean"),
        _reduce("argmax", axis=1),
        _reduce("argmin", keepdims=True),
        _reduce("count_nonzero", axis=0),
        _reduce("sort", axis=0),
        _reduce("argsort"),
        _reduce("quantile", q=0.3, axis=1),
        _reduce("percentile", q=[10.0, 90.0]),
        _reduce("average", axis=1),
        ("max_initial", lambda o, x: o.max(x, axis=1, initial=0.5), [A], True),
        ("average_weights", lambda o, x, w: o.average(x, 1, w), [A, P], True),
        ("clip", lambda o, x: o.clip(x, -0.5, 0.5), [A], True),
        ("clip_int", lambda o, x: o.clip(x, -2, 2), [I32], False),
        ("nan_to_num", lambda o, x: o.nan_to_num(x), [NONFINITE], False),
        # shapes
        ("reshape", lambda o, x: o.reshape(x, (2, -1)), [A], True),
        ("transpose", lambda o, x: o.transpose(x), [A], True),
        ("transpose_axes", lambda o, x: o.transpose(x[None], (2, 0, 1)), [A], True),
        ("expand_dims", lambda o, x: o.expand_dims(x, 1), [A], True),
        ("expand_dims_tuple", lambda o, x: o.expand_dims(x, (0, 2)), [A], True),
        ("squeeze", lambda o, x: o.squeeze(x[:, None]), [A], True),
        ("squeeze_axis", lambda o, x: o.squeeze(x[None], axis=0), [A], True),
        ("concatenate", lambda o, a, b: o.concatenate([a, b], axis=1), [A, B], True),
        ("concatenate_mixed", lambda o, a: o.concatenate([a, I32]), [A], True),
        ("stack", lambda o, a, b: o.stack([a, b], axis=1), [A, B], True),
        ("hstack", lambda o, a, b: o.hstack([a, b]), [A, B], True),
        ("vstack", lambda o, a, b: o.vstack([a, b]), [A, B], True),
        ("dstack", lambda o, a, b: o.dstack([a, b]), [A, B], True),
        ("append", lambda o, a, b: o.append(a, b), [A, B], True),
        ("split", lambda o, x: o.split(x, 2, axis=1), [A], True),
        ("split_indices", lambda o, x: o.split(x, [1, 3], axis=1), [A], True),
        ("array_split", lambda o, x: o.array_split(x, 3, axis=1), [A], False),
        ("hsplit", lambda o, x: o.hsplit(x, 2), [A], True),
        ("vsplit", lambda o, x: o.vsplit(x, 3), [A], True),
        ("take", lambda o, x: o.take(x, IDX, axis=0), [A], True),
        ("take_flat", lambda o, x: o.take(x, np.array([[0, -1], [5, 2]])), [A], True),
        (
            "take_along_axis",
            lambda o, x: o.take_along_axis(x, I32.clip(0, 3), 1),
            [A],
            True,
        ),
        ("where", lambda o, a, b: o.where(a > 0, a, b), [A, B], True),
        ("where_scalar", lambda o, a: o.where(a > 0, a, 0), [A], True),
        ("where_mixed", lambda o, a: o.where(a > 0, I32, 1.5), [A], False),
        ("tile", lambda o, x: o.tile(x, (2, 1)), [A], True),
        ("repeat", lambda o, x: o.repeat(x, 2, axis=0), [A], True),
        ("repeat_flat", lambda o, x: o.repeat(x, 2), [A], True),
        ("broadcast_to", lambda o, x: o.broadcast_to(x, (2, 3, 4)), [A], True),
        ("flip", lambda o, x: o.flip(x, 1), [A], True),
        ("fliplr", lambda o, x: o.fliplr(x), [A], True),
        ("flipud", lambda o, x: o.flipud(x), [A], True),
        ("roll", lambda o, x: o.roll(x, 2, axis=1), [A], True),
        ("roll_flat", lambda o, x: o.roll(x, -3), [A], True),
        ("rot90", lambda o, x: o.rot90(x), [A], True),
        ("moveaxis", lambda o, x: o.moveaxis(x[None], 0, -1), [A], True),
        ("swapaxes", lambda o, x: o.swapaxes(x, 0, 1), [A], True),
        ("pad", lambda o, x: o.pad(x, ((1, 0), (2, 1))), [A], True),
        ("pad_reflect", lambda o, x: o.pad(x, ((1, 1), (1, 1)), "reflect"), [A], True),
        (
            "pad_value",
            lambda o, x: o.pad(x, ((1, 1), (1, 1)), constant_values=3.0),
            [A],
            True,
        ),
        ("tril", lambda o, x: o.tril(x), [A], True),
        ("triu", lambda o, x: o.triu(x, 1), [A], True),
        ("diag", lambda o, x: o.diag(x), [V], True),
        ("diagflat", lambda o, x: o.diagflat(x), [V], True),
        ("diagonal", lambda o, x: o.diagonal(x, 1), [A], True),
        ("trace", lambda o, x: o.trace(x), [A], True),
        ("diff", lambda o, x: o.diff(x), [A], True),
        ("meshgrid", lambda o, x, y: o.meshgrid(x, y), [V, V[:3]], True),
        (
            "meshgrid_ij",
            lambda o, x, y: o.meshgrid(x, y, indexing="ij"),
            [V, V[:3]],
            True,
        ),
        ("get_item", lambda o, x: o.get_item(x, 1), [A], True),
        ("shape", lambda o, x: o.shape(x), [A], False),
        ("ndim", lambda o, x: o.ndim(x), [A], False),
        ("size", lambda o, x: o.size(x), [A], False),
        ("cast", lambda o, x: o.cast(x, "int32"), [A], False),
        ("cast_f16", lambda o, x: o.cast(x, "float16"), [A], True),
        ("saturate_cast", lambda o, x: o.saturate_cast(x * 300, "uint8"), [A], False),
        ("convert_to_tensor_int", lambda o: o.convert_to_tensor(5), [], False),
        (
            "convert_to_tensor_list",
            lambda o: o.convert_to_tensor([1.0, 2.0]),
            [],
            False,
        ),
        (
            "convert_to_tensor_dtype",
            lambda o, x: o.convert_to_tensor(x, "int32"),
            [A],
            False,
        ),
        ("convert_to_numpy", lambda o, x: o.convert_to_numpy(x), [A], False),
        ("dtype", lambda o, x: o.dtype(o.convert_to_tensor(x)), [I8], False),
        ("stop_gradient", lambda o, x: o.stop_gradient(x) * x, [A], True),
        ("unstack", lambda o, x: o.unstack(x, axis=1), [A], True),
        ("slice", lambda o, x: o.slice(x, (1, 1), (2, 2)), [A], True),
        (
            "slice_update",
            lambda o, x, u: o.slice_update(x, (1, 2), u),
            [A, SQ[:2, :2]],
            False,
        ),
        (
            "scatter",
            lambda o, v: o.scatter(np.array([[0, 1], [2, 3], [0, 1]]), v, (3, 4)),
            [V[:3]],
            True,
        ),
        (
            "scatter_update",
            lambda o, x, v: o.scatter_update(x, np.array([[0, 1], [2, 3]]), v),
            [A, V[:2]],
            True,
        ),
        (
            "segment_sum",
            lambda o, x: o.segment_sum(x, np.array([0, 0, 2]), 3),
            [A],
            True,
        ),
        ("segment_max", lambda o, x: o.segment_max(x, np.array([0, 1, 1])), [A], True),
        ("top_k", lambda o, x: o.top_k(x, 2), [A], True),
        ("in_top_k", lambda o, x: o.in_top_k(np.array([0, 1, 3]), x, 2), [A], False),
        # creation
        ("zeros", lambda o: o.zeros((2, 3)), [], False),
        ("ones_int", lambda o: o.ones(3, "int32"), [], False),
        ("full", lambda o: o.full((2, 2), 7), [], False),
        ("full_float", lambda o: o.full((2,), 1.5, dtype="float16"), [], False),
        ("zeros_like", lambda o, x: o.zeros_like(x), [I8], False),
        ("ones_like", lambda o, x: o.ones_like(x, dtype="float64"), [A], False),
        ("full_like", lambda o, x: o.full_like(x, 2), [A], False),
        ("empty", lambda o: o.empty((2,)), [], False),
        ("arange", lambda o: o.arange(5), [], False),
        ("arange_float", lambda o: o.arange(1, 3, 0.5), [], False),
        ("arange_dtype", lambda o: o.arange(0, 10, 3, dtype="float32"), [], False),
        ("eye", lambda o: o.eye(3, 4, k=1), [], False),
        ("identity", lambda o: o.identity(3, "int32"), [], False),
        ("tri", lambda o: o.tri(3, 4, -1), [], False),
        ("linspace", lambda o: o.linspace(0, 1, 5), [], False),
        (
            "linspace_noend",
            lambda o: o.linspace(0.0, 2.0, 4, endpoint=False),
            [],
            False,
        ),
        ("logspace", lambda o: o.logspace(0, 2, 3), [], False),
        ("geomspace", lambda o: o.geomspace(1, 100, 3), [], False),
        ("hanning", lambda o: o.hanning(5), [], False),
        ("kaiser", lambda o: o.kaiser(5, 2.0), [], False),
        ("array", lambda o: o.array([[1, 2]]), [], False),
        # products
        ("matmul", lambda o, a, b: o.matmul(a, b), [A, M], True),
        ("matmul_vec", lambda o, a, b: o.matmul(a, b), [A, V], True),
        ("dot", lambda o, a, b: o.dot(a, b), [A, M], True),
        ("tensordot", lambda o, a, b: o.tensordot(a, b, 1), [A, M], True),
        ("tensordot_axes", lambda o, a, b: o.tensordot(a, b, ([0], [0])), [A, B], True),
        ("einsum", lambda o, a, b: o.einsum("ij,jk->ik", a, b), [A, M], True),
        ("einsum_mixed", lambda o, a: o.einsum("ij,ij->i", a, I32), [A], True),
        ("inner", lambda o, a, b: o.inner(a, b), [A, B], True),
        ("outer", lambda o, a, b: o.outer(a, b), [V, V], True),
        ("vdot", lambda o, a, b: o.vdot(a, b), [V, V], True),
        ("kron", lambda o, a, b: o.kron(a, b), [SQ, SQ[:2, :2]], True),
        ("cross", lambda o, a, b: o.cross(a, b), [SQ, SPD], True),
        ("correlate", lambda o, a, b: o.correlate(a, b, "same"), [V, V[:3]], False),
        ("vander", lambda o, x: o.vander(x, 3), [V], True),
        ("select", lambda o, x: o.select([x > 0.5, x < -0.5], [x, -x], 0.0), [A], True),
        (
            "digitize",
            lambda o, x: o.digitize(x, np.array([-1.0, 0.0, 1.0])),
            [A],
            False,
        ),
        ("searchsorted", lambda o, x: o.searchsorted(np.sort(V), x), [V], False),
        ("isin", lambda o, x: o.isin(x, np.array([1, 2, 3])), [I32], False),
        ("bincount", lambda o, x: o.bincount(x), [POS_I[0]], False),
        ("bincount_weights", lambda o, x, w: o.bincount(x, w, 7), [POS_I[0], V], False),
        ("unique", lambda o, x: o.unique(x), [I32], False),
        (
            "unravel_index",
            lambda o: o.unravel_index(np.array([1, 5]), (2, 3)),
            [],
            False,
        ),
        ("trapezoid", lambda o, y: o.trapezoid(y, dx=0.5), [A], True),
        ("corrcoef", lambda o, x: o.corrcoef(x), [A], False),
        ("nonzero", lambda o, x: o.nonzero(x), [I32], False),
        ("where_1arg", lambda o, x: o.where(x), [I32], False),
        ("histogram", lambda o, x: o.histogram(x, bins=4), [V], False),
        ("diag_extract", lambda o, x: o.diag(x, -1), [A], True),
        # linalg
        ("cholesky", lambda o, x: o.cholesky(x), [SPD], True),
        ("cholesky_upper", lambda o, x: o.cholesky(x, upper=True), [SPD], False),
        ("det", lambda o, x: o.det(x), [SQ], True),
        ("inv", lambda o, x: o.inv(x), [SPD], True),
        ("solve", lambda o, a, b: o.solve(a, b), [SPD, SQ], True),
        (
            "solve_triangular",
            lambda o, a, b: o.solve_triangular(a, b, lower=True),
            [np.tril(SPD), SQ],
            True,
        ),
        ("slogdet", lambda o, x: o.slogdet(x), [SQ], False),
        ("logdet", lambda o, x: o.logdet(x), [SPD], True),
        ("eigh_values", lambda o, x: o.eigh(x)[0], [SPD], True),
        ("svd_values", lambda o, x: o.svd(x, compute_uv=False), [A], True),
        ("qr_r_abs", lambda o, x: o.abs(o.qr(x)[1]), [M], False),
        ("pinv", lambda o, x: o.pinv(x), [SPD], False),
        ("lstsq", lambda o, a, b: o.lstsq(a, b), [SPD, SQ], False),
        ("matrix_rank", lambda o, x: o.matrix_rank(x), [A], False),
        (
            "cholesky_inverse",
            lambda o, x: o.cholesky_inverse(np.linalg.cholesky(x)),
            [SPD],
            False,
        ),
        ("norm_fro", lambda o, x: o.norm(x, "fro"), [A], True),
        # nn
        ("softmax_axis0", lambda o, x: o.softmax(x, axis=0), [A], True),
        ("gelu_exact", lambda o, x: o.gelu(x, approximate=False), [A], True),
        ("leaky_relu_slope", lambda o, x: o.leaky_relu(x, 0.1), [A], True),
        ("elu_alpha", lambda o, x: o.elu(x, 0.5), [A], True),
        ("threshold", lambda o, x: o.threshold(x, 0.1, -1.0), [A], True),
        ("one_hot", lambda o, x: o.one_hot(x, 5), [np.array([0, 3, -1, 4])], False),
        (
            "one_hot_axis",
            lambda o, x: o.one_hot(x, 3, axis=0, dtype="int32"),
            [np.array([0, 2])],
            False,
        ),
        (
            "multi_hot",
            lambda o, x: o.multi_hot(x, 5),
            [np.array([[0, 3], [1, 1]])],
            False,
        ),
        (
            "binary_crossentropy",
            lambda o, t, p: o.binary_crossentropy(t, p),
            [BOOL.astype("float32"), P / 2],
            True,
        ),
        (
            "binary_crossentropy_logits",
            lambda o, t, p: o.binary_crossentropy(t, p, from_logits=True),
            [BOOL.astype("float32"), A],
            True,
        ),
        (
            "categorical_crossentropy",
            lambda o, t, p: o.categorical_crossentropy(t, p),
            [ONEHOT, PROBS],
            True,
        ),
        (
            "categorical_crossentropy_logits",
            lambda o, t, p: o.categorical_crossentropy(t, p, from_logits=True),
            [ONEHOT, A],
            True,
        ),
        (
            "sparse_categorical_crossentropy",
            lambda o, p: o.sparse_categorical_crossentropy(IDX, p),
            [PROBS],
            True,
        ),
        (
            "sparse_categorical_crossentropy_logits",
            lambda o, p: o.sparse_categorical_crossentropy(IDX, p, from_logits=True),
            [A],
            True,
        ),
        ("moments", lambda o, x: o.moments(x, axes=[0]), [A], True),
        (
            "moments_keepdims",
            lambda o, x: o.moments(x, axes=(0, 1), keepdims=True),
            [A],
            True,
        ),
        (
            "batch_normalization",
            lambda o, x, m, v: o.batch_normalization(
                x, m, v, axis=-1, offset=m, scale=v
            ),
            [A, V, P[0]],
            True,
        ),
        (
            "layer_normalization",
            lambda o, x, g: o.layer_normalization(x, g, g),
            [A, V],
            True,
        ),
        ("rms_normalization", lambda o, x, g: o.rms_normalization(x, g), [A, V], True),
        ("normalize", lambda o, x: o.normalize(x), [A], True),
        ("normalize_l1", lambda o, x: o.normalize(x, axis=0, order=1), [A], True),
        ("psnr", lambda o, a, b: o.psnr(a, b, 1.0), [P, P * 0.9], True),
        ("conv2d", lambda o, x, k: o.conv(x, k, padding="same"), [IMG, K3], True),
        (
            "conv2d_strided",
            lambda o, x, k: o.conv(x, k, 2, dilation_rate=1),
            [IMG, K3],
            True,
        ),
        (
            "conv2d_dilated",
            lambda o, x, k: o.conv(x, k, dilation_rate=2),
            [IMG, K3],
            True,
        ),
        ("conv1d", lambda o, x, k: o.conv(x, k, padding="same"), [SEQ, K1], True),
        (
            "conv2d_channels_first",
            lambda o, x, k: o.conv(
                o.transpose(x, (0, 3, 1, 2)), k, data_format="channels_first"
            ),
            [IMG, K3],
            False,
        ),
        (
            "depthwise_conv",
            lambda o, x, k: o.depthwise_conv(x, k, padding="same"),
            [IMG, DW],
            True,
        ),
        (
            "separable_conv",
            lambda o, x, k, p: o.separable_conv(x, k, p),
            [IMG, DW, PW],
            True,
        ),
        ("max_pool", lambda o, x: o.max_pool(x, 2), [IMG], True),
        ("max_pool_same", lambda o, x: o.max_pool(x, 3, 2, "same"), [IMG], True),
        ("average_pool", lambda o, x: o.average_pool(x, 2), [IMG], True),
        (
            "average_pool_same",
            lambda o, x: o.average_pool(x, 3, 2, "same"),
            [IMG],
            True,
        ),
        ("max_pool1d", lambda o, x: o.max_pool(x, 2), [SEQ], True),
        (
            "depth_to_space",
            lambda o, x: o.depth_to_space(x, 2),
            [IMG[..., :1].repeat(4, -1)],
            True,
        ),
        ("space_to_depth", lambda o, x: o.space_to_depth(x, 2), [IMG], True),
        (
            "dot_product_attention",
            lambda o, q, k, v: o.dot_product_attention(q, k, v),
            [Q4, Q4 * 0.5, Q4 + 1],
            True,
        ),
        (
            "dot_product_attention_causal",
            lambda o, q: o.dot_product_attention(q, q, q, is_causal=True),
            [Q4],
            True,
        ),
        (
            "extract_sequences",
            lambda o, x: o.extract_sequences(x, 4, 2),
            [SEQ[0].T],
            False,
        ),
        ("rfft", lambda o, x: o.rfft(x), [A], False),
        ("fft", lambda o, x, y: o.fft((x, y)), [A, B], False),
        ("fft2", lambda o, x, y: o.fft2((x, y)), [A, B], False),
        ("irfft", lambda o, x, y: o.irfft((x, y)), [A, B], False),
        (
            "view_as_real",
            lambda o, x: o.view_as_real(o.convert_to_tensor(x + 1j)),
            [V],
            False,
        ),
        (
            "conv_transpose",
            lambda o, x, k: o.conv_transpose(x, k, 2, "same"),
            [IMG, K3.transpose(0, 1, 3, 2)],
            True,
        ),
        (
            "conv_transpose_valid",
            lambda o, x, k: o.conv_transpose(x, k, 2),
            [IMG, K3[:2, :2].transpose(0, 1, 3, 2)],
            False,
        ),
        ("cdist", lambda o, a, b: o.cdist(a, b), [A, B], True),
        ("erfc", lambda o, x: o.erfc(x), [A], False),
        (
            "jvp",
            lambda o, x, t: o.jvp(
                lambda v: o.sin(v) * v,
                (o.convert_to_tensor(x),),
                (o.convert_to_tensor(t),),
            ),
            [A, B],
            False,
        ),
        (
            "adaptive_average_pool",
            lambda o, x: o.adaptive_average_pool(o.convert_to_tensor(x), (4, 5)),
            [IMG],
            False,
        ),
        (
            "adaptive_max_pool",
            lambda o, x: o.adaptive_max_pool(o.convert_to_tensor(x), 4),
            [IMG],
            False,
        ),
        ("stft", lambda o, x: o.stft(x, 8, 4, 8), [SEQ[:, :, 0].copy()], False),
        (
            "stft_hamming",
            lambda o, x: o.stft(x, 6, 3, 8, "hamming", False),
            [SEQ[:, :, 0].copy()],
            False,
        ),
        (
            "unfold",
            lambda o, x: o.unfold(o.convert_to_tensor(x), 2, 1, 1, 2),
            [IMG.transpose(0, 3, 1, 2)],
            False,
        ),
        (
            "fold",
            lambda o, x: o.fold(o.convert_to_tensor(x), (6, 6), 2, 1, 1, 2),
            [_R.normal(size=(2, 12, 16)).astype("float32")],
            False,
        ),
        (
            "istft",
            lambda o, x: o.istft(o.stft(x, 8, 4, 8), 8, 4, 8),
            [SEQ[:, :, 0].copy()],
            False,
        ),
        (
            "rearrange",
            lambda o, x: o.rearrange(
                x, "b (h1 h) (w1 w) c -> (b h1 w1) h w c", h1=2, w1=3
            ),
            [IMG],
            False,
        ),
        (
            "ctc_loss",
            lambda o, t, x: o.ctc_loss(t, x, np.array([3, 2, 4]), np.array([10, 7, 9])),
            [
                np.array([[1, 2, 2, 0], [3, 1, 0, 0], [4, 4, 4, 1]], "int32"),
                _R.normal(size=(3, 10, 5)).astype("float32"),
            ],
            False,
        ),
        (
            "ctc_decode",
            lambda o, x: o.ctc_decode(x, np.array([4, 3, 2]), mask_index=1),
            [A[:, :, None].repeat(3, -1) * np.array([1.0, -1.0, 0.5], "float32")],
            False,
        ),
        # image
        ("resize_up", lambda o, x: o.image.resize(x, (9, 8)), [IMG], False),
        ("resize_down", lambda o, x: o.image.resize(x, (3, 4)), [IMG], False),
        (
            "resize_bicubic",
            lambda o, x: o.image.resize(x, (8, 8), "bicubic"),
            [IMG],
            False,
        ),
        (  # (TF's bicubic kernel, not JAX's: differs off the sample grid)
            "resize_bicubic_odd",
            lambda o, x: o.image.resize(x, (5, 11), "bicubic"),
            [IMG],
            False,
        ),
        (
            "resize_lanczos3_antialias",
            lambda o, x: o.image.resize(x, (3, 4), "lanczos3", antialias=True),
            [IMG],
            False,
        ),
        (  # integer images: rounded back to their dtype, as Keras does
            "resize_uint8_bicubic",
            lambda o, x: o.image.resize(x, (4, 9), "bicubic"),
            [(_R.random((1, 6, 5, 3)) * 255).astype("uint8")],
            False,
        ),
        ("rgb_to_grayscale", lambda o, x: o.image.rgb_to_grayscale(x), [IMG], False),
        (
            "pad_images",
            lambda o, x: o.image.pad_images(x, 1, 2, target_height=9, target_width=10),
            [IMG],
            False,
        ),
        (
            "crop_images",
            lambda o, x: o.image.crop_images(x, 1, 2, target_height=3, target_width=2),
            [IMG],
            False,
        ),
        (
            "map_coordinates",
            lambda o, x, c: o.image.map_coordinates(x, c, 1, "nearest"),
            [A, (_R.random((2, 4, 3)) * 6 - 1).astype("float32")],
            False,
        ),
        (
            "map_coordinates_wrap",
            lambda o, x, c: o.image.map_coordinates(x, c, 0, "wrap"),
            [A, (_R.random((2, 5)) * 6 - 1).astype("float32")],
            False,
        ),
        (
            "scale_and_translate",
            lambda o, x: o.image.scale_and_translate(
                x,
                (2, 9, 4, 3),
                np.array([1.5, 0.7], "float32"),
                np.array([0.5, -0.2], "float32"),
                (1, 2),
                "bilinear",
            ),
            [IMG],
            False,
        ),
        ("extract_patches", lambda o, x: o.image.extract_patches(x, 2), [IMG], False),
        (
            "extract_patches_same",
            lambda o, x: o.image.extract_patches(x, (3, 2), (2, 3), padding="same"),
            [IMG],
            False,
        ),
        (
            "gaussian_blur",
            lambda o, x: o.image.gaussian_blur(x, (5, 3), (2.0, 0.5)),
            [IMG],
            False,
        ),
        ("sobel_edges", lambda o, x: o.image.sobel_edges(x), [IMG], False),
        ("rgb_to_hsv", lambda o, x: o.image.rgb_to_hsv(x), [np.abs(IMG) / 4], False),
        ("hsv_to_rgb", lambda o, x: o.image.hsv_to_rgb(x), [np.abs(IMG) / 4], False),
        # control flow
        (
            "cond",
            lambda o, x: o.cond(o.sum(x) > 0, lambda: x * 2, lambda: -x),
            [A],
            True,
        ),
        (
            "while_loop",
            lambda o, x: o.while_loop(
                lambda i, v: i < 3, lambda i, v: (i + 1, v * 1.5), (0, x)
            )[1],
            [A],
            True,
        ),
        (
            "while_loop_single",
            lambda o: o.while_loop(lambda i: i < 5, lambda i: i + 2, 0),
            [],
            False,
        ),
        (
            "fori_loop",
            lambda o, x: o.fori_loop(0, 3, lambda i, v: v * 2 + 1.0, x),
            [A],
            True,
        ),
        (
            "scan",
            lambda o, x: o.scan(lambda c, v: (c + v, c * v), o.zeros(4), x),
            [A],
            True,
        ),
        (
            "scan_reverse",
            lambda o, x: o.scan(lambda c, v: (c + v, c), o.zeros(4), x, reverse=True),
            [A],
            True,
        ),
        ("map", lambda o, x: o.map(lambda v: o.sum(v * v), x), [A], True),
        (
            "switch",
            lambda o, x: o.switch(1, [lambda v: v, lambda v: v * 3], x),
            [A],
            True,
        ),
        (
            "vectorized_map",
            lambda o, x: o.vectorized_map(lambda v: v[::-1], x),
            [A],
            True,
        ),
        (
            "associative_scan",
            lambda o, x: o.associative_scan(lambda a, b: a + b, x),
            [A],
            True,
        ),
    ]
)

# Gradients are compared on a sample of the differentiable rows (CI time).
GRAD_SAMPLE = {
    "sqrt",
    "gelu",
    "softmax",
    "divide",
    "power",
    "sum",
    "max",
    "std",
    "clip",
    "concatenate_mixed",
    "take",
    "where",
    "matmul",
    "einsum",
    "solve",
    "categorical_crossentropy_logits",
    "sparse_categorical_crossentropy",
    "layer_normalization",
    "conv2d",
    "max_pool",
    "cond",
    "scan",
    "stop_gradient",
}
ROWS = [(n, f, xs, g and n in GRAD_SAMPLE) for n, f, xs, g in ROWS]

COMPILED = [
    "sin",
    "add",
    "sum",
    "matmul",
    "softmax",
    "conv2d",
    "cond",
    "where",
    "categorical_crossentropy",
    "max_pool",
    "take",
    "while_loop",
]


def _np(v):
    if isinstance(v, (tuple, list)):
        return [_np(a) for a in v]
    if isinstance(v, (int, float, bool, str)) or v is None:
        return v
    return np.asarray(v)


def _compare(got, want, name):
    if isinstance(want, (list, tuple)):
        assert isinstance(got, (list, tuple)), (name, type(got))
        assert len(got) == len(want), name
        for g, w in zip(got, want):
            _compare(g, w, name)
        return
    if isinstance(want, (int, float, str, bool)):
        assert got == want, (name, got, want)
        return
    assert got.shape == want.shape, (name, got.shape, want.shape)
    assert got.dtype == want.dtype, (name, got.dtype, want.dtype)
    if want.dtype.kind in "biu":
        np.testing.assert_array_equal(got, want, err_msg=name)
    else:
        tol = 2e-2 if want.dtype == np.float16 else 1e-4
        np.testing.assert_allclose(got, want, rtol=tol, atol=tol, err_msg=name)


def _sum_all(ops, out):
    if isinstance(out, (tuple, list)):
        return sum(_sum_all(ops, o) for o in out)
    return ops.sum(ops.cast(out, "float32"))


def _tf_grads(tf, fn, inputs):
    xs = [tf.constant(x) for x in inputs]
    with tf.GradientTape() as tape:
        for x in xs:
            tape.watch(x)
        y = _sum_all(tf.keras.ops, fn(tf.keras.ops, *xs))
    grads = tape.gradient(y, xs)
    return [None if g is None else np.asarray(tf.convert_to_tensor(g)) for g in grads]


def _jt_grads(fn, inputs):
    xs = [jaxtape.constant(x) for x in inputs]
    with jaxtape.GradientTape() as tape:
        for x in xs:
            tape.watch(x)
        y = _sum_all(jk, fn(jk, *xs))
    return [None if g is None else np.asarray(g) for g in tape.gradient(y, xs)]


@pytest.mark.parametrize("name, fn, inputs, grad", ROWS, ids=[r[0] for r in ROWS])
def test_matches_keras_on_tensorflow(name, fn, inputs, grad, tf):
    want = _np(fn(tf.keras.ops, *inputs))
    got = _np(fn(jk, *inputs))
    _compare(got, want, name)
    if grad:
        floats = [np.asarray(x).dtype.kind == "f" for x in inputs]
        tg = _tf_grads(tf, fn, inputs)
        jg = _jt_grads(fn, inputs)
        for t, j, f in zip(tg, jg, floats):
            if f and t is not None:
                assert j is not None, name
                np.testing.assert_allclose(j, t, rtol=2e-3, atol=2e-3, err_msg=name)


@pytest.mark.parametrize("name", COMPILED)
def test_compiled_matches_eager(name):
    _, fn, inputs, _ = next(r for r in ROWS if r[0] == name)
    eager = _np(fn(jk, *inputs))
    compiled = _np(jaxtape.function(lambda *xs: fn(jk, *xs))(*inputs))
    _compare(compiled, eager, name)


@pytest.mark.parametrize(
    "fn, error",
    [
        (lambda o: o.squeeze(o.ones((2, 3)), axis=0), ValueError),
        (lambda o: o.binary_crossentropy(o.ones((2, 3)), o.ones((3,))), ValueError),
        (lambda o: o.where(o.ones((2,)) > 0, o.ones((2,))), ValueError),
        (lambda o: o.normalize(o.ones((2,)), order=0), ValueError),
        (lambda o: o.qr(o.ones((2, 2)), mode="full"), ValueError),
        (lambda o: o.searchsorted(o.ones((2, 2)), o.ones((2,))), ValueError),
        (lambda o: o.fft(o.ones((2,))), ValueError),
        (lambda o: o.glu(o.ones((3,))), ValueError),
    ],
    ids=[
        "squeeze",
        "bce_shape",
        "where_one",
        "normalize",
        "qr",
        "searchsorted",
        "fft",
        "glu",
    ],
)
def test_errors_match_keras(fn, error, tf):
    with pytest.raises(error):
        fn(tf.keras.ops)
    with pytest.raises(error):
        fn(jk)


# -- keras.random --------------------------------------------------------------------
SAMPLERS = {
    "normal": (lambda s, **k: jr.normal((4000,), 1.0, 2.0, seed=s, **k), 1.0, 2.0),
    "uniform": (
        lambda s, **k: jr.uniform((4000,), -1.0, 3.0, seed=s, **k),
        1.0,
        4 / 12**0.5,
    ),
    "truncated_normal": (
        lambda s, **k: jr.truncated_normal((4000,), seed=s, **k),
        0.0,
        0.8796,
    ),
    "gamma": (lambda s, **k: jr.gamma((4000,), 3.0, seed=s, **k), 3.0, 3**0.5),
    "beta": (lambda s, **k: jr.beta((4000,), 2.0, 2.0, seed=s, **k), 0.5, 0.2236),
    "binomial": (
        lambda s, **k: jr.binomial((4000,), 10, 0.3, seed=s, **k),
        3.0,
        21**0.5 / 10**0.5,
    ),
    "randint": (lambda s, **k: jr.randint((4000,), 0, 10, seed=s), 4.5, 2.8723),
}


@pytest.mark.parametrize("name", list(SAMPLERS))
def test_random_distribution_and_seeding(name, tf):
    sample, mean, std = SAMPLERS[name]
    a = sample(7)
    keras_dtype = np.asarray(
        getattr(tf.keras.random, name)((2,), *_sampler_args(name), seed=1)
    ).dtype
    assert np.asarray(a).dtype == keras_dtype
    assert a.shape == (4000,)
    x = np.asarray(a, "float64")
    assert abs(x.mean() - mean) < 5 * std / 4000**0.5  # five standard errors
    assert abs(x.std() - std) < 0.1 * std
    np.testing.assert_array_equal(sample(7), a)  # an int seed is stateless
    assert not np.array_equal(np.asarray(sample(8)), np.asarray(a))
    gen, gen2 = jr.SeedGenerator(3), jr.SeedGenerator(3)
    first, second = sample(gen), sample(gen)
    assert not np.array_equal(np.asarray(first), np.asarray(second))
    np.testing.assert_array_equal(sample(gen2), first)  # same seed, same sequence


def _sampler_args(name):
    return {
        "gamma": (3.0,),
        "beta": (2.0, 2.0),
        "binomial": (10, 0.3),
        "randint": (0, 10),
    }.get(name, ())


def test_random_dropout_shuffle_categorical(tf):
    x = jaxtape.ones((200, 50))
    y = jr.dropout(x, 0.3, seed=1)
    vals = np.unique(np.asarray(y))
    np.testing.assert_allclose(vals, [0.0, 1 / 0.7], rtol=1e-6)
    dropped = float(np.mean(np.asarray(y) == 0))
    assert abs(dropped - 0.3) < 5 * (0.3 * 0.7 / 10000) ** 0.5  # binomial: 5 sigma
    y2 = jr.dropout(x, 0.5, noise_shape=(None, 1), seed=2)
    assert np.all(np.asarray(y2) == np.asarray(y2)[:, :1])
    with jaxtape.GradientTape() as tape:
        tape.watch(x)
        out = jk.sum(jr.dropout(x, 0.3, seed=1))
    np.testing.assert_allclose(np.asarray(tape.gradient(out, x)), np.asarray(y))
    s = jr.shuffle(jk.arange(10), seed=3)
    assert sorted(np.asarray(s).tolist()) == list(range(10))
    np.testing.assert_array_equal(jr.shuffle(jk.arange(10), seed=3), s)
    c = jr.categorical(np.log([[0.1, 0.9], [0.9, 0.1]]).astype("float32"), 2000, seed=4)
    want = tf.keras.random.categorical(np.zeros((2, 2), "float32"), 3, seed=4)
    assert c.shape == (2, 2000) and np.asarray(c).dtype == np.asarray(want).dtype
    five_sigma = 5 * (0.9 * 0.1 / 2000) ** 0.5
    np.testing.assert_allclose(np.asarray(c).mean(axis=1), [0.9, 0.1], atol=five_sigma)


def test_random_seed_generator_advances_inside_function():
    gen = jr.SeedGenerator(5)
    step = jaxtape.function(lambda: jr.uniform((3,), seed=gen))
    a, b = np.asarray(step()), np.asarray(step())
    assert not np.array_equal(a, b)
    fresh = jr.SeedGenerator(5)
    np.testing.assert_array_equal(np.asarray(jr.uniform((3,), seed=fresh)), a)


def test_random_errors_match_keras(tf):
    for mod in (tf.keras.random, jr):
        with pytest.raises(ValueError):
            mod.uniform((2,), dtype="int32")
        with pytest.raises(ValueError):
            mod.normal((2,), seed="x")


def test_vectorize_applies_elementwise_with_broadcasting():
    x, y = A[:2, :3], V[:3]
    f = jk.vectorize(lambda a, b: jk.maximum(a, b) * 2)
    got = f(x, y)
    np.testing.assert_allclose(np.asarray(got), np.maximum(x, y) * 2)
    assert got.shape == (2, 3)
