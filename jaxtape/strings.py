"""`jaxtape.strings` (TF's `tf.strings`): re-exports only.

String tensors (`jaxtape.string`) live on the host; see
`jaxtape/_src/structured/strings.py` and `string_ops.py`.
"""

from jaxtape._src.structured.string_ops import (  # noqa: F401
    as_string,
    bytes_split,
    format,
    join,
    length,
    lower,
    ngrams,
    reduce_join,
    regex_full_match,
    regex_replace,
    split,
    strip,
    substr,
    to_hash_bucket,
    to_hash_bucket_fast,
    to_hash_bucket_strong,
    to_number,
    unicode_decode,
    unicode_decode_with_offsets,
    unicode_encode,
    unicode_script,
    unicode_split,
    unicode_split_with_offsets,
    unicode_transcode,
    unsorted_segment_join,
    upper,
)

from jaxtape._src import missing as _missing

__getattr__ = _missing.module_getattr(__name__)  # TF names jaxtape lacks say so
