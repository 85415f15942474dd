"""The checks every Keras layer goes through, shared by the layer test files.

`check_layer`: shapes/dtypes, variables, a training step, config and
weights-file round trips. `check_layer_parity`: the same constructor
arguments in tf.keras, the same weights copied across, the same input ->
the same outputs (training and inference) and the same input and weight
gradients. Each layer test file keeps a table and calls these, so adding a
layer is one line.
"""

from __future__ import annotations

import numpy as np

import jaxtape as jt

L = jt.keras.layers


def _input(shape, rng, dtype=np.float32):
    if dtype is not None and np.issubdtype(np.dtype(dtype), np.integer):
        return rng.integers(0, 10, shape).astype(dtype)
    return rng.normal(size=shape).astype(dtype)


def check_layer(tmp_path, make, shape, n_vars, dtype=np.float64, head=True):
    """The harness: `make()` builds the layer, `shape` its input's shape,
    `n_vars` how many weights it has. Float64 data autocasts to float32."""
    x = _input(shape, np.random.default_rng(0), dtype)
    layer = make()
    y = layer(x)
    assert y.dtype == jt.float32 and y.shape[0] == shape[0]
    assert len(layer.weights) == n_vars
    assert all(v.path.startswith(layer.name + "/") for v in layer.weights)
    assert layer.count_params() == sum(int(np.prod(v.shape)) for v in layer.weights)
    # Config round trip: an equal layer with the same config.
    clone = type(layer).from_config(layer.get_config())
    assert clone.get_config() == {**layer.get_config(), "name": clone.name}
    if not head:
        return
    # A training step moves every trainable weight.
    model = jt.keras.Sequential([layer, L.Flatten(), L.Dense(1)])
    model(x)  # builds the head
    before = [w.copy() for w in model.get_weights()]
    with jt.GradientTape() as tape:
        loss = jt.reduce_mean(jt.square(model(x, training=True)))
    grads = tape.gradient(loss, model.trainable_variables)
    assert all(g is not None for g in grads)
    jt.keras.optimizers.SGD(0.1).apply_gradients(zip(grads, model.trainable_variables))
    after = model.get_weights()
    assert len(after) == len(before) == len(model.weights)
    moved = [not np.array_equal(a, b) for a, b in zip(after, before)]
    assert sum(moved) >= len(model.trainable_variables)
    # Save/load round trip into a fresh model of the same architecture.
    model.save_weights(tmp_path / "m.weights.h5")
    fresh = jt.keras.Sequential([make(), L.Flatten(), L.Dense(1)])
    fresh(x)
    fresh.load_weights(tmp_path / "m.weights.h5")
    np.testing.assert_allclose(fresh.predict(x), model.predict(x), rtol=1e-6)


def check_layer_parity(
    tf,
    name,
    kwargs,
    shape,
    *,
    dtype=np.float32,
    fix_weights=None,
    gradients=True,
    rtol=1e-4,
    atol=1e-5,
    call_kwargs=None,
    modes=(False, True),
    compiled_gradients=False,
):
    """`tf.keras.layers.<name>(**kwargs)` and ours, on the same input and the
    same weights: outputs (training and inference) and gradients agree.

    `fix_weights(name, weights)` may adjust the random weights (a variance
    must be positive). Integer `dtype` inputs take no input gradient. A list
    of shapes gives a list of inputs (merging layers); `call_kwargs` go to
    both calls (a `mask`); `modes` are the `training` values compared (a
    random layer: `(False,)`). `compiled_gradients` takes ours inside
    `jaxtape.function` (one XLA compile instead of one per primitive of the
    first eager replay: a fast table).
    """
    rng = np.random.default_rng(4)
    multi = isinstance(shape, list)
    x = [_input(s, rng, dtype) for s in shape] if multi else _input(shape, rng, dtype)
    call_kwargs = call_kwargs or {}
    theirs = getattr(tf.keras.layers, name)(**kwargs)
    ours = getattr(jt.keras.layers, name)(**kwargs)
    theirs(x, **call_kwargs)
    ours(x, **call_kwargs)
    weights = [
        rng.normal(size=w.shape).astype(np.float32) for w in theirs.get_weights()
    ]
    if fix_weights is not None:
        weights = fix_weights(name, weights)
    theirs.set_weights(weights)
    ours.set_weights(weights)
    assert [tuple(v.shape) for v in ours.weights] == [w.shape for w in weights]
    assert [v.name for v in ours.weights] == [v.name for v in theirs.weights]
    for training in modes:
        np.testing.assert_allclose(
            ours(x, training=training, **call_kwargs).numpy(),
            theirs(x, training=training, **call_kwargs).numpy(),
            rtol=rtol,
            atol=atol,
        )
    if not gradients:
        return
    float_input = np.issubdtype(np.dtype(dtype), np.floating)
    xs = x if multi else [x]
    xt, xj = [tf.constant(a) for a in xs], [jt.constant(a) for a in xs]
    with tf.GradientTape() as tape:
        if float_input:
            tape.watch(xt)
        yt = tf.reduce_sum(tf.sin(theirs(xt if multi else xt[0], **call_kwargs)))
    gt = tape.gradient(yt, (xt if float_input else []) + theirs.trainable_weights)

    def our_gradients(xj):
        with jt.GradientTape() as tape:
            if float_input:
                tape.watch(xj)
            yj = jt.reduce_sum(jt.sin(ours(xj if multi else xj[0], **call_kwargs)))
        return tape.gradient(yj, (xj if float_input else []) + ours.trainable_weights)

    if compiled_gradients:
        our_gradients = jt.function(our_gradients)
    gj = our_gradients(xj)
    for a, b in zip(gj, gt):
        # A gathered weight (Embedding) has an IndexedSlices gradient in both.
        assert isinstance(a, jt.IndexedSlices) == isinstance(b, tf.IndexedSlices)
        a = jt.convert_to_tensor(a) if isinstance(a, jt.IndexedSlices) else a
        b = None if b is None else np.asarray(tf.convert_to_tensor(b))
        assert (a is None) == (b is None)
        if a is not None:
            np.testing.assert_allclose(a.numpy(), b, rtol=rtol * 10, atol=atol * 10)


def check_multi_input_parity(
    tf,
    name,
    kwargs,
    shapes,
    *,
    as_list=False,
    call_kwargs=None,
    training=(False, True),
    rtol=1e-4,
    atol=1e-5,
):
    """`check_layer_parity` for layers called on several inputs: attention
    layers take `(query, value[, key])` (or one list of them, `as_list`), and
    `call_kwargs` (masks, `use_causal_mask`, `return_attention_scores`).
    Compares outputs (each of a tuple) and the gradients of
    `sum(sin(output))` (summed over a tuple) with respect to every input and
    trainable weight."""
    rng = np.random.default_rng(4)
    xs = [_input(s, rng) for s in shapes]
    call_kwargs = dict(call_kwargs or {})
    theirs = getattr(tf.keras.layers, name)(**kwargs)
    ours = getattr(jt.keras.layers, name)(**kwargs)

    def run(layer, inputs, **kw):
        out = layer(list(inputs), **kw) if as_list else layer(*inputs, **kw)
        return tuple(out) if isinstance(out, (tuple, list)) else (out,)

    run(theirs, xs, **call_kwargs)
    run(ours, xs, **call_kwargs)
    weights = [
        rng.normal(size=w.shape).astype(np.float32) for w in theirs.get_weights()
    ]
    theirs.set_weights(weights)
    ours.set_weights(weights)
    assert [v.name for v in ours.weights] == [v.name for v in theirs.weights]
    assert [v.path for v in ours.weights] == [v.path for v in theirs.weights]
    for mode in training:
        for a, b in zip(
            run(ours, xs, training=mode, **call_kwargs),
            run(theirs, xs, training=mode, **call_kwargs),
            strict=True,
        ):
            np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=rtol, atol=atol)
    xt, xj = [tf.constant(x) for x in xs], [jt.constant(x) for x in xs]
    with tf.GradientTape() as tape:
        tape.watch(xt)
        yt = sum(tf.reduce_sum(tf.sin(o)) for o in run(theirs, xt, **call_kwargs))
    gt = tape.gradient(yt, xt + theirs.trainable_weights)
    with jt.GradientTape() as tape:
        for x in xj:
            tape.watch(x)
        yj = sum(jt.reduce_sum(jt.sin(o)) for o in run(ours, xj, **call_kwargs))
    gj = tape.gradient(yj, xj + ours.trainable_weights)
    assert len(gj) == len(gt)
    for a, b in zip(gj, gt):
        b = None if b is None else np.asarray(tf.convert_to_tensor(b))
        assert (a is None) == (b is None)
        if a is not None:
            np.testing.assert_allclose(a.numpy(), b, rtol=rtol * 10, atol=atol * 10)
