"""Keras's recurrent layers on lax.scan (SimpleRNN, LSTM, GRU, their cells, RNN,
StackedRNNCells, Bidirectional). Layer L5.

A cell is a layer with `call(inputs, states)` and `state_size`, as Keras's.
`RNN(cell)` runs the whole time loop as ONE recorded op (`_rnn`): its pure
body (`_scan`, compiled once per cell and configuration) runs `lax.scan`
over a step that calls the cell's own `call` on Tensors standing for the
scan's values, the cell's Variables overlaid with the op's weight inputs by
the state scope (as `custom_gradient` runs user code). So a built-in cell
and a user's cell take the same path; under a GradientTape the recurrence is
one node, and under `jaxtape.function` it is one `scan` in the step.
Dropout masks are drawn once per call, from the layer's seed stream
(`SeedStream`, Keras's cell SeedGenerator), as Keras draws one mask per
sequence.
"""

from __future__ import annotations

import collections
import contextlib
import functools
import inspect
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from jaxtape._src.core import context, dtypes
from jaxtape._src.core.dispatch import op
from jaxtape._src.core.tensor import Tensor
from jaxtape._src.initializers import initializers
from jaxtape._src.keras import activations, constraints, regularizers, serialization
from jaxtape._src.keras.keras_tensor import map_structure
from jaxtape._src.keras.layers.base import Layer, _layer_scope
from jaxtape._src.keras.layers.core import add_activity_loss
from jaxtape._src.keras.layers.input_spec import InputSpec
from jaxtape._src.keras.layers.seed_generator import SeedStream
from jaxtape._src.ops import array_ops, creation_ops, math_ops, nondiff
from jaxtape._src.state.scope import state_scope
from jaxtape._src.state.variable import Variable

try:  # (JAX's type of a value being differentiated)
    from jax._src.interpreters.ad import JVPTracer as _JVPTracer
except ImportError:  # pragma: no cover
    _JVPTracer = ()

__all__ = [
    "GRU",
    "GRUCell",
    "LSTM",
    "LSTMCell",
    "RNN",
    "SimpleRNN",
    "SimpleRNNCell",
    "StackedRNNCells",
    "Bidirectional",
]


def _is_leaf(x) -> bool:
    return isinstance(x, (Tensor, Variable, jax.Array, np.ndarray))


def _flatten(structure) -> tuple[list, Any]:
    return jax.tree_util.tree_flatten(structure, is_leaf=_is_leaf)


def _value(x):
    return x._value if isinstance(x, Tensor) else jnp.asarray(x)


# -- the op: one lax.scan per layer call --------------------------------------------
class _Loop:
    """The static params of one RNN call: the cell, its Variables, the
    states' structure and the layer's flags. The recorded op's param and the
    key of its compiled body: built-in cells compare by their configuration
    (two `LSTM(64)` layers share one compiled loop), other cells by identity."""

    __slots__ = (
        "cell",
        "variables",
        "state_def",
        "n_states",
        "output_size",
        "has_mask",
        "dropout",
        "flags",
        "_key",
    )

    def __init__(self, cell, state_def, output_size, has_mask, dropout, flags):
        self.cell = cell
        self.variables = tuple(_cell_variables(cell))
        self.state_def = state_def
        self.n_states = state_def.num_leaves
        # (an int, or a shape without the batch axis: ConvLSTMCell's)
        self.output_size = output_size
        self.has_mask = bool(has_mask)
        # ((path of a cell in the stack, input dim, units, rate, recurrent
        # rate, mask count), ...): the dropout masks drawn for this call.
        self.dropout = dropout
        # (go_backwards, return_sequences, zero_output_for_mask, unroll, training)
        self.flags = flags
        self._key = (
            _cell_key(cell),
            len(self.variables),
            state_def,
            self.output_size,
            self.has_mask,
            dropout,
            flags,
        )

    def __eq__(self, other):
        return isinstance(other, _Loop) and other._key == self._key

    def __hash__(self):
        return hash(self._key)


class _ByIdentity:
    """A cell compared by identity (a user's cell may compute anything)."""

    __slots__ = ("cell",)

    def __init__(self, cell):
        self.cell = cell

    def __eq__(self, other):
        return isinstance(other, _ByIdentity) and other.cell is self.cell

    def __hash__(self):
        return id(self.cell)


def _cell_key(cell):
    """What a cell's step computes, given its weights: a built-in cell's
    class and configuration, or the cell itself."""
    if type(cell) in (SimpleRNNCell, LSTMCell, GRUCell):
        return (
            type(cell),
            cell.units,
            cell.activation,
            cell.recurrent_activation,
            cell.use_bias,
            getattr(cell, "reset_after", None),
            cell.implementation,
            cell.compute_dtype,
        )
    if type(cell) is StackedRNNCells:
        return (StackedRNNCells, *(_cell_key(c) for c in cell.cells))
    if hasattr(cell, "_loop_key"):  # another built-in cell (ConvLSTMCell)
        return cell._loop_key()
    return _ByIdentity(cell)


def _cell_variables(cell) -> list:
    if isinstance(cell, Layer):
        return cell.weights
    return list(getattr(cell, "variables", ()) or ())


def _cell_at(cell, path):
    for i in path:
        cell = cell.cells[i]
    return cell


def _draw_dropout(loop, key, batch, dtype):
    """The dropout masks of this call: `{path: (input mask, recurrent mask)}`,
    each an array (or a list of `count` arrays), Keras's scaled Bernoulli."""
    out = {}
    keys = iter(jax.random.split(jax.random.wrap_key_data(key), 2 * len(loop.dropout)))

    def draw(k, rate, width, count):
        shape = (batch, *width) if isinstance(width, tuple) else (batch, width)

        def one(kk):
            keep = jax.random.bernoulli(kk, 1.0 - rate, shape)
            return jnp.where(keep, 1.0 / (1.0 - rate), 0.0).astype(dtype)

        if count is None:
            return one(k)
        return [one(kk) for kk in jax.random.split(k, count)]

    for path, in_dim, units, rate, rec_rate, count in loop.dropout:
        k1, k2 = next(keys), next(keys)
        dp = draw(k1, rate, in_dim, count) if rate > 0 else None
        rdp = draw(k2, rec_rate, units, count) if rec_rate > 0 else None
        out[path] = (dp, rdp)
    return out


@contextlib.contextmanager
def _masks_set(cell, masks):
    """The cells' cached dropout masks (Keras's `DropoutRNNCell` protocol) set
    to the drawn values, as Tensors, while the step is traced."""
    saved = []
    for path, (dp, rdp) in masks.items():
        c = _cell_at(cell, path)
        saved.append((c, c._dropout_mask, c._recurrent_dropout_mask))
        c._dropout_mask = jax.tree_util.tree_map(Tensor, dp)
        c._recurrent_dropout_mask = jax.tree_util.tree_map(Tensor, rdp)
    try:
        yield
    finally:
        for c, dp, rdp in saved:
            c._dropout_mask, c._recurrent_dropout_mask = dp, rdp


def _step(loop, weights, masks, x_t, states):
    """One cell call on arrays: the cell's `call` on Tensors, its Variables
    standing for `weights` (the state scope), no tape recording."""
    cell = loop.cell
    training = loop.flags[4]
    kwargs = {"training": training} if _takes_training(cell) else {}
    structured = jax.tree_util.tree_unflatten(
        loop.state_def, [Tensor(s) for s in states]
    )
    with (
        context.paused_tapes(),
        state_scope(zip(loop.variables, weights)),
        _masks_set(cell, masks),
    ):
        out, new = cell.call(Tensor(x_t), structured, **kwargs)
    flat, _ = _flatten(new)
    if len(flat) != loop.n_states:
        raise ValueError(
            f"The RNN cell {getattr(cell, 'name', cell)!r} returned {len(flat)} "
            f"state tensor(s) for {loop.n_states} state(s) (its `state_size`). "
            "Return `output, new_states` with one new state per state."
        )
    return _value(out), [
        _value(n).astype(s.dtype).reshape(s.shape) for n, s in zip(flat, states)
    ]


def _scan(values, loop):
    go_backwards, return_sequences, zero_output_for_mask, unroll, _ = loop.flags
    values = list(values)
    x = values.pop(0)
    mask = values.pop(0) if loop.has_mask else None
    key = values.pop(0) if loop.dropout else None
    states = values[: loop.n_states]
    weights = values[loop.n_states :]
    batch = x.shape[0]
    masks = {} if key is None else _draw_dropout(loop, key, batch, x.dtype)
    xs = jnp.swapaxes(x, 0, 1)
    if mask is not None:
        xs = (xs, jnp.swapaxes(mask.astype(bool), 0, 1))
    size = loop.output_size
    zero = jnp.zeros(
        (batch, *size) if isinstance(size, tuple) else (batch, size), x.dtype
    )

    def body(carry, inp):
        states, prev = carry
        if mask is None:
            out, new = _step(loop, weights, masks, inp, states)
        else:
            x_t, m_t = inp
            out, new = _step(loop, weights, masks, x_t, states)
            new = [jnp.where(_per_row(m_t, s), n, s) for n, s in zip(new, states)]
            old = zero if zero_output_for_mask else prev
            out = jnp.where(_per_row(m_t, out), out, old)
        return (new, out), (out if return_sequences else None)

    ys: Any
    (final, last), ys = jax.lax.scan(
        body, (list(states), zero), xs, reverse=go_backwards, unroll=bool(unroll)
    )
    if return_sequences:
        if go_backwards:  # in the order the steps ran, as Keras
            ys = jnp.flip(ys, 0)
        output = jnp.swapaxes(ys, 0, 1)
    else:
        output = last
    return (output, *final)


def _per_row(m_t, a):
    """The step's `(batch,)` mask shaped to broadcast over `a`'s other axes."""
    return m_t.reshape(m_t.shape + (1,) * (a.ndim - 1))


_scan_jit = jax.jit(_scan, static_argnums=1)


# Inside `jaxtape.function`, a tape computes an op's outputs when the op runs
# and again in its backward replay; XLA merges the two for plain ops but not
# for a loop, so an LSTM step ran its forward scan twice (+29% on the
# benchmark). There, the op's call keeps the scan's VJP (its residuals) and
# the replay's custom VJP takes it back when its inputs are the very same
# traced values: one forward scan, one backward scan.
def _scan_fwd(values, loop):
    return jax.vjp(lambda v: _scan(v, loop), values)


_scan_fwd_jit = jax.jit(_scan_fwd, static_argnums=1)
_apply_vjp_jit = jax.jit(lambda vjp, cts: vjp(cts)[0])
_kept: collections.OrderedDict = collections.OrderedDict()  # bounded, see _keep


def _keep(values, loop, out, vjp) -> None:
    _kept[(loop, tuple(map(id, values)))] = (values, out, vjp)
    while len(_kept) > 8:
        _kept.popitem(last=False)


def _kept_for(values, loop):
    hit = _kept.get((loop, tuple(map(id, values))))
    if hit is None or any(a is not b for a, b in zip(hit[0], values)):
        return None
    return hit[1], hit[2]


@functools.partial(jax.custom_vjp, nondiff_argnums=(1,))
def _scan_replayed(values, loop):
    return _scan_jit(values, loop)


def _scan_replayed_fwd(values, loop):
    hit = _kept_for(values, loop)
    return hit if hit is not None else _scan_fwd_jit(values, loop)


def _scan_replayed_bwd(loop, vjp, cts):
    del loop
    return (_apply_vjp_jit(vjp, cts),)


_scan_replayed.defvjp(_scan_replayed_fwd, _scan_replayed_bwd)


@op("RNN", inputs="values")
def _rnn(values, loop):
    """`(output, *final states)` of `loop.cell` run over `values`' sequence:
    `[sequences, mask?, dropout key?, *initial states, *cell variables]`."""
    values = tuple(values)
    if not context.state.function_depth:
        return _scan_jit(values, loop)
    if context.state.tapes and not any(isinstance(v, _JVPTracer) for v in values):
        out, vjp = _scan_fwd_jit(values, loop)  # the op's call, taped
        _keep(values, loop, out, vjp)
        return out
    return _scan_replayed(values, loop)


def _takes_training(cell) -> bool:
    if isinstance(cell, Layer):
        return cell._call_takes_training
    try:
        return "training" in inspect.signature(cell.call).parameters
    except (TypeError, ValueError):
        return False


# -- cells ----------------------------------------------------------------------------
class _DropoutRNNCell:
    """Keras's `DropoutRNNCell`: one dropout mask per call of the RNN layer,
    the same for every step (the layer draws it; see `_draw_dropout`)."""

    dropout: float
    recurrent_dropout: float
    _dropout_mask: Any = None
    _recurrent_dropout_mask: Any = None
    dropout_mask_count: int | None = None
    state_size: Any

    def get_dropout_mask(self, step_input):
        del step_input
        return self._dropout_mask

    def get_recurrent_dropout_mask(self, step_input):
        del step_input
        return self._recurrent_dropout_mask

    def reset_dropout_mask(self):
        self._dropout_mask = None

    def reset_recurrent_dropout_mask(self):
        self._recurrent_dropout_mask = None


def _rate(value) -> float:
    return min(1.0, max(0.0, float(value)))


class _GatedCell(_DropoutRNNCell, Layer):
    """What the three built-in cells share: arguments, weights, config."""

    _GATES = 1

    def __init__(
        self,
        units,
        activation="tanh",
        recurrent_activation="sigmoid",
        use_bias=True,
        kernel_initializer="glorot_uniform",
        recurrent_initializer="orthogonal",
        bias_initializer="zeros",
        kernel_regularizer=None,
        recurrent_regularizer=None,
        bias_regularizer=None,
        kernel_constraint=None,
        recurrent_constraint=None,
        bias_constraint=None,
        dropout=0.0,
        recurrent_dropout=0.0,
        seed=None,
        **kwargs,
    ):
        if not isinstance(units, (int, np.integer)) or units <= 0:
            raise ValueError(
                "Received an invalid value for argument `units`, expected a "
                f"positive integer, got {units}."
            )
        implementation = kwargs.pop("implementation", 2)
        super().__init__(**kwargs)
        self.units = int(units)
        self.implementation = implementation
        self.activation = activations.get(activation)
        self.recurrent_activation = activations.get(recurrent_activation)
        self.use_bias = bool(use_bias)
        self.kernel_initializer = initializers.get(kernel_initializer)
        self.recurrent_initializer = initializers.get(recurrent_initializer)
        self.bias_initializer = initializers.get(bias_initializer)
        self.kernel_regularizer = regularizers.get(kernel_regularizer)
        self.recurrent_regularizer = regularizers.get(recurrent_regularizer)
        self.bias_regularizer = regularizers.get(bias_regularizer)
        self.kernel_constraint = constraints.get(kernel_constraint)
        self.recurrent_constraint = constraints.get(recurrent_constraint)
        self.bias_constraint = constraints.get(bias_constraint)
        self.dropout = _rate(dropout)
        self.recurrent_dropout = _rate(recurrent_dropout)
        self.seed = seed
        self.output_size = self.units

    def _build_weights(self, input_dim, bias_shape, bias_initializer=None):
        n = self._GATES * self.units
        self.kernel = self.add_weight(
            name="kernel",
            shape=(input_dim, n),
            initializer=self.kernel_initializer,
            regularizer=self.kernel_regularizer,
            constraint=self.kernel_constraint,
        )
        self.recurrent_kernel = self.add_weight(
            name="recurrent_kernel",
            shape=(self.units, n),
            initializer=self.recurrent_initializer,
            regularizer=self.recurrent_regularizer,
            constraint=self.recurrent_constraint,
        )
        self.bias = None
        if self.use_bias:
            self.bias = self.add_weight(
                name="bias",
                shape=bias_shape,
                initializer=bias_initializer or self.bias_initializer,
                regularizer=self.bias_regularizer,
                constraint=self.bias_constraint,
            )
        self.built = True

    def _dropped(self, x, mask, training, i=None):
        if not training or mask is None:
            return x
        return x * (mask if i is None else mask[i])

    def get_initial_state(self, batch_size=None):
        sizes = self.state_size if isinstance(self.state_size, list) else [self.units]
        dt = dtypes.as_dtype(self.compute_dtype)
        return [creation_ops.zeros((batch_size, d), dtype=dt) for d in sizes]

    def get_config(self):
        cfg = {
            **super().get_config(),
            "units": self.units,
            "activation": activations.serialize(self.activation),
        }
        if self._GATES > 1:
            cfg["recurrent_activation"] = activations.serialize(
                self.recurrent_activation
            )
        cfg.update(
            {
                "use_bias": self.use_bias,
                "kernel_initializer": initializers.serialize(self.kernel_initializer),
                "recurrent_initializer": initializers.serialize(
                    self.recurrent_initializer
                ),
                "bias_initializer": initializers.serialize(self.bias_initializer),
                "kernel_regularizer": regularizers.serialize(self.kernel_regularizer),
                "recurrent_regularizer": regularizers.serialize(
                    self.recurrent_regularizer
                ),
                "bias_regularizer": regularizers.serialize(self.bias_regularizer),
                "kernel_constraint": constraints.serialize(self.kernel_constraint),
                "recurrent_constraint": constraints.serialize(
                    self.recurrent_constraint
                ),
                "bias_constraint": constraints.serialize(self.bias_constraint),
                "dropout": self.dropout,
                "recurrent_dropout": self.recurrent_dropout,
                "seed": self.seed,
            }
        )
        return cfg


class SimpleRNNCell(_GatedCell):
    """Keras's `SimpleRNNCell`: `h = act(x @ kernel + bias + h @ recurrent_kernel)`.

    Weights `kernel (input_dim, units)`, `recurrent_kernel (units, units)`,
    `bias (units,)`, as Keras 3.
    """

    def __init__(self, units, activation="tanh", **kwargs):
        if "recurrent_activation" in kwargs:
            raise TypeError(
                "SimpleRNNCell got an unexpected keyword argument "
                "'recurrent_activation' (only LSTMCell and GRUCell take it)."
            )
        super().__init__(units, activation=activation, **kwargs)
        self.state_size = self.units

    def build(self, input_shape):
        self._build_weights(input_shape[-1], (self.units,))

    def call(self, sequence, states, training=False):
        prev = states[0] if isinstance(states, (list, tuple)) else states
        sequence = self._dropped(sequence, self._dropout_mask, training)
        h = math_ops.matmul(sequence, self.kernel)
        if self.bias is not None:
            h = h + self.bias
        prev_in = self._dropped(prev, self._recurrent_dropout_mask, training)
        output = h + math_ops.matmul(prev_in, self.recurrent_kernel)
        if self.activation is not None:
            output = self.activation(output)
        return output, ([output] if isinstance(states, (list, tuple)) else output)


class LSTMCell(_GatedCell):
    """Keras's `LSTMCell` (gates in Keras's order i, f, c, o).

    Weights `kernel (input_dim, 4*units)`, `recurrent_kernel (units,
    4*units)`, `bias (4*units,)` (the forget gate's part starts at ones with
    `unit_forget_bias`). States `[h, c]`. With `recurrent_dropout`, Keras's
    implementation 1: one mask per gate.
    """

    _GATES = 4

    def __init__(self, units, unit_forget_bias=True, **kwargs):
        super().__init__(units, **kwargs)
        self.unit_forget_bias = bool(unit_forget_bias)
        if self.recurrent_dropout != 0.0:
            self.implementation = 1
        if self.implementation == 1:
            self.dropout_mask_count = 4
        self.state_size = [self.units, self.units]

    def build(self, input_shape):
        init: Any = None
        if self.use_bias and self.unit_forget_bias:
            base, u = self.bias_initializer, self.units

            def forget_ones(shape, dtype=None):
                del shape
                return jnp.concatenate(
                    [
                        jnp.asarray(base((u,), dtype=dtype)),
                        jnp.ones((u,), dtype),
                        jnp.asarray(base((2 * u,), dtype=dtype)),
                    ]
                )

            init = forget_ones

        self._build_weights(input_shape[-1], (4 * self.units,), init)

    def call(self, inputs, states, training=False):
        h_tm1, c_tm1 = states[0], states[1]
        u = self.units
        dp, rdp = self._dropout_mask, self._recurrent_dropout_mask
        if (
            self.implementation == 1
            and training
            and (dp is not None or rdp is not None)
        ):
            zs = []
            for i in range(4):
                x_i = self._dropped(inputs, dp, training, i)
                h_i = self._dropped(h_tm1, rdp, training, i)
                z = math_ops.matmul(x_i, self.kernel[:, i * u : (i + 1) * u])
                z = z + math_ops.matmul(
                    h_i, self.recurrent_kernel[:, i * u : (i + 1) * u]
                )
                if self.bias is not None:
                    z = z + self.bias[i * u : (i + 1) * u]
                zs.append(z)
        else:
            inputs = self._dropped(inputs, dp, training)
            z = math_ops.matmul(inputs, self.kernel)
            z = z + math_ops.matmul(h_tm1, self.recurrent_kernel)
            if self.bias is not None:
                z = z + self.bias
            zs = [z[:, i * u : (i + 1) * u] for i in range(4)]
        i = self.recurrent_activation(zs[0])
        f = self.recurrent_activation(zs[1])
        c = f * c_tm1 + i * self.activation(zs[2])
        o = self.recurrent_activation(zs[3])
        h = o * self.activation(c)
        return h, [h, c]

    def get_config(self):
        return {**super().get_config(), "unit_forget_bias": self.unit_forget_bias}


class GRUCell(_GatedCell):
    """Keras's `GRUCell` (gates z, r, h), Keras 3's `reset_after=True` default.

    Weights `kernel (input_dim, 3*units)`, `recurrent_kernel (units,
    3*units)`, `bias (2, 3*units)` with `reset_after` (input and recurrent
    biases), else `(3*units,)`.
    """

    _GATES = 3

    def __init__(self, units, reset_after=True, **kwargs):
        super().__init__(units, **kwargs)
        self.reset_after = bool(reset_after)
        if self.recurrent_dropout != 0.0:
            self.implementation = 1
        if self.implementation == 1:
            self.dropout_mask_count = 3
        self.state_size = self.units

    def build(self, input_shape):
        shape = (2, 3 * self.units) if self.reset_after else (3 * self.units,)
        self._build_weights(input_shape[-1], shape)

    def call(self, inputs, states, training=False):
        nested = isinstance(states, (list, tuple))
        h_tm1 = states[0] if nested else states
        u = self.units
        input_bias = recurrent_bias = None
        if self.bias is not None:
            if self.reset_after:
                input_bias, recurrent_bias = self.bias[0], self.bias[1]
            else:
                input_bias = self.bias
        dp, rdp = self._dropout_mask, self._recurrent_dropout_mask
        per_gate = self.implementation == 1 and training
        xs, hs = [], []
        for i in range(3):
            x_i = self._dropped(inputs, dp, training, i if per_gate else None)
            h_i = self._dropped(h_tm1, rdp, training, i if per_gate else None)
            xs.append(x_i)
            hs.append(h_i)
        if per_gate:
            x = [
                math_ops.matmul(xs[i], self.kernel[:, i * u : (i + 1) * u])
                for i in range(3)
            ]
            if input_bias is not None:
                x = [x[i] + input_bias[i * u : (i + 1) * u] for i in range(3)]
        else:
            m = math_ops.matmul(xs[0], self.kernel)
            if input_bias is not None:
                m = m + input_bias
            x = [m[:, i * u : (i + 1) * u] for i in range(3)]
        if self.reset_after and not per_gate:
            inner = math_ops.matmul(hs[0], self.recurrent_kernel)
            if recurrent_bias is not None:
                inner = inner + recurrent_bias
            rec = [inner[:, i * u : (i + 1) * u] for i in range(3)]
        else:
            n_mm = 3 if self.reset_after else 2
            rec = [
                math_ops.matmul(hs[i], self.recurrent_kernel[:, i * u : (i + 1) * u])
                for i in range(n_mm)
            ]
            if recurrent_bias is not None:
                rec = [rec[i] + recurrent_bias[i * u : (i + 1) * u] for i in range(3)]
        z = self.recurrent_activation(x[0] + rec[0])
        r = self.recurrent_activation(x[1] + rec[1])
        if self.reset_after:
            hh = self.activation(x[2] + r * rec[2])
        else:
            hh = self.activation(
                x[2] + math_ops.matmul(r * hs[2], self.recurrent_kernel[:, 2 * u :])
            )
        h = z * h_tm1 + (1.0 - z) * hh
        return h, ([h] if nested else h)

    def get_config(self):
        return {**super().get_config(), "reset_after": self.reset_after}


class StackedRNNCells(Layer):
    """Keras's `StackedRNNCells`: cells run one after the other at each step;
    the states are one list per cell."""

    def __init__(self, cells, **kwargs):
        super().__init__(**kwargs)
        for cell in cells:
            if "call" not in dir(cell):
                raise ValueError(
                    "All cells must have a `call` method. Received cell without a "
                    f"`call` method: {cell}"
                )
            if "state_size" not in dir(cell):
                raise ValueError(
                    "All cells must have a `state_size` attribute. Received cell "
                    f"without a `state_size`: {cell}"
                )
        self.cells = list(cells)

    @property
    def state_size(self):
        return [c.state_size for c in self.cells]

    @property
    def output_size(self):
        return _output_size(self.cells[-1])

    def get_initial_state(self, batch_size=None):
        return [_initial_state(c, batch_size, self.compute_dtype) for c in self.cells]

    def call(self, inputs, states, training=False, **kwargs):
        new_states = []
        for cell, cell_states in zip(self.cells, states):
            is_list = isinstance(cell_states, (list, tuple))
            cell_states = list(cell_states) if is_list else [cell_states]
            kw = dict(kwargs)
            if _takes_training(cell):
                kw["training"] = training
            inputs, cell_states = cell.call(inputs, cell_states, **kw)
            if not isinstance(cell_states, (list, tuple)):
                cell_states = [cell_states]
            if len(cell_states) == 1 and not is_list:
                cell_states = cell_states[0]
            new_states.append(cell_states)
        if len(new_states) == 1:
            new_states = new_states[0]
        return inputs, new_states

    def build(self, input_shape):
        batch = input_shape[0]
        for cell in self.cells:
            if isinstance(cell, Layer) and not cell.built:
                with context.paused_tapes():
                    cell.build(input_shape)
                cell.built = True
            input_shape = (batch, _output_size(cell))
        self.built = True

    def get_config(self):
        return {
            **super().get_config(),
            "cells": [serialization.serialize_layer(c) for c in self.cells],
        }

    @classmethod
    def from_config(cls, config: dict) -> Any:
        cfg = dict(config)
        cells = [serialization.deserialize_layer(c) for c in cfg.pop("cells")]
        return cls(cells, **cfg)


def _output_size(cell) -> int | tuple:
    size = getattr(cell, "output_size", None)
    if isinstance(size, tuple):  # a shape without the batch axis (ConvLSTMCell)
        return size
    if size is not None:
        return int(size)
    state = cell.state_size
    return int(state[0] if isinstance(state, (list, tuple)) else state)


def _for_every_row(state, sequences):
    """A batch-1 initial `state` repeated for each row of `sequences`, whose
    batch size is known only when the program runs (broadcasting against
    zeros shaped from the sequences: no size is needed as a value)."""
    state = creation_ops.convert_to_tensor(state)
    first = sequences[(slice(None), *(0,) * (len(sequences.shape) - 1))]  # (batch,)
    rows = nondiff.zeros_like(first, dtype=state.dtype)
    rows = array_ops.reshape(rows, (-1, *(1,) * (len(state.shape) - 1)))
    return rows + state


def _initial_state(cell, batch_size, dtype):
    fn = getattr(cell, "get_initial_state", None)
    if fn is not None:
        state = fn(batch_size=batch_size)
        return state if isinstance(state, (list, tuple)) else [state]
    sizes = cell.state_size
    dtype = dtypes.as_dtype(dtype)
    if isinstance(sizes, int):
        return creation_ops.zeros((batch_size, sizes), dtype=dtype)
    return [creation_ops.zeros((batch_size, d), dtype=dtype) for d in sizes]


def _dropout_plan(cell, input_dim, path=()) -> tuple:
    """`(path, input dim, units, rate, recurrent rate, mask count)` for each
    cell of the stack that drops."""
    if isinstance(cell, StackedRNNCells):
        out = []
        for i, c in enumerate(cell.cells):
            out.extend(_dropout_plan(c, input_dim, (*path, i)))
            input_dim = _output_size(c)
        return tuple(out)
    spec = getattr(cell, "_dropout_spec", None)  # (ConvLSTMCell: mask shapes)
    if spec is not None:
        in_shape, state_shape, rate, rec_rate = spec()
        if not (rate or rec_rate):
            return ()
        count = cell.dropout_mask_count
        return ((path, in_shape, state_shape, rate, rec_rate, count),)
    if isinstance(cell, _DropoutRNNCell) and (cell.dropout or cell.recurrent_dropout):
        sizes = cell.state_size
        units = sizes[0] if isinstance(sizes, (list, tuple)) else sizes
        return (
            (
                path,
                int(input_dim),
                int(units),
                cell.dropout,
                cell.recurrent_dropout,
                cell.dropout_mask_count,
            ),
        )
    return ()


# -- layers ---------------------------------------------------------------------------
class RNN(Layer):
    """Keras's `RNN(cell)`: runs a cell over a sequence's time axis.

    `cell` is any layer (or object) with `call(inputs, states)` returning
    `(output, new_states)` and a `state_size` (an int or a list), or a list of
    cells (a `StackedRNNCells`). Call with `initial_state=` (a list of
    tensors), `mask=` (a `(batch, timesteps)` bool tensor, or the mask an
    `Embedding(mask_zero=True)` or `Masking` layer attached to its input) and
    `training=` (dropout). The time loop is one `lax.scan` in one recorded op.

    Differences from TensorFlow: `unroll=True` runs the same scan, fully
    unrolled by XLA (`lax.scan(unroll=True)`); the results are the same.
    Keras's `constants` are not taken.
    """

    def __init__(
        self,
        cell,
        return_sequences=False,
        return_state=False,
        go_backwards=False,
        stateful=False,
        unroll=False,
        zero_output_for_mask=False,
        **kwargs,
    ):
        if isinstance(cell, (list, tuple)):
            cell = StackedRNNCells(cell)
        if "call" not in dir(cell):
            raise ValueError(
                f"Argument `cell` should have a `call` method. Received: cell={cell}"
            )
        if "state_size" not in dir(cell):
            raise ValueError(
                "The RNN cell should have a `state_size` attribute (single integer "
                "or list of integers, one integer per RNN state). Received: "
                f"cell={cell}"
            )
        activity_regularizer = kwargs.pop("activity_regularizer", None)
        super().__init__(**kwargs)
        self.activity_regularizer = regularizers.get(activity_regularizer)
        self.zero_output_for_mask = bool(zero_output_for_mask)
        self.cell = cell
        # The dropout masks' stream (Keras's cell SeedGenerator: two layers
        # built with the same seed draw the same masks).
        self._seed_stream = SeedStream(_seed_of(cell))
        self.return_sequences = bool(return_sequences)
        self.return_state = bool(return_state)
        self.go_backwards = bool(go_backwards)
        self.stateful = bool(stateful)
        self.unroll = bool(unroll)
        self.supports_masking = True
        state_size = cell.state_size
        if not isinstance(state_size, (list, tuple, int)):
            raise ValueError(
                "state_size must be an integer, or a list/tuple of integers (one "
                "for each state tensor)."
            )
        self.single_state = isinstance(state_size, int)
        # Keras's state Variables of a stateful layer: not weights, not saved.
        object.__setattr__(self, "states", None)

    @property
    def state_size(self) -> list:
        size = self.cell.state_size
        return [size] if isinstance(size, int) else list(size)

    states: list[Variable] | None  # a stateful layer's (set in `build`)

    def build(self, input_shape, initial_state_shape=None):
        sequences_shape = input_shape
        step_shape = (sequences_shape[0], *tuple(sequences_shape[2:]))
        if isinstance(self.cell, Layer) and not self.cell.built:
            with (
                context.paused_tapes(),
                self._scope_for_weights(),  # (a direct `build`: the layer's scope)
                _layer_scope(self.cell.name),
            ):
                self.cell.build(step_shape)
            self.cell.built = True
        if self.stateful and self.states is None:
            batch = sequences_shape[0]
            if batch is None:
                raise ValueError(
                    "When using `stateful=True` in a RNN, the batch size must be "
                    f"static. Found dynamic batch size: sequence.shape="
                    f"{tuple(sequences_shape)}. Pass `batch_size` to `keras.Input` "
                    "(or `batch_input_shape`)."
                )
            flat, _ = _flatten(self.get_initial_state(int(batch)))
            states = [
                Variable(_value(s), trainable=False, name="rnn_state") for s in flat
            ]
            object.__setattr__(self, "states", states)
        self.built = True

    def get_initial_state(self, batch_size):
        """The zero states (the cell's `get_initial_state`), a list."""
        state = _initial_state(self.cell, batch_size, self.cell.compute_dtype)
        return list(state) if isinstance(state, (list, tuple)) else [state]

    def reset_state(self):
        if self.states is not None:
            for v in self.states:
                v.assign(jnp.zeros(v.shape, v.dtype.as_numpy_dtype))

    def reset_states(self):
        """Keras's alias of `reset_state`: the states of a stateful layer to 0."""
        self.reset_state()

    def compute_mask(self, inputs, previous_mask=None):
        del inputs
        mask = previous_mask
        if isinstance(mask, (list, tuple)):
            mask = mask[0]
        output_mask = mask if self.return_sequences else None
        if self.return_state:
            return [output_mask] + [None for _ in self.state_size]
        return output_mask

    def call(self, sequences, initial_state=None, mask=None, training=False):
        if len(sequences.shape) < 3:
            raise ValueError(
                f"Layer {self.name!r} expects a sequence of shape (batch, timesteps, "
                f"features); received shape {tuple(sequences.shape)}."
            )
        batch = sequences.shape[0]
        if initial_state is None:
            if self.stateful:
                initial_state = self.states
            elif batch is None:  # known only at run time (an export's None batch)
                initial_state = map_structure(
                    lambda s: _for_every_row(s, sequences), self.get_initial_state(1)
                )
            else:
                initial_state = self.get_initial_state(batch)
        elif self.stateful and self.states is not None:
            expected = self.states[0].shape[0]
            if batch != expected:
                raise ValueError(
                    "If an RNN is stateful, the batch size of the input sequences "
                    "must be the same as the batch size of the initial state. \n"
                    f"- Expected batch size: {expected}\n- Received batch size: {batch}"
                )
        if self.stateful and self.states is not None and initial_state is self.states:
            expected = self.states[0].shape[0]
            if batch != expected:
                raise ValueError(
                    "If an RNN is stateful, the batch size of the input sequences "
                    "must be the same as the batch size of the initial state. \n"
                    f"- Expected batch size: {expected}\n- Received batch size: {batch}"
                )
        if not isinstance(initial_state, (list, tuple)):
            initial_state = [initial_state]
        flat, state_def = _flatten(list(initial_state))
        flat = [
            math_ops.cast(s, self.compute_dtype)
            if not (isinstance(s, Tensor) and s.dtype.name == self.compute_dtype)
            else s
            for s in flat
        ]
        training = bool(training)
        plan = _dropout_plan(self.cell, sequences.shape[-1]) if training else ()
        loop = _Loop(
            self.cell,
            state_def,
            _output_size(self.cell),
            mask is not None,
            plan,
            (
                self.go_backwards,
                self.return_sequences,
                self.zero_output_for_mask,
                self.unroll,
                training,
            ),
        )
        values: list = [sequences]
        if mask is not None:
            values.append(math_ops.cast(mask, dtypes.bool))
        if plan:
            values.append(self._seed_stream.next())
        values += flat
        values += list(loop.variables)
        outs = _rnn(values, loop)
        output, final = outs[0], list(outs[1:])
        if self.stateful and self.states is not None:
            for v, s in zip(self.states, final):
                v.assign(s)
        if self.activity_regularizer is not None:  # Keras 3: on every output
            for t in [output, *final] if self.return_state else [output]:
                add_activity_loss(self, self.activity_regularizer, t)
        if not self.return_state:
            return output
        states = jax.tree_util.tree_unflatten(state_def, final)
        return (output, *states)

    def get_config(self):
        cfg = {
            **super().get_config(),
            "return_sequences": self.return_sequences,
            "return_state": self.return_state,
            "go_backwards": self.go_backwards,
            "stateful": self.stateful,
            "unroll": self.unroll,
            "zero_output_for_mask": self.zero_output_for_mask,
        }
        if self.activity_regularizer is not None:
            cfg["activity_regularizer"] = regularizers.serialize(
                self.activity_regularizer
            )
        cfg["cell"] = serialization.serialize_layer(self.cell)
        return cfg

    @classmethod
    def from_config(cls, config: dict) -> Any:
        cfg = dict(config)
        cell = serialization.deserialize_layer(cfg.pop("cell"))
        return cls(cell, **cfg)


def _seed_of(cell):
    if isinstance(cell, StackedRNNCells):
        seeds = [_seed_of(c) for c in cell.cells]
        return next((s for s in seeds if s is not None), None)
    return getattr(cell, "seed", None)


_CELL_ARGS = (
    "units",
    "activation",
    "recurrent_activation",
    "use_bias",
    "kernel_initializer",
    "recurrent_initializer",
    "bias_initializer",
    "unit_forget_bias",
    "kernel_regularizer",
    "recurrent_regularizer",
    "bias_regularizer",
    "kernel_constraint",
    "recurrent_constraint",
    "bias_constraint",
    "dropout",
    "recurrent_dropout",
    "reset_after",
    "seed",
    "implementation",
)


class _BuiltinRNN(RNN):
    """SimpleRNN, LSTM and GRU: an RNN of their cell, the cell's arguments
    taken by the layer (and read back as properties), Keras 3's flat config."""

    _CELL: type[_GatedCell] = SimpleRNNCell
    _CELL_NAME = "simple_rnn_cell"

    def __init__(self, units, **kwargs):
        cell_kwargs = {k: kwargs.pop(k) for k in _CELL_ARGS[1:] if k in kwargs}
        use_cudnn = kwargs.pop("use_cudnn", "auto")
        if use_cudnn not in ("auto", True, False):
            raise ValueError(
                "Invalid valid received for argument `use_cudnn`. Expected one of "
                f"{{'auto', True, False}}. Received: use_cudnn={use_cudnn}"
            )
        cell = self._CELL(
            units,
            dtype=kwargs.get("dtype"),
            trainable=kwargs.get("trainable", True),
            name=self._CELL_NAME,
            **cell_kwargs,
        )
        super().__init__(cell, **kwargs)
        self.use_cudnn = use_cudnn
        self.input_spec = InputSpec(ndim=3)

    def __getattr__(self, name):
        if name in _CELL_ARGS and "cell" in self.__dict__:
            return getattr(self.__dict__["cell"], name)
        raise AttributeError(
            f"{type(self).__name__!r} object has no attribute {name!r}"
        )

    def get_config(self):
        cfg = super().get_config()
        del cfg["cell"]
        cell_cfg = self.cell.get_config()
        for key in ("name", "trainable", "dtype"):
            cell_cfg.pop(key, None)
        if isinstance(self, SimpleRNN):
            del cell_cfg["seed"]  # (Keras 3's SimpleRNN leaves it out)
        cfg = {**cfg, **cell_cfg}
        cfg["activity_regularizer"] = (
            None
            if self.activity_regularizer is None
            else regularizers.serialize(self.activity_regularizer)
        )
        return cfg

    @classmethod
    def from_config(cls, config: dict) -> Any:
        return cls(**config)


class SimpleRNN(_BuiltinRNN):
    """Keras's `SimpleRNN`: `RNN(SimpleRNNCell(units, ...))`; weights at
    `simple_rnn/simple_rnn_cell/{kernel,recurrent_kernel,bias}`."""

    _CELL = SimpleRNNCell
    _CELL_NAME = "simple_rnn_cell"


class LSTM(_BuiltinRNN):
    """Keras's `LSTM`: `RNN(LSTMCell(units, ...))`; returns `[output, h, c]`
    with `return_state`. `use_cudnn` is accepted (XLA picks the kernels)."""

    _CELL = LSTMCell
    _CELL_NAME = "lstm_cell"


class GRU(_BuiltinRNN):
    """Keras's `GRU`: `RNN(GRUCell(units, ...))`, `reset_after=True` by default
    as Keras 3. `use_cudnn` is accepted (XLA picks the kernels)."""

    _CELL = GRUCell
    _CELL_NAME = "gru_cell"


class Bidirectional(Layer):
    """Keras's `Bidirectional(layer, merge_mode='concat')`: the layer and a copy
    of it running backwards (or `backward_layer`), their outputs merged by
    `merge_mode` (`'concat'`, `'sum'`, `'mul'`, `'ave'` or None for a list).

    With `return_state` the states follow: forward's, then backward's. An
    `initial_state` list is split in half the same way.
    """

    def __init__(
        self, layer, merge_mode="concat", weights=None, backward_layer=None, **kwargs
    ):
        if not isinstance(layer, Layer):
            raise ValueError(
                "Please initialize `Bidirectional` layer with a "
                f"`keras.layers.Layer` instance. Received: {layer}"
            )
        if backward_layer is not None and not isinstance(backward_layer, Layer):
            raise ValueError(
                "`backward_layer` need to be a `keras.layers.Layer` instance. "
                f"Received: {backward_layer}"
            )
        if merge_mode not in ["sum", "mul", "ave", "concat", None]:
            raise ValueError(
                f"Invalid merge mode. Received: {merge_mode}. Merge mode should be "
                'one of {"sum", "mul", "ave", "concat", None}'
            )
        if weights is not None:
            raise NotImplementedError(
                "Bidirectional(weights=...) is not supported by jaxtape; call "
                "`set_weights` once the layer is built."
            )
        super().__init__(**kwargs)
        entry = serialization.serialize_layer(layer)
        entry["config"]["name"] = "forward_" + _removeprefix(layer.name, "forward_")
        self.forward_layer = serialization.deserialize_layer(entry)
        if backward_layer is None:
            entry = serialization.serialize_layer(layer)
            entry["config"]["go_backwards"] = True
            entry["config"]["name"] = "backward_" + _removeprefix(
                layer.name, "backward_"
            )
            backward_layer = serialization.deserialize_layer(entry)
        self.backward_layer = backward_layer
        fwd, bwd = self.forward_layer, self.backward_layer
        if fwd.go_backwards == bwd.go_backwards:
            raise ValueError(
                "Forward layer and backward layer should have different "
                "`go_backwards` value. Received: forward_layer.go_backwards "
                f"{fwd.go_backwards}, backward_layer.go_backwards="
                f"{bwd.go_backwards}"
            )
        for a in ("stateful", "return_sequences", "return_state"):
            if getattr(fwd, a) != getattr(bwd, a):
                raise ValueError(
                    "Forward layer and backward layer are expected to have the same "
                    f'value for attribute "{a}", got "{getattr(fwd, a)}" for '
                    f'forward layer and "{getattr(bwd, a)}" for backward layer'
                )
        for sub in (fwd, bwd):
            if getattr(sub, "zero_output_for_mask", None) is not None:
                sub.zero_output_for_mask = sub.return_sequences
        self.merge_mode = merge_mode
        self.stateful = fwd.stateful
        self.return_sequences = fwd.return_sequences
        self.return_state = fwd.return_state
        self.supports_masking = True
        self.input_spec = layer.input_spec

    forward_layer: Any
    backward_layer: Any

    def build(self, input_shape, initial_state_shape=None):
        for sub in (self.forward_layer, self.backward_layer):
            if not sub.built:
                with _layer_scope(sub.name):
                    sub.build(input_shape)
                sub.built = True
        self.built = True

    def call(self, sequences, initial_state=None, mask=None, training=None):
        kwargs: dict = {}
        if self.forward_layer._call_takes_training:
            kwargs["training"] = training
        if mask is not None:
            kwargs["mask"] = mask
        fwd_state = bwd_state = None
        if initial_state is not None:
            half = len(initial_state) // 2
            fwd_state, bwd_state = initial_state[:half], initial_state[half:]
        y = self.forward_layer(sequences, initial_state=fwd_state, **kwargs)
        y_rev = self.backward_layer(sequences, initial_state=bwd_state, **kwargs)
        states: list = []
        if self.return_state:
            states = list(y[1:]) + list(y_rev[1:])
            y, y_rev = y[0], y_rev[0]
        if self.return_sequences:
            y_rev = array_ops.reverse(y_rev, [1])
        if self.merge_mode == "concat":
            output = array_ops.concat([y, y_rev], axis=-1)
        elif self.merge_mode == "sum":
            output = y + y_rev
        elif self.merge_mode == "ave":
            output = (y + y_rev) / 2.0
        elif self.merge_mode == "mul":
            output = y * y_rev
        else:
            output = (y, y_rev)
        if self.return_state:
            if self.merge_mode is None:
                return (*output, *states)
            return (output, *states)
        return output

    def compute_mask(self, inputs, previous_mask=None):
        del inputs
        mask = previous_mask
        if isinstance(mask, (list, tuple)):
            mask = mask[0]
        if self.return_sequences:
            output_mask = mask if self.merge_mode else [mask, mask]
        else:
            output_mask = None if self.merge_mode else [None, None]
        if self.return_state and self.states is not None:
            extra = [None for _ in self.states]
            if isinstance(output_mask, list):
                return output_mask + extra
            return [output_mask, *extra]
        return output_mask

    @property
    def states(self):
        fwd, bwd = self.forward_layer.states, self.backward_layer.states
        return tuple(fwd + bwd) if fwd and bwd else None

    def reset_state(self):
        if not self.stateful:
            raise AttributeError("Layer must be stateful.")
        self.forward_layer.reset_state()
        self.backward_layer.reset_state()

    def reset_states(self):
        self.reset_state()

    def get_config(self):
        return {
            **super().get_config(),
            "merge_mode": self.merge_mode,
            "layer": serialization.serialize_layer(self.forward_layer),
            "backward_layer": serialization.serialize_layer(self.backward_layer),
        }

    @classmethod
    def from_config(cls, config: dict) -> Any:
        cfg = dict(config)
        cfg["layer"] = serialization.deserialize_layer(cfg["layer"])
        backward = cfg.pop("backward_layer", None)
        if backward is not None:
            cfg["backward_layer"] = serialization.deserialize_layer(backward)
        return cls(**cfg)


def _removeprefix(name: str, prefix: str) -> str:
    return name[len(prefix) :] if name.startswith(prefix) else name
