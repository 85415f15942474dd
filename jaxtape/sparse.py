"""`jaxtape.sparse` (TF's `tf.sparse`): re-exports only."""

from jaxtape._src.structured.sparse import (  # noqa: F401
    SparseTensor,
    from_dense,
    reorder,
    to_dense,
    transpose,
)
from jaxtape._src.structured.sparse_ops import (  # noqa: F401
    add,
    bincount,
    concat,
    cross,
    cross_hashed,
    expand_dims,
    eye,
    fill_empty_rows,
    map_values,
    mask,
    maximum,
    minimum,
    reduce_max,
    reduce_sum,
    reset_shape,
    reshape,
    retain,
    sampled_addmm,
    segment_mean,
    segment_sqrt_n,
    segment_sum,
    slice,
    softmax,
    sparse_dense_matmul,
    split,
    to_indicator,
)

from jaxtape._src import missing as _missing

__getattr__ = _missing.module_getattr(__name__)  # TF names jaxtape lacks say so
