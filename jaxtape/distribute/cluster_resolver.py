"""`jaxtape.distribute.cluster_resolver` (TF's): re-exports only."""

from jaxtape._src.distribute.multi_worker import TFConfigClusterResolver  # noqa: F401

from jaxtape._src import missing as _missing

__getattr__ = _missing.module_getattr(__name__)  # TF names jaxtape lacks say so
