"""`jaxtape.data.experimental`: TF's older names. Re-exports only."""

from jaxtape._src import missing as _missing

from jaxtape._src.data.dataset import (
    AUTOTUNE,
    INFINITE_CARDINALITY,
    UNKNOWN_CARDINALITY,
)
from jaxtape._src.data.experimental_ops import (
    Counter,
    RandomDataset,
    at,
    copy_to_device,
    enable_debug_mode,
    get_structure,
    assert_cardinality,
    bucket_by_sequence_length,
    cardinality,
    choose_from_datasets,
    dense_to_ragged_batch,
    enumerate_dataset,
    from_list,
    get_single_element,
    group_by_window,
    ignore_errors,
    make_csv_dataset,
    map_and_batch,
    parallel_interleave,
    prefetch_to_device,
    sample_from_datasets,
    scan,
    shuffle_and_repeat,
    take_while,
    unbatch,
    unique,
)
from jaxtape._src.data.readers import CsvDataset
from jaxtape._src.data.optional import Optional, get_next_as_optional
from jaxtape._src.data.experimental_more import (
    SqlDataset,
    SHARD_HINT,
    DatasetInitializer,
    Reducer,
    TFRecordWriter,
    dense_to_sparse_batch,
    group_by_reducer,
    index_table_from_dataset,
    make_batched_features_dataset,
    pad_to_cardinality,
    parse_example_dataset,
    rejection_resample,
    table_from_dataset,
)
from jaxtape._src.data.saving import load, save, snapshot
from jaxtape._src.data.options import (
    AutoShardPolicy,
    AutotuneAlgorithm,
    AutotuneOptions,
    DistributeOptions,
    ExternalStatePolicy,
    OptimizationOptions,
    ThreadingOptions,
)

__getattr__ = _missing.module_getattr(__name__)  # TF names jaxtape lacks say so
