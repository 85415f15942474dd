"""The segmented backward pass of programs over the compile limit
(`autodiff/segments.py`) gives the gradients of the whole-program VJP.

Each case differentiates the same computation twice: with the default limit
(one program: compiled `jax.vjp`) and with a limit of 4 ops cut into
segments of 3 (so every case crosses several segment boundaries), and with
`jax.grad` of the same function written in jax.numpy where one is easy.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxtape as tf
from jaxtape._src.autodiff import segments

experimental = tf.config.experimental


@pytest.fixture
def segmented(monkeypatch):
    """Runs its block with tiny programs and segments, then restores."""

    class Mode:
        def __enter__(self):
            self.saved = experimental.get_max_compiled_ops()
            experimental.set_max_compiled_ops(4)
            monkeypatch.setattr(segments, "SEGMENT_OPS", 3)
            segments.make_vjp.cache_clear()

        def __exit__(self, *exc):
            experimental.set_max_compiled_ops(self.saved)
            monkeypatch.setattr(segments, "SEGMENT_OPS", 200)
            segments.make_vjp.cache_clear()

    return Mode()


def both(segmented, fn, repeats=3):
    """`fn()`'s result (a list of arrays) whole, then segmented; the segmented
    run is repeated so that its compiled segments are used too."""
    whole = [np.asarray(g) for g in fn()]
    with segmented:
        before = tf.autodiff.cache_stats()["uncompiled"]
        runs = [[np.asarray(g) for g in fn()] for _ in range(repeats)]
        assert tf.autodiff.cache_stats()["uncompiled"] > before
    for run in runs:
        for a, b in zip(whole, run):
            np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)
    return whole


def _rng(seed=0):
    return np.random.default_rng(seed)


def test_a_chain_matches_whole_program_and_jax_grad(segmented):
    x0 = np.float32(1.01)
    x = tf.constant(x0)

    def fn():
        with tf.GradientTape() as tape:
            tape.watch(x)
            y = x
            for _ in range(20):
                y = y * x + 1.0
        return [tape.gradient(y, x)]

    def f(x):
        y = x
        for _ in range(20):
            y = y * x + 1.0
        return y

    (g,) = both(segmented, fn)
    np.testing.assert_allclose(g, jax.grad(f)(x0), rtol=1e-5)


def test_variables_read_many_times_and_several_sources(segmented):
    w0, b0 = _rng().normal(size=(4, 4)).astype(np.float32), np.float32(0.5)
    w, b = tf.Variable(w0), tf.Variable(b0)
    v0 = _rng(1).normal(size=(4,)).astype(np.float32)

    def fn():
        with tf.GradientTape() as tape:
            h = tf.constant(v0)
            for _ in range(5):
                h = tf.tanh(tf.reshape(tf.matmul(w, tf.reshape(h, [4, 1])), [4]) + b)
            loss = tf.reduce_sum(h * h)
        return tape.gradient(loss, [w, b])

    def f(w, b):
        h = jnp.asarray(v0)
        for _ in range(5):
            h = jnp.tanh(w @ h + b)
        return jnp.sum(h * h)

    gw, gb = both(segmented, fn)
    jw, jb = jax.grad(f, argnums=(0, 1))(w0, b0)
    np.testing.assert_allclose(gw, jw, rtol=1e-4, atol=1e-6)
    np.testing.assert_allclose(gb, jb, rtol=1e-4, atol=1e-6)


def test_multi_output_ops_several_targets_and_output_gradients(segmented):
    x0 = _rng(2).normal(size=(6,)).astype(np.float32)
    x = tf.Variable(x0)

    def fn():
        with tf.GradientTape() as tape:
            a, b, c = tf.split(tf.sin(x) * 2.0, 3)
            y1 = tf.reduce_sum(a * b) + 1.0
            y2 = tf.exp(c) * a
            y2 = y2 + b
        return [
            tape.gradient(
                [y1, y2],
                x,
                output_gradients=[tf.constant(2.0), tf.constant([1.0, -1.0])],
            )
        ]

    both(segmented, fn)


def test_gradient_with_respect_to_an_intermediate_tensor(segmented):
    x = tf.constant(np.float32(0.7))

    def fn():
        with tf.GradientTape(persistent=True) as tape:
            tape.watch(x)
            h = tf.sin(x) * x
            h2 = h * 3.0
            y = tf.cos(h2) + h * x
            y = y * y
        return tape.gradient(y, [x, h, h2])

    both(segmented, fn)


def test_unconnected_sources_integer_ops_and_pending_values(segmented):
    x = tf.Variable(np.float32(1.5))
    unused = tf.Variable(np.float32(2.0))

    def fn():
        with tf.GradientTape() as tape:
            n = tf.cast(tf.round(x * 4.0), tf.int32) + 1  # no gradient
            y = x * tf.cast(n, tf.float32)
            z = tf.sin(y) * y
            z = z + tf.square(y)
        g = tape.gradient(z, [x, unused], unconnected_gradients="zero")
        return [*g, z, y]  # z and y were pending: filled by the backward

    both(segmented, fn)


def test_complex_values_follow_tf_conjugation(segmented):
    z0 = np.complex64(0.3 + 0.4j)
    z = tf.Variable(z0)

    def fn():
        with tf.GradientTape() as tape:
            y = z * z
            y = y * tf.exp(z)
            y = y + z
            r = tf.math.real(y * tf.math.conj(y))
        return [tape.gradient(r, z)]

    both(segmented, fn)


def test_second_derivative_through_a_segmented_backward(segmented):
    x0 = np.float32(0.9)
    x = tf.Variable(x0)

    def fn():
        with tf.GradientTape() as outer:
            with tf.GradientTape() as inner:
                y = x
                for _ in range(4):
                    y = tf.sin(y) * x
            g = inner.gradient(y, x)
        return [g, outer.gradient(g, x)]

    def f(x):
        y = x
        for _ in range(4):
            y = jnp.sin(y) * x
        return y

    g, gg = both(segmented, fn)
    np.testing.assert_allclose(g, jax.grad(f)(x0), rtol=1e-5)
    np.testing.assert_allclose(gg, jax.grad(jax.grad(f))(x0), rtol=1e-4)


def test_repeated_segments_share_one_compile(segmented):
    x = tf.constant(np.float32(1.001))

    def fn():
        with tf.GradientTape() as tape:
            tape.watch(x)
            y = x
            for _ in range(30):  # 60 ops: 20 segments of 3, all alike but the ends
                y = y * x + 1.0
        return [tape.gradient(y, x)]

    before = segments.cache.stats("segment")
    with segmented:
        for _ in range(3):
            fn()
        after = segments.cache.stats("segment")
    stats = {k: after[k] - before[k] for k in ("compiles", "hits")}
    # A handful of distinct segments (first, middle, last; forward and
    # backward), not one per segment.
    assert stats["compiles"] <= 12, stats
    assert stats["hits"] >= 100, stats
