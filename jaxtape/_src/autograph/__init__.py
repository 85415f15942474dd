"""AutoGraph for `jaxtape.function` (conversion.py: the converter; operators.py:
the lowering to control flow). Importing it installs the converter."""

from jaxtape._src.autograph import conversion as conversion  # noqa: F401
