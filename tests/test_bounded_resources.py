"""Bounded resources: long tapes, many shapes, retracing (each case in a fresh
process where memory is measured, so that the rest of the suite is spared)."""

import json
import logging
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import jaxtape
from jaxtape._src.core import compile_cache
from jaxtape._src.function.function import MAX_TRACES


def _run(script: str, env=None) -> dict:
    """Runs `script` in a fresh Python; it prints one JSON line, returned."""
    import os

    full_env = dict(os.environ, **(env or {}))
    out = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(script)],
        capture_output=True,
        text=True,
        timeout=600,
        env=full_env,
    )
    assert out.returncode == 0, out.stderr[-3000:]
    return json.loads(out.stdout.strip().splitlines()[-1])


_RSS = """
def rss_mb():
    with open('/proc/self/statm') as f:
        return int(f.read().split()[1]) * 4096 / 2**20
def peak_mb():
    # VmHWM is this process's own high-water mark; getrusage's ru_maxrss
    # is not reset by exec, so it would report the parent's size at fork
    # (an xdist worker's, after hundreds of tests).
    with open('/proc/self/status') as f:
        for line in f:
            if line.startswith('VmHWM:'):
                return int(line.split()[1]) / 1024
"""


@pytest.mark.skipif(sys.platform != "linux", reason="reads /proc for memory")
def test_a_10k_op_tape_differentiates_three_times_in_bounded_memory():
    # 10k recorded ops (a chain y <- 0.999 y + 0.001 sin(y) over 64x64) on a
    # persistent tape, differentiated three times: past the compile limit the
    # backward is never compiled whole but in segments (`autodiff/segments`),
    # so memory and time grow linearly (compiled whole, the second gradient
    # went past 9 GB and took minutes).
    result = _run(
        _RSS
        + """
import json, time
import numpy as np
import jaxtape as tf
x0 = np.random.default_rng(0).random((64, 64)).astype(np.float32)
x = tf.Variable(x0)
with tf.GradientTape(persistent=True) as tape:
    y = x
    for _ in range(2500):
        y = y * 0.999 + tf.sin(y) * 0.001
    s = tf.reduce_sum(y)
grads, seconds = [], []
for _ in range(3):
    t0 = time.perf_counter()
    grads.append(tape.gradient(s, x).numpy())
    seconds.append(time.perf_counter() - t0)
# The closed form, in NumPy: the product of the steps' derivatives.
y, d = x0.astype(np.float64), np.ones_like(x0, np.float64)
for _ in range(2500):
    d *= 0.999 + 0.001 * np.cos(y)
    y = y * 0.999 + np.sin(y) * 0.001
err = max(float(np.max(np.abs(g - d) / np.abs(d))) for g in grads)
print(json.dumps({"peak": peak_mb(), "seconds": seconds, "err": err,
                  "stats": tf.autodiff.cache_stats()}))
"""
    )
    assert result["err"] < 1e-3
    assert result["stats"]["compiles"] == 0
    assert result["stats"]["uncompiled"] == 3
    assert result["peak"] < 2048, result  # MB; the chain's own tensors are ~700
    assert max(result["seconds"]) < 60, result


@pytest.mark.skipif(sys.platform != "linux", reason="reads /proc for memory")
def test_200_shapes_keep_memory_bounded():
    # One eager op mix, a recorded gradient and a compiled function, each fed
    # 200 batch shapes: XLA compiles per shape (~1.5 MB an executable); the
    # compile guard, set to clear JAX's caches every 150 compiles (500 by
    # default), keeps memory bounded: ~270 MB of growth (unbounded, ~3.1 GB
    # here and ~9 GB over 500 shapes).
    result = _run(
        _RSS
        + """
import gc, json
import numpy as np
import jaxtape as tf
from jaxtape._src.core import compile_cache
w = tf.Variable(np.ones((8, 4), np.float32))
f = tf.function(lambda x: tf.reduce_sum(tf.nn.relu(x @ w)) * 2.0)
tf.config.experimental.set_compile_cache_limit(150)
start = rss_mb()
half = None
for i in range(1, 201):
    x = tf.constant(np.ones((i, 8), np.float32))
    y = tf.reduce_sum(tf.nn.relu(x @ tf.transpose(x))) * 2.0
    with tf.GradientTape() as tape:
        z = tf.reduce_sum(tf.nn.relu(x @ w)) * 2.0
    g = tape.gradient(z, w)
    v = f(x)
    assert abs(float(v) - float(z)) < 1e-3 * abs(float(z))
    if i == 100:
        half = rss_mb() - start
count = f.experimental_get_tracing_count()
print(json.dumps({"growth": rss_mb() - start, "half": half, "count": count,
                  "clears": compile_cache.guard.clears, "traces": len(f._traces)}))
"""
    )
    assert result["clears"] >= 2, result
    assert result["growth"] < 1500, result  # MB
    assert result["traces"] <= MAX_TRACES
    assert result["count"] == 200


def test_programs_longer_than_the_limit_stay_eager_with_the_same_gradient():
    x = jaxtape.Variable(np.linspace(0.1, 1.0, 6, dtype=np.float32))

    def grads():
        with jaxtape.GradientTape(persistent=True) as tape:
            y = x
            for _ in range(10):
                y = jaxtape.sin(y) * 0.5 + y
            s = jaxtape.reduce_sum(y)
        return [tape.gradient(s, x).numpy() for _ in range(3)]

    before = jaxtape.autodiff.cache_stats()
    compiled = grads()
    mid = jaxtape.autodiff.cache_stats()
    assert mid["compiles"] > before["compiles"]
    experimental = jaxtape.config.experimental
    saved = experimental.get_max_compiled_ops()
    experimental.set_max_compiled_ops(20)  # the slice has 30 ops
    try:
        eager = grads()
    finally:
        experimental.set_max_compiled_ops(saved)
    after = jaxtape.autodiff.cache_stats()
    assert after["compiles"] == mid["compiles"]
    assert after["uncompiled"] - mid["uncompiled"] == 3
    for a, b in zip(compiled, eager):
        np.testing.assert_allclose(a, b, rtol=1e-6)


def test_function_keeps_its_most_recent_traces():
    f = jaxtape.function(lambda x: x + 1.0)
    limit = MAX_TRACES
    for n in range(1, limit + 6):
        f(jaxtape.zeros([n]))
    assert len(f._traces) == limit
    assert f.experimental_get_tracing_count() == limit + 5
    f(jaxtape.zeros([limit + 5]))  # recent: no retrace
    assert f.experimental_get_tracing_count() == limit + 5
    np.testing.assert_array_equal(f(jaxtape.zeros([1])).numpy(), [1.0])  # dropped
    assert f.experimental_get_tracing_count() == limit + 6


def _retrace_warnings(m, caplog, logger):
    @m.function
    def f(x):
        return x * 2.0

    warned_at = []
    with caplog.at_level(logging.WARNING, logger=logger):
        for i in range(1, 13):
            caplog.clear()
            f(m.zeros([i]))
            if any(
                "triggered tf.function retracing" in r.getMessage()
                for r in caplog.records
            ):
                warned_at.append(i)
        for _ in range(3):
            f(m.zeros([1]))
    return warned_at


def test_frequent_retracing_warns_as_tf_does(tf, caplog):
    expected = _retrace_warnings(tf, caplog, "tensorflow")
    assert expected == [5, 6]  # TF's own rule: 5 of the last 10, twice at most
    assert _retrace_warnings(jaxtape, caplog, "jaxtape") == expected


def test_compile_limits_are_settings_of_config_experimental():
    experimental = jaxtape.config.experimental
    saved = experimental.get_compile_cache_limit()
    try:
        experimental.set_compile_cache_limit(123)
        assert compile_cache.guard.limit == 123
    finally:
        experimental.set_compile_cache_limit(saved)
    for setter in (
        experimental.set_compile_cache_limit,
        experimental.set_max_compiled_ops,
    ):
        with pytest.raises(ValueError, match=">= 0"):
            setter(-1)
