"""`keras.layers.InputSpec` and the check of inputs against it. Layer L5."""

from __future__ import annotations

from typing import Any


class InputSpec:
    """What a layer accepts (Keras 3's arguments, in Keras's order): `dtype`,
    `shape` (None entries free; sets `ndim`), `ndim`, `max_ndim`, `min_ndim`,
    `axes` ({axis: size}), `allow_last_axis_squeeze`, `name`, `optional`."""

    def __init__(self, dtype=None, shape=None, ndim=None, max_ndim=None,
                 min_ndim=None, axes=None, allow_last_axis_squeeze=False,
                 name=None, optional=False):  # fmt: skip
        self.dtype = None if dtype is None else _dtype_name(dtype)
        if shape is not None:
            self.shape = tuple(None if d is None else int(d) for d in shape)
            self.ndim = len(self.shape)
        else:
            self.shape, self.ndim = None, ndim
        self.max_ndim, self.min_ndim = max_ndim, min_ndim
        self.name, self.optional = name, optional
        self.allow_last_axis_squeeze = allow_last_axis_squeeze
        try:
            axes = axes or {}
            self.axes = {int(k): axes[k] for k in axes}
        except (ValueError, TypeError):
            raise TypeError(
                "Argument `axes` must be a dict with integer keys. Received: "
                f"axes={axes}"
            ) from None
        top = self.ndim if self.ndim else self.max_ndim
        if self.axes and top is not None:
            max_dim = top - 1
            if max(self.axes) > max_dim:
                raise ValueError(
                    f"Axis {max(self.axes)} is greater than the maximum allowed "
                    f"value: {max_dim}"
                )

    def __repr__(self) -> str:
        spec = [
            f"{k}={v}"
            for k, v in (
                ("dtype", self.dtype),
                ("shape", self.shape),
                ("ndim", self.ndim),
                ("max_ndim", self.max_ndim),
                ("min_ndim", self.min_ndim),
                ("axes", self.axes),
            )
            if v
        ]
        return f"InputSpec({', '.join(spec)})"

    def get_config(self) -> dict:
        return {
            "dtype": self.dtype,
            "shape": self.shape,
            "ndim": self.ndim,
            "max_ndim": self.max_ndim,
            "min_ndim": self.min_ndim,
            "axes": self.axes,
        }

    @classmethod
    def from_config(cls, config: dict) -> InputSpec:
        return cls(**config)


def _dtype_name(dtype) -> str:
    return str(getattr(dtype, "name", dtype))


def assert_input_compatibility(layer, spec: InputSpec, inputs: Any) -> None:
    """Keras 3's check of one input against `spec`, with its error texts."""
    shape = tuple(inputs.shape)
    rank = len(shape)
    where = (
        f"Input 0 with name '{spec.name}' of layer '{layer.name}' is incompatible "
        "with the layer"
    )
    if spec.ndim is not None and not spec.allow_last_axis_squeeze and rank != spec.ndim:
        raise ValueError(
            f"{where}: expected ndim={spec.ndim}, found ndim={rank}. Full shape "
            f"received: {shape}"
        )
    if spec.max_ndim is not None and rank > spec.max_ndim:
        raise ValueError(
            f"{where}: expected max_ndim={spec.max_ndim}, found ndim={rank}"
        )
    if spec.min_ndim is not None and rank < spec.min_ndim:
        raise ValueError(
            f"{where}: expected min_ndim={spec.min_ndim}, found ndim={rank}. Full "
            f"shape received: {shape}"
        )
    if spec.dtype is not None:
        dtype = _dtype_name(inputs.dtype)
        if dtype != spec.dtype:
            raise ValueError(
                f"{where}: expected dtype={spec.dtype}, found dtype={dtype}"
            )
    for axis, size in spec.axes.items():
        if size is not None and shape[axis] not in (size, None):
            raise ValueError(
                f"{where}: expected axis {axis} of input shape to have value {size}, "
                f"but received input with shape {shape}"
            )
    if spec.shape is not None:
        spec_shape, got = spec.shape, shape
        if spec.allow_last_axis_squeeze:
            if got and got[-1] == 1:
                got = got[:-1]
            if spec_shape and spec_shape[-1] == 1:
                spec_shape = spec_shape[:-1]
        for spec_dim, dim in zip(spec_shape, got):
            if spec_dim is not None and dim is not None and spec_dim != dim:
                raise ValueError(
                    f"{where}: expected shape={spec.shape}, found shape={got}"
                )
