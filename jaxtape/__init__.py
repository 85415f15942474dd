"""jaxtape: TensorFlow 2's eager API on JAX. `import jaxtape as tf`."""

from jaxtape._src import config_env as _config_env  # noqa: F401  (must come first)

from jaxtape._src.core.dtypes import (  # noqa: F401
    DType as DType,
    as_dtype as as_dtype,
    bfloat16 as bfloat16,
    bool as bool,
    complex64 as complex64,
    complex128 as complex128,
    double as double,
    float16 as float16,
    float32 as float32,
    float64 as float64,
    half as half,
    int8 as int8,
    int16 as int16,
    int32 as int32,
    int64 as int64,
    qint8 as qint8,
    qint16 as qint16,
    qint32 as qint32,
    quint8 as quint8,
    quint16 as quint16,
    resource as resource,
    string as string,
    uint8 as uint8,
    uint16 as uint16,
    uint32 as uint32,
    uint64 as uint64,
    variant as variant,
)
from jaxtape._src.core.device import device as device  # noqa: F401
from jaxtape._src.core.tensor import (  # noqa: F401
    Tensor as Tensor,
    TensorShape as TensorShape,
    TensorSpec as TensorSpec,
)
from jaxtape._src.core.dispatch import register_op as register_op  # noqa: F401
from jaxtape._src.ops.creation_ops import (  # noqa: F401
    constant as constant,
    convert_to_tensor as convert_to_tensor,
    eye as eye,
    linspace as linspace,
    lin_space as lin_space,
    ones as ones,
    range as range,
    zeros as zeros,
)
from jaxtape._src.ops.math_ops import (  # noqa: F401
    abs as abs,
    add as add,
    add_n as add_n,
    cast as cast,
    clip_by_global_norm as clip_by_global_norm,
    clip_by_norm as clip_by_norm,
    clip_by_value as clip_by_value,
    complex as complex,
    conj as conj,
    cos as cos,
    cumsum as cumsum,
    divide as divide,
    einsum as einsum,
    exp as exp,
    floordiv as floordiv,
    identity as identity,
    imag as imag,
    log as log,
    matmul as matmul,
    maximum as maximum,
    minimum as minimum,
    mod as mod,
    multiply as multiply,
    negative as negative,
    norm as norm,
    pow as pow,
    real as real,
    reduce_logsumexp as reduce_logsumexp,
    reduce_max as reduce_max,
    reduce_mean as reduce_mean,
    reduce_min as reduce_min,
    reduce_prod as reduce_prod,
    reduce_sum as reduce_sum,
    rsqrt as rsqrt,
    saturate_cast as saturate_cast,
    sigmoid as sigmoid,
    sign as sign,
    sin as sin,
    sqrt as sqrt,
    square as square,
    squared_difference as squared_difference,
    subtract as subtract,
    tan as tan,
    tanh as tanh,
    tensordot as tensordot,
    truediv as truediv,
)
from jaxtape._src.ops.nondiff import (  # noqa: F401
    argmax as argmax,
    argmin as argmin,
    argsort as argsort,
    equal as equal,
    floor as floor,
    greater as greater,
    greater_equal as greater_equal,
    less as less,
    less_equal as less_equal,
    logical_and as logical_and,
    logical_not as logical_not,
    logical_or as logical_or,
    not_equal as not_equal,
    ones_like as ones_like,
    rank as rank,
    reduce_all as reduce_all,
    reduce_any as reduce_any,
    round as round,
    shape as shape,
    size as size,
    stop_gradient as stop_gradient,
    zeros_like as zeros_like,
)
from jaxtape._src.ops.array_ops import (  # noqa: F401
    boolean_mask as boolean_mask,
    broadcast_to as broadcast_to,
    concat as concat,
    expand_dims as expand_dims,
    fill as fill,
    gather as gather,
    gather_nd as gather_nd,
    one_hot as one_hot,
    pad as pad,
    repeat as repeat,
    reshape as reshape,
    reverse as reverse,
    scatter_nd as scatter_nd,
    sort as sort,
    split as split,
    squeeze as squeeze,
    stack as stack,
    tensor_scatter_nd_add as tensor_scatter_nd_add,
    tensor_scatter_nd_update as tensor_scatter_nd_update,
    tile as tile,
    transpose as transpose,
    unstack as unstack,
    where as where,
)
from jaxtape._src.ops.math_ops import (  # noqa: F401
    acos as acos,
    asin as asin,
    atan as atan,
    atan2 as atan2,
    cosh as cosh,
    sinh as sinh,
)
from jaxtape._src.ops.math_extra_ops import (  # noqa: F401
    acosh as acosh,
    asinh as asinh,
    atanh as atanh,
    scalar_mul as scalar_mul,
)
from jaxtape._src.ops.array_extra_ops import (  # noqa: F401
    batch_to_space as batch_to_space,
    bitcast as bitcast,
    broadcast_dynamic_shape as broadcast_dynamic_shape,
    broadcast_static_shape as broadcast_static_shape,
    dynamic_partition as dynamic_partition,
    dynamic_stitch as dynamic_stitch,
    ensure_shape as ensure_shape,
    get_logger as get_logger,
    guarantee_const as guarantee_const,
    inside_function as inside_function,
    is_symbolic_tensor as is_symbolic_tensor,
    get_static_value as get_static_value,
    group as group,
    histogram_fixed_width as histogram_fixed_width,
    histogram_fixed_width_bins as histogram_fixed_width_bins,
    identity_n as identity_n,
    is_tensor as is_tensor,
    meshgrid as meshgrid,
    no_op as no_op,
    parallel_stack as parallel_stack,
    realdiv as realdiv,
    required_space_to_batch_paddings as required_space_to_batch_paddings,
    reverse_sequence as reverse_sequence,
    roll as roll,
    searchsorted as searchsorted,
    sequence_mask as sequence_mask,
    shape_n as shape_n,
    slice as slice,
    space_to_batch as space_to_batch,
    space_to_batch_nd as space_to_batch_nd,
    strided_slice as strided_slice,
    tensor_scatter_nd_max as tensor_scatter_nd_max,
    tensor_scatter_nd_min as tensor_scatter_nd_min,
    tensor_scatter_nd_sub as tensor_scatter_nd_sub,
    timestamp as timestamp,
    truncatediv as truncatediv,
    truncatemod as truncatemod,
    tuple_ as tuple,
    unique as unique,
    unique_with_counts as unique_with_counts,
    unravel_index as unravel_index,
)
from jaxtape._src.ops.linalg_ops import eig as eig, eigvals as eigvals  # noqa: F401
from jaxtape._src.initializers.initializers import (  # noqa: F401  (TF's v2 classes)
    Constant as constant_initializer,
    Ones as ones_initializer,
    RandomNormal as random_normal_initializer,
    RandomUniform as random_uniform_initializer,
    Zeros as zeros_initializer,
)
from jaxtape._src.ops.misc_ops import (  # noqa: F401
    assert_equal as assert_equal,
    assert_greater as assert_greater,
    assert_less as assert_less,
    assert_rank as assert_rank,
    Assert as Assert,
    IndexedSlices as IndexedSlices,
    newaxis as newaxis,
    print as print,
)
from jaxtape._src.structured.sparse import SparseTensor as SparseTensor  # noqa: F401
from jaxtape._src.structured.ragged import (  # noqa: F401
    RaggedTensor as RaggedTensor,
    RaggedTensorSpec as RaggedTensorSpec,
)
from jaxtape._src.structured import ragged_dispatch as _ragged_dispatch  # noqa: F401
from jaxtape._src.core.type_spec import TypeSpec as TypeSpec  # noqa: F401
from jaxtape._src.data.type_specs import (  # noqa: F401
    IndexedSlicesSpec as IndexedSlicesSpec,
    NoneTensorSpec as NoneTensorSpec,
    SparseTensorSpec as SparseTensorSpec,
    TensorArraySpec as TensorArraySpec,
)
from jaxtape._src.data.optional import OptionalSpec as OptionalSpec  # noqa: F401
from jaxtape._src.structured import strings as _strings  # noqa: F401
from jaxtape._src.structured.string_ops import as_string as as_string  # noqa: F401
from jaxtape._src.ops.script_ops import (  # noqa: F401
    numpy_function as numpy_function,
    py_function as py_function,
)
from jaxtape._src.state.variable import (  # noqa: F401
    Variable as Variable,
    VariableAggregation as VariableAggregation,
    VariableSynchronization as VariableSynchronization,
)
from jaxtape._src.state.module import (  # noqa: F401
    Module as Module,
    control_dependencies as control_dependencies,
    get_current_name_scope as get_current_name_scope,
    init_scope as init_scope,
    name_scope as name_scope,
)
from jaxtape._src.autodiff.gradient_tape import (  # noqa: F401
    GradientTape as GradientTape,
    UnconnectedGradients as UnconnectedGradients,
)
from jaxtape._src.autodiff.custom_gradient import (  # noqa: F401
    custom_gradient as custom_gradient,
)
from jaxtape._src.function.function import function as function  # noqa: F401
from jaxtape._src.ops.tensor_array import TensorArray as TensorArray  # noqa: F401
from jaxtape._src.function.control_flow import (  # noqa: F401
    case as case,
    cond as cond,
    foldl as foldl,
    foldr as foldr,
    for_range as for_range,
    map_fn as map_fn,
    scan as scan,
    switch_case as switch_case,
    while_loop as while_loop,
)

# Issue 17: the remaining top-level op names.
from jaxtape._src.ops.linalg_more_ops import sqrtm as matrix_square_root  # noqa: F401
from jaxtape._src.ops.toplevel_more_ops import (  # noqa: F401
    conv2d_backprop_filter_v2 as conv2d_backprop_filter_v2,
    conv2d_backprop_input_v2 as conv2d_backprop_input_v2,
    extract_volume_patches as extract_volume_patches,
    fftnd as fftnd,
    gradients as gradients,
    hessians as hessians,
    ifftnd as ifftnd,
    irfftnd as irfftnd,
    no_gradient as no_gradient,
    random_index_shuffle as random_index_shuffle,
    register_tensor_conversion_function as register_tensor_conversion_function,
    rfftnd as rfftnd,
)
from jaxtape._src.autodiff.recompute import (  # noqa: F401
    grad_pass_through as grad_pass_through,
    recompute_grad as recompute_grad,
)
from jaxtape._src.function.vectorized_map import (  # noqa: F401
    vectorized_map as vectorized_map,
)
from jaxtape._src.io.tensor_proto import (  # noqa: F401
    make_ndarray as make_ndarray,
    make_tensor_proto as make_tensor_proto,
)
from jaxtape._src.state.variable import (  # noqa: F401
    variable_creator_scope as variable_creator_scope,
)
from jaxtape._src.structured.toplevel_structured_ops import (  # noqa: F401
    edit_distance as edit_distance,
    fingerprint as fingerprint,
    ragged_fill_empty_rows as ragged_fill_empty_rows,
    ragged_fill_empty_rows_grad as ragged_fill_empty_rows_grad,
    type_spec_from_value as type_spec_from_value,
)
from jaxtape._src.core.device_spec import DeviceSpec as DeviceSpec  # noqa: F401
from jaxtape._src.ops.toplevel_rest_ops import (  # noqa: F401
    AggregationMethod as AggregationMethod,
    RegisterGradient as RegisterGradient,
    approx_top_k as approx_top_k,
    check_pinned as check_pinned,
    conv as conv,
)
from jaxtape._src.function.concurrency import (  # noqa: F401
    CriticalSection as CriticalSection,
    nondifferentiable_batch_function as nondifferentiable_batch_function,
)
from jaxtape._src.compat.v1 import (  # noqa: F401
    contrib as contrib,
    enable_eager_execution as enable_eager_execution,
    executing_eagerly as executing_eagerly,
)

from jaxtape import (  # noqa: F401,E402
    keras as keras,
    audio as audio,
    sysconfig as sysconfig,
    types as types,
    autodiff as autodiff,
    autograph as autograph,
    bitwise as bitwise,
    config as config,
    data as data,
    debug as debug,
    debugging as debugging,
    distribute as distribute,
    dtypes as dtypes,
    errors as errors,
    experimental as experimental,
    image as image,
    io as io,
    linalg as linalg,
    lookup as lookup,
    math as math,
    nest as nest,
    nn as nn,
    random as random,
    saved_model as saved_model,
    ragged as ragged,
    sets as sets,
    signal as signal,
    sparse as sparse,
    strings as strings,
    summary as summary,
    test as test,
    train as train,
    version as version,
    # TF 2.21's tf.initializers/losses/metrics/optimizers: tf.keras's names.
    initializers as initializers,
    losses as losses,
    metrics as metrics,
    optimizers as optimizers,
)

# The TF API version jaxtape mirrors; jaxtape's own in __jaxtape_version__
# (the scheme: jaxtape/version.py).
__version__ = version.VERSION
__git_version__ = version.GIT_VERSION
__compiler_version__ = version.COMPILER_VERSION
__jaxtape_version__ = version.JAXTAPE_VERSION

from jaxtape._src import missing as _missing  # noqa: E402

# After every submodule import: a TF name jaxtape lacks raises "not implemented".
__getattr__ = _missing.module_getattr(__name__)

_config_env.freeze_imported_objects()  # last: everything imported is in place
