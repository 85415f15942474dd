"""Variable, Module, random seeds and JAX interop."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

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
    with pytest.raises(TypeError, match="dtype"):
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
    x = tf.constant([0.5, 1.5])
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
    # JAX 0.10 no longer calls __jax_array__ inside jitted jnp functions, so
    # convert explicitly (jnp.asarray / t.value) before plain jnp calls.
    np.testing.assert_array_equal(jnp.sqrt(jnp.asarray(t)), [1.0, 2.0])
    np.testing.assert_array_equal(jnp.sqrt(t.value), [1.0, 2.0])
    assert np.asarray(t).dtype == np.float32
    assert t.ref() in {t.ref()}
    with pytest.raises(TypeError, match="unhashable"):
        {t}
