"""Positional arguments bind as in TF: for every public callable jaxtape shares
with TF 2.21 (ops, Keras layers, losses, metrics, optimizers, callbacks,
utils, ops), the parameters both have come in the same order, so a call that
passes them positionally means the same thing (a swapped pair would silently
bind a value to the wrong argument). Parameters TF has and jaxtape lacks are
not this test's concern: passing them raises TypeError.
"""

import inspect

import pytest

import jaxtape

NAMESPACES = [
    "tf", "tf.math", "tf.nn", "tf.linalg", "tf.image", "tf.signal", "tf.random",
    "tf.sparse", "tf.ragged", "tf.strings", "tf.io", "tf.io.gfile", "tf.debugging",
    "tf.data.experimental", "tf.lookup", "tf.sets", "tf.keras.layers",
    "tf.keras.losses", "tf.keras.metrics", "tf.keras.optimizers",
    "tf.keras.callbacks", "tf.keras.utils", "tf.keras.ops", "tf.keras.activations",
    "tf.keras.initializers", "tf.keras.backend", "tf.keras.models",
    "tf.keras.config", "tf.keras.regularizers", "tf.keras.constraints",
]  # fmt: skip

# Keras 3 makes these keyword-only, so the order cannot matter there.
KEYWORD_ONLY_IN_TF = {"tf.keras.layers.Layer"}


def _resolve(root, path):
    for part in path.split(".")[1:]:
        root = getattr(root, part)
    return root


def _params(f):
    try:
        sig = inspect.signature(f.__init__ if inspect.isclass(f) else f)
    except (TypeError, ValueError):
        return None
    kinds = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
    return [
        p.name for p in sig.parameters.values() if p.kind in kinds and p.name != "self"
    ]


def _pairs(tf):
    for ns in NAMESPACES:
        try:
            theirs, ours = _resolve(tf, ns), _resolve(jaxtape, ns)
        except AttributeError:
            continue
        for name in dir(theirs):
            t = getattr(theirs, name, None)
            if name.startswith("_") or inspect.ismodule(t) or not callable(t):
                continue
            try:
                j = getattr(ours, name)
            except AttributeError:
                continue
            yield f"{ns}.{name}", t, j


def test_shared_parameters_come_in_tfs_order(tf):
    swapped = []
    checked = 0
    for path, t, j in _pairs(tf):
        tp, jp = _params(t), _params(j)
        if tp is None or jp is None or path in KEYWORD_ONLY_IN_TF:
            continue
        checked += 1
        shared_tf = [p for p in tp if p in jp]
        shared_ours = [p for p in jp if p in tp]
        if shared_tf != shared_ours:
            swapped.append(f"{path}: TF {shared_tf}, jaxtape {shared_ours}")
    assert checked > 1000
    assert not swapped, "\n".join(swapped)


@pytest.mark.parametrize("name", ["bitwise_and", "bitwise_or", "bitwise_xor"])
def test_keras_bitwise_ops_take_x_and_y(name):
    op = getattr(jaxtape.keras.ops, name)
    assert (
        int(op(x=6, y=3)) == {"bitwise_and": 2, "bitwise_or": 7, "bitwise_xor": 5}[name]
    )
