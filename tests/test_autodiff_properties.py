"""Property tests (hypothesis): tape gradients equal jax.vjp/jax.grad/jax.jacrev
of the same pure jnp function, for random compositions of ops on random shapes.

The examples are derandomized (`derandomize=True`): a fixed set per test, the
same in every run, so that a failure in CI reproduces anywhere (fresh examples
each run would make a rare counterexample a one-off CI failure)."""

import jax
import jax.numpy as jnp
import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

import jaxtape as tf

# (jaxtape op, jnp twin) pairs of shape-preserving smooth unary ops.
UNARY = [
    (tf.sin, jnp.sin),
    (tf.cos, jnp.cos),
    (tf.tanh, jnp.tanh),
    (tf.sigmoid, jax.nn.sigmoid),
    (tf.math.softplus, jax.nn.softplus),
    (tf.square, jnp.square),
    (lambda x: tf.exp(x * 0.3), lambda x: jnp.exp(x * 0.3)),
    (lambda x: tf.sqrt(x * x + 1.0), lambda x: jnp.sqrt(x * x + 1.0)),
    (lambda x: tf.math.log1p(x * x), lambda x: jnp.log1p(x * x)),
    (lambda x: tf.nn.softmax(x), lambda x: jax.nn.softmax(x, axis=-1)),
]
BINARY = [
    (tf.add, jnp.add),
    (tf.multiply, jnp.multiply),
    (tf.subtract, jnp.subtract),
    (tf.maximum, jnp.maximum),
    (lambda a, b: a / (b * b + 1.0), lambda a, b: a / (b * b + 1.0)),
]
REDUCE = [
    (lambda x: tf.reduce_sum(x), jnp.sum),
    (lambda x: tf.reduce_mean(x * x), lambda x: jnp.mean(x * x)),
    (lambda x: tf.reduce_logsumexp(x), jax.nn.logsumexp),
    (
        lambda x: tf.reduce_sum(tf.reduce_max(x, axis=-1)),
        lambda x: jnp.sum(jnp.max(x, axis=-1)),
    ),
]


@st.composite
def programs(draw):
    shape = tuple(draw(st.lists(st.integers(1, 4), min_size=1, max_size=3)))
    steps = draw(
        st.lists(st.tuples(st.booleans(), st.integers(0, 100)), min_size=1, max_size=6)
    )
    reducer = draw(st.integers(0, len(REDUCE) - 1))
    seed = draw(st.integers(0, 2**16))
    return shape, steps, reducer, seed


def _build(steps, reducer, lib):
    """The same composition over two inputs, in jaxtape (lib=0) or jnp (lib=1)."""

    def f(x, y):
        h = x
        for binary, k in steps:
            if binary:
                op = BINARY[k % len(BINARY)][lib]
                h = op(h, y)
            else:
                h = UNARY[k % len(UNARY)][lib](h)
        return REDUCE[reducer][lib](h)

    return f


@settings(max_examples=40, deadline=None, derandomize=True)
@given(programs())
def test_tape_gradient_equals_jax_grad(program):
    shape, steps, reducer, seed = program
    rng = np.random.default_rng(seed)
    x_np = rng.normal(size=shape).astype(np.float32)
    y_np = rng.normal(size=shape).astype(np.float32)
    f_tf, f_jnp = _build(steps, reducer, 0), _build(steps, reducer, 1)
    x, y = tf.constant(x_np), tf.Variable(y_np)
    with tf.GradientTape() as tape:
        tape.watch(x)
        out = f_tf(x, y)
    gx, gy = tape.gradient(out, [x, y], unconnected_gradients="zero")
    ex, ey = jax.grad(f_jnp, argnums=(0, 1))(x_np, y_np)
    np.testing.assert_allclose(out.numpy(), f_jnp(x_np, y_np), rtol=2e-5, atol=1e-5)
    np.testing.assert_allclose(gx.numpy(), ex, rtol=2e-4, atol=1e-5)
    np.testing.assert_allclose(gy.numpy(), ey, rtol=2e-4, atol=1e-5)


@settings(max_examples=25, deadline=None, derandomize=True)
@given(programs())
def test_nested_tapes_give_hessian_diagonal(program):
    shape, steps, reducer, seed = program
    steps = [(False, k) for _, k in steps]  # unary chains: elementwise Hessian
    rng = np.random.default_rng(seed)
    x_np = rng.normal(size=shape).astype(np.float32)
    y_np = np.zeros(shape, np.float32)
    f_tf, f_jnp = _build(steps, 0, 0), _build(steps, 0, 1)
    x = tf.constant(x_np)
    with tf.GradientTape() as outer:
        outer.watch(x)
        with tf.GradientTape() as inner:
            inner.watch(x)
            out = f_tf(x, tf.constant(y_np))
        g = inner.gradient(out, x)
    # For a sum of element-wise functions, d/dx sum(g) is the Hessian diagonal.
    h = outer.gradient(g, x)
    hess = jax.hessian(lambda v: f_jnp(v.reshape(shape), y_np))(x_np.reshape(-1))
    expected = np.diag(np.asarray(hess)).reshape(shape)
    if any(k % len(UNARY) == 9 for _, k in steps):  # softmax couples elements
        expected = np.asarray(hess).sum(axis=0).reshape(shape)
    np.testing.assert_allclose(h.numpy(), expected, rtol=5e-4, atol=5e-5)


@settings(max_examples=25, deadline=None, derandomize=True)
@given(programs())
def test_tape_jacobian_equals_jacrev(program):
    shape, steps, _, seed = program
    rng = np.random.default_rng(seed)
    x_np = rng.normal(size=shape).astype(np.float32)
    y_np = rng.normal(size=shape).astype(np.float32)

    def chain(lib):
        def f(x, y):
            h = x
            for binary, k in steps:
                h = (
                    BINARY[k % len(BINARY)][lib](h, y)
                    if binary
                    else UNARY[k % len(UNARY)][lib](h)
                )
            return h

        return f

    x = tf.constant(x_np)
    with tf.GradientTape() as tape:
        tape.watch(x)
        out = chain(0)(x, tf.constant(y_np))
    jac = tape.jacobian(out, x, unconnected_gradients="zero")
    expected = jax.jacrev(chain(1))(x_np, y_np)
    np.testing.assert_allclose(jac.numpy(), expected, rtol=2e-4, atol=1e-5)


@settings(max_examples=25, deadline=None, derandomize=True)
@given(st.integers(1, 5), st.integers(1, 5), st.integers(0, 2**16))
def test_matmul_chain_vjp_with_output_gradients(n, m, seed):
    rng = np.random.default_rng(seed)
    a_np = rng.normal(size=(n, m)).astype(np.float32)
    b_np = rng.normal(size=(m, n)).astype(np.float32)
    ct = rng.normal(size=(n, n)).astype(np.float32)
    a, b = tf.Variable(a_np), tf.Variable(b_np)
    with tf.GradientTape() as tape:
        out = tf.tanh(tf.matmul(a, b)) * tf.reduce_sum(a)
    ga, gb = tape.gradient(out, [a, b], output_gradients=tf.constant(ct))
    _, pull = jax.vjp(lambda a, b: jnp.tanh(a @ b) * jnp.sum(a), a_np, b_np)
    ea, eb = pull(ct)
    np.testing.assert_allclose(ga.numpy(), ea, rtol=2e-4, atol=1e-5)
    np.testing.assert_allclose(gb.numpy(), eb, rtol=2e-4, atol=1e-5)
