"""TF's remaining top-level names on strings, SparseTensors and RaggedTensors:
`fingerprint`, `edit_distance`, `ragged_fill_empty_rows` (and its `_grad`),
`type_spec_from_value`. Layer L2 (`structured`): imports `core`, `ops`.
"""

from __future__ import annotations

import jax
import jax.core
import jax.numpy as jnp
import numpy as np

from jaxtape._src.core import context, dtypes, errors
from jaxtape._src.core.dispatch import op, to_value
from jaxtape._src.core.tensor import Tensor, TensorShape, TensorSpec
from jaxtape._src.structured import sparse as _sparse
from jaxtape._src.structured.farmhash import fingerprint64
from jaxtape._src.structured.ragged import RaggedTensor, RaggedTensorSpec
from jaxtape._src.structured.strings import StringTensor, convert


# -- fingerprint ---------------------------------------------------------------------
def _le_bytes(h: int) -> list[int]:
    return list(h.to_bytes(8, "little"))


def _fingerprint_rows(rows: np.ndarray) -> np.ndarray:
    """TF's kernel: each row's bytes (little-endian memory) hashed, 8 bytes out."""
    rows = np.ascontiguousarray(rows.astype(rows.dtype.newbyteorder("<")))
    out = [_le_bytes(fingerprint64(r.tobytes())) for r in rows]
    return np.asarray(out, np.uint8).reshape(len(rows), 8)


def _fingerprint_strings(flat: np.ndarray, dim0: int) -> np.ndarray:
    hashes = np.asarray(
        [_le_bytes(fingerprint64(bytes(s))) for s in flat], np.uint8
    ).reshape(-1, 8)
    if dim0 == len(flat):
        return hashes
    # More than one string per row: the strings' fingerprints, concatenated
    # per row, are fingerprinted again (TF's FingerprintOp).
    return _fingerprint_rows(hashes.reshape(dim0, -1))


def fingerprint(data, method="farmhash64", name=None):
    """Fingerprints each row (first-dimension slice) of `data` (TF's
    `tf.fingerprint`): a `[len(data), 8]` uint8 tensor, each row FarmHash's
    Fingerprint64 of the row's bytes in little-endian order.

    Numbers hash their memory (so dtype and shape matter); for strings each
    string is hashed, and a row of several strings hashes the concatenation
    of their fingerprints, as in TF. Inside `jaxtape.function` numeric inputs
    are hashed by a host callback.
    """
    del name  # accepted for TF compatibility
    if method != "farmhash64":
        raise errors.invalid_argument(
            f"Unsupported fingerprint method: {method}", "Fingerprint"
        )
    if isinstance(data, StringTensor) or _is_text(data):
        flat = np.asarray(convert(data)._v)
        if flat.ndim < 1:
            raise _rank_error()
        dim0 = flat.shape[0]
        return Tensor(jnp.asarray(_fingerprint_strings(flat.reshape(-1), dim0)))
    value = to_value(data)
    if np.ndim(value) < 1:
        raise _rank_error()
    shape = np.shape(value)
    n = shape[0]
    if isinstance(value, jax.core.Tracer):
        out = jax.pure_callback(
            lambda v: _fingerprint_rows(np.asarray(v).reshape(n, -1)),
            jax.ShapeDtypeStruct((n, 8), np.uint8),
            value,
            vmap_method="sequential",
        )
        return Tensor(out)
    rows = np.asarray(value).reshape(n, -1)
    return Tensor(jnp.asarray(_fingerprint_rows(rows)))


def _is_text(x) -> bool:
    if isinstance(x, (str, bytes)):
        return True
    if isinstance(x, np.ndarray):
        return x.dtype.kind in "OSU"
    if isinstance(x, (list, tuple)):
        first = x
        while isinstance(first, (list, tuple)) and first:
            first = first[0]
        return isinstance(first, (str, bytes))
    return False


def _rank_error():
    return errors.invalid_argument(
        "`data` should have at least one dimension.", "Fingerprint"
    )


# -- edit_distance -------------------------------------------------------------------
def _sequences(sp, what: str) -> tuple[dict, np.ndarray]:
    sp = _sparse.sparse_arg(sp, what)
    idx = _sparse.host_array(sp.indices, "EditDistance", f"{what}.indices")
    shape = _sparse.host_array(sp.dense_shape, "EditDistance", f"{what}.dense_shape")
    vals = sp.values
    if isinstance(vals, StringTensor):
        vals = np.asarray(vals._v)
    else:
        vals = _sparse.host_array(vals, "EditDistance", f"{what}.values")
    order = np.lexsort(idx.T[::-1]) if len(idx) else np.arange(0)
    groups: dict = {}
    for k in order:
        groups.setdefault(tuple(idx[k, :-1].tolist()), []).append(vals[k])
    return groups, shape


def _levenshtein(a: list, b: list) -> int:
    prev = list(range(len(b) + 1))
    for i, x in enumerate(a, 1):
        cur = [i]
        for j, y in enumerate(b, 1):
            cur.append(min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (x != y)))
        prev = cur
    return prev[-1]


def edit_distance(hypothesis, truth, normalize=True, name="edit_distance"):
    """Levenshtein distances between the sequences of two SparseTensors (TF's
    `tf.edit_distance`): the last dimension indexes a sequence, the others
    where it sits; the result has the largest of both outer shapes, float32.

    With `normalize` each distance is divided by the truth's length (a
    missing truth gives inf, a missing hypothesis 1.0, as in TF). Computed on
    the host (eager only); not differentiable (as in TF).
    """
    del name  # accepted for TF compatibility
    hyp, h_shape = _sequences(hypothesis, "hypothesis")
    tru, t_shape = _sequences(truth, "truth")
    if len(h_shape) != len(t_shape):
        raise errors.invalid_argument(
            "hypothesis and truth should have the same rank; got "
            f"{len(h_shape)} and {len(t_shape)}",
            "EditDistance",
        )
    if hypothesis.values.dtype != truth.values.dtype:
        raise TypeError(
            "Input 'truth_values' of 'EditDistance' Op has type "
            f"{truth.values.dtype.name} that does not match type "
            f"{hypothesis.values.dtype.name} of argument 'hypothesis_values'."
        )
    out_shape = tuple(int(max(a, b)) for a, b in zip(h_shape[:-1], t_shape[:-1]))
    out = np.zeros(out_shape, np.float32)
    for loc in set(hyp) | set(tru):
        h, t = hyp.get(loc), tru.get(loc)
        if h is not None and t is not None:
            d = float(_levenshtein(h, t))
            out[loc] = d / len(t) if normalize else d
        elif h is not None:
            out[loc] = np.inf if normalize else len(h)
        else:
            out[loc] = 1.0 if normalize else len(t or ())
    return Tensor(jnp.asarray(out))


# -- ragged_fill_empty_rows ----------------------------------------------------------
@op("RaggedFillEmptyRows", inputs=("values", "default_value", "source"))
def _filled_values(values, default_value, source):
    taken = jnp.take(values, jnp.maximum(source, 0), axis=0)
    mask = (source >= 0).reshape((-1,) + (1,) * (values.ndim - 1))
    return jnp.where(mask, taken, default_value.astype(values.dtype))


def ragged_fill_empty_rows(value_rowids, values, nrows, default_value, name=None):
    """Gives each empty row of a ragged tensor one `default_value` (TF's
    `tf.ragged_fill_empty_rows`).

    Returns `(output_value_rowids, output_values, empty_row_indicator,
    reverse_index_map)`: `reverse_index_map[i]` is where `values[i]` went.
    Differentiable with respect to `values` and `default_value`; the sizes
    are computed on the host (eager, or from values known while tracing).
    """
    del name  # accepted for TF compatibility
    op_name = "RaggedFillEmptyRows"
    rowids = _sparse.host_array(value_rowids, op_name, "value_rowids").astype(np.int64)
    n = int(_sparse.host_array(nrows, op_name, "nrows"))
    if rowids.ndim != 1:
        raise errors.invalid_argument("value_rowids must be a vector", op_name)
    if np.ndim(to_value(default_value)) != 0:
        raise errors.invalid_argument("default_value must be a scalar", op_name)
    if len(rowids) and (np.any(np.diff(rowids) < 0) or rowids[-1] >= n):
        raise errors.invalid_argument(
            "value_rowids must be sorted and smaller than nrows", op_name
        )
    counts = np.bincount(rowids, minlength=n)[:n]
    empty = counts == 0
    out_counts = np.where(empty, 1, counts)
    starts = np.concatenate([[0], np.cumsum(out_counts)[:-1]]).astype(np.int64)
    first = np.concatenate([[0], np.cumsum(counts)[:-1]]).astype(np.int64)
    reverse = starts[rowids] + (np.arange(len(rowids)) - first[rowids])
    source = np.full(int(out_counts.sum()), -1, np.int64)
    source[reverse] = np.arange(len(rowids))
    out_rowids = np.repeat(np.arange(n, dtype=np.int64), out_counts)
    return (
        Tensor(jnp.asarray(out_rowids)),
        _filled_values(values, default_value, source),
        Tensor(jnp.asarray(empty)),
        Tensor(jnp.asarray(reverse.astype(np.int64))),
    )


@op("RaggedFillEmptyRowsGrad", inputs=("reverse_index_map", "grad_values"))
def _fill_grad(reverse_index_map, grad_values):
    d_values = jnp.take(grad_values, reverse_index_map, axis=0)
    used = jnp.zeros(grad_values.shape[0], bool).at[reverse_index_map].set(True)
    used = used.reshape((-1,) + (1,) * (grad_values.ndim - 1))
    return d_values, jnp.sum(jnp.where(used, 0, grad_values))


def ragged_fill_empty_rows_grad(reverse_index_map, grad_values, name=None):
    """The gradient of `ragged_fill_empty_rows` (TF's
    `tf.ragged_fill_empty_rows_grad`): `(d_values, d_default_value)`, the
    gradients at the moved values and the sum of those at the filled rows."""
    del name  # accepted for TF compatibility
    return _fill_grad(reverse_index_map, grad_values)


# -- type_spec_from_value ------------------------------------------------------------
def type_spec_from_value(value):
    """The TypeSpec describing `value` (TF's `tf.type_spec_from_value`): a
    `TensorSpec` for a Tensor or anything `convert_to_tensor` takes, a
    `RaggedTensorSpec` for a RaggedTensor.

    Differences from TensorFlow: SparseTensors and Variables (TF's
    `SparseTensorSpec`, `VariableSpec`) raise NotImplementedError.
    """
    if isinstance(value, Tensor):
        return TensorSpec(value.shape, value.dtype)
    if isinstance(value, RaggedTensor):
        return RaggedTensorSpec(
            value.shape, value.dtype, value.ragged_rank, value.row_splits.dtype
        )
    var_type = context.hooks.variable_type
    if _sparse.is_sparse(value) or (
        var_type is not None and isinstance(value, var_type)
    ):
        raise NotImplementedError(
            f"type_spec_from_value for a {type(value).__name__} is not supported in "
            "jaxtape (TF's SparseTensorSpec / VariableSpec)."
        )
    try:
        v = to_value(value)
    except (TypeError, ValueError):
        raise TypeError(
            f"Could not build a TypeSpec for {value!r} of unsupported type "
            f"{type(value)}."
        ) from None
    return TensorSpec(TensorShape(np.shape(v)), dtypes.of_array(np.dtype(v.dtype)))
