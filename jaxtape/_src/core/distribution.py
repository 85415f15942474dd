"""The current distribution strategy and replica context (TF's `distribute_lib`
context stack). Layer L0.

Lower layers consult it without importing `distribute/` (L5), which installs
the strategies: Variables are mirrored when created under a strategy's
`scope()` (`variable_created`), the optimizer sums gradients across replicas
inside `strategy.run` (`apply_with_summed_gradients`), and
`jaxtape.nn.compute_average_loss` divides by the global batch
(`num_replicas_in_sync`).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any


class _State(threading.local):
    def __init__(self) -> None:
        self.strategies: list[Any] = []  # entered `scope()`s, innermost last
        self.replica: Any = None  # the ReplicaContext of the running replica fn


state = _State()
# `experimental_set_strategy`'s strategy: in force in every thread, under scopes.
global_strategy: list[Any] = []


def scoped_strategy() -> Any:
    """The innermost entered scope's strategy, else the one set globally."""
    if state.strategies:
        return state.strategies[-1]
    return global_strategy[0] if global_strategy else None


def current_strategy() -> Any:
    """The strategy whose scope (or replica function) is running, or None."""
    if state.replica is not None:
        return state.replica.strategy
    return scoped_strategy()


def replica_context() -> Any:
    """The ReplicaContext of the replica function running (`strategy.run`), or None."""
    return state.replica


def num_replicas_in_sync() -> int:
    """The current strategy's replica count (1 without one)."""
    strategy = current_strategy()
    return 1 if strategy is None else strategy.num_replicas_in_sync


def in_cross_replica_context() -> bool:
    """Inside a strategy's `scope()` and outside its replica functions."""
    return state.replica is None and scoped_strategy() is not None


def variable_created(variable: Any) -> None:
    """Called by every new Variable: mirrors it under a strategy's scope."""
    if state.replica is not None and getattr(state.replica, "_threaded", False):
        raise RuntimeError(
            f"Variable {variable.name!r} was created inside an eager "
            "`strategy.run` on several replicas: each replica's thread would "
            "make its own. Create the model's variables first (build it under "
            "`with strategy.scope():`), or run the step inside a jaxtape.function."
        )
    strategy = scoped_strategy()
    if strategy is not None and state.replica is None:
        strategy.extended._mirror_variable(variable)


def apply_with_summed_gradients(
    apply: Callable[[list], Any], grads_and_vars: list
) -> Any:
    """`apply(grads_and_vars)` once, with each gradient summed across replicas
    when called inside `strategy.run` (TF's optimizer `merge_call`); directly
    otherwise."""
    replica = state.replica
    if replica is None:
        return apply(grads_and_vars)
    return replica._apply_summed(apply, grads_and_vars)


def on_replicas(strategy: Any, step: Callable[..., Any]) -> Callable[..., Any]:
    """`step(data)` (a Keras train/test/predict step) data-parallel on
    `strategy`'s devices: each batch laid out along the replicas, the
    Variables mirrored, so that XLA partitions the step and sums the
    gradients (Keras `fit` under `strategy.scope()`); `step` itself without
    a strategy."""
    if strategy is None:
        return step

    def call(data, *args: Any, **kwargs: Any) -> Any:
        with strategy.scope():
            return step(strategy.extended._distribute_batch(data), *args, **kwargs)

    return call
