"""Distributed values: `PerReplica` (one value per replica), TF's `values.py`.
Layer L5.

A PerReplica holds either one global array laid out across the strategy's
mesh (`NamedSharding(mesh, P('replica'))`: replica `i` owns the `i`-th block
of the leading axis) or, for an uneven split (TF's last partial batch), one
Tensor per replica. The global form is a JAX pytree node whose one leaf is
that array, so a PerReplica passes into `jaxtape.function` as one sharded
input and `strategy.run` maps it over the replica axis with `shard_map`.
"""

from __future__ import annotations

from typing import Any

import jax
import jax.core

from jaxtape._src.core.tensor import Tensor


class DistributedValues:
    """Base class of values with one component per replica (TF's
    `tf.distribute.DistributedValues`)."""

    _type_name = "DistributedValues"

    def __init__(self, values=None, *, strategy=None, global_value=None, stacked=False):
        self._strategy = strategy
        self._global = global_value  # a Tensor over the replica axis, or None
        self._stacked = stacked  # replica i's value is global[i] (else a block)
        self._values = None if values is None else tuple(values)

    @property
    def values(self) -> tuple:
        """The per-replica components, in replica order."""
        if self._values is None:
            self._values = tuple(self._split())
        return self._values

    def _split(self) -> list:
        glob, strategy = self._global, self._strategy
        if glob is None or strategy is None:  # (set whenever `_values` is not)
            raise ValueError("A PerReplica needs its values or a global value.")
        n = strategy.num_replicas_in_sync
        value = glob._value
        if not isinstance(value, jax.core.Tracer) and len(value.devices()) == n:
            # Each replica's block on its own device (no copy).
            shards = sorted(
                value.addressable_shards, key=lambda s: s.index[0].start or 0
            )
            if self._stacked:
                return [Tensor(s.data[0]) for s in shards]
            return [Tensor(s.data) for s in shards]
        if self._stacked:
            return [Tensor(value[i]) for i in range(n)]
        k = value.shape[0] // n
        return [Tensor(value[i * k : (i + 1) * k]) for i in range(n)]

    def _as_global(self):
        """(global Tensor, stacked) for the compiled path; None when uneven."""
        if self._global is None:
            return None
        return self._global, self._stacked

    def __repr__(self) -> str:
        lines = [f"  {i}: {v!r}" for i, v in enumerate(self.values)]
        return f"{self._type_name}:{{\n" + ",\n".join(lines) + "\n}"

    def __str__(self) -> str:
        lines = [f"  {i}: {v!s}" for i, v in enumerate(self.values)]
        return f"{self._type_name}:{{\n" + ",\n".join(lines) + "\n}"


class PerReplica(DistributedValues):
    """One value per replica: what `strategy.run` returns and what a
    distributed dataset yields (TF's `PerReplica`).

    >>> strategy.run(lambda: jaxtape.distribute.get_replica_context()
    ...              .replica_id_in_sync_group)        # doctest: +SKIP
    PerReplica:{
      0: <jaxtape.Tensor: shape=(), dtype=int32, numpy=0>,
      1: <jaxtape.Tensor: shape=(), dtype=int32, numpy=1>
    }
    """

    _type_name = "PerReplica"


def _flatten(pr: PerReplica):
    if pr._global is not None:
        return (pr._global,), (pr._strategy, pr._stacked, True)
    return tuple(pr.values), (pr._strategy, False, False)


def _unflatten(aux, children) -> PerReplica:
    strategy, stacked, is_global = aux
    children = [Tensor(c) if isinstance(c, jax.Array) else c for c in children]
    if is_global:
        return PerReplica(strategy=strategy, global_value=children[0], stacked=stacked)
    return PerReplica(children, strategy=strategy)


jax.tree_util.register_pytree_node(PerReplica, _flatten, _unflatten)


def is_distributed(value: Any) -> bool:
    return isinstance(value, DistributedValues)
