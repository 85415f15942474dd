"""`make_tensor_proto` / `make_ndarray`: TF's `TensorProto` messages, built
and read as TF's `tensor_util` does (the proto class and the byte layout are
`file_ops`'s, shared with `serialize_tensor`). Layer L4 (`io`).
"""

from __future__ import annotations

import numpy as np

from jaxtape._src.core import dtypes
from jaxtape._src.core.dispatch import to_value
from jaxtape._src.io import file_ops, host
from jaxtape._src.structured.strings import convert

# TF's `_TENSOR_CONTENT_TYPES`: stored as raw bytes when the proto holds more
# than one value; other dtypes (bool, complex, strings) use the typed fields.
_CONTENT = {
    "float16", "float32", "float64", "int32", "uint8", "int16", "int8", "int64",
    "uint16", "uint32", "uint64",
}  # fmt: skip
_FIELD = {
    "float32": "float_val", "float64": "double_val", "int32": "int_val",
    "int16": "int_val", "int8": "int_val", "uint8": "int_val", "uint16": "int_val",
    "int64": "int64_val", "uint32": "uint32_val", "uint64": "uint64_val",
    "bool": "bool_val",
}  # fmt: skip


def _as_array(values, dtype) -> np.ndarray:
    np_dt = None if dtype is None else dtypes.np_dtype(dtype)
    if host.is_strings(values) or (np_dt is not None and np_dt.kind == "O"):
        return np.asarray(convert(values)._v)
    try:
        return np.asarray(to_value(values, np_dt))
    except ValueError as e:
        raise TypeError(
            f"Failed to convert elements of {values!r} to Tensor. Consider casting "
            "elements to a supported type."
        ) from e


def make_tensor_proto(
    values, dtype=None, shape=None, verify_shape=False, allow_broadcast=False
):
    """A `TensorProto` holding `values` (TF's `tf.make_tensor_proto`): the same
    bytes as TF's (`SerializeToString()`), by TF's rules: more than one
    numeric value in `tensor_content`, otherwise the typed fields; a `shape`
    larger than the values stores them once (readers repeat the last).

    Raises TF's errors: ValueError when there are more values than `shape`
    holds, TypeError for a `shape` mismatch under `verify_shape` or
    `allow_broadcast`.

    Differences from TensorFlow: the message is tensorboardX's copy of TF's
    `TensorProto` class (same fields, same bytes), not TF's own class.
    """
    array = _as_array(values, dtype)
    if shape is None:
        shape, size, same = array.shape, array.size, True
    else:
        shape = [int(d) for d in shape]
        size = int(np.prod(shape, dtype=np.int64))
        same = size == array.size
        if allow_broadcast:
            if array.shape not in ((1,), ()) and array.size != size:
                raise TypeError(
                    f"Expected Tensor's shape: {tuple(shape)}, but got {array.shape}."
                )
        else:
            if verify_shape and array.shape != tuple(shape):
                raise TypeError(
                    f"Expected Tensor's shape: {tuple(shape)}, but got {array.shape}."
                )
            if array.size > size:
                raise ValueError(
                    "Too many elements provided. Takes at most "
                    f"{size}, but got {array.size}."
                )
    proto = file_ops._tensor_proto_class()()
    name = array.dtype.name
    proto.dtype = file_ops._DT[name]
    proto.tensor_shape.SetInParent()
    for d in shape:
        proto.tensor_shape.dim.add(size=d)
    flat = array.reshape(-1)
    if same and name in _CONTENT and size > 1:
        proto.tensor_content = flat.astype(flat.dtype.newbyteorder("<")).tobytes()
    elif name == "object":
        proto.string_val.extend(flat.tolist())
    elif name in ("float16", "bfloat16"):
        proto.half_val.extend(flat.view(np.uint16).tolist())
    elif name in ("complex64", "complex128"):
        field = proto.scomplex_val if name == "complex64" else proto.dcomplex_val
        pairs = np.stack([np.real(flat), np.imag(flat)], -1)
        field.extend(pairs.reshape(-1).tolist())
    else:
        getattr(proto, _FIELD[name]).extend(flat.tolist())
    return proto


def make_ndarray(tensor):
    """The NumPy array a `TensorProto` holds (TF's `tf.make_ndarray`); takes
    jaxtape's and TF's protos alike. Fewer values than the shape holds are
    padded with the last one, as in TF."""
    proto = file_ops._tensor_proto_class()()
    proto.ParseFromString(tensor.SerializeToString())
    np_name = file_ops._NP_OF_DT.get(int(proto.dtype))
    if np_name is None:
        raise TypeError(f"Unsupported tensor type: {proto.dtype}")
    np_dt = np.dtype(np_name)
    shape = tuple(d.size for d in proto.tensor_shape.dim)
    size = int(np.prod(shape, dtype=np.int64))
    if proto.tensor_content:
        values = np.frombuffer(proto.tensor_content, np_dt.newbyteorder("<"))
        return values.astype(np_dt).reshape(shape)
    values = file_ops._typed_values(proto, np_dt)
    if values.size == 0:
        return np.zeros(shape, np_dt) if np_dt.kind != "O" else np.full(shape, b"")
    if values.size < size:
        values = np.pad(values, (0, size - values.size), "edge")
    return values[:size].reshape(shape)
