"""Unknown ranks and declared Variable shapes, as TF has them.

`TensorShape(None)` is TF's unknown rank (not the scalar shape), a
`TensorSpec(None)` in an `input_signature` takes tensors of any rank, and a
Variable made with `shape=[None]` or `shape=TensorShape(None)` takes
assignments of any compatible size, also between and inside compiled calls
(each new size traces once). Each row runs under TF and jaxtape.
"""

import numpy as np
import pytest


def _outcome(fn):
    try:
        return repr(fn())
    except Exception as e:  # noqa: BLE001 - the exception is the result
        return f"raises {type(e).__name__}: {e}"


SHAPE_ROWS = {
    "rank": lambda m: m.TensorShape(None).rank,
    "dims": lambda m: m.TensorShape(None).dims,
    "as_list": lambda m: m.TensorShape(None).as_list(),
    "len": lambda m: len(m.TensorShape(None)),
    "bool": lambda m: bool(m.TensorShape(None)),
    "iterate": lambda m: list(m.TensorShape(None)),
    "index": lambda m: m.TensorShape(None)[0],
    "slice": lambda m: m.TensorShape(None)[1:],
    "str": lambda m: str(m.TensorShape(None)),
    "repr": lambda m: repr(m.TensorShape(None)),
    "equal unknown": lambda m: m.TensorShape(None) == m.TensorShape(None),
    "equal scalar": lambda m: m.TensorShape(None) == m.TensorShape([]),
    "compatible": lambda m: m.TensorShape(None).is_compatible_with([2, 3]),
    "compatible other way": lambda m: m.TensorShape([2]).is_compatible_with(
        m.TensorShape(None)
    ),
    "merge": lambda m: m.TensorShape(None).merge_with([2, None]),
    "merge other way": lambda m: m.TensorShape([2, None]).merge_with(
        m.TensorShape(None)
    ),
    "concatenate": lambda m: m.TensorShape([2]).concatenate(m.TensorShape(None)),
    "ranks differ": lambda m: m.TensorShape([2]).most_specific_compatible_shape([2, 3]),
    "with_rank": lambda m: m.TensorShape(None).with_rank(2),
    "num_elements": lambda m: m.TensorShape(None).num_elements(),
    "fully defined": lambda m: m.TensorShape(None).is_fully_defined(),
    "spec shape": lambda m: str(m.TensorSpec(None).shape),
}


@pytest.mark.parametrize("row", SHAPE_ROWS)
def test_unknown_rank_shape_as_tf(tf, row):
    import jaxtape

    assert _outcome(lambda: SHAPE_ROWS[row](jaxtape)) == _outcome(
        lambda: SHAPE_ROWS[row](tf)
    )


def _any_rank_signature(m):
    @m.function(input_signature=[m.TensorSpec(None, m.float32)])
    def f(x):
        return m.reduce_sum(x) + m.cast(m.rank(x), m.float32)

    calls = [[[1.0, 2.0]], 3.0, [[1.0, 2.0, 3.0]], [1.0]]
    out = [float(f(m.constant(c))) for c in calls]
    try:
        f(m.constant([1], m.int32))
    except TypeError:
        out.append("TypeError")
    return out


def _declared_shapes(m, shape):
    v = m.Variable([1.0, 2.0], shape=shape)

    @m.function
    def total():
        return m.reduce_sum(v)

    @m.function
    def assign_inside(x):
        v.assign(x)
        return m.shape(v)

    out = [float(total())]
    v.assign([1.0, 2.0, 3.0])
    out.append(float(total()))
    out.append(assign_inside(m.constant([5.0, 6.0, 7.0, 8.0])).numpy().tolist())
    out.append(float(total()))
    out.append(str(v.shape))
    try:
        v.assign([[1.0]]) if shape != m.TensorShape(None) else v.assign(1.0)
        out.append(float(m.reduce_sum(v)))
    except ValueError:
        out.append("ValueError")
    return out


def test_unknown_rank_input_signature_as_tf(tf):
    import jaxtape

    assert _any_rank_signature(jaxtape) == _any_rank_signature(tf)


@pytest.mark.parametrize("shape", ["[None]", "TensorShape(None)"])
def test_variables_with_declared_shapes_as_tf(tf, shape):
    import jaxtape

    def run(m):
        return _declared_shapes(m, m.TensorShape(None) if "None)" in shape else [None])

    assert run(jaxtape) == run(tf)


def test_declared_shape_must_fit_the_initial_value(tf):
    import jaxtape

    for m in (tf, jaxtape):
        with pytest.raises(ValueError, match="compatible"):
            m.Variable([1.0, 2.0], shape=[3])
    # without a declared shape, a new size is refused (TF's eager assign)
    for m in (tf, jaxtape):
        v = m.Variable(np.zeros(2, np.float32), validate_shape=False)
        with pytest.raises(ValueError):
            v.assign([1.0, 2.0, 3.0])


def test_get_concrete_function_of_unknown_rank_says_why():
    import jaxtape

    @jaxtape.function(input_signature=[jaxtape.TensorSpec(None)])
    def f(x):
        return x

    with pytest.raises(NotImplementedError, match="unknown rank"):
        f.get_concrete_function()
