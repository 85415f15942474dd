"""`jaxtape.summary.experimental`: the default step. Re-exports only."""

from jaxtape._src.summary.writer import get_step, set_step
