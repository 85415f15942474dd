"""Shared check for the op parity tables: bad input raises TF's error type."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import jaxtape


def assert_raises_like_tf(tf: Any, run: Callable[[Any], Any]) -> None:
    """`run(m)` raises under TF (`m` is the module), and under jaxtape an
    exception of the same type (TF's `errors.*` map to `jaxtape.errors.*`)."""
    raised = []
    for m in (tf, jaxtape):
        try:
            run(m)
        except Exception as e:  # noqa: BLE001 - the exception is the result
            raised.append(e)
        else:
            raised.append(None)
    want, got = raised
    assert want is not None, "TF accepts this input: not an error case"
    expected = (
        getattr(jaxtape.errors, type(want).__name__)
        if isinstance(want, tf.errors.OpError)
        else type(want)
    )
    assert isinstance(got, expected), f"TF raises {want!r}; jaxtape {got!r}"
