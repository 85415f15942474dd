"""Runs tf.distribute checks on N devices and prints one JSON object.

`python tests/distribute_child.py jaxtape N CHECKS` (N virtual CPU devices
through XLA_FLAGS, set here before JAX starts) or `... tensorflow N CHECKS`
(real TF with N logical CPU devices): the same code under both, so that
tests/test_distribute.py compares the two outputs key by key. CHECKS:
`name@replicas,...` (the MirroredStrategy of a check spans that many of the
devices; all of them by default), e.g. `training@2,training@8`.
"""

from __future__ import annotations

import contextlib
import json
import os
import sys

BACKEND, N = sys.argv[1], int(sys.argv[2])
os.environ["XLA_FLAGS"] = f"--xla_force_host_platform_device_count={N}"
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
os.environ.setdefault("JAX_PLATFORMS", "cpu")

import numpy as np  # noqa: E402

if BACKEND == "tensorflow":
    import tensorflow as tf

    cpu = tf.config.list_physical_devices("CPU")[0]
    tf.config.set_logical_device_configuration(
        cpu, [tf.config.LogicalDeviceConfiguration()] * N
    )
else:
    import jaxtape as tf

GB = 16  # the global batch
rng = np.random.default_rng(0)
X = rng.normal(size=(64, 20)).astype("float32")
Y = rng.integers(0, 5, size=64).astype("int64")
W0 = [
    (rng.normal(size=(20, 16)) * 0.3).astype("float32"),
    np.zeros(16, "float32"),
    (rng.normal(size=(16, 5)) * 0.3).astype("float32"),
    np.zeros(5, "float32"),
]
out: dict = {}


_strategies: dict = {}
REPLICAS = N  # the replicas of `mirrored()` for the check being run


def mirrored():
    """One MirroredStrategy per replica count for the whole run (TF's
    collective instance keys collide across several: "Shape mismatch in the
    collective instance")."""
    if REPLICAS not in _strategies:
        devices = [f"/cpu:{i}" for i in range(REPLICAS)]
        _strategies[REPLICAS] = tf.distribute.MirroredStrategy(devices)
    return _strategies[REPLICAS]


def model(ws, x):
    h = tf.nn.relu(tf.matmul(x, ws[0]) + ws[1])
    return tf.matmul(h, ws[2]) + ws[3]


def train(strategy, compiled, manual=False):
    """TF's "Custom training with tf.distribute.Strategy" tutorial step.

    `manual`: SGD by hand (gradients all-reduced, ONLY_FIRST_REPLICA
    variables) instead of Keras's Adam, whose `apply_gradients` inside a
    tf.function under TF 2.21's MirroredStrategy fails in TF itself ("You
    must feed a value for placeholder tensor 'cond/else/_1/cond/Placeholder'").
    """
    first = tf.VariableAggregation.ONLY_FIRST_REPLICA
    with strategy.scope():
        ws = [tf.Variable(w, aggregation=first if manual else None) for w in W0]
        opt = None if manual else tf.keras.optimizers.Adam(0.01)
        accuracy = tf.keras.metrics.SparseCategoricalAccuracy()

    def train_step(x, y):
        with tf.GradientTape() as tape:
            logits = model(ws, x)
            per_example = tf.nn.sparse_softmax_cross_entropy_with_logits(y, logits)
            loss = tf.nn.compute_average_loss(per_example, global_batch_size=GB)
        accuracy.update_state(y, logits)  # (in the replica: summed across them)
        grads = tape.gradient(loss, ws)
        if manual:
            ctx = tf.distribute.get_replica_context()
            grads = ctx.all_reduce(tf.distribute.ReduceOp.SUM, grads)
            for w, g in zip(ws, grads):
                w.assign_sub(0.5 * g)
        else:
            opt.apply_gradients(zip(grads, ws))
        return loss

    def distributed_train_step(x, y):
        per_replica = strategy.run(train_step, args=(x, y))
        return strategy.reduce(tf.distribute.ReduceOp.SUM, per_replica, axis=None)

    step = tf.function(distributed_train_step) if compiled else distributed_train_step
    ds = tf.data.Dataset.from_tensor_slices((X, Y)).batch(GB)
    losses = [
        float(step(x, y)) for x, y in strategy.experimental_distribute_dataset(ds)
    ]
    return [*losses, float(accuracy.result())], [w.numpy() for w in ws], step


def check_training():
    """Adam through `apply_gradients` on N replicas vs one device (jaxtape)."""
    one = tf.distribute.OneDeviceStrategy("/cpu:0")
    base_losses, base_w, _ = train(one, True)
    for compiled in (True, False) if REPLICAS <= 2 else (True,):
        losses, ws, step = train(mirrored(), compiled)
        key = "compiled" if compiled else "eager"
        out[f"train_{key}_loss_diff"] = float(
            np.abs(np.array(losses) - np.array(base_losses)).max()
        )
        out[f"train_{key}_vs_one_device"] = max(
            float(np.abs(a - b).max()) for a, b in zip(ws, base_w)
        )
        if compiled:
            out["hlo"] = hlo_of_step(step)


def check_manual_training():
    """Hand-written SGD with all_reduce: compared with TF's MirroredStrategy."""
    losses, ws, _ = train(mirrored(), True, manual=True)
    out["manual_losses"] = losses
    out["manual_weights"] = [w.ravel()[:6].tolist() for w in ws]


def hlo_of_step(step):
    """The compiled distributed step's HLO: programs and all-reduces per step."""
    strategy = mirrored()
    ds = tf.data.Dataset.from_tensor_slices((X, Y)).batch(GB)
    x, y = next(iter(strategy.experimental_distribute_dataset(ds)))
    concrete = step.get_concrete_function(x, y)
    trace = concrete._trace
    leaves = [x._global._value, y._global._value]
    text = trace._plain.lower(*trace.var_values(), *leaves).compile().as_text()
    lines = [ln for ln in text.splitlines() if " all-reduce(" in ln]
    return {
        "all_reduce": len(lines),
        "all_reduce_start": text.count("all-reduce-start("),
        "traces": len(step._traces),
    }


def check_replica_semantics():
    strategy = mirrored()
    agg = tf.VariableAggregation
    # (TF's eager run of this fn fails in TF itself: its collectives from the
    # replica threads mismatch, "Shape mismatch in the collective instance")
    for compiled in (True,) if BACKEND == "tensorflow" else (False, True):
        with strategy.scope():
            vs = tf.Variable(1.0, aggregation=agg.SUM)
            vm = tf.Variable(1.0, aggregation=agg.MEAN)
            vf = tf.Variable(1.0, aggregation=agg.ONLY_FIRST_REPLICA)
            vn = tf.Variable(1.0)

        def fn():
            ctx = tf.distribute.get_replica_context()
            x = tf.cast(ctx.replica_id_in_sync_group, tf.float32) + 1.0
            vs.assign_add(x)
            vm.assign(x)
            vf.assign(x * 10.0)
            vn.assign(5.0)  # the same on every replica
            return (
                ctx.replica_id_in_sync_group,
                ctx.all_reduce(tf.distribute.ReduceOp.SUM, x),
                ctx.all_reduce("MEAN", x * 2.0),
                tf.nn.compute_average_loss(tf.ones([4]) * x),
                tf.nn.scale_regularization_loss(x),
                ctx.merge_call(
                    lambda strategy, v: strategy.reduce("SUM", v, axis=None), args=(x,)
                ),
            )

        def step():
            return strategy.run(fn)

        if compiled:
            step = tf.function(step)
        ids, total, mean, avg, reg, merged = step()
        key = "compiled" if compiled else "eager"
        local = strategy.experimental_local_results
        out[f"replica_{key}"] = {
            "ids": [int(t) for t in local(ids)],
            "all_reduce_sum": [float(t) for t in local(total)],
            "all_reduce_mean": [float(t) for t in local(mean)],
            "compute_average_loss": [float(t) for t in local(avg)],
            "scale_regularization_loss": [float(t) for t in local(reg)],
            "merge_call": [float(t) for t in local(merged)],
            "reduce_sum": float(strategy.reduce("SUM", avg, axis=None)),
            "reduce_mean": float(strategy.reduce("MEAN", reg, axis=None)),
            "vars": [float(v.numpy()) for v in (vs, vm, vf, vn)],
            "repr": repr(total).splitlines()[0],
        }
    xs = strategy.run(
        lambda: (
            tf.ones([2, 3])
            * tf.cast(
                tf.distribute.get_replica_context().replica_id_in_sync_group, tf.float32
            )
        )
    )
    out["reduce_axis"] = {
        "sum0": strategy.reduce("SUM", xs, axis=0).numpy().tolist(),
        "mean0": strategy.reduce("MEAN", xs, axis=0).numpy().tolist(),
        "gather0": strategy.gather(xs, axis=0).numpy().tolist(),
        "gather1": strategy.gather(xs, axis=1).numpy().tolist(),
    }


def check_datasets():
    strategy = mirrored()
    splits = {}
    for total, batch in ((5, 5), (1, 1), (7, 4), (16, 8)):
        ds = tf.data.Dataset.range(total).batch(batch)
        splits[f"{total}/{batch}"] = [
            [t.numpy().tolist() for t in strategy.experimental_local_results(x)]
            for x in strategy.experimental_distribute_dataset(ds)
        ]
    out["splits"] = splits

    def dataset_fn(ctx):
        size = ctx.get_per_replica_batch_size(2 * REPLICAS)
        return tf.data.Dataset.range(4 * REPLICAS).batch(size)

    out["from_function"] = [
        [t.numpy().tolist() for t in strategy.experimental_local_results(x)]
        for x in strategy.distribute_datasets_from_function(dataset_fn)
    ]


def check_keras():
    """Keras fit/evaluate/predict under `strategy.scope()` vs one device
    (100 samples in batches of 16: a last partial batch of 4)."""
    x = rng.normal(size=(100, 8)).astype("float32")
    y = rng.integers(0, 3, size=100)

    def make():
        tf.keras.utils.set_random_seed(1)
        model = tf.keras.Sequential(
            [
                tf.keras.Input((8,)),
                tf.keras.layers.Dense(16, activation="relu"),
                tf.keras.layers.Dense(3),
            ]
        )
        model.compile(
            optimizer=tf.keras.optimizers.Adam(0.01),
            loss=tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True),
            metrics=["accuracy"],
        )
        return model

    def run(model):
        history = model.fit(x, y, batch_size=16, epochs=2, verbose=0, shuffle=False)
        return (
            history.history,
            model.evaluate(x, y, verbose=0),
            model.predict(x, verbose=0),
            model.get_weights(),
        )

    one = run(make())
    strategy = mirrored()
    with strategy.scope():
        model = make()
    many = run(model)
    out["keras"] = {
        "history": [one[0], many[0]],
        "evaluate": [one[1], many[1]],
        "predict_diff": float(np.abs(one[2] - many[2]).max()),
        "weights_diff": max(
            float(np.abs(a - b).max()) for a, b in zip(one[3], many[3])
        ),
        "mirrored": len(model.weights[0]._value.devices()),
    }


def check_multiworker():
    """TF_CONFIG's cluster (this process one worker): the tutorial step on
    every worker's devices vs one local device with the same global batch."""
    index = json.loads(os.environ["TF_CONFIG"])["task"]["index"]
    # (worker 1 through TF's resolver object, worker 0 through TF_CONFIG alone)
    resolver = tf.distribute.cluster_resolver.TFConfigClusterResolver()
    strategy = tf.distribute.MultiWorkerMirroredStrategy(
        cluster_resolver=resolver if index == 1 else None
    )
    import jax

    losses, ws, _ = train(strategy, True)
    base_losses, base_w, _ = train(tf.distribute.OneDeviceStrategy("/cpu:0"), True)
    out["multiworker"] = {
        "process": jax.process_index(),
        "replicas": strategy.num_replicas_in_sync,
        "should_checkpoint": strategy.extended.should_checkpoint,
        "loss_diff": float(np.abs(np.array(losses) - np.array(base_losses)).max()),
        "weights_diff": max(float(np.abs(a - b).max()) for a, b in zip(ws, base_w)),
    }


def check_checkpoint():
    """Mirrored state saved from REPLICAS replicas, restored on 2 and on one."""
    import tempfile

    strategy = mirrored()
    ws, step = _sgd_step(strategy)
    for x, y in _batches(strategy):
        float(step(x, y))
    directory = tempfile.mkdtemp()
    manager = tf.train.CheckpointManager(tf.train.Checkpoint(w=ws[0]), directory, 2)
    path = manager.save()
    restored = []
    for devices in (["/cpu:0", "/cpu:1"], None):
        target = tf.distribute.MirroredStrategy(devices) if devices else None
        with target.scope() if target else contextlib.nullcontext():
            w = tf.Variable(np.zeros_like(W0[0]))
        tf.train.Checkpoint(w=w).restore(path)
        restored.append(float(np.abs(w.numpy() - ws[0].numpy()).max()))
    out["checkpoint"] = {
        "restored_diff": restored,
        "changed": bool((ws[0].numpy() != W0[0]).any()),
    }


def check_killed_worker():
    """Worker 1 dies before its third step; worker 0 must fail, not hang."""
    index = json.loads(os.environ["TF_CONFIG"])["task"]["index"]
    strategy = tf.distribute.MultiWorkerMirroredStrategy()
    ws, step = None, None
    for i, (x, y) in enumerate(_batches(strategy)):
        if index == 1 and i == 2:
            os._exit(3)
        if step is None:
            ws, step = _sgd_step(strategy)
        float(step(x, y))
    out["finished"] = True  # (worker 0 must never get here)


def _batches(strategy):
    ds = tf.data.Dataset.from_tensor_slices((X, Y)).batch(GB)
    return strategy.experimental_distribute_dataset(ds)


def _sgd_step(strategy):
    with strategy.scope():
        ws = [tf.Variable(w) for w in W0]
        opt = tf.keras.optimizers.SGD(0.1)

    def train_step(x, y):
        with tf.GradientTape() as tape:
            per_example = tf.nn.sparse_softmax_cross_entropy_with_logits(
                y, model(ws, x)
            )
            loss = tf.nn.compute_average_loss(per_example, global_batch_size=GB)
        opt.apply_gradients(zip(tape.gradient(loss, ws), ws))
        return loss

    @tf.function
    def step(x, y):
        return strategy.reduce("SUM", strategy.run(train_step, args=(x, y)), None)

    return ws, step


def error_of(fn):
    try:
        fn()
    except Exception as e:  # the type and message are compared
        return [type(e).__name__, str(e).split(" at 0x")[0].split(":")[0]]
    return None


def check_errors():
    strategy = mirrored()
    other = tf.distribute.OneDeviceStrategy("/cpu:0")

    def nested():
        with strategy.scope(), other.scope():
            pass

    def average_in_cross_replica():
        with strategy.scope():
            tf.nn.compute_average_loss(tf.ones([4]))

    if BACKEND == "jaxtape":  # (TF makes one mirrored Variable for all threads)
        out["variable_in_eager_run"] = error_of(
            lambda: strategy.run(lambda: tf.Variable(1.0))
        )
    out["errors"] = {
        "nested_scopes": error_of(nested),
        "compute_average_loss_cross_replica": error_of(average_in_cross_replica),
        "reduce_non_distributed_sum": error_of(
            lambda: strategy.reduce("SUM", tf.constant(3.0), axis=None)
        ),
        "per_replica_batch_size": error_of(
            lambda: tf.distribute.InputContext(2, 1, 4).get_per_replica_batch_size(7)
        ),
    }
    with strategy.scope():
        out["contexts"] = {
            "in_scope": [
                tf.distribute.get_replica_context() is None,
                tf.distribute.in_cross_replica_context(),
                tf.distribute.has_strategy(),
                tf.distribute.get_strategy() is strategy,
            ]
        }
    out["contexts"]["outside"] = [
        tf.distribute.get_replica_context() is None,
        tf.distribute.in_cross_replica_context(),
        tf.distribute.has_strategy(),
    ]


results = {}
for spec in sys.argv[3].split(","):  # `name@replicas` (default: every device)
    name, _, replicas = spec.partition("@")
    REPLICAS = int(replicas or N)
    out = {}
    globals()[f"check_{name}"]()
    results[spec] = out
print("JSON" + json.dumps(results))
