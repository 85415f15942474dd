"""`jaxtape.random` (TF's `tf.random`): re-exports only."""

from jaxtape._src.ops.stateless_random_ops import (  # noqa: F401
    Algorithm,
    create_rng_state,
    fold_in,
    split,
    stateless_binomial,
    stateless_categorical,
    stateless_gamma,
    stateless_normal,
    stateless_parameterized_truncated_normal,
    stateless_poisson,
    stateless_truncated_normal,
    stateless_uniform,
)
from jaxtape._src.state.random_ops import (  # noqa: F401
    Generator,
    categorical,
    gamma,
    get_global_generator,
    normal,
    poisson,
    set_global_generator,
    set_seed,
    shuffle,
    truncated_normal,
    uniform,
)
from jaxtape._src.state.random_ops import (  # noqa: F401
    all_candidate_sampler,
    fixed_unigram_candidate_sampler,
    learned_unigram_candidate_sampler,
    log_uniform_candidate_sampler,
    uniform_candidate_sampler,
)
from jaxtape.random import experimental  # noqa: F401

from jaxtape._src import missing as _missing

__getattr__ = _missing.module_getattr(__name__)  # TF names jaxtape lacks say so
