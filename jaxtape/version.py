"""`jaxtape.version` (TF's `tf.version`): which TensorFlow API jaxtape mirrors.

Version scheme:

- `VERSION` (and `jaxtape.__version__`) is the TensorFlow release whose API
  jaxtape mirrors, "2.21.0": the name list behind "`tf.X` is not implemented
  in jaxtape yet" is TF 2.21's, and `tf.keras` follows that release's Keras 3.
  Version checks written for TensorFlow therefore take the branch they take on
  TF 2.21: `tf.__version__ >= "2."`,
  `packaging.version.parse(tf.__version__).major == 2` and
  `int(tf.__version__.split(".")[0]) >= 2` all hold, and code that picks
  Keras 3 behaviour for TF >= 2.16 picks it here too.
- `JAXTAPE_VERSION` (and `jaxtape.__jaxtape_version__`) is jaxtape's own
  release, the package version in `pyproject.toml` and the installed
  metadata (`importlib.metadata.version("jaxtape")`).
- `GIT_VERSION` names the jaxtape release ("jaxtape-v0.1.0"), where TF
  names its source commit; `COMPILER_VERSION` the compiler that runs the
  code, XLA from jaxlib, where TF names the C++ compiler that built it.

TF's `GRAPH_DEF_VERSION*` constants are not defined: jaxtape writes no
GraphDefs, and asking for them says it is not implemented.

>>> jaxtape.version.VERSION
'2.21.0'
>>> int(jaxtape.__version__.split(".")[0]) >= 2
True
"""

from jaxlib import version as _jaxlib_version

from jaxtape._src import missing as _missing

VERSION = "2.21.0"
JAXTAPE_VERSION = "0.1.0"
GIT_VERSION = f"jaxtape-v{JAXTAPE_VERSION}"
COMPILER_VERSION = f"XLA (jaxlib {_jaxlib_version.__version__})"

__getattr__ = _missing.module_getattr(__name__)
