"""`jaxtape.nn` (TF's `tf.nn`): re-exports only."""

from jaxtape._src.ops.math_ops import l2_normalize, sigmoid, softplus, tanh  # noqa: F401
from jaxtape._src.ops.array_ops import top_k  # noqa: F401
from jaxtape._src.ops.nn_ops import (  # noqa: F401
    avg_pool,
    avg_pool1d,
    avg_pool2d,
    bias_add,
    conv1d,
    conv2d,
    convolution,
    elu,
    gelu,
    l2_loss,
    leaky_relu,
    log_softmax,
    max_pool,
    max_pool1d,
    max_pool2d,
    moments,
    relu,
    relu6,
    selu,
    sigmoid_cross_entropy_with_logits,
    silu,
    softmax,
    softmax_cross_entropy_with_logits,
    softsign,
    sparse_softmax_cross_entropy_with_logits,
)
from jaxtape._src.ops.nn_ops import silu as swish  # noqa: F401
from jaxtape._src.state.random_ops import dropout  # noqa: F401

from jaxtape._src.ops.nn_extra_ops import (  # noqa: F401
    approx_max_k,
    approx_min_k,
    atrous_conv2d,
    atrous_conv2d_transpose,
    avg_pool3d,
    batch_norm_with_global_normalization,
    batch_normalization,
    compute_average_loss,
    conv1d_transpose,
    conv2d_transpose,
    conv3d,
    conv3d_transpose,
    conv_transpose,
    crelu,
    depth_to_space,
    depthwise_conv2d,
    embedding_lookup,
    local_response_normalization,
    log_poisson_loss,
    lrn,
    max_pool3d,
    normalize_moments,
    pool,
    scale_regularization_loss,
    separable_conv2d,
    space_to_depth,
    sufficient_statistics,
    weighted_cross_entropy_with_logits,
    weighted_moments,
)
from jaxtape._src.ops.math_extra_ops import in_top_k, zero_fraction  # noqa: F401
from jaxtape._src.ops.array_extra_ops import space_to_batch  # noqa: F401
from jaxtape._src.ops.nn_ctc_ops import collapse_repeated, ctc_unique_labels  # noqa: F401
from jaxtape._src.structured.nn_sparse_ops import (  # noqa: F401
    ctc_beam_search_decoder,
    ctc_greedy_decoder,
    ctc_loss,
    embedding_lookup_sparse,
    safe_embedding_lookup_sparse,
)
from jaxtape._src.ops.nn_more_ops import (  # noqa: F401
    compute_accidental_hits,
    depthwise_conv2d_backprop_filter,
    depthwise_conv2d_backprop_input,
    dilation2d,
    erosion2d,
    fractional_avg_pool,
    fractional_max_pool,
    isotonic_regression,
    max_pool_with_argmax,
    nce_loss,
    sampled_softmax_loss,
    with_space_to_batch,
)
from jaxtape._src.keras.layers.rnn_cell_wrappers import (  # noqa: F401
    RNNCellDeviceWrapper,
    RNNCellDropoutWrapper,
    RNNCellResidualWrapper,
)
from jaxtape._src.state.random_ops import (  # noqa: F401
    all_candidate_sampler,
    fixed_unigram_candidate_sampler,
    learned_unigram_candidate_sampler,
)

from jaxtape._src.ops import nn_experimental_ops as _nn_experimental_ops
import sys as _sys
import types as _types

from jaxtape._src import missing as _missing

# `tf.nn.experimental`: a namespace module of its own (this is a module,
# not a package), registered so that `from ... .experimental import` works.
experimental = _types.ModuleType(
    "jaxtape.nn.experimental", "`jaxtape.nn.experimental` (TF's `tf.nn.experimental`)."
)
experimental.__dict__.update(
    dict(
        general_dropout=_nn_experimental_ops.general_dropout,
        stateless_dropout=_nn_experimental_ops.stateless_dropout,
    )
)
experimental.__getattr__ = _missing.module_getattr("jaxtape.nn.experimental")  # type: ignore[attr-defined]
_sys.modules["jaxtape.nn.experimental"] = experimental

__getattr__ = _missing.module_getattr(__name__)  # TF names jaxtape lacks say so
