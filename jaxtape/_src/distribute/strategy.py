"""Strategies: `MirroredStrategy`, `OneDeviceStrategy` and the default one,
TF's `tf.distribute` over `jax.sharding`. Layer L5.

A strategy owns a 1-D `jax.sharding.Mesh` of its devices (axis `'replica'`).
Variables created under `scope()` are mirrored: one logical value stored
replicated (`NamedSharding(mesh, P())`). `run(fn, args)` calls `fn` once per
replica on its block of each distributed input:

- while `jaxtape.function` traces, as one `jax.shard_map` over the replica
  axis, so that the whole step is one XLA program and the gradient sum is
  XLA's all-reduce;
- eagerly, in one thread per replica (TF's eager MirroredStrategy), meeting
  at a barrier wherever replicas exchange values.

The current strategy and replica context live in `core/distribution.py`, so
that Variables, optimizers and `nn.compute_average_loss` consult them.
"""

from __future__ import annotations

import contextlib
import enum
import threading
from typing import Any

import jax
import jax.core
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, NamedSharding
from jax.sharding import PartitionSpec as P

from jaxtape._src.core import checks, context, distribution
from jaxtape._src.core import device as _device
from jaxtape._src.core.dispatch import to_value
from jaxtape._src.core.tensor import Tensor
from jaxtape._src.distribute import replica as _replica
from jaxtape._src.distribute.values import DistributedValues, PerReplica
from jaxtape._src.ops import array_ops, math_ops
from jaxtape._src.state import scope as _scope
from jaxtape._src.state.variable import Variable

AXIS = _replica.AXIS


class ReduceOp(enum.Enum):
    """How values from the replicas combine (TF's `tf.distribute.ReduceOp`)."""

    SUM = "SUM"
    MEAN = "MEAN"

    @staticmethod
    def from_variable_aggregation(aggregation):
        name = getattr(aggregation, "name", str(aggregation)).upper()
        if name not in ("SUM", "MEAN"):
            raise ValueError(
                f"Could not convert from `tf.VariableAggregation` {aggregation} "
                "to`tf.distribute.ReduceOp` type"
            )
        return ReduceOp[name]


def _reduce_op(op) -> ReduceOp:
    if isinstance(op, ReduceOp):
        return op
    return ReduceOp(_replica._reduce_op_name(op))


class InputContext:
    """What an input function needs to know about the input pipelines (TF's
    `tf.distribute.InputContext`)."""

    def __init__(
        self, num_input_pipelines=1, input_pipeline_id=0, num_replicas_in_sync=1
    ):
        self._num_input_pipelines = num_input_pipelines
        self._input_pipeline_id = input_pipeline_id
        self._num_replicas_in_sync = num_replicas_in_sync

    @property
    def num_replicas_in_sync(self) -> int:
        return self._num_replicas_in_sync

    @property
    def input_pipeline_id(self) -> int:
        return self._input_pipeline_id

    @property
    def num_input_pipelines(self) -> int:
        return self._num_input_pipelines

    def get_per_replica_batch_size(self, global_batch_size: int) -> int:
        """`global_batch_size // num_replicas_in_sync` (ValueError if uneven)."""
        if global_batch_size % self._num_replicas_in_sync != 0:
            raise ValueError(
                f"The `global_batch_size` {global_batch_size} is not divisible by "
                f"`num_replicas_in_sync` {self._num_replicas_in_sync} "
            )
        return global_batch_size // self._num_replicas_in_sync

    def __str__(self) -> str:
        return (
            f"jaxtape.distribute.InputContext(input pipeline id "
            f"{self._input_pipeline_id}, total: {self._num_input_pipelines})"
        )


# -- the extended API ------------------------------------------------------------
class StrategyExtended:
    """The devices and the mesh of a strategy (TF's `StrategyExtended`)."""

    def __init__(self, strategy, devices):
        self._strategy = strategy
        self._devices = list(devices)
        self._mesh = Mesh(np.array(self._devices, dtype=object), (AXIS,))
        self._replicated = NamedSharding(self._mesh, P())
        self._split = NamedSharding(self._mesh, P(AXIS))
        here = jax.process_index()
        self._multi_process = any(d.process_index != here for d in self._devices)

    def _put(self, value, sharding):
        """`value` laid out by `sharding`; across processes, from the same
        host value on every worker (each keeps its devices' blocks)."""
        if not self._multi_process:
            return jax.device_put(value, sharding)
        host = np.asarray(value)
        return jax.make_array_from_callback(host.shape, sharding, lambda i: host[i])

    @property
    def worker_devices(self) -> tuple:
        return tuple(_device.device_name(d) for d in self._devices)

    @property
    def parameter_devices(self) -> tuple:
        return self.worker_devices

    @property
    def experimental_between_graph(self) -> bool:
        return False

    @property
    def experimental_should_init(self) -> bool:
        return True

    @property
    def should_checkpoint(self) -> bool:
        return True

    @property
    def should_save_summary(self) -> bool:
        return True

    def _mirror_variable(self, variable) -> None:
        """Stores `variable` replicated on every device of the mesh."""
        value = variable._value
        if isinstance(value, jax.core.Tracer):
            return
        where = self._devices[0] if len(self._devices) == 1 else self._replicated
        with jax.ensure_compile_time_eval():  # (a concrete value, even while tracing)
            variable._value = jax.device_put(value, where)
        variable._distribute_strategy = self._strategy

    def _distribute_batch(self, data):
        """`data`'s arrays laid out along the replicas (`P('replica')`) where
        their batch divides evenly, replicated otherwise (a last partial
        batch: computed whole on every device, the same numbers)."""
        n = len(self._devices)

        def place(x):
            if type(x) is Tensor:
                value = x._value
            elif isinstance(x, (np.ndarray, jax.Array)):
                value = x
            else:
                return x
            if isinstance(value, jax.core.Tracer):
                return x
            even = n > 1 and np.ndim(value) > 0 and np.shape(value)[0] % n == 0
            where = (
                self._split if even else self._replicated if n > 1 else self._devices[0]
            )
            return Tensor(self._put(value, where))

        return _map_structure(place, data)

    def update(self, var, fn, args=(), kwargs=None, group=True):
        """`fn(var, *args, **kwargs)` in cross-replica context: the mirrored
        Variable's one value is updated once (TF's `extended.update`)."""
        with _replica.cross_replica_keep_scope(self._strategy):
            return fn(var, *args, **(kwargs or {}))

    def reduce_to(self, reduce_op, value, destinations, options=None):
        """`strategy.reduce(reduce_op, value, axis=None)` (one copy: every
        destination holds the same value)."""
        if options is not None:
            raise NotImplementedError("reduce_to: `options` is not supported.")
        return self._strategy.reduce(reduce_op, value, axis=None)

    def batch_reduce_to(self, reduce_op, value_destination_pairs, options=None):
        return [
            self.reduce_to(reduce_op, v, d, options) for v, d in value_destination_pairs
        ]

    def variable_created_in_scope(self, v) -> bool:
        return getattr(v, "_distribute_strategy", None) is self._strategy


# -- strategies ------------------------------------------------------------------
class Strategy:
    """A way to run a computation over several devices (TF's
    `tf.distribute.Strategy`)."""

    def __init__(self, devices):
        self._extended = StrategyExtended(self, devices)

    @property
    def extended(self) -> StrategyExtended:
        return self._extended

    @property
    def num_replicas_in_sync(self) -> int:
        return len(self._extended._devices)

    @contextlib.contextmanager
    def scope(self):
        """Variables created inside are mirrored on this strategy's devices;
        `get_strategy()` returns this strategy (TF's `strategy.scope()`)."""
        state = distribution.state
        current = distribution.current_strategy()
        if current is not None and current is not self:
            raise RuntimeError(
                f"Mixing different tf.distribute.Strategy objects: {current} is not "
                f"{self}"
            )
        state.strategies.append(self)
        try:
            yield self
        finally:
            state.strategies.pop()

    # -- running -------------------------------------------------------------
    def run(self, fn, args=(), kwargs=None, options=None):
        """Runs `fn(*args, **kwargs)` once per replica and returns its results
        as PerReplica values (the value itself with one replica), as TF's
        `strategy.run`. Distributed arguments give each replica its block;
        any other argument goes to every replica as it is."""
        if options is not None and not isinstance(options, RunOptions):
            raise TypeError(f"`options` must be a RunOptions; got {options!r}.")
        kwargs = {} if kwargs is None else kwargs
        if distribution.state.replica is not None:
            raise RuntimeError(
                "`run` was called inside a replica function (inside `strategy.run`); "
                "call it from the cross-replica context."
            )
        n = self.num_replicas_in_sync
        if n == 1:
            args, kwargs = _local((args, kwargs), 0)
            ctx = _replica._SoloReplica(self, 0)
            with _replica.in_replica(ctx):
                return fn(*args, **kwargs)
        if context.state.function_depth > 0:
            return _run_spmd(self, fn, args, kwargs)
        if self._extended._multi_process:
            raise NotImplementedError(
                "strategy.run across several workers runs compiled only: call it "
                "inside a jaxtape.function (TF's tutorial `distributed_train_step`)."
            )
        return _run_threads(self, fn, args, kwargs)

    def reduce(self, reduce_op, value, axis=None):
        """The replicas' values of `value` combined into one (TF's
        `strategy.reduce`): with `axis`, each replica's value is first reduced
        along it, and MEAN divides by the global count along `axis`."""
        op = _reduce_op(reduce_op)
        if distribution.state.replica is not None:
            raise RuntimeError(
                "`reduce` must be called in the cross-replica context (outside "
                "`strategy.run`); inside a replica use "
                "`get_replica_context().all_reduce`."
            )
        return _map_structure(lambda v: self._reduce_one(op, v, axis), value)

    def _reduce_one(self, op, value, axis):
        if not isinstance(value, DistributedValues):
            value = value if isinstance(value, Tensor) else Tensor(to_value(value))
            if axis is not None:
                value = PerReplica([value], strategy=self)
            elif op == ReduceOp.SUM and self.num_replicas_in_sync != 1:
                raise ValueError(
                    f"A non-DistributedValues value {value!s} cannot be reduced with "
                    f"the given reduce op {op}."
                )
            else:
                return value
        glob = value._as_global() if axis is None else None
        if glob is not None:
            g, stacked = glob
            n = self.num_replicas_in_sync
            if not stacked:
                g = array_ops.reshape(g, [n, -1, *g.shape[1:]])
            total = math_ops.reduce_sum(g, axis=0)
            return total if op == ReduceOp.SUM else math_ops.divide(total, n)
        parts = list(value.values)
        if axis is None:
            total = math_ops.add_n(parts) if len(parts) > 1 else parts[0]
            return total if op == ReduceOp.SUM else math_ops.divide(total, len(parts))
        sums = [math_ops.reduce_sum(p, axis=axis) for p in parts]
        total = math_ops.add_n(sums) if len(sums) > 1 else sums[0]
        if op == ReduceOp.SUM:
            return total
        count = sum(
            int(np.prod([p.shape[a] for a in np.atleast_1d(axis)])) for p in parts
        )
        return math_ops.divide(total, math_ops.cast(count, total.dtype))

    def gather(self, value, axis):
        """The replicas' values concatenated along `axis` (TF's `strategy.gather`)."""

        def one(v):
            if not isinstance(v, DistributedValues):
                return v if isinstance(v, Tensor) else Tensor(to_value(v))
            glob = v._as_global()
            if glob is not None and not glob[1] and axis == 0:
                return glob[0]
            return array_ops.concat(list(v.values), axis=axis)

        return _map_structure(one, value)

    def experimental_local_results(self, value):
        """The per-replica parts of `value`, a tuple (`(value,)` if not distributed)."""

        def one(v):
            return v.values if isinstance(v, DistributedValues) else (v,)

        if isinstance(value, DistributedValues) or not isinstance(
            value, (list, tuple, dict)
        ):
            return one(value)
        leaves, treedef = jax.tree_util.tree_flatten(value, is_leaf=_is_leaf)
        parts = [one(x) for x in leaves]
        return tuple(
            jax.tree_util.tree_unflatten(treedef, [p[i] for p in parts])
            for i in range(self.num_replicas_in_sync)
        )

    # -- input -----------------------------------------------------------------
    def experimental_distribute_dataset(self, dataset, options=None):
        """`dataset`'s global batches split across the replicas (TF's
        rebatching: sizes as even as possible, the first replicas take the
        remainder; a last partial batch fills the replicas in order)."""
        if options is not None:
            options._check("experimental_distribute_dataset")
        from jaxtape._src.distribute.input_lib import (
            DistributedDataset,
        )  # cycle: input_lib -> strategy

        return DistributedDataset(self, dataset)

    def distribute_datasets_from_function(self, dataset_fn, options=None):
        """`dataset_fn(InputContext)` gives per-replica batches; replica `i`
        takes the `i`-th of each round of elements (TF's)."""
        if options is not None:
            options._check("distribute_datasets_from_function")
        from jaxtape._src.distribute.input_lib import (
            DistributedDatasetsFromFunction,
        )  # cycle: input_lib -> strategy

        ctx = InputContext(1, 0, self.num_replicas_in_sync)
        return DistributedDatasetsFromFunction(self, dataset_fn(ctx))

    def experimental_distribute_values_from_function(self, value_fn):
        """PerReplica of `value_fn(ValueContext)` for each replica."""
        values = [
            value_fn(ValueContext(i, self.num_replicas_in_sync))
            for i in range(self.num_replicas_in_sync)
        ]
        return self._per_replica_from_values(values)

    def _per_replica_from_values(self, values):
        if self.num_replicas_in_sync == 1:
            return values[0]
        return PerReplica(
            [
                Tensor(jax.device_put(to_value(v), d))
                for v, d in zip(values, self._extended._devices)
            ],
            strategy=self,
        )


class ValueContext:
    """Which replica a value is for (TF's `tf.distribute.experimental.ValueContext`)."""

    def __init__(self, replica_id_in_sync_group=0, num_replicas_in_sync=1):
        self.replica_id_in_sync_group = replica_id_in_sync_group
        self.num_replicas_in_sync = num_replicas_in_sync


def _resolve(devices) -> list:
    if devices is None:
        local = jax.local_devices()
        gpus = [d for d in local if d.platform != "cpu"]
        return gpus if gpus else list(local)
    out = []
    for d in devices:
        if isinstance(d, str):
            spec = _device.parse(d)
            found = _device.resolve(spec, d)
            if found.process_index != jax.process_index():  # another worker's
                kind = spec.kind or "CPU"
                local = [x for x in jax.local_devices() if _device.kind_of(x) == kind]
                found = local[min(spec.index or 0, len(local) - 1)] if local else found
            out.append(found)
        else:
            out.append(d)
    return out


class MirroredStrategy(Strategy):
    """Synchronous data parallelism on one machine's devices (TF's
    `tf.distribute.MirroredStrategy`).

    `devices`: device strings (`['/gpu:0', '/gpu:1']`) or `jax.Device`s;
    by default every local accelerator, else every local CPU device (TF uses
    one CPU; JAX's virtual CPU devices from
    `XLA_FLAGS=--xla_force_host_platform_device_count=N` are replicas here).
    """

    def __init__(self, devices=None, cross_device_ops=None):
        if cross_device_ops is not None:
            raise NotImplementedError(
                "MirroredStrategy: `cross_device_ops` is not supported; XLA's "
                "all-reduce is used."
            )
        super().__init__(_resolve(devices))


class OneDeviceStrategy(Strategy):
    """Everything on one device (TF's `tf.distribute.OneDeviceStrategy`)."""

    def __init__(self, device):
        super().__init__(_resolve([device]))


class _DefaultStrategy(Strategy):
    """The strategy in force outside any scope: one replica, JAX's default device."""

    def __init__(self):
        super().__init__(jax.local_devices()[:1])

    @contextlib.contextmanager
    def scope(self):
        yield self

    def _mirror_variable(self, variable):
        pass


_default: list[_DefaultStrategy] = []
_default_lock = threading.Lock()


def _default_strategy() -> _DefaultStrategy:
    with _default_lock:
        if not _default:
            _default.append(_DefaultStrategy())
    return _default[0]


def get_strategy() -> Strategy:
    """The strategy of the enclosing `scope()` or replica, else the default one."""
    return distribution.current_strategy() or _default_strategy()


def has_strategy() -> bool:
    """Whether a non-default strategy's scope (or replica) is in force."""
    return distribution.current_strategy() is not None


def get_replica_context():
    """The current ReplicaContext: the replica's inside `run`, None inside a
    strategy's `scope()` (cross-replica context), the default one otherwise."""
    ctx = distribution.state.replica
    if ctx is not None:
        return ctx
    if distribution.scoped_strategy() is not None:
        return None
    return _replica._SoloReplica(_default_strategy(), 0)


def experimental_set_strategy(strategy) -> None:
    """Makes `strategy` current everywhere without `scope()` (None: back to
    the default), as TF's `tf.distribute.experimental_set_strategy`."""
    if distribution.state.strategies or distribution.state.replica is not None:
        raise RuntimeError(
            "Must not be called inside a `tf.distribute.Strategy` scope."
        )
    distribution.global_strategy.clear()
    if strategy is not None and not isinstance(strategy, _DefaultStrategy):
        distribution.global_strategy.append(strategy)


class InputReplicationMode(enum.Enum):
    """How a dataset is replicated (TF's `tf.distribute.InputReplicationMode`)."""

    PER_WORKER = "PER_WORKER"
    PER_REPLICA = "PER_REPLICA"


class InputOptions:
    """Options of distributed datasets (TF's `tf.distribute.InputOptions`).

    Only TF's defaults are supported (other values raise NotImplementedError
    where the options are used): batches go to the devices as jaxtape lays
    them out."""

    def __init__(
        self,
        experimental_fetch_to_device=None,
        experimental_replication_mode=InputReplicationMode.PER_WORKER,
        experimental_place_dataset_on_device=False,
        experimental_per_replica_buffer_size=1,
    ):
        self.experimental_fetch_to_device = experimental_fetch_to_device
        self.experimental_replication_mode = experimental_replication_mode
        self.experimental_place_dataset_on_device = experimental_place_dataset_on_device
        self.experimental_per_replica_buffer_size = experimental_per_replica_buffer_size

    def _check(self, where: str) -> None:
        if (
            self.experimental_fetch_to_device is False
            or self.experimental_replication_mode != InputReplicationMode.PER_WORKER
            or self.experimental_place_dataset_on_device
        ):
            raise NotImplementedError(
                f"{where}: only InputOptions' defaults are supported (batches "
                "fetched to the devices, PER_WORKER replication)."
            )


class RunOptions:
    """Options of `strategy.run` (TF's `tf.distribute.RunOptions`): TPU-only
    settings, which TF's Mirrored/OneDevice strategies ignore, as here."""

    def __init__(
        self,
        experimental_enable_dynamic_batch_size=True,
        experimental_bucketizing_dynamic_shape=False,
        experimental_xla_options=None,
    ):
        self.experimental_enable_dynamic_batch_size = (
            experimental_enable_dynamic_batch_size
        )
        self.experimental_bucketizing_dynamic_shape = (
            experimental_bucketizing_dynamic_shape
        )
        self.experimental_xla_options = experimental_xla_options


def in_cross_replica_context() -> bool:
    return distribution.in_cross_replica_context()


def get_cross_replica_context():
    """The strategy in cross-replica context, else None (TF's)."""
    if distribution.state.replica is not None:
        return None
    return get_strategy()


# -- run --------------------------------------------------------------------------
def _is_leaf(x) -> bool:
    return (
        x is None or type(x) is Tensor or isinstance(x, (DistributedValues, Variable))
    )


def _map_structure(fn, value):
    leaves, treedef = jax.tree_util.tree_flatten(value, is_leaf=_is_leaf)
    return jax.tree_util.tree_unflatten(treedef, [fn(x) for x in leaves])


def _local(structure, i):
    """Replica `i`'s arguments: each distributed value's part `i`."""
    return _map_structure(
        lambda x: x.values[i] if isinstance(x, DistributedValues) else x, structure
    )


def _regroup(strategy, results: list):
    """Per-replica results (one structure each) as one structure of PerReplica."""
    flat = [jax.tree_util.tree_flatten(r, is_leaf=_is_leaf) for r in results]
    leaves0, treedef = flat[0]
    out = []
    for i in range(len(leaves0)):
        parts = [leaves[i] for leaves, _ in flat]
        if parts[0] is None or not isinstance(parts[0], (Tensor, Variable, jax.Array)):
            out.append(parts[0])
        elif all(p is parts[0] for p in parts):
            out.append(parts[0])  # one object for every replica: itself, as TF
        else:
            parts = [p if type(p) is Tensor else Tensor(to_value(p)) for p in parts]
            out.append(PerReplica(parts, strategy=strategy))
    return jax.tree_util.tree_unflatten(treedef, out)


def _run_threads(strategy, fn, args, kwargs):
    """Eager `run`: one thread per replica (TF's eager MirroredStrategy)."""
    n = strategy.num_replicas_in_sync
    devices = strategy.extended._devices
    rendezvous = _replica._Rendezvous(n)
    results: list[Any] = [None] * n
    failures: list[BaseException | None] = [None] * n
    name_scope = list(context.state.name_scope)

    def replica(i):
        ctx = _replica._ThreadReplica(strategy, i, rendezvous, devices[i])
        context.state.name_scope = list(name_scope)
        a, k = _local((args, kwargs), i)
        a, k = _map_structure(lambda x: _placed(x, devices[i]), (a, k))
        try:
            with (
                _replica.in_replica(ctx),
                _thread_scope(ctx),
                jax.default_device(devices[i]),
            ):
                results[i] = fn(*a, **k)
        except BaseException as e:
            failures[i] = e
            rendezvous.abort()

    threads = [
        threading.Thread(target=replica, args=(i,), daemon=True) for i in range(n)
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    errs = [e for e in failures if e is not None]
    if errs:
        first = next(
            (e for e in errs if not isinstance(e, threading.BrokenBarrierError)),
            errs[0],
        )
        raise first
    return _regroup(strategy, results)


@contextlib.contextmanager
def _thread_scope(ctx):
    scope = _replica._ThreadScope(ctx)
    _scope._stack.scopes.append(scope)
    try:
        yield
    finally:
        _scope._stack.scopes.pop()


def _placed(x, device):
    if type(x) is Tensor and not isinstance(x._value, jax.core.Tracer):
        if device not in x._value.devices():
            return Tensor(jax.device_put(x._value, device))
    return x


def _run_spmd(strategy, fn, args, kwargs):
    """Compiled `run`: `fn` under `jax.shard_map` over the replica axis, the
    Variables of the enclosing trace passed in replicated and their new
    values passed out (one value: every replica computes the same)."""
    mesh = strategy.extended._mesh
    outer = _scope.current()
    leaves, treedef = jax.tree_util.tree_flatten((args, kwargs), is_leaf=_is_leaf)
    in_vals, in_specs, layout = [], [], []
    for x in leaves:
        if isinstance(x, DistributedValues):
            glob = x._as_global()
            if glob is None:
                raise NotImplementedError(
                    "strategy.run inside jaxtape.function got a batch that does not "
                    "split evenly across the replicas (a last partial batch); batch "
                    "with `drop_remainder=True`, or call `run` eagerly for it."
                )
            in_vals.append(glob[0]._value)
            in_specs.append(P(AXIS))
            layout.append("stacked" if glob[1] else "block")
        elif type(x) is Tensor or isinstance(x, (jax.Array, np.ndarray)):
            in_vals.append(to_value(x))
            in_specs.append(P())
            layout.append("same")
        else:
            layout.append(x)
    found: dict[str, Any] = {}

    def body(in_vals):
        it = iter(in_vals)
        rebuilt = []
        for kind in layout:
            if kind == "stacked":
                rebuilt.append(Tensor(next(it)[0]))
            elif kind in ("block", "same"):
                rebuilt.append(Tensor(next(it)))
            else:
                rebuilt.append(kind)
        a, k = jax.tree_util.tree_unflatten(treedef, rebuilt)
        inner = _replica._ReplicaScope(outer)
        ctx = _replica._SpmdReplica(strategy, Tensor(jax.lax.axis_index(AXIS)))
        _scope._stack.scopes.append(inner)
        # (jaxtape's run-time argument checks are left out of the replicas:
        # checkify's errors would come out per device.)
        saved, checks.compiled_checks = checks.compiled_checks, False
        try:
            with context.paused_tapes(), _replica.in_replica(ctx):
                out = fn(*a, **k)
        finally:
            checks.compiled_checks = saved
            _scope._stack.scopes.pop()
        out_leaves, out_tree = jax.tree_util.tree_flatten(out, is_leaf=_is_leaf)
        arrays, same, statics = [], [], []
        for leaf in out_leaves:
            if id(leaf) in ctx._invariant:  # one object for all replicas (TF's)
                same.append(to_value(leaf))
                statics.append(_SAME)
            elif type(leaf) is Tensor or isinstance(leaf, jax.Array):
                arrays.append(jnp.expand_dims(to_value(leaf), 0))
                statics.append(_PER_REPLICA)
            else:  # (a Variable: itself, as TF returns a mirrored one)
                statics.append(leaf)
        written = [
            v
            for v in inner.written.values()
            if outer is not None and outer.get(v) is not None
        ]
        found.update(tree=out_tree, statics=statics, written=written)
        return arrays, same, [inner.value_of(v) for v in written]

    mapped = jax.shard_map(
        body,
        mesh=mesh,
        in_specs=(in_specs,),
        out_specs=(P(AXIS), P(), P()),
        check_vma=False,
    )
    arrays, same, new_vals = mapped(in_vals)
    for v, val in zip(found["written"], new_vals):
        v._write(val)
    per_replica, invariant = iter(arrays), iter(same)
    outs = []
    for s in found["statics"]:
        if s is _PER_REPLICA:
            g = Tensor(next(per_replica))
            outs.append(PerReplica(strategy=strategy, global_value=g, stacked=True))
        elif s is _SAME:
            outs.append(Tensor(next(invariant)))
        else:
            outs.append(s)
    return jax.tree_util.tree_unflatten(found["tree"], outs)


_PER_REPLICA, _SAME = object(), object()  # (`_run_spmd`'s output kinds)
