"""`tf.io.TFRecordWriter` and `tf.io.TFRecordOptions`.

Records are framed as TF's `RecordWriter` frames them (`ops/record_io`,
shared with `data.TFRecordDataset`), optionally through a GZIP or ZLIB
stream built with TF's zlib settings, so TF reads the files and jaxtape
reads TF's.

Layer L4 (`io`): imports `core`, `ops`.
"""

from __future__ import annotations

import zlib

from jaxtape._src.core import errors
from jaxtape._src.io import host
from jaxtape._src.io.gfile import _local, _os_error
from jaxtape._src.ops import record_io


class TFRecordOptions:
    """Options for writing TFRecord files (TF's `tf.io.TFRecordOptions`).

    `compression_type` is `None`/`""`, `"GZIP"` or `"ZLIB"`; the zlib
    parameters (`window_bits`, `compression_level`, `compression_method`,
    `mem_level`, `compression_strategy`) and `flush_mode` (applied after
    each record, as TF's zlib stream does) shape the compressed stream.

    Differences from TensorFlow: `input_buffer_size`/`output_buffer_size`
    are kept but change nothing (the bytes written are the same in TF).
    """

    compression_type_map = {"ZLIB": "ZLIB", "GZIP": "GZIP", "": "", None: ""}

    def __init__(self, compression_type=None, flush_mode=None,
                 input_buffer_size=None, output_buffer_size=None,
                 window_bits=None, compression_level=None,
                 compression_method=None, mem_level=None,
                 compression_strategy=None):  # fmt: skip
        if compression_type not in self.compression_type_map:
            raise ValueError(f'Not a valid compression_type: "{compression_type}"')
        self.compression_type = compression_type
        self.flush_mode = flush_mode
        self.input_buffer_size = input_buffer_size
        self.output_buffer_size = output_buffer_size
        self.window_bits = window_bits
        self.compression_level = compression_level
        self.compression_method = compression_method
        self.mem_level = mem_level
        self.compression_strategy = compression_strategy

    @classmethod
    def get_compression_type_string(cls, options) -> str:
        """`"GZIP"`, `"ZLIB"` or `""` for options or a compression type."""
        if not options:
            return ""
        if isinstance(options, TFRecordOptions):
            return cls.get_compression_type_string(options.compression_type)
        if options not in cls.compression_type_map:
            raise ValueError(f'Not a valid compression_type: "{options}"')
        return cls.compression_type_map[options]

    def _compressor(self):
        kind = self.get_compression_type_string(self)
        if not kind:
            return None
        wbits = self.window_bits if self.window_bits is not None else zlib.MAX_WBITS
        return zlib.compressobj(
            zlib.Z_DEFAULT_COMPRESSION
            if self.compression_level is None
            else self.compression_level,
            self.compression_method or zlib.DEFLATED,
            wbits + 16 if kind == "GZIP" else wbits,
            self.mem_level or 9,
            self.compression_strategy or zlib.Z_DEFAULT_STRATEGY,
        )


class TFRecordWriter:
    """Writes records to a TFRecord file (TF's `tf.io.TFRecordWriter`).

    `options` is a `TFRecordOptions` or a compression type string. Records
    are `bytes` or `str` (UTF-8), as TF's; `close()` (or leaving the `with`
    block) finishes the file. A missing directory raises `NotFoundError`.

    Differences from TensorFlow: GZIP headers may differ in their OS byte
    (the records read back the same in TF).
    """

    def __init__(self, path, options=None):
        if not isinstance(options, TFRecordOptions):
            options = TFRecordOptions(
                TFRecordOptions.get_compression_type_string(options)
            )
        local = _local(path)
        try:
            self._file = open(local, "wb")  # noqa: SIM115 - closed in close()
        except OSError as e:
            raise _os_error(e, local) from None
        self._compressor = options._compressor()
        self._flush_mode = options.flush_mode

    def _put(self, file, data: bytes) -> None:
        if self._compressor is not None:
            data = self._compressor.compress(data)
            if self._flush_mode not in (None, zlib.Z_NO_FLUSH):
                data += self._compressor.flush(self._flush_mode)
        file.write(data)

    def write(self, record) -> None:
        """Appends one record (`bytes` or `str`)."""
        file = self._file
        if file is None:
            raise errors.FailedPreconditionError(None, None, "Writer is closed.")
        if isinstance(record, str):
            record = record.encode()
        elif not isinstance(record, bytes):
            record = host.scalar_bytes(record, "record", "TFRecordWriter")
        self._put(file, record_io.frame(record))

    def flush(self) -> None:
        """Hands what was written so far to the OS."""
        file = self._file
        if file is None:
            raise errors.FailedPreconditionError(None, None, "Writer is closed.")
        if self._compressor is not None:
            file.write(self._compressor.flush(zlib.Z_SYNC_FLUSH))
        file.flush()

    def close(self) -> None:
        """Finishes and closes the file."""
        file = self._file
        if file is None:
            return
        if self._compressor is not None:
            file.write(self._compressor.flush(zlib.Z_FINISH))
        file.close()
        self._file = None

    def __enter__(self):
        return self

    def __exit__(self, *exc_info):
        self.close()

    def __del__(self):
        file = getattr(self, "_file", None)
        if file is not None and not file.closed:
            self.close()
