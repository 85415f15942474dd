"""`jaxtape.io.gfile` (TF's `tf.io.gfile`): re-exports only."""

from jaxtape._src.io.gfile import (  # noqa: F401
    GFile,
    copy,
    exists,
    get_registered_schemes,
    glob,
    isdir,
    join,
    listdir,
    makedirs,
    mkdir,
    remove,
    rename,
    rmtree,
    stat,
    walk,
)

from jaxtape._src import missing as _missing

__getattr__ = _missing.module_getattr(__name__)  # TF names jaxtape lacks say so
