"""TF's `tf.debugging.assert_shapes`: symbolic shape constraints across tensors.

jaxtape's shapes are static, eagerly and while `jaxtape.function` traces, so
every constraint is decided here, in Python, with TF's `ValueError` texts
(TF's static-shape path); nothing is added to a compiled program.

Layer L1: imports `core`.
"""

from __future__ import annotations

import numpy as np

from jaxtape._src.core import dtypes
from jaxtape._src.core.dispatch import to_value


def _shape_of(x) -> tuple:
    shape = getattr(x, "shape", None)
    if shape is None:
        shape = np.shape(to_value(x))
    return tuple(int(d) for d in shape)


def _dtype_name(x) -> str:
    dtype = getattr(x, "dtype", None)
    if dtype is None:
        dtype = to_value(x).dtype
    return dtypes.as_dtype(dtype).name


def _known(size) -> bool:
    if size is None:
        return False
    try:
        int(size)
    except (ValueError, TypeError):
        return False
    return True


def assert_shapes(shapes, data=None, summarize=None, message=None, name=None):
    """Asserts shapes and dimension sizes agree (TF's `tf.debugging.assert_shapes`).

    `shapes` is a list of `(tensor, shape)` pairs (or a dict). Each shape is
    an iterable of dimension specs: an integer (that size), a string symbol
    (the same size wherever the symbol appears), `None` or `'.'` (any size);
    a first entry `...` or `'*'` allows any number of leading dimensions. A
    scalar counts as rank 1, size 1. A `None` shape is no constraint.

    >>> x, y = jaxtape.zeros([2, 3]), jaxtape.zeros([2, 4])
    >>> jaxtape.debugging.assert_shapes([(x, ("N", "Q")), (y, ("N", "D"))])

    Raises `ValueError` with TF's text when a rank or size differs. `data`
    and `summarize` (what TF's run-time Assert prints) are accepted: shapes
    are always known here, so that run-time path never runs.
    """
    del data, summarize, name  # (see the docstring)
    if isinstance(shapes, dict):
        shapes = shapes.items()
    prefix = f"{message}.  " if message else ""
    checks = []
    for x, spec in shapes:
        if spec is None:
            continue
        shape, label = _shape_of(x), f"shape={_shape_text(x)} dtype={_dtype_name(x)}"
        if not (hasattr(spec, "__iter__") or hasattr(spec, "__getitem__")):
            raise ValueError(
                f"{prefix}Tensor {label}.  Specified shape must be an iterable.  "
                "An iterable has the attribute `__iter__` or `__getitem__`.  "
                f"Received specified shape: {spec}"
            )
        spec = tuple(spec)
        innermost = False
        for i, symbol in enumerate(spec):
            if symbol is Ellipsis or (isinstance(symbol, str) and symbol == "*"):
                if i != 0:
                    raise ValueError(
                        f"{prefix}Tensor {label} specified shape index {i}.  Symbol "
                        "`...` or `*` for a variable number of unspecified "
                        "dimensions is only allowed as the first entry"
                    )
                innermost = True
        symbols = spec[1:] if innermost else spec
        checks.append((x, label, innermost, shape or (1,), symbols or (1,)))
    for x, _, innermost, _, symbols in checks:
        _check_rank(prefix, _shape_of(x), len(symbols), innermost)
    specified: dict = {}
    for x, label, innermost, sizes, symbols in checks:
        for i, symbol in enumerate(symbols):
            if symbol is None or (isinstance(symbol, str) and symbol == "."):
                continue
            dim = i - len(symbols) if innermost else i
            actual = sizes[dim]
            if _known(symbol):
                want, text = int(symbol), "Specified explicitly"
            elif symbol in specified:
                want, by, at = specified[symbol]
                text = f"Specified by tensor {by} dimension {at}"
            else:
                specified[symbol] = (actual, label, dim)
                continue
            if actual != want:
                raise ValueError(
                    f"{prefix}{text}.  Tensor {label} dimension {dim} must have size "
                    f"{want}.  Received size {actual}, shape {_shape_text(x)}"
                )


def _shape_text(x) -> str:
    shape = _shape_of(x)
    return f"({shape[0]},)" if len(shape) == 1 else str(shape)


def _check_rank(prefix, shape, rank, innermost) -> None:
    actual = len(shape)
    if innermost:
        if rank in (0, 1) or actual >= rank:
            return
        need = f"at least {rank}"
    elif rank in (0, 1):
        if actual in (0, 1):
            return
        need = "in (0, 1)"
    else:
        if actual == rank:
            return
        need = str(rank)
    shown = f"({shape[0]},)" if actual == 1 else str(tuple(shape))
    raise ValueError(
        f"{prefix}Tensor  must have rank {need}.  Received rank {actual}, shape {shown}"
    )
