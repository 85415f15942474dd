"""Replica contexts: what `strategy.run` gives each replica (TF's
`ReplicaContext`). Layer L5.

Three kinds, one protocol (`all_reduce`, `_update` for Variable writes,
`_apply_summed` for the optimizer):

- `_SoloReplica`: one replica (the default strategy, `OneDeviceStrategy`, a
  one-device `MirroredStrategy`): reductions are the identity.
- `_SpmdReplica`: inside `jax.shard_map` over the replica axis (`run` while
  `jaxtape.function` traces): reductions are XLA collectives (`psum`).
- `_ThreadReplica`: eager `run` on several devices: one Python thread per
  replica, as TF's eager MirroredStrategy runs them; reductions meet at a
  barrier (`_Rendezvous`).

Mirrored Variables are written by TF's aggregation rules: `assign` inside a
replica stores `SUM`/`MEAN` of the replicas' values, the first replica's for
`ONLY_FIRST_REPLICA`; `assign_add`/`assign_sub` apply the aggregated delta.
"""

from __future__ import annotations

import contextlib
import threading
from typing import Any

import jax
import jax.numpy as jnp
from jax import lax

from jaxtape._src.core import distribution
from jaxtape._src.core.dispatch import register_op, to_value
from jaxtape._src.core.tensor import Tensor, tree_flatten, tree_map
from jaxtape._src.distribute.values import PerReplica
from jaxtape._src.state import scope as _scope
from jaxtape._src.state.variable import VariableAggregation, VariableSynchronization

AXIS = "replica"  # the mesh axis the replicas run along


def _reduce_op_name(reduce_op) -> str:
    name = getattr(reduce_op, "value", reduce_op)
    if isinstance(name, str) and name.upper() in ("SUM", "MEAN"):
        return name.upper()
    raise ValueError(
        f"Invalid reduce_op {reduce_op!r}: use jaxtape.distribute.ReduceOp.SUM or "
        "ReduceOp.MEAN (or the strings 'SUM' / 'MEAN')."
    )


def _raw(x):
    """A jax array of a Tensor, Variable, array or IndexedSlices (made dense)."""
    return to_value(x)


def _as_change(variable, kind: str, value, old):
    """A write to an ON_READ Variable (Keras's metric state) counts as the
    change it makes: each replica's copy moves by its own change, and the
    value read across replicas is the copies' aggregate (TF's SyncOnRead)."""
    if kind == "assign" and variable.synchronization == VariableSynchronization.ON_READ:
        return "assign_add", value - old
    return kind, value


def _new_value(kind: str, aggregation, old, values: list):
    """The Variable's value after each replica wrote `values[i]` (TF's rules)."""
    if aggregation in (
        VariableAggregation.NONE,
        VariableAggregation.ONLY_FIRST_REPLICA,
    ):
        agg = values[0]
    elif aggregation == VariableAggregation.SUM:
        agg = sum(values[1:], values[0])
    else:
        agg = sum(values[1:], values[0]) / len(values)
        agg = agg.astype(values[0].dtype)
    if kind == "assign":
        return agg
    return old + agg if kind == "assign_add" else old - agg


@contextlib.contextmanager
def cross_replica(strategy):
    """Runs its body in `strategy`'s cross-replica context (TF's merge_call):
    Variable writes are stored as given, no replica scope applies."""
    state = distribution.state
    saved = state.replica, _scope._stack.scopes, state.strategies
    state.replica = None
    state.strategies = [*saved[2], strategy]
    _scope._stack.scopes = [
        s for s in saved[1] if not isinstance(s, (_ReplicaScope, _ThreadScope))
    ]
    try:
        yield
    finally:
        state.replica, _scope._stack.scopes, state.strategies = saved


@contextlib.contextmanager
def in_replica(ctx):
    state = distribution.state
    saved = state.replica
    state.replica = ctx
    try:
        yield
    finally:
        state.replica = saved


class ReplicaContext:
    """The context of one replica while `strategy.run` runs `fn` (TF's
    `tf.distribute.ReplicaContext`)."""

    def __init__(self, strategy, replica_id_in_sync_group):
        self._strategy = strategy
        self._replica_id = replica_id_in_sync_group

    @property
    def strategy(self):
        return self._strategy

    @property
    def num_replicas_in_sync(self) -> int:
        return self._strategy.num_replicas_in_sync

    @property
    def replica_id_in_sync_group(self) -> Tensor:
        """This replica's index (an int32 Tensor; traced inside `jaxtape.function`)."""
        rid = self._replica_id
        return rid if type(rid) is Tensor else Tensor(jnp.asarray(rid, jnp.int32))

    @property
    def devices(self) -> tuple:
        return (self._strategy.extended.worker_devices[self._index()],)

    def _index(self) -> int:
        return int(self._replica_id) if not isinstance(self._replica_id, Tensor) else 0

    def all_reduce(self, reduce_op, value, options=None):
        """`value` (a nest of Tensors) summed or averaged over the replicas;
        every replica gets the result."""
        if options is not None:
            raise NotImplementedError(
                "ReplicaContext.all_reduce: `options` is not supported."
            )
        op = _reduce_op_name(reduce_op)
        leaves, treedef = tree_flatten(value)
        arrays = [_raw(x) for x in leaves]
        out = self._all_reduce(op, arrays)
        return jax.tree_util.tree_unflatten(treedef, [Tensor(x) for x in out])

    def merge_call(self, merge_fn, args=(), kwargs=None):
        """Runs `merge_fn(strategy, *args, **kwargs)` once in cross-replica
        context, each argument a PerReplica of the replicas' values (TF's
        `merge_call`); every replica gets its result."""
        raise NotImplementedError(
            "ReplicaContext.merge_call is supported only with one replica here; "
            "use all_reduce or Variable aggregation instead."
        )

    # -- protocol -----------------------------------------------------------------
    def _all_reduce(self, op: str, arrays: list) -> list:
        return arrays  # one replica

    def _update(self, variable, kind: str, value) -> bool:
        return False  # one replica: a plain write

    def _apply_summed(self, apply, grads_and_vars):
        with cross_replica(self._strategy):
            return apply(grads_and_vars)


class _SoloReplica(ReplicaContext):
    """The one replica of a one-device strategy (and the default one)."""

    def merge_call(self, merge_fn, args=(), kwargs=None):
        with cross_replica(self._strategy):
            return merge_fn(self._strategy, *args, **(kwargs or {}))


# -- inside shard_map -------------------------------------------------------------
def _psum_body(x):
    return lax.psum(x, AXIS)


def _pmean_body(x):
    return lax.pmean(x, AXIS)


_psum = register_op(_psum_body, name="CollectiveReduceV2")
_pmean = register_op(_pmean_body, name="CollectiveReduceV2")


class _ReplicaScope(_scope.StateScope):
    """The Variables inside one replica of a compiled `run`: reads go to the
    enclosing trace's scope (its values are closed over by `shard_map`, which
    takes only those the replica uses; a Variable it does not cover is noted
    there, so that `jaxtape.function` lifts it and traces again); writes stay
    here until `run` passes them out."""

    def __init__(self, outer):
        super().__init__(())
        self._outer = outer

    def get(self, variable):
        hit = self._values.get(id(variable))
        if hit is not None:
            return hit[1]
        return None if self._outer is None else self._outer.get(variable)

    def set(self, variable, value) -> bool:
        self._values[id(variable)] = (variable, value)
        self.written[id(variable)] = variable
        return True


class _SpmdReplica(ReplicaContext):
    """A replica inside `jax.shard_map` (compiled `run`): collectives are XLA's."""

    def __init__(self, strategy, replica_id_in_sync_group):
        super().__init__(strategy, replica_id_in_sync_group)
        # ids of the Tensors every replica holds alike (merge_call's results)
        self._invariant: set[int] = set()

    def _all_reduce(self, op, arrays):
        fn = _psum if op == "SUM" else _pmean
        return [fn(Tensor(a))._value for a in arrays]

    def _update(self, variable, kind, value) -> bool:
        agg = variable.aggregation
        if getattr(variable, "_distribute_strategy", None) is None:
            raise ValueError(
                f"Variable {variable.name!r} was created outside "
                "`strategy.scope()` and is written inside a compiled "
                "`strategy.run`; its one copy cannot take each replica's write "
                "(TF applies them one after another). Create it under "
                "`with strategy.scope():`, or write it outside `run`."
            )
        value = jnp.asarray(value, variable._value.dtype)
        old = variable._read_raw()
        kind, value = _as_change(variable, kind, value, old)
        if agg == VariableAggregation.SUM:
            value = lax.psum(value, AXIS)
        elif agg == VariableAggregation.MEAN:
            value = lax.pmean(value, AXIS).astype(value.dtype)
        else:  # NONE, ONLY_FIRST_REPLICA: the first replica's value
            first = lax.axis_index(AXIS) == 0
            value = lax.psum(jnp.where(first, value, jnp.zeros_like(value)), AXIS)
        new = (
            value
            if kind == "assign"
            else old + value
            if kind == "assign_add"
            else old - value
        )
        with _scope_bypass_hook():
            variable._write(new)
        return True

    def merge_call(self, merge_fn, args=(), kwargs=None):
        """`merge_fn(strategy, *args)` in cross-replica context, each Tensor
        argument a PerReplica of every replica's value (an all-gather); every
        replica computes it alike, so each gets the same result (TF's)."""

        def gather(x):
            if type(x) is not Tensor:
                return x
            every = Tensor(lax.all_gather(x._value, AXIS))
            return PerReplica(strategy=self._strategy, global_value=every, stacked=True)

        a, k = tree_map(gather, (tuple(args), dict(kwargs or {})))
        with cross_replica_keep_scope(self._strategy):
            out = merge_fn(self._strategy, *a, **k)
        leaves, _ = tree_flatten(out)
        self._invariant.update(id(x) for x in leaves if type(x) is Tensor)
        return out

    def _apply_summed(self, apply, grads_and_vars):
        grads = lax.psum([_raw(g) for g, _ in grads_and_vars], AXIS)
        summed = [(Tensor(g), v) for g, (_, v) in zip(grads, grads_and_vars)]
        with cross_replica_keep_scope(self._strategy):
            return apply(summed)


@contextlib.contextmanager
def _scope_bypass_hook():
    """Writes from `_update` reach the scope directly (not `_update` again)."""
    state = distribution.state
    saved, state.replica = state.replica, None
    try:
        yield
    finally:
        state.replica = saved


@contextlib.contextmanager
def cross_replica_keep_scope(strategy):
    """Cross-replica context inside a compiled replica: writes go to the
    replica's scope unaggregated (every replica computes the same value)."""
    state = distribution.state
    saved = state.replica, state.strategies
    state.replica, state.strategies = None, [*saved[1], strategy]
    try:
        yield
    finally:
        state.replica, state.strategies = saved


# -- eager: one thread per replica ----------------------------------------------
class _Rendezvous:
    """All replicas hand in a value; one function of all of them runs once
    (in the last thread to arrive) and every replica gets its result."""

    def __init__(self, n: int):
        self._slots: list[Any] = [None] * n
        self._fn: Any = None
        self._result: Any = None
        self._error: BaseException | None = None
        self._barrier = threading.Barrier(n, action=self._act)

    def _act(self):
        try:
            self._result, self._error = self._fn(list(self._slots)), None
        except BaseException as e:  # handed to every replica
            self._result, self._error = None, e

    def exchange(self, index: int, value, fn):
        self._slots[index] = value
        self._fn = fn
        self._barrier.wait()
        if self._error is not None:
            raise self._error
        return self._result

    def abort(self):
        self._barrier.abort()


class _ThreadScope(_scope.StateScope):
    """A replica thread's view of the Variables: a mirrored one reads as its
    copy on the replica's device; writes follow the aggregation rules."""

    def __init__(self, ctx):
        super().__init__(())
        self._ctx = ctx

    def get(self, variable):
        value = variable._value
        device = self._ctx._device
        devices = value.devices()
        if len(devices) > 1:
            for shard in value.addressable_shards:
                if shard.device == device:
                    return shard.data
        if device not in devices:
            return jax.device_put(value, device)
        return None

    def set(self, variable, value) -> bool:
        if len(variable._value.devices()) <= 1:
            return False  # not mirrored: each replica writes in turn, as in TF
        return self._ctx._update(variable, "assign", value)


class _ThreadReplica(ReplicaContext):
    _threaded = True  # (one Python thread per replica: no Variables made inside)

    def __init__(self, strategy, index, rendezvous, device):
        super().__init__(strategy, index)
        self._rendezvous = rendezvous
        self._device = device

    def _scope_value(self, variable):
        """This replica's copy of a mirrored Variable (its device's shard)."""
        for shard in variable._value.addressable_shards:
            if shard.device == self._device:
                return shard.data
        return variable._value

    def _exchange(self, value, fn):
        return self._rendezvous.exchange(self._index(), value, fn)

    def _all_reduce(self, op, arrays):
        def reduce(per_replica):
            dev = self._strategy.extended._devices[0]
            out = []
            for parts in zip(*per_replica):
                parts = [jax.device_put(p, dev) for p in parts]
                total = sum(parts[1:], parts[0])
                out.append(total / len(parts) if op == "MEAN" else total)
            return out

        out = self._exchange(arrays, reduce)
        return [jax.device_put(x, self._device) for x in out]

    def _update(self, variable, kind, value) -> bool:
        if len(variable._value.devices()) <= 1:
            return False
        mine = jnp.asarray(self._scope_value(variable))
        kind, value = _as_change(variable, kind, jnp.asarray(value, mine.dtype), mine)

        def write(per_replica):
            dev = self._strategy.extended._devices[0]
            parts = [jax.device_put(jnp.asarray(v), dev) for v in per_replica]
            old = jax.device_put(variable._value, dev)
            new = _new_value(kind, variable.aggregation, old, parts)
            with cross_replica(self._strategy):
                variable._write(jnp.asarray(new, variable._value.dtype))

        self._exchange(value, write)
        return True

    def _apply_summed(self, apply, grads_and_vars):
        grads = [_raw(g) for g, _ in grads_and_vars]

        def run_once(per_replica):
            sharding = self._strategy.extended._replicated
            summed = []
            for parts in zip(*per_replica):
                dev = self._strategy.extended._devices[0]
                parts = [jax.device_put(p, dev) for p in parts]
                summed.append(jax.device_put(sum(parts[1:], parts[0]), sharding))
            pairs = [(Tensor(g), v) for g, (_, v) in zip(summed, grads_and_vars)]
            with cross_replica(self._strategy):
                return apply(pairs)

        return self._exchange(grads, run_once)

    def merge_call(self, merge_fn, args=(), kwargs=None):
        def run_once(per_replica):
            n = len(per_replica)
            a = [
                PerReplica(
                    [per_replica[r][0][i] for r in range(n)], strategy=self._strategy
                )
                for i in range(len(args))
            ]
            with cross_replica(self._strategy):
                return merge_fn(self._strategy, *a, **(kwargs or {}))

        return self._exchange((tuple(args),), run_once)
