"""Variable, Module, random seeds and JAX interop."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxtape
import jaxtape as tf


def test_module_tracks_variables_in_attributes_lists_and_dicts():
    class Dense(tf.Module):
        def __init__(self, n_in, n_out, name=None):
            super().__init__(name=name)
            self.w = tf.Variable(tf.ones([n_in, n_out]), name="w")
            self.b = tf.Variable(tf.zeros([n_out]), name="b", trainable=False)

    class Net(tf.Module):
        def __init__(self):
            super().__init__(name="net")
            with self.name_scope:
                self.layers = [Dense(2, 3), Dense(3, 1)]
                self.extra = {"scale": tf.Variable(2.0, name="scale")}

    net = Net()
    assert len(net.variables) == 5 and len(net.trainable_variables) == 3
    assert len(net.submodules) == 2
    # As in TF: a Module's __init__ is not wrapped in its own name scope.
    assert net.layers[0].w.name == "net/w:0"
    assert net.extra["scale"].name == "net/scale:0"


def test_variable_assign_checks_shape_and_dtype():
    v = tf.Variable([1.0, 2.0])
    v.assign_add([1.0, 1.0])
    np.testing.assert_array_equal(v.numpy(), [2.0, 3.0])
    with pytest.raises(ValueError, match="shape"):
        v.assign([1.0, 2.0, 3.0])
    with pytest.raises(ValueError, match="dtype"):  # (TF's error: ValueError)
        v.assign(tf.constant([1.0, 2.0], tf.float64))
    with pytest.raises(TypeError, match="unhashable"):
        hash(v)


def test_random_set_seed_reproduces_sequence():
    tf.random.set_seed(7)
    a = [tf.random.normal([3]).numpy(), tf.random.uniform([2], seed=1).numpy()]
    tf.random.set_seed(7)
    b = [tf.random.normal([3]).numpy(), tf.random.uniform([2], seed=1).numpy()]
    for x, y in zip(a, b):
        np.testing.assert_array_equal(x, y)
    assert not np.array_equal(tf.random.normal([3]).numpy(), a[0])


def test_experimental_numpy_is_differentiable_and_register_op():
    tnp = tf.experimental.numpy
    # (Not at 0.5 or 1.5: there d/dx sin(pi x)/pi = cos(pi x) is 0, and both
    # sides give float32 rounding noise that differs between op-by-op and
    # compiled evaluation.)
    x = tf.constant([0.3, 1.2])
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = tnp.sum(tnp.sinc(x) * x)
    expected = jax.grad(lambda v: jnp.sum(jnp.sinc(v) * v))(x.numpy())
    np.testing.assert_allclose(tape.gradient(y, x).numpy(), expected, rtol=1e-5)

    @jax.custom_vjp
    def double_grad(v):
        return v

    double_grad.defvjp(lambda v: (v, None), lambda _, g: (2 * g,))
    op = tf.register_op(double_grad)
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = tf.reduce_sum(op(x))
    np.testing.assert_array_equal(tape.gradient(y, x).numpy(), [2.0, 2.0])


def test_tensors_flow_into_plain_jax_and_numpy():
    t = tf.constant([1.0, 4.0])
    np.testing.assert_array_equal(jnp.sqrt(t), [1.0, 2.0])
    np.testing.assert_array_equal(jnp.sqrt(jnp.asarray(t)), [1.0, 2.0])
    np.testing.assert_array_equal(jnp.sqrt(t.value), [1.0, 2.0])
    assert float(jnp.dot(t, t)) == 17.0
    assert np.asarray(t).dtype == np.float32
    assert t.ref() in {t.ref()}
    with pytest.raises(TypeError, match="unhashable"):
        {t}  # noqa: B018 - hashing is the point


def test_tensors_pass_through_jax_transformations():
    # A Tensor is a pytree: jit/grad/vmap hand the function a Tensor whose
    # value is a tracer, so jaxtape ops and jnp functions both work inside.
    t = tf.constant([1.0, 4.0])

    def f(a):
        return jnp.sum(tf.sin(a) * a)

    g = jax.grad(f)(t)
    assert isinstance(g, tf.Tensor)
    expected = jax.grad(lambda a: jnp.sum(jnp.sin(a) * a))(t.value)
    np.testing.assert_allclose(g.numpy(), expected, rtol=1e-6)
    doubled = jax.jit(lambda a: a * 2.0)(t)
    assert isinstance(doubled, tf.Tensor) and doubled.dtype == tf.float32
    np.testing.assert_array_equal(doubled.numpy(), [2.0, 8.0])
    rows = jax.vmap(lambda a: tf.reduce_sum(a * a))(
        tf.constant([[1.0, 2.0], [3.0, 4.0]])
    )
    np.testing.assert_array_equal(np.asarray(rows), [5.0, 25.0])


def test_python_scalars_stay_weak_next_to_tensors():
    # TF keeps the tensor's dtype for `x + 1.0`; jaxtape passes the scalar to
    # jnp weakly typed (no per-op conversion) with the same result dtype.
    for dtype in (tf.float16, tf.float32, tf.float64, tf.int32, tf.int64):
        x = tf.ones([2], dtype)
        assert (x + 1).dtype == dtype
        assert (2 * x).dtype == dtype
        assert tf.maximum(x, 0).dtype == dtype
    assert tf.add(1.0, 2.0).dtype == tf.float32  # only Python values: TF's defaults
    assert tf.add(1, 2).dtype == tf.int32
    with pytest.raises(TypeError, match="not an integer"):
        tf.ones([2], tf.int32) * 1.5
    with pytest.raises(tf.errors.InvalidArgumentError, match="AddV2"):
        tf.ones([2], tf.int32) + 1.5  # (TF's AddV2 raises this one, not TypeError)


def _scopes(m):
    seen = [m.get_current_name_scope()]
    with m.name_scope("outer"):
        with m.name_scope("inner"):
            seen.append(m.get_current_name_scope())
        with m.control_dependencies([m.constant(1.0)]):
            seen.append(float(m.constant(2.0) + 1.0))
        seen.append(m.get_current_name_scope())
    return seen


def test_name_scope_path_and_control_dependencies_as_tf(tf):
    assert _scopes(jaxtape) == _scopes(tf) == ["", "outer/inner", 3.0, "outer"]
