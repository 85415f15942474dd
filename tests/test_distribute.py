"""jaxtape.distribute vs one device and vs real TF's MirroredStrategy.

Several devices need `XLA_FLAGS=--xla_force_host_platform_device_count=N`
before JAX starts, so the multi-device checks run in child processes
(tests/distribute_child.py, one JSON object each), started together: jaxtape
on 2 and 8 virtual CPU devices, TF 2.21 on 2 logical CPU devices.
"""

from __future__ import annotations

import importlib.util
import json
import os
import pathlib
import subprocess
import sys

import numpy as np
import pytest

import jaxtape

CHILD = pathlib.Path(__file__).with_name("distribute_child.py")
ALL = "training,manual_training,replica_semantics,datasets,errors"
RUNS = {
    ("jaxtape", 2): ALL,
    ("jaxtape", 8): "training,keras",
    ("tensorflow", 2): "manual_training,replica_semantics,datasets,errors",
}


@pytest.fixture(scope="module")
def children():
    """Each child's JSON (or its failure text), all started at once."""
    env = {k: v for k, v in os.environ.items() if k != "XLA_FLAGS"}
    procs = {}
    for (backend, n), checks in RUNS.items():
        if backend == "tensorflow" and importlib.util.find_spec("tensorflow") is None:
            continue
        procs[backend, n] = subprocess.Popen(
            [sys.executable, str(CHILD), backend, str(n), checks],
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            env=env,
        )
    out = {}
    for key, proc in procs.items():
        text, _ = proc.communicate(timeout=300)
        line = [ln for ln in text.splitlines() if ln.startswith("JSON")]
        out[key] = json.loads(line[-1][4:]) if line else text[-3000:]
    return out


def _result(children, backend, n):
    if (backend, n) not in children:
        pytest.skip("TensorFlow (the parity extra) is not installed")
    got = children[backend, n]
    assert isinstance(got, dict), got
    return got


@pytest.mark.parametrize("n", [2, 8])
def test_mirrored_training_equals_one_device(children, n):
    got = _result(children, "jaxtape", n)
    modes = ["compiled", "eager"] if n == 2 else ["compiled"]
    for mode in modes:
        assert got[f"train_{mode}_loss_diff"] < 1e-5, mode
        assert got[f"train_{mode}_vs_one_device"] < 1e-5, mode


@pytest.mark.parametrize("n", [2, 8])
def test_distributed_step_is_one_program_with_one_all_reduce(children, n):
    hlo = _result(children, "jaxtape", n)["hlo"]
    assert hlo["traces"] == 1
    # The gradients of all four variables (and the loss) in one all-reduce.
    assert hlo["all_reduce"] + hlo["all_reduce_start"] == 1


def test_keras_fit_evaluate_predict_on_8_replicas_equal_one_device(children):
    got = _result(children, "jaxtape", 8)["keras"]
    assert got["mirrored"] == 8
    (one, many), (one_eval, many_eval) = got["history"], got["evaluate"]
    for name in one:
        np.testing.assert_allclose(many[name], one[name], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(many_eval, one_eval, rtol=1e-5, atol=1e-6)
    assert got["predict_diff"] < 1e-5 and got["weights_diff"] < 1e-5


@pytest.mark.parametrize(
    "key", ["manual_losses", "manual_weights", "reduce_axis", "splits", "from_function"]
)
def test_matches_tensorflow_mirrored_strategy(children, key):
    ours, theirs = _result(children, "jaxtape", 2), _result(children, "tensorflow", 2)
    if key.startswith("manual"):
        np.testing.assert_allclose(
            np.concatenate([np.ravel(x) for x in ours[key]]),
            np.concatenate([np.ravel(x) for x in theirs[key]]),
            rtol=1e-5,
            atol=1e-6,
        )
    else:
        assert ours[key] == theirs[key]


@pytest.mark.parametrize("mode", ["eager", "compiled"])
def test_replica_context_and_aggregation_match_tensorflow(children, mode):
    ours, theirs = _result(children, "jaxtape", 2), _result(children, "tensorflow", 2)
    assert ours[f"replica_{mode}"] == theirs["replica_compiled"]


def test_errors_and_contexts_match_tensorflow(children):
    ours, theirs = _result(children, "jaxtape", 2), _result(children, "tensorflow", 2)
    assert ours["contexts"] == theirs["contexts"]
    for name, (kind, message) in theirs["errors"].items():
        got_kind, got_message = ours["errors"][name]
        assert got_kind == kind, name
        # (TF prints its values as `tf.Tensor(...)`, jaxtape as `jaxtape.Tensor`)
        assert got_message.replace("jaxtape.", "tf.") == message, name


# -- one replica, in this process ---------------------------------------------------
def test_default_strategy_and_contexts():
    assert not jaxtape.distribute.has_strategy()
    assert not jaxtape.distribute.in_cross_replica_context()
    ctx = jaxtape.distribute.get_replica_context()
    assert ctx is not None and ctx.num_replicas_in_sync == 1
    assert jaxtape.distribute.get_strategy().num_replicas_in_sync == 1
    strategy = jaxtape.distribute.OneDeviceStrategy("/cpu:0")
    with strategy.scope():
        assert jaxtape.distribute.get_strategy() is strategy
        assert jaxtape.distribute.get_replica_context() is None
        assert jaxtape.distribute.in_cross_replica_context()


def test_one_device_run_returns_plain_values_and_sums_nothing():
    strategy = jaxtape.distribute.OneDeviceStrategy("/cpu:0")
    with strategy.scope():
        v = jaxtape.Variable(1.0, aggregation=jaxtape.VariableAggregation.SUM)

    @jaxtape.function
    def step(x):
        def fn(x):
            v.assign_add(x)
            return jaxtape.nn.compute_average_loss(jaxtape.ones([4]) * x)

        return strategy.run(fn, args=(x,))

    out = step(jaxtape.constant(2.0))
    assert type(out) is jaxtape.Tensor and float(out) == 2.0
    assert float(v) == 3.0
    assert strategy.experimental_local_results(out) == (out,)


def test_input_context_and_reduce_op():
    ctx = jaxtape.distribute.InputContext(2, 1, 4)
    assert (ctx.num_input_pipelines, ctx.input_pipeline_id) == (2, 1)
    assert ctx.get_per_replica_batch_size(8) == 2
    assert str(ctx) == "jaxtape.distribute.InputContext(input pipeline id 1, total: 2)"
    assert str(jaxtape.distribute.ReduceOp.SUM) == "ReduceOp.SUM"
    with pytest.raises(ValueError, match="not divisible"):
        ctx.get_per_replica_batch_size(7)


def test_per_replica_repr_is_tfs():
    from jaxtape._src.distribute.values import PerReplica

    pr = PerReplica([jaxtape.constant(0), jaxtape.constant(1)])
    assert repr(pr) == (
        "PerReplica:{\n"
        "  0: <jaxtape.Tensor: shape=(), dtype=int32, numpy=0>,\n"
        "  1: <jaxtape.Tensor: shape=(), dtype=int32, numpy=1>\n}"
    )
