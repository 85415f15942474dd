"""From a recorded tape to gradients: VJPs, Jacobians and JVPs of its programs.

Layer L3. `program.build_program` slices the tape from targets to sources
into a `Program`, the pure function `F(leaves, constants) -> targets`;
`jax.vjp`/`jax.jacrev`/`jax.jvp` of `F` give gradients, Jacobians and JVPs.
They run through the program cache (`core/compile_cache`): `vjp(F)` is
compiled with `jax.jit` and reused (op by op the first time while the
structures met keep changing), so a training loop's backward pass is one XLA
call, which also computes and fills every forward value the tape left
pending.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp

from jaxtape._src.autodiff import segments
from jaxtape._src.autodiff.program import Program, Slice, cache
from jaxtape._src.core import context
from jaxtape._src.core.compile_cache import get_max_compiled_ops
from jaxtape._src.core.dispatch import OpInfo, dispatch_raw

_state = context.state


class _while_loop_errors:  # noqa: N801
    """JAX's reverse-mode error for `lax.while_loop`, with the jaxtape fix."""

    def __enter__(self):
        return self

    def __exit__(self, kind, error, tb):
        if kind is ValueError and _WHILE_TEXT in str(error):
            raise ValueError(_WHILE_FIX) from None
        return False


_WHILE_TEXT = "Reverse-mode differentiation does not work for lax.while_loop"
_WHILE_FIX = (
    "Cannot take a reverse-mode gradient through a jaxtape.while_loop whose trip "
    "count is known only at run time: it compiles to lax.while_loop, which JAX "
    "differentiates in forward mode only (TensorFlow keeps a stack of every "
    "iteration instead). Give the loop `maximum_iterations=` as a Python int (it "
    "then compiles to a lax.scan of that many steps, reverse-differentiable), or "
    "loop over a static range: `jaxtape.for_range(start, limit, delta, body, "
    "loop_vars)`, or `for i in range(n)`, with n known while tracing (`x.shape[0]`"
    ", not `jaxtape.shape(x)[0]`, which is a traced value). "
    "jaxtape.autodiff.ForwardAccumulator works through it as it is."
)


def _conj_if_complex(x):
    return jnp.conj(x) if x is not None and jnp.iscomplexobj(x) else x


def _make_vjp(program: Program, ct_given: tuple, keep: tuple):
    def run(leaves, consts, cts):
        def f(*ls):
            targets, kept = program.replay(ls, consts, keep=keep)
            return [t for t in targets if t is not None], kept

        outs, pullback, kept = jax.vjp(f, *leaves, has_aux=True)
        it = iter(cts)
        full = []
        for out, given in zip(outs, ct_given):
            ct = next(it) if given else jnp.ones_like(out)
            # TF's convention for complex numbers: conjugate in and out.
            full.append(_conj_if_complex(jnp.asarray(ct, out.dtype)))
        leaf_cts = pullback(full)
        grads = tuple(
            _conj_if_complex(
                sum(leaf_cts[j] for j in g[1:]) + leaf_cts[g[0]]
                if len(g) > 1
                else leaf_cts[g[0]]
            )
            for g in program.groups
            if g
        )
        return (*grads, *kept)

    return run


class _VjpCall:
    """The primitive of a whole gradient computation (one node for outer tapes)."""

    __slots__ = ("program", "ct_given", "keep", "n_leaves", "n_consts", "__name__")

    def __init__(self, program, ct_given, n_consts, keep=()):
        self.program = program
        self.ct_given = ct_given
        self.keep = keep  # local refs whose forward values are returned too
        self.n_leaves = program.n_leaves
        self.n_consts = n_consts
        self.__name__ = "GradientTape.gradient"

    def __eq__(self, other):
        return (
            isinstance(other, _VjpCall)
            and other.program == self.program
            and other.ct_given == self.ct_given
            and other.keep == self.keep
        )

    def __hash__(self):
        return hash((self.program, self.ct_given, self.keep))

    def __call__(self, *vals):
        nl, nc = self.n_leaves, self.n_consts
        leaves, consts, cts = vals[:nl], vals[nl : nl + nc], vals[nl + nc :]
        key = ("vjp", self.program, self.ct_given, self.keep)
        n_ops = len(self.program.nodes)
        fn = cache.lookup(
            key,
            (
                (lambda: _make_vjp(self.program, self.ct_given, self.keep))
                if n_ops <= get_max_compiled_ops()
                else lambda: segments.make_vjp(
                    self.program, self.ct_given, self.keep, _conj_if_complex
                )
            ),
            n_ops,
            kind="backward",
        )
        with _while_loop_errors():
            return fn(tuple(leaves), tuple(consts), tuple(cts))


def vjp(sl: Slice, ct_objs: list, ct_given: tuple):
    """Gradients of the slice's targets (one Tensor per connected, non-empty group).

    Goes through the dispatcher, so an outer recording tape that tracks any
    leaf, constant or cotangent records the whole computation as one node.
    With no outer tape, the values of the slice's pending outputs come back
    too (the forward pass is computed once, and nothing stays pending).
    """
    pending = sl.pending if not _state.tapes else ()
    keep = tuple(ref for ref, _, _ in pending)
    call = _VjpCall(sl.program, ct_given, len(sl.const_objs), keep)
    info = OpInfo(call, "GradientTape.gradient", False, True)
    out = dispatch_raw(info, [*sl.leaf_objs, *sl.const_objs, *ct_objs], ())
    out = list(out) if isinstance(out, tuple) else [out]
    if pending:
        out, kept = out[: len(out) - len(pending)], out[len(out) - len(pending) :]
        for (_, v, _), value in zip(pending, kept):
            if v.value is None:  # (the Tensor takes the value when next read)
                v.value = value._value
    return out


class _JacobianCall:
    """Primitive: Jacobians of one target w.r.t. each source group (jax.jacrev)."""

    __slots__ = ("program", "n_consts", "batch", "__name__")

    def __init__(self, program, n_consts, batch):
        self.program, self.n_consts, self.batch = program, n_consts, batch
        self.__name__ = "GradientTape.jacobian"

    def __eq__(self, other):
        return (
            isinstance(other, _JacobianCall)
            and other.program == self.program
            and other.batch == self.batch
        )

    def __hash__(self):
        return hash((self.program, self.batch))

    def __call__(self, *vals):
        nl = self.program.n_leaves
        key = ("jac", self.program, self.batch)
        fn = cache.lookup(
            key,
            lambda: _make_jacobian(self.program, self.batch),
            len(self.program.nodes),
            kind="backward",
        )
        with _while_loop_errors():
            return fn(tuple(vals[:nl]), tuple(vals[nl:]))


def _make_jacobian(program: Program, batch: bool):
    groups = [g for g in program.groups if g]

    def run(leaves, consts):
        def f(*ls):
            y = program.replay(ls, consts)[0]
            return jnp.sum(y, axis=0) if batch else y

        jacs = jax.jacrev(f, argnums=tuple(range(len(leaves))))(*leaves)
        outs = []
        for g in groups:
            j = jacs[g[0]]
            for extra in g[1:]:
                j = j + jacs[extra]
            if batch:  # [y..., b, x...] -> [b, y..., x...]
                j = jnp.moveaxis(j, j.ndim - leaves[g[0]].ndim, 0)
            outs.append(j)
        return tuple(outs)

    return run


def jacobian(sl: Slice, batch: bool):
    call = _JacobianCall(sl.program, len(sl.const_objs), batch)
    info = OpInfo(call, "GradientTape.jacobian", False, True)
    out = dispatch_raw(info, [*sl.leaf_objs, *sl.const_objs], ())
    return list(out) if isinstance(out, tuple) else [out]


class _JvpCall:
    """Primitive: JVPs of the slice's targets given leaf tangents (jax.jvp)."""

    __slots__ = ("program", "n_consts", "__name__")

    def __init__(self, program, n_consts):
        self.program, self.n_consts = program, n_consts
        self.__name__ = "ForwardAccumulator.jvp"

    def __eq__(self, other):
        return isinstance(other, _JvpCall) and other.program == self.program

    def __hash__(self):
        return hash(self.program)

    def __call__(self, *vals):
        nl, nc = self.program.n_leaves, self.n_consts
        leaves, consts, tangents = vals[:nl], vals[nl : nl + nc], vals[nl + nc :]
        program = self.program

        def f(*ls):
            return [
                t
                for t in program.replay(ls, consts, forward_mode=True)
                if t is not None
            ]

        _, out = jax.jvp(f, tuple(leaves), tuple(tangents))
        return tuple(out)


def jvp(sl: Slice, tangent_objs: list):
    call = _JvpCall(sl.program, len(sl.const_objs))
    info = OpInfo(call, "ForwardAccumulator.jvp", False, True)
    out = dispatch_raw(info, [*sl.leaf_objs, *sl.const_objs, *tangent_objs], ())
    return list(out) if isinstance(out, tuple) else [out]
