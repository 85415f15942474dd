"""TF's frequent-retracing warning for `jaxtape.function`. Layer L3.

TF's `_FrequentTracingDetector`, with its counts and text.
"""

from __future__ import annotations

import logging
import weakref


class RetracingDetector:
    """TF's frequent-tracing warning (`_FrequentTracingDetector`), with TF's
    counts and text: per Python function (its code object, so that functions
    made in a loop share one history), the calls of the last ~10 that traced;
    when 5 did, a warning is logged (at most twice per function). A call that
    traced counts once however many traces it made; `get_concrete_function`
    does not count."""

    _HISTORY, _THRESHOLD, _MAX_WARNINGS = 10, 5, 2

    def __init__(self):
        # key -> [calls per tracing (a list), call count, warnings given]
        self._by_key: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()

    @staticmethod
    def _key(fn):
        while hasattr(fn, "__wrapped__"):
            fn = fn.__wrapped__
        fn = getattr(fn, "__func__", fn)  # methods: one history per function
        return getattr(fn, "__code__", fn)

    def called_with_tracing(self, function, untraced_calls: int) -> None:
        """A call traced; `untraced_calls` calls since the last report did not."""
        fn = function._fn
        try:
            state = self._by_key.setdefault(self._key(fn), [[], 0, 0])
        except TypeError:  # not weak-referenceable: no history
            return
        per_tracing = state[0]
        if untraced_calls:  # (TF's called_without_tracing, once per call)
            if not per_tracing:
                per_tracing.append(0)
            per_tracing[-1] += untraced_calls
            state[1] += untraced_calls
        state[1] += 1
        per_tracing.append(1)
        while per_tracing and state[1] - per_tracing[0] > self._HISTORY:
            state[1] -= per_tracing.pop(0)
        if state[2] >= self._MAX_WARNINGS or len(per_tracing) < self._THRESHOLD:
            return
        state[2] += 1
        logging.getLogger("jaxtape").warning(
            _RETRACING.format(len(per_tracing), state[1], fn)
        )


_RETRACING = (
    "{} out of the last {} calls to {} triggered tf.function retracing. Tracing "
    "is expensive and the excessive number of tracings could be due to (1) "
    "creating @jaxtape.function repeatedly in a loop, (2) passing tensors with "
    "different shapes, (3) passing Python objects instead of tensors. For (1), "
    "please define your @jaxtape.function outside of the loop. For (2), "
    "@jaxtape.function has reduce_retracing=True option that can avoid "
    "unnecessary retracing. For (3), please refer to "
    "https://www.tensorflow.org/guide/function#controlling_retracing and "
    "https://www.tensorflow.org/api_docs/python/tf/function for  more details."
)
detector = RetracingDetector()
