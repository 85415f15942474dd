"""`jaxtape.keras.tree` and `jaxtape.keras.dtype_policies` against tf.keras's.

Each row runs the same call through `tf.keras.<ns>` and `jaxtape.keras.<ns>`
and compares the result, or the exception type and text.
"""

import collections
import re
import warnings

import numpy as np
import pytest

import jaxtape

P = collections.namedtuple("P", "x y")
Q = collections.namedtuple("P", "x y")  # same name and fields, another type
OD = collections.OrderedDict
DD = collections.defaultdict
NESTED = [(1, 2), [3], {"b": 4, "a": [None, 5]}, P(6, OD(z=7, y=8))]


def _collect(t, top_down):
    seen = []
    out = t.traverse(lambda x: seen.append(x), NESTED, top_down=top_down)
    return out, seen


# name -> fn(t) where t is the `keras.tree` module.
TREE_ROWS = {
    "flatten": lambda t: t.flatten(NESTED),
    "flatten_leaf": lambda t: [t.flatten(1), t.flatten(None), t.flatten("ab")],
    "flatten_empty": lambda t: [t.flatten(()), t.flatten([()]), t.flatten({})],
    "flatten_dict_sorted": lambda t: t.flatten({100: "world", 6: "hello"}),
    "flatten_unsortable_keys": lambda t: t.flatten({1: "a", "b": 2}),
    "flatten_subclass_is_leaf": lambda t: [
        t.flatten(type("L", (list,), {})([1, 2])) == [[1, 2]],
        t.flatten(collections.deque([1, 2])),
        t.flatten({1, 2}) == [{1, 2}],
    ],
    "flatten_with_path": lambda t: t.flatten_with_path(NESTED),
    "flatten_with_path_leaf": lambda t: t.flatten_with_path(5),
    "is_nested": lambda t: [
        t.is_nested(x) for x in ("ab", None, (), {}, np.ones(2), P(1, 2))
    ],
    "map_structure": lambda t: t.map_structure(
        lambda v: None if v is None else v * 2, NESTED
    ),
    "map_structure_multi": lambda t: t.map_structure(
        lambda a, b: a + b, {"b": 1, "a": (2, 3)}, {"a": (4, 5), "b": 6}
    ),
    "map_structure_dict_kinds": lambda t: [
        t.map_structure(lambda a, b: a + b, {"a": 1}, OD(a=2)),
        t.map_structure(lambda a, b: a + b, OD(a=2), {"a": 1}),
        t.map_structure(lambda v: v, DD(list, {"z": 1, "y": 2})),
    ],
    "map_structure_none_not_leaf": lambda t: t.map_structure(
        lambda v: v + 1, [1, None], none_is_leaf=False
    ),
    "map_structure_none_mismatch": lambda t: t.map_structure(
        lambda a, b: a, [1, None], [2, 3], none_is_leaf=False
    ),
    "map_structure_type_mismatch": lambda t: t.map_structure(
        lambda a, b: a, [1, 2], (1, 2)
    ),
    "map_structure_deeper": lambda t: t.map_structure(lambda a, b: a, [1, 3], [1, [2]]),
    "map_structure_shallower": lambda t: t.map_structure(
        lambda a, b: a, [1, [2]], [1, 3]
    ),
    "map_structure_keys": lambda t: t.map_structure(lambda a, b: a, {"a": 1}, {"b": 1}),
    "map_structure_arity": lambda t: t.map_structure(lambda a, b: a, [1, 2], [1]),
    "map_structure_namedtuple": lambda t: t.map_structure(
        lambda a, b: a, P(1, 2), (1, 2)
    ),
    "map_structure_no_structure": lambda t: t.map_structure(lambda a: a),
    "map_structure_not_callable": lambda t: t.map_structure(3, [1]),
    "map_structure_up_to": lambda t: t.map_structure_up_to(
        [1, [2, 3]], str, [[1, 1], [2, (3,)]]
    ),
    "map_structure_up_to_multi": lambda t: t.map_structure_up_to(
        [0, 0], lambda a, b: a + b, [1, [2]], [3, [4]]
    ),
    "map_structure_up_to_none_leaf": lambda t: t.map_structure_up_to(
        [None, None], len, [[1, 1], [2, 2]]
    ),
    "map_structure_up_to_shallower": lambda t: t.map_structure_up_to(
        [None, [None, None]], str, [[1, 1], 2]
    ),
    "assert_same_structure": lambda t: t.assert_same_structure(NESTED, NESTED),
    "assert_same_structure_dicts": lambda t: t.assert_same_structure({"a": 1}, OD(a=2)),
    "assert_same_structure_list_tuple": lambda t: t.assert_same_structure([1], (1,)),
    "assert_same_structure_leaf": lambda t: t.assert_same_structure([1, 2], [1, [2]]),
    "assert_same_structure_namedtuples": lambda t: t.assert_same_structure(
        P(1, 2), Q(1, 2)
    ),
    "assert_same_paths": lambda t: t.assert_same_paths([1, P(2, 3)], (4, [5, 6])),
    "assert_same_paths_differ": lambda t: t.assert_same_paths([1, 2], (3,)),
    "pack_sequence_as": lambda t: t.pack_sequence_as(NESTED, list(range(9))),
    "pack_sequence_as_dict_order": lambda t: t.pack_sequence_as(
        {"b": 0, "a": 0}, ["A", "B"]
    ),
    "pack_sequence_as_leaf": lambda t: t.pack_sequence_as(0, [1]),
    "pack_sequence_as_kinds": lambda t: [
        t.pack_sequence_as(DD(int, b=0, a=0), [1, 2]),
        t.pack_sequence_as(collections.deque([0, 0], maxlen=3), (1, 2)),
    ],
    "pack_sequence_as_too_few": lambda t: t.pack_sequence_as([0, 0], [1]),
    "pack_sequence_as_too_many": lambda t: t.pack_sequence_as([0], [1, 2]),
    "traverse_top_down": lambda t: _collect(t, True),
    "traverse_bottom_up": lambda t: _collect(t, False),
    "traverse_replace": lambda t: t.traverse(
        lambda x: "X" if x == (1, 2) else (t.MAP_TO_NONE if x == 3 else None), NESTED
    ),
    "traverse_not_callable": lambda t: t.traverse(3, [1]),
    "lists_to_tuples": lambda t: t.lists_to_tuples([1, [2, {"a": [3]}], P([4], 5)]),
    "map_shape_structure": lambda t: t.map_shape_structure(
        lambda s: ("shape", s), {"a": (1, None), "b": [(2, 3), [4], []], "c": 7}
    ),
}


def _run(fn, module):
    try:
        return "ok", fn(module)
    except (ValueError, TypeError) as e:
        return type(e).__name__, str(e)


@pytest.mark.parametrize("row", sorted(TREE_ROWS))
def test_tree_matches_tf_keras(row, tf):
    want = _run(TREE_ROWS[row], tf.keras.tree)
    got = _run(TREE_ROWS[row], jaxtape.keras.tree)
    assert got == want
    assert repr(got) == repr(want)  # same container types, same dict key order


def test_tree_treats_jaxtape_tensors_as_leaves():
    x = jaxtape.constant([1.0, 2.0])
    assert jaxtape.keras.tree.flatten({"b": x, "a": [x]}) == [x, x]
    doubled = jaxtape.function(
        lambda s: jaxtape.keras.tree.map_structure(lambda v: v * 2, s)
    )({"a": x})
    np.testing.assert_array_equal(doubled["a"].numpy(), [2.0, 4.0])


def test_assert_same_structure_check_types_is_deprecated():
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        jaxtape.keras.tree.assert_same_structure([1], [2], check_types=True)
    assert caught and caught[0].category is DeprecationWarning


# -- dtype_policies ----------------------------------------------------------------


def _policy_map(dp):
    m = dp.DTypePolicyMap("float32")
    m["encoder/layer_0/dense"] = "bfloat16"
    m["encoder/.*"] = dp.DTypePolicy("float16")
    m["decoder"] = "mixed_float16"
    return m


def _describe(p):
    return (type(p).__name__, p.name, p.compute_dtype, p.variable_dtype)


POLICY_ROWS = {
    "DTypePolicy": lambda dp: _describe(dp.DTypePolicy("mixed_bfloat16")),
    "FloatDTypePolicy": lambda dp: _describe(dp.FloatDTypePolicy("float16")),
    "get_name": lambda dp: _describe(dp.get("mixed_float16")),
    "get_dtype": lambda dp: _describe(dp.get("float64")),
    "get_bad": lambda dp: dp.get("nonsense"),
    "serialize": lambda dp: dp.serialize(dp.DTypePolicy("mixed_float16")),
    "serialize_float": lambda dp: dp.serialize(dp.FloatDTypePolicy("float16")),
    "deserialize": lambda dp: _describe(
        dp.deserialize(
            {
                "module": "keras",
                "class_name": "DTypePolicy",
                "config": {"name": "float16"},
            }
        )
    ),
    "get_dict": lambda dp: _describe(
        dp.get({"class_name": "DTypePolicy", "config": {"name": "bfloat16"}})
    ),
    "map_lookup": lambda dp: [
        _describe(_policy_map(dp)[k])
        for k in ("encoder/layer_0/dense", "encoder/attention/query", "decoder/x")
    ],
    "map_properties": lambda dp: [
        _policy_map(dp).name,
        _policy_map(dp).compute_dtype,
        len(_policy_map(dp)),
        "decoder" in _policy_map(dp),
        sorted(_policy_map(dp)),
    ],
    "map_ambiguous": lambda dp: _ambiguous(dp),
    "map_duplicate_key": lambda dp: _duplicate(dp),
    "map_bad_policy_map": lambda dp: dp.DTypePolicyMap(policy_map=[1]),
    "map_nested_default": lambda dp: dp.DTypePolicyMap(dp.DTypePolicyMap()),
    "map_config": lambda dp: _policy_map(dp).get_config(),
    "map_roundtrip": lambda dp: [
        (k, _describe(v))
        for k, v in dp.deserialize(dp.serialize(_policy_map(dp))).items()
    ],
    "map_delete": lambda dp: _delete(dp),
}


def _ambiguous(dp):
    m = _policy_map(dp)
    m["encoder/attention/.*"] = "bfloat16"
    return m["encoder/attention/query"]


def _duplicate(dp):
    m = _policy_map(dp)
    m["decoder"] = "float16"


def _delete(dp):
    m = _policy_map(dp)
    del m["decoder"]
    return sorted(m), _describe(m["decoder"])


@pytest.mark.parametrize("row", sorted(POLICY_ROWS))
def test_dtype_policies_match_tf_keras(row, tf):
    want = _run(POLICY_ROWS[row], tf.keras.dtype_policies)
    got = _run(POLICY_ROWS[row], jaxtape.keras.dtype_policies)
    if row == "get_bad":  # both refuse; the texts name their own valid policies
        assert got[0] == want[0] == "ValueError"
        return
    assert got == want


@pytest.mark.parametrize(
    "name",
    [
        "QuantizedDTypePolicy",
        "QuantizedFloat8DTypePolicy",
        "Int4DTypePolicy",
        "GPTQDTypePolicy",
        "AWQDTypePolicy",
    ],
)
def test_quantized_policies_raise_not_implemented_naming_them(name, tf):
    assert issubclass(getattr(tf.keras.dtype_policies, name), tf.keras.DTypePolicy)
    cls = getattr(jaxtape.keras.dtype_policies, name)
    assert issubclass(cls, jaxtape.keras.dtype_policies.DTypePolicy)
    with pytest.raises(NotImplementedError, match=name):
        cls("int8_from_float32")
    with pytest.raises(NotImplementedError):
        jaxtape.keras.dtype_policies.get("int8_from_float32")


def test_layer_accepts_policy_from_dtype_policies():
    layer = jaxtape.keras.layers.Dense(
        2, dtype=jaxtape.keras.dtype_policies.get("mixed_float16")
    )
    y = layer(np.ones((1, 3), "float32"))
    assert y.dtype == jaxtape.float16 and layer.kernel.dtype == jaxtape.float32


# -- top-level tf.keras names ------------------------------------------------------

SAME_CLASS = {
    "Layer": "layers",
    "InputSpec": "layers",
    "Loss": "losses",
    "Metric": "metrics",
    "Optimizer": "optimizers",
    "Regularizer": "regularizers",
    "Initializer": "initializers",
    "DTypePolicy": "dtype_policies",
    "FloatDTypePolicy": "dtype_policies",
}


@pytest.mark.parametrize("name", sorted(SAME_CLASS))
def test_top_level_classes_are_their_namespace_classes(name, tf):
    ns = SAME_CLASS[name]
    assert getattr(tf.keras, name) is getattr(getattr(tf.keras, ns), name)
    assert getattr(jaxtape.keras, name) is getattr(getattr(jaxtape.keras, ns), name)


def _variable_facts(k, v):
    name = re.sub(r"_\d+$", "", v.name)  # auto names count on in each library
    dtype = getattr(v.dtype, "name", v.dtype)  # Keras 3's is a str
    return (name, dtype, tuple(v.shape), v.trainable, np.asarray(v).tolist())


VARIABLE_ROWS = {
    "array_int": lambda k: k.Variable(np.array([1, 2])),
    "python_float": lambda k: k.Variable(1.5),
    "python_int": lambda k: k.Variable(3),
    "dtype_name": lambda k: k.Variable(np.array([1.0, 2.0]), dtype="float64", name="w"),
    "initializer_name": lambda k: k.Variable("ones", shape=(2, 3)),
    "initializer_object": lambda k: k.Variable(
        k.initializers.Constant(3.0), shape=(2,), trainable=False, dtype="float16"
    ),
    "initializer_callable": lambda k: k.Variable(
        lambda shape, dtype: np.full(shape, 2.0, dtype), shape=(2,)
    ),
    "no_shape": lambda k: k.Variable("zeros"),
    "bad_name": lambda k: k.Variable(1.0, name="a/b"),
    "bad_aggregation": lambda k: k.Variable(1.0, aggregation="max"),
    "bad_synchronization": lambda k: k.Variable(1.0, synchronization="always"),
    "synchronization_on_read": lambda k: k.Variable(
        1.0, synchronization="on_read", aggregation="mean", trainable=False
    ),
}


@pytest.mark.parametrize("row", sorted(VARIABLE_ROWS))
def test_keras_variable_matches_tf(row, tf):
    def facts(k):
        try:
            return _variable_facts(k, VARIABLE_ROWS[row](k))
        except ValueError as e:
            return "ValueError", str(e).split(" Received")[0]

    assert facts(jaxtape.keras) == facts(tf.keras)


def test_keras_variable_layout_raises_not_implemented():
    with pytest.raises(NotImplementedError, match="layout"):
        jaxtape.keras.Variable(1.0, layout=object())


def test_keras_variable_paths_assign_and_isinstance(tf):
    def run(k):
        with k.name_scope("outer"):
            with k.name_scope("inner"):
                a = k.Variable(1.0, name="a")
            b = k.Variable(2.0, name="b")
            with k.name_scope("c", override_parent="root"):
                c = k.Variable(3.0, name="c")
        a.assign(5.0)
        layer = k.layers.Dense(2)
        layer.build((None, 3))
        return (
            [a.path, b.path, c.path, float(np.asarray(a))],
            isinstance(layer.kernel, k.Variable),
            isinstance(layer, k.Operation),
        )

    assert run(jaxtape.keras) == run(tf.keras)


def _dense_pair(tf):
    x = np.random.default_rng(0).normal(size=(4, 3)).astype("float32")
    layers = []
    for k in (tf.keras, jaxtape.keras):
        layer = k.layers.Dense(2)
        layer.build((None, 3))
        layers.append(layer)
    layers[1].set_weights(layers[0].get_weights())
    return x, layers


def test_stateless_scope_matches_tf(tf):
    x, layers = _dense_pair(tf)
    results = []
    for k, layer in zip((tf.keras, jaxtape.keras), layers):
        kernel = np.ones((3, 2), "float32")
        with k.StatelessScope([(layer.kernel, kernel)]) as scope:
            y = layer(x)
            layer.bias.assign(np.array([1.0, 2.0], "float32"))
            y2 = layer(x)
        results.append(
            [
                np.asarray(y),
                np.asarray(y2),
                np.asarray(layer.bias),
                np.asarray(scope.get_current_value(layer.bias)),
                np.asarray(scope.get_current_value(layer.kernel)),
            ]
        )
        assert scope.get_current_value(k.Variable(1.0)) is None
    for got, want in zip(results[1], results[0]):
        np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-6)
    for k in (tf.keras, jaxtape.keras):
        with pytest.raises(ValueError, match="Invalid reference variable"):
            k.StatelessScope([(np.ones(2), np.ones(2))])
        with pytest.raises(ValueError, match="Invalid variable value"):
            k.StatelessScope([(k.Variable(np.ones(2)), np.ones(3))])


def test_stateless_scope_inside_function():
    v = jaxtape.keras.Variable(np.ones(2, "float32"))

    @jaxtape.function
    def step(x):
        with jaxtape.keras.StatelessScope([(v, x)]) as scope:
            v.assign(v * 2.0)
        return scope.get_current_value(v) + v

    np.testing.assert_allclose(step(np.full(2, 3.0, "float32")).numpy(), [7.0, 7.0])
    np.testing.assert_allclose(v.numpy(), [1.0, 1.0])


def test_remat_matches_tf_values_and_gradients(tf):
    x, layers = _dense_pair(tf)
    results = []
    for m, layer in zip((tf, jaxtape), layers):
        block = m.keras.remat(lambda t, layer=layer, m=m: m.tanh(layer(t)) * t[:, :2])
        xt = m.constant(x)
        with m.GradientTape() as tape:
            tape.watch(xt)
            y = block(xt)
            loss = m.reduce_sum(y * y)
        grads = tape.gradient(loss, [xt, layer.kernel, layer.bias])
        results.append([y.numpy()] + [g.numpy() for g in grads])
    for got, want in zip(results[1], results[0]):
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


def test_remat_inside_function():
    layer = jaxtape.keras.layers.Dense(2)
    block = jaxtape.keras.remat(layer)
    x = jaxtape.ones((3, 4))

    @jaxtape.function
    def grads(x):
        with jaxtape.GradientTape() as tape:
            loss = jaxtape.reduce_sum(block(x) ** 2)
        return tape.gradient(loss, layer.trainable_variables)

    with jaxtape.GradientTape() as tape:
        loss = jaxtape.reduce_sum(layer(x) ** 2)
    want = tape.gradient(loss, layer.trainable_variables)
    for g, w in zip(grads(x), want):
        np.testing.assert_allclose(g.numpy(), w.numpy(), rtol=1e-6)


def test_scopes_quantizer_version_device(tf):
    for k in (tf.keras, jaxtape.keras):
        with pytest.raises(ValueError, match="Invalid mode"):
            k.RematScope(mode="bogus")
        with k.RematScope(mode=None), k.SymbolicScope():
            pass
    with pytest.raises(NotImplementedError, match="remat"):
        jaxtape.keras.RematScope()
    with pytest.raises(NotImplementedError, match="Quantizer"):
        jaxtape.keras.Quantizer()
    assert jaxtape.keras.version() == tf.keras.version()
    with tf.keras.device("cpu:0"):
        want = tf.constant(1.0).device
    with jaxtape.keras.device("cpu:0"):
        assert jaxtape.constant(1.0).device == want


def test_keras_tensor_and_function(tf):
    x, layers = _dense_pair(tf)
    outs = []
    for k, layer in zip((tf.keras, jaxtape.keras), layers):
        t = k.KerasTensor((None, 3))
        assert tuple(t.shape) == (None, 3)
        assert getattr(t.dtype, "name", t.dtype) == "float32"
        inp = k.Input((3,))
        fn = k.Function(inp, layer(inp))
        assert isinstance(fn, k.Operation) and len(fn.inputs) == len(fn.outputs) == 1
        outs.append(np.asarray(fn(x)))
    np.testing.assert_allclose(outs[1], outs[0], rtol=1e-6)


def test_operation_subclass_calls_call():
    class Double(jaxtape.keras.Operation):
        def call(self, x):
            return x * 2

    op = Double()
    assert op.name.startswith("double") and op(3) == 6
    with pytest.raises(NotImplementedError, match="compute_output_spec"):
        op(jaxtape.keras.Input((2,)))


def test_keras_tensor_takes_keras_positional_arguments(tf):
    # Keras 3's third positional argument is `sparse` (it was jaxtape's
    # producer node, so `KerasTensor(s, "float32", True)` set a bogus producer).
    for m in (tf, jaxtape):
        kt = m.keras.KerasTensor((None, 3), "float32")
        assert (tuple(kt.shape), kt.sparse, kt.ragged) == ((None, 3), False, False)
    with pytest.raises(NotImplementedError, match="sparse"):
        jaxtape.keras.KerasTensor((None, 3), "float32", True)


def test_layer_weight_value_is_keras_3s_property(tf):
    # tf.keras 3: `layer.kernel.value` is the backing variable (a property);
    # calling it raises TypeError, as there.
    for m in (tf, jaxtape):
        layer = m.keras.layers.Dense(2)
        layer.build((None, 3))
        x = np.ones((1, 3), np.float32)
        out = m.matmul(x, layer.kernel.value)
        np.testing.assert_allclose(out.numpy(), x @ layer.kernel.numpy(), rtol=1e-6)
        with pytest.raises(TypeError):
            layer.kernel.value()
