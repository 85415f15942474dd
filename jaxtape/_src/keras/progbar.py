"""`keras.utils.Progbar`: a progress bar driven by the caller. Layer L5.

Shown with `rich` as the fit progress bar (`callbacks.ProgbarLogger`): with
`verbose=1` a live bar (steps done of `target`, time, averaged values), with
`verbose=2` one line when the bar is finalized. Values are averaged as
Keras's `Progbar` averages them.
"""

from __future__ import annotations

import logging
import time

_interactive = [True]  # Keras's global switch for live progress output


def enable_interactive_logging():
    """Progress bars draw live (Keras's default)."""
    _interactive[0] = True


def disable_interactive_logging():
    """Progress bars print plain lines (for logs), as Keras's switch."""
    _interactive[0] = False


def is_interactive_logging_enabled():
    """Whether progress bars draw live (`enable_interactive_logging`)."""
    return _interactive[0]


def print_msg(message, console=None):
    """Keras's `io_utils.print_msg`: to stdout (through the rich `console` when
    given) while interactive logging is on; else an INFO record of the
    `jaxtape` logger (Keras logs it with absl)."""
    if not _interactive[0]:
        logging.getLogger("jaxtape").info(message)
    elif console is not None:
        console.print(message)
    else:
        print(message)


class Progbar:
    """Keras's `Progbar(target, width=20, verbose=1, interval=0.05,
    stateful_metrics=None, stateless_metrics=None, unit_name='step')`.

    `update(current, values)` moves the bar to step `current`; `values` are
    `(name, value)` pairs. A name in `stateful_metrics` is shown as given;
    others are averaged over steps, each value weighted by the steps since
    the last update (by default, as Keras, every name is averaged; with
    `stateless_metrics`, only the names listed are). `add(n, values)` moves
    it `n` steps on. The last update (`current >= target`) shows each
    averaged name's value of that update, as Keras does.

    With `disable_interactive_logging()`, `verbose=1` logs one plain line
    when finalized instead of a live bar, and every line goes to the
    `jaxtape` logger (INFO) instead of stdout, as Keras logs with absl.

    Differences from Keras: the bar is drawn by `rich` (as jaxtape's fit
    progress bar), not with Keras's escape codes; the value texts are Keras's.
    """

    def __init__(
        self, target, width=20, verbose=1, interval=0.05, stateful_metrics=None,
        stateless_metrics=None, unit_name="step",
    ):  # fmt: skip
        if stateful_metrics is not None and stateless_metrics is not None:
            raise ValueError(
                "Only one of `stateful_metrics` or `stateless_metrics` can be "
                "provided. `stateful_metrics` is used to make metrics stateless "
                "by default (with an exclusion list), while `stateless_metrics` "
                "is used to make metrics stateful by default (with an exclusion "
                "list)."
            )
        self.target, self.width, self.verbose = target, width, verbose
        self.interval, self.unit_name = interval, unit_name
        self.stateful_metrics = set(stateful_metrics or ())
        self.stateless_metrics = (
            None if stateless_metrics is None else set(stateless_metrics)
        )
        self._seen_so_far = 0
        self._values: dict = {}
        self._values_order: list = []
        self._start = time.time()
        self._last_update = 0.0
        self._progress = None
        self._console = None

    def _averaged(self, name) -> bool:
        if self.stateless_metrics is not None:
            return name in self.stateless_metrics
        return name not in self.stateful_metrics

    def update(self, current, values=None, finalize=None):
        """Moves the bar to step `current` with `(name, value)` pairs."""
        if finalize is None:
            finalize = self.target is not None and current >= self.target
        for k, v in values or []:
            if k not in self._values_order:
                self._values_order.append(k)
            if self._averaged(k) and not finalize:
                base = max(current - self._seen_so_far, 1)
                if k not in self._values:
                    self._values[k] = [v * base, base]
                else:
                    self._values[k][0] += v * base
                    self._values[k][1] += base
            else:
                self._values[k] = [v, 1]
        self._seen_so_far = current
        now = time.time()
        if self.verbose == 1:
            if now - self._last_update < self.interval and not finalize:
                return
            if _interactive[0]:
                self._draw(current, now, finalize)
            elif finalize:  # no live bar: one logged line, as verbose=2
                print_msg(self._line(current, now))
        elif self.verbose == 2 and finalize:
            print_msg(self._line(current, now), self._console_())
        self._last_update = now

    def add(self, n, values=None):
        """Moves the bar `n` steps on."""
        self.update(self._seen_so_far + n, values)

    # -- display -----------------------------------------------------------------
    def _console_(self):
        if self._console is None:
            from rich.console import Console  # lazy: rich costs 30 ms at import

            self._console = Console(highlight=False)
        return self._console

    def _info(self, current, now) -> str:
        elapsed = now - self._start
        per = elapsed / max(current, 1)
        unit = self.unit_name
        timing = (
            f"{per:.0f}s/{unit}"
            if per >= 1
            else f"{per * 1e3:.0f}ms/{unit}"
            if per >= 1e-3
            else f"{per * 1e6:.0f}us/{unit}"
        )
        parts = [f"{elapsed:.0f}s {timing}"]
        for k in self._values_order:
            value = self._values[k]
            if isinstance(value, list):
                avg = float(value[0]) / max(1, value[1])
                text = f"{avg:.4f}" if abs(avg) > 1e-3 else f"{avg:.4e}"
            else:
                text = str(value)
            parts.append(f"{k}: {text}")
        return " - ".join(parts)

    def _line(self, current, now) -> str:
        done = f"{current}/{self.target}" if self.target else f"{current}/Unknown"
        return f"{done} - {self._info(current, now)}"

    def _draw(self, current, now, finalize):
        if self._progress is None:
            from rich.progress import (  # lazy: rich costs 30 ms at import
                BarColumn,
                MofNCompleteColumn,
                Progress,
                TextColumn,
            )

            self._progress = Progress(
                MofNCompleteColumn(),
                BarColumn(bar_width=self.width),
                TextColumn("{task.fields[info]}"),
                console=self._console_(),
                transient=False,
            )
            self._progress.start()
            self._task = self._progress.add_task("", total=self.target, info="")
        self._progress.update(
            self._task, completed=current, info=self._info(current, now)
        )
        if finalize:
            self._progress.stop()
            self._progress = None
