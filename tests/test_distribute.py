"""jaxtape.distribute vs one device and vs real TF's MirroredStrategy.

Several devices need `XLA_FLAGS=--xla_force_host_platform_device_count=N`
before JAX starts, so the multi-device checks run in child processes
(tests/distribute_child.py, one JSON object each), started together: jaxtape
on 2 and 8 virtual CPU devices, TF 2.21 on 2 logical CPU devices, and two
jaxtape workers (2 devices each) joined by TF_CONFIG through jax.distributed
on loopback.
"""

from __future__ import annotations

import importlib.util
import json
import os
import pathlib
import re
import socket
import subprocess
import sys

import numpy as np
import pytest

import jaxtape

CHILD = pathlib.Path(__file__).with_name("distribute_child.py")
PARITY = "manual_training@2,replica_semantics@2,datasets@2,errors@2"
RUNS = {  # one jaxtape process of 8 devices serves the 2-replica checks too
    ("jaxtape", 8): f"training@2,training@8,keras@8,checkpoint@4,{PARITY}",
    ("tensorflow", 2): PARITY,
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
    port = _free_port()
    workers = [f"127.0.0.1:{port}", f"127.0.0.1:{_free_port()}"]
    for i in range(2):  # two workers on loopback, 2 devices each
        config = {
            "cluster": {"worker": workers},
            "task": {"type": "worker", "index": i},
        }
        procs["worker", i] = subprocess.Popen(
            [sys.executable, str(CHILD), "jaxtape", "2", "multiworker@4"],
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            env={**env, "TF_CONFIG": json.dumps(config)},
        )
    workers = [f"127.0.0.1:{_free_port()}", f"127.0.0.1:{_free_port()}"]
    for i in range(2):  # worker 1 dies mid-run: worker 0 must fail within bounds
        config = {
            "cluster": {"worker": workers},
            "task": {"type": "worker", "index": i},
        }
        procs["killed", i] = subprocess.Popen(
            [sys.executable, str(CHILD), "jaxtape", "1", "killed_worker"],
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            env={
                **env,
                "TF_CONFIG": json.dumps(config),
                "JAXTAPE_HEARTBEAT_TIMEOUT": "10",
            },
        )
    out = {}
    for key, proc in procs.items():
        try:
            text, _ = proc.communicate(timeout=300)
        except subprocess.TimeoutExpired:  # (a hung worker ignores SIGTERM: JAX's
            proc.kill()  # preemption notifier catches it)
            text = proc.communicate()[0] + "\n[killed after 300 s]"
        if key[0] == "killed":
            out[key] = (proc.returncode, text[-20000:])
            continue
        line = [ln for ln in text.splitlines() if ln.startswith("JSON")]
        out[key] = json.loads(line[-1][4:]) if line else text[-3000:]
    return out


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _result(children, backend, n, check):
    if (backend, n) not in children:
        pytest.skip("TensorFlow (the parity extra) is not installed")
    got = children[backend, n]
    assert isinstance(got, dict), got
    return got[check]


def _ours(children, check):
    return _result(children, "jaxtape", 8, check)


def _tfs(children, check):
    return _result(children, "tensorflow", 2, check)


@pytest.mark.parametrize("n", [2, 8])
def test_mirrored_training_equals_one_device(children, n):
    got = _ours(children, f"training@{n}")
    modes = ["compiled", "eager"] if n == 2 else ["compiled"]
    for mode in modes:
        assert got[f"train_{mode}_loss_diff"] < 1e-5, mode
        assert got[f"train_{mode}_vs_one_device"] < 1e-5, mode


@pytest.mark.parametrize("n", [2, 8])
def test_distributed_step_is_one_program_with_one_all_reduce(children, n):
    hlo = _ours(children, f"training@{n}")["hlo"]
    assert hlo["traces"] == 1
    # The gradients of all four variables (and the loss) in one all-reduce.
    assert hlo["all_reduce"] + hlo["all_reduce_start"] == 1


def test_keras_fit_evaluate_predict_on_8_replicas_equal_one_device(children):
    got = _ours(children, "keras@8")["keras"]
    assert got["mirrored"] == 8
    (one, many), (one_eval, many_eval) = got["history"], got["evaluate"]
    for name in one:
        np.testing.assert_allclose(many[name], one[name], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(many_eval, one_eval, rtol=1e-5, atol=1e-6)
    assert got["predict_diff"] < 1e-5 and got["weights_diff"] < 1e-5


@pytest.mark.parametrize("worker", [0, 1])
def test_multi_worker_training_from_tf_config_equals_one_device(children, worker):
    got = _result(children, "worker", worker, "multiworker@4")["multiworker"]
    assert got["process"] == worker and got["replicas"] == 4
    assert got["should_checkpoint"] == (worker == 0)  # the chief's job, as in TF
    assert got["loss_diff"] < 1e-5 and got["weights_diff"] < 1e-5


def test_checkpoint_of_mirrored_state_restores_on_other_replica_counts(children):
    got = _ours(children, "checkpoint@4")["checkpoint"]
    assert got["changed"] and got["restored_diff"] == [0.0, 0.0]


def test_a_dead_worker_makes_the_others_fail_not_hang(children):
    code, text = children["killed", 0]
    assert code != 0, text[-2000:]  # (it returned within the fixture's timeout)
    assert "finished" not in text
    assert re.search(
        r"Gloo all-reduce failed|heartbeat timeout|another task died", text
    )
    assert children["killed", 1][0] == 3


@pytest.mark.parametrize(
    "check, key",
    [
        ("manual_training@2", "manual_losses"),
        ("manual_training@2", "manual_weights"),
        ("replica_semantics@2", "reduce_axis"),
        ("datasets@2", "splits"),
        ("datasets@2", "from_function"),
    ],
)
def test_matches_tensorflow_mirrored_strategy(children, check, key):
    ours, theirs = _ours(children, check)[key], _tfs(children, check)[key]
    if key.startswith("manual"):
        np.testing.assert_allclose(
            np.concatenate([np.ravel(x) for x in ours]),
            np.concatenate([np.ravel(x) for x in theirs]),
            rtol=1e-5,
            atol=1e-6,
        )
    else:
        assert ours == theirs


@pytest.mark.parametrize("mode", ["eager", "compiled"])
def test_replica_context_and_aggregation_match_tensorflow(children, mode):
    ours = _ours(children, "replica_semantics@2")[f"replica_{mode}"]
    assert ours == _tfs(children, "replica_semantics@2")["replica_compiled"]


def test_variable_made_in_an_eager_replica_thread_is_refused(children):
    kind, message = _ours(children, "errors@2")["variable_in_eager_run"]
    assert kind == "RuntimeError" and message.startswith("Variable")


def test_errors_and_contexts_match_tensorflow(children):
    ours, theirs = _ours(children, "errors@2"), _tfs(children, "errors@2")
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


def test_experimental_set_strategy_makes_it_current_everywhere():
    strategy = jaxtape.distribute.OneDeviceStrategy("/cpu:0")
    jaxtape.distribute.experimental_set_strategy(strategy)
    try:
        assert jaxtape.distribute.get_strategy() is strategy
        assert jaxtape.distribute.in_cross_replica_context()
        v = jaxtape.Variable(1.0)
        assert v._distribute_strategy is strategy  # made under it: mirrored
        with strategy.scope(), pytest.raises(RuntimeError, match="inside"):
            jaxtape.distribute.experimental_set_strategy(None)
    finally:
        jaxtape.distribute.experimental_set_strategy(None)
    assert not jaxtape.distribute.has_strategy()


def test_input_options_defaults_are_accepted_others_raise():
    strategy = jaxtape.distribute.OneDeviceStrategy("/cpu:0")
    ds = jaxtape.data.Dataset.range(4).batch(2)
    options = jaxtape.distribute.InputOptions()
    got = [
        x.numpy().tolist()
        for x in strategy.experimental_distribute_dataset(ds, options=options)
    ]
    assert got == [[0, 1], [2, 3]]
    mode = jaxtape.distribute.InputReplicationMode.PER_REPLICA
    bad = jaxtape.distribute.InputOptions(experimental_replication_mode=mode)
    with pytest.raises(NotImplementedError, match="InputOptions"):
        strategy.experimental_distribute_dataset(ds, options=bad)
