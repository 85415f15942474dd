"""`jaxtape.io` (TF's `tf.io`): re-exports only."""

from jaxtape._src.io.file_ops import (  # noqa: F401
    decode_base64,
    decode_compressed,
    decode_csv,
    decode_json_example,
    decode_proto,
    decode_raw,
    deserialize_many_sparse,
    encode_base64,
    encode_proto,
    match_filenames_once,
    matching_files,
    parse_tensor,
    read_file,
    serialize_many_sparse,
    serialize_sparse,
    serialize_tensor,
    write_file,
    write_graph,
)
from jaxtape._src.io.image_codecs import (  # noqa: F401
    decode_and_crop_jpeg,
    decode_bmp,
    decode_gif,
    decode_image,
    decode_jpeg,
    decode_jxl,
    decode_png,
    decode_webp,
    encode_jpeg,
    encode_png,
    extract_jpeg_shape,
    is_jpeg,
)
from jaxtape._src.io.parsing import (  # noqa: F401
    FixedLenFeature,
    FixedLenSequenceFeature,
    RaggedFeature,
    SparseFeature,
    VarLenFeature,
    parse_example,
    parse_sequence_example,
    parse_single_example,
    parse_single_sequence_example,
)
from jaxtape._src.io.tfrecord import TFRecordOptions, TFRecordWriter  # noqa: F401
from jaxtape.io import gfile  # noqa: F401

from jaxtape._src import missing as _missing

__getattr__ = _missing.module_getattr(__name__)  # TF names jaxtape lacks say so
