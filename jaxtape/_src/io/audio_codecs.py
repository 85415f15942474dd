"""`tf.audio`: 16-bit PCM WAV decoding and encoding, byte for byte as TF's.

TF's kernels (`wav_io.cc`) read and write 16-bit little-endian PCM only:
samples are `int16 / 32768` as float32, and encoding rounds `x * 32768`
(half away from zero) clamped to the int16 range. They run on the host, as
TF's do on CPU.

Layer L4 (`io`): imports `core`, `ops`.
"""

from __future__ import annotations

import struct
from collections import namedtuple

import numpy as np

from jaxtape._src.core import errors
from jaxtape._src.io import host

DecodeWav = namedtuple("DecodeWav", ["audio", "sample_rate"])


def _invalid(message: str, op_name: str) -> errors.InvalidArgumentError:
    return errors.InvalidArgumentError(None, None, f"{message} [Op:{op_name}]")


class _Reader:
    """TF's `ReadValue`/`ExpectText` over the WAV bytes."""

    def __init__(self, data: bytes):
        self.data, self.pos = data, 0

    def take(self, n: int) -> bytes:
        if self.pos + n > len(self.data):
            raise _invalid("Data too short when trying to read string", "DecodeWav")
        out = self.data[self.pos : self.pos + n]
        self.pos += n
        return out

    def expect(self, text: bytes) -> None:
        found = self.take(len(text))
        if found != text:
            raise _invalid(
                f"Header mismatch: Expected {text.decode()} but found "
                f"{found.decode('latin-1')}",
                "DecodeWav",
            )

    def u32(self) -> int:
        return struct.unpack("<I", self.take(4))[0]

    def u16(self) -> int:
        return struct.unpack("<H", self.take(2))[0]


def _decode_pcm16(data: bytes) -> tuple[np.ndarray, int]:
    """`(samples [frames, channels] float32, sample_rate)` of a 16-bit WAV."""
    r = _Reader(data)
    r.expect(b"RIFF")
    r.u32()  # (the RIFF size: TF does not check it)
    r.expect(b"WAVE")
    r.expect(b"fmt ")
    fmt_size = r.u32()
    if fmt_size not in (16, 18, 40):
        raise _invalid(
            f"Bad format chunk size for WAV: Expected 16 or 18, but got{fmt_size}",
            "DecodeWav",
        )
    audio_format = r.u16()
    if audio_format not in (1, 0xFFFE):
        raise _invalid(
            f"Bad audio format for WAV: Expected 1 (PCM), or 0xFFFE "
            f"(WAVE_FORMAT_EXTENSIBLE), but got{audio_format}",
            "DecodeWav",
        )
    channels = r.u16()
    if channels < 1:
        raise _invalid("Bad number of channels for WAV file: 0", "DecodeWav")
    sample_rate = r.u32()
    r.u32()  # bytes per second
    r.u16()  # block alignment
    bits = r.u16()
    if bits != 16:
        raise _invalid(
            f"Can only read 16-bit WAV files, but received {bits}", "DecodeWav"
        )
    r.take(fmt_size - 16)
    while True:  # chunks up to "data"; TF skips the others
        chunk_id, size = r.take(4), r.u32()
        if chunk_id == b"data":
            break
        r.take(size + (size & 1))
    frames = size // (2 * channels)
    body = r.take(frames * 2 * channels)
    samples = np.frombuffer(body, "<i2").astype(np.float32) / np.float32(32768)
    return samples.reshape(frames, channels), sample_rate


def decode_wav(contents, desired_channels=-1, desired_samples=-1, name=None):
    """Decodes a 16-bit PCM WAV file (TF's `tf.audio.decode_wav`).

    Args:
      contents: A scalar string Tensor: the file's bytes.
      desired_channels: Channels of the output; -1 for the file's. More
        channels than the file has repeat its last channel; fewer keep the
        first ones.
      desired_samples: Frames of the output; -1 for the file's. Fewer
        truncate, more pad with zeros.
      name: Accepted for TensorFlow compatibility; ignored.

    Returns:
      `DecodeWav(audio, sample_rate)`: float32 `[samples, channels]` in
      `[-1, 1)` and an int32 scalar.
    """
    del name
    data = host.scalar_bytes(contents, "contents", "DecodeWav")
    samples, rate = _decode_pcm16(data)
    channels, frames = samples.shape[1], samples.shape[0]
    want_c = channels if int(desired_channels) == -1 else int(desired_channels)
    want_n = frames if int(desired_samples) == -1 else int(desired_samples)
    pick = np.minimum(np.arange(want_c), channels - 1)
    audio = np.zeros((want_n, want_c), np.float32)
    n = min(want_n, frames)
    audio[:n] = samples[:n][:, pick]
    return DecodeWav(
        host.numbers_out(audio), host.numbers_out(np.array(rate, np.int32))
    )


def encode_wav(audio, sample_rate, name=None):
    """Encodes `[length, channels]` float32 audio as a 16-bit PCM WAV file
    (TF's `tf.audio.encode_wav`); the bytes are TF's.

    Samples are clamped to the int16 range after scaling by 32768 (1.0 becomes
    32767, -1.0 -32768); NaN becomes 0.
    """
    del name
    array = host.host_numbers(audio, "EncodeWav")
    if array.dtype != np.float32:
        if isinstance(audio, (np.ndarray, list, tuple, float, int)):
            array = array.astype(np.float32)  # (TF converts Python/NumPy values)
        else:
            raise _invalid(
                "cannot compute EncodeWav as input #0(zero-based) was expected to "
                f"be a float tensor but is a {array.dtype.name} tensor",
                "EncodeWav",
            )
    if array.ndim != 2:
        raise _invalid(
            f"audio must be 2-dimensional[{','.join(map(str, array.shape))}]",
            "EncodeWav",
        )
    rate = host.host_numbers(sample_rate, "EncodeWav")
    if rate.ndim:
        raise _invalid(
            f"Input sample_rate should be a scalar tensor, got {list(rate.shape)} "
            "instead.",
            "EncodeWav",
        )
    frames, channels = array.shape
    scaled = np.nan_to_num(array, nan=0.0) * np.float32(32768)  # (exact)
    scaled = np.sign(scaled) * np.floor(np.abs(scaled).astype(np.float64) + 0.5)
    pcm = np.clip(scaled, -32768, 32767).astype("<i2")
    data_size = frames * channels * 2
    header = b"RIFF" + struct.pack("<I", 36 + data_size) + b"WAVEfmt "
    header += struct.pack(
        "<IHHIIHH",
        16,
        1,
        channels,
        int(rate),
        int(rate) * channels * 2,
        channels * 2,
        16,
    )
    header += b"data" + struct.pack("<I", data_size)
    return host.strings_out(header + pcm.tobytes())
