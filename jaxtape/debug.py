"""`jaxtape.debug`: jaxtape's own debugging aids (why is my gradient None?)."""

from jaxtape._src.autodiff.explain import explain_gradient  # noqa: F401
from jaxtape._src.autodiff.tape import NumpyEscapeWarning  # noqa: F401
from jaxtape._src.autodiff.gradient_tape import GradientWarning  # noqa: F401
