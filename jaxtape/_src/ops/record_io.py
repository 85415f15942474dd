"""TF's TFRecord framing and file compression, shared by `data`'s
`TFRecordDataset` and `io`'s `TFRecordWriter`. Layer L1: imports only `core`.

A record is `uint64 length | uint32 masked_crc32c(length) | data |
uint32 masked_crc32c(data)`, little-endian, as TF's `RecordWriter`.
"""

from __future__ import annotations

import gzip
import struct
import zlib
from collections.abc import Iterator

import google_crc32c

from jaxtape._src.core import errors

COMPRESSIONS = ("", "GZIP", "ZLIB")


def _masked_crc32c(data: bytes) -> int:
    """TF's masked CRC32C of `data` (the checksum in C: google-crc32c)."""
    crc = google_crc32c.value(data)
    return (((crc >> 15) | (crc << 17)) + 0xA282EAD8) & 0xFFFFFFFF


def frame(record: bytes) -> bytes:
    """One record in TFRecord framing."""
    header = struct.pack("<Q", len(record))
    return b"".join(
        (
            header,
            struct.pack("<I", _masked_crc32c(header)),
            record,
            struct.pack("<I", _masked_crc32c(record)),
        )
    )


def records(data: bytes, path: str) -> Iterator[bytes]:
    """The records framed in `data` (read from `path`), each checked against
    its CRC32C; `DataLossError` for a corrupt or truncated one, as TF."""
    pos = 0
    while pos < len(data):
        if pos + 12 > len(data):
            raise _corrupt(path, pos, "truncated record header")
        header = data[pos : pos + 8]
        (length,) = struct.unpack("<Q", header)
        (crc,) = struct.unpack("<I", data[pos + 8 : pos + 12])
        if _masked_crc32c(header) != crc:
            raise _corrupt(path, pos, "corrupted record length")
        start, end = pos + 12, pos + 12 + length
        if end + 4 > len(data):
            raise _corrupt(path, pos, "truncated record")
        record = data[start:end]
        (crc,) = struct.unpack("<I", data[end : end + 4])
        if _masked_crc32c(record) != crc:
            raise _corrupt(path, pos, "corrupted record data (CRC mismatch)")
        yield record
        pos = end + 4


def _corrupt(path: str, offset: int, what: str) -> errors.DataLossError:
    return errors.DataLossError(
        None, None, f"{path}: {what} at offset {offset}. The file is not a valid "
        "TFRecord file or was cut short."
    )  # fmt: skip


def decompress(data: bytes, compression: str) -> bytes:
    """`data` decompressed by `compression` (`""`, `"GZIP"`, `"ZLIB"`)."""
    if compression == "GZIP":
        return gzip.decompress(data)
    if compression == "ZLIB":
        return zlib.decompress(data)
    return data
