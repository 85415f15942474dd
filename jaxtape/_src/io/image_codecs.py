"""`tf.io`'s image codecs on Pillow: decode PNG/JPEG/GIF/BMP/WebP, encode
PNG/JPEG, JPEG shape and crop.

The format is found from the first bytes, and TF 2.21's rules for which op
reads which format are kept: `decode_png`/`decode_jpeg`/`decode_gif` read
PNG, JPEG, GIF and WebP, `decode_bmp` only BMP, `decode_and_crop_jpeg`
only JPEG; GIF (for `decode_gif`/`decode_image`) and WebP frames come on
a leading axis. 16-bit PNGs are decoded here (Pillow reads 16-bit colour
as 8-bit). PNG, GIF and BMP values
are exact; JPEG comes from Pillow's libjpeg, whose decoding may differ from
TF's by a few levels per pixel; grayscale conversion of colour images uses
Pillow's weights (values may differ from TF's by 1).

Layer L4 (`io`): imports `core`, `ops`.
"""

from __future__ import annotations

import io as _io
import struct
import zlib

import numpy as np

from jaxtape._src.core import dtypes, errors
from jaxtape._src.io import host
from jaxtape._src.ops import stateless_random_ops
from jaxtape._src.ops.image_ops import convert_image_dtype
from jaxtape._src.state import random_ops

_FORMATS = (
    "Unknown image file format. One of JPEG, JPEG XL, PNG, GIF, BMP, WebP required."
)


def _invalid(message: str, op_name: str) -> errors.InvalidArgumentError:
    return errors.InvalidArgumentError(None, None, f"{message} [Op:{op_name}]")


def _contents(contents, op_name: str) -> bytes:
    data = host.byte_strings(contents, "contents")
    if data.ndim:
        raise _invalid(
            f"`contents` must be scalar but got shape{list(data.shape)}", op_name
        )
    return bytes(data[()])


def _format(data: bytes) -> str | None:
    if data[:3] == b"\xff\xd8\xff":
        return "jpeg"
    if data[:8] == b"\x89PNG\r\n\x1a\n":
        return "png"
    if data[:4] == b"GIF8":
        return "gif"
    if data[:2] == b"BM":
        return "bmp"
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return "webp"
    return None


def _open(data: bytes, op_name: str):
    from PIL import Image  # lazy: Pillow ~0.1 s

    try:
        image = Image.open(_io.BytesIO(data))
        image.load()
    except Exception as e:  # Pillow raises many kinds for bad data
        raise _invalid(f"Invalid image data ({e})", op_name) from None
    return image


_MODES = {1: "L", 3: "RGB", 4: "RGBA"}


def _pixels(image, channels: int, op_name: str) -> np.ndarray:
    """One frame as [H, W, C] uint8."""
    mode = image.mode
    if channels == 0:
        native = {"L": 1, "LA": 2, "1": 1, "RGB": 3, "RGBA": 4}.get(mode)
        if native is None:  # palette, CMYK, ...: TF gives RGB, RGBA with alpha
            has_alpha = mode == "PA" or "transparency" in image.info
            native = 4 if has_alpha else 3
        channels = native
    if channels == 2:
        return np.asarray(image.convert("LA"))
    array = np.asarray(image.convert(_MODES[channels]))
    return array[..., None] if array.ndim == 2 else array


def _png_bit_depth(data: bytes) -> int:
    return data[24] if len(data) > 25 else 8


def _png16_pixels(data: bytes, op_name: str) -> np.ndarray:
    """A non-interlaced 16-bit PNG as [H, W, C] uint16 (Pillow reads 16-bit
    colour PNGs as 8-bit, so these are decoded here)."""
    pos, header, idat = 8, b"", []
    while pos + 8 <= len(data):
        (length,) = struct.unpack(">I", data[pos : pos + 4])
        kind = data[pos + 4 : pos + 8]
        body = data[pos + 8 : pos + 8 + length]
        if kind == b"IDAT":
            idat.append(body)
        elif kind == b"IHDR":
            header = body
        pos += 12 + length
    if len(header) != 13:
        raise _invalid(f"Invalid PNG data, size {len(data)}", op_name)
    width, height, _, color, _, _, interlace = struct.unpack(">IIBBBBB", header)
    channels = {0: 1, 2: 3, 4: 2, 6: 4}.get(color)
    if channels is None or interlace:
        raise NotImplementedError(
            f"{op_name}: interlaced 16-bit PNGs are not supported by jaxtape."
        )
    try:
        raw = np.frombuffer(zlib.decompress(b"".join(idat)), np.uint8)
    except zlib.error:
        raise _invalid(f"Invalid PNG data, size {len(data)}", op_name) from None
    bpp, stride = 2 * channels, 2 * channels * width
    if raw.size != height * (stride + 1):
        raise _invalid(f"Invalid PNG data, size {len(data)}", op_name)
    rows = raw.reshape(height, stride + 1)
    out = np.zeros((height, stride), np.uint8)
    prior = np.zeros(stride, np.uint8)
    for y in range(height):
        out[y] = _unfilter(int(rows[y, 0]), rows[y, 1:], prior, bpp)
        prior = out[y]
    return out.view(">u2").astype(np.uint16).reshape(height, width, channels)


def _unfilter(kind: int, line: np.ndarray, prior: np.ndarray, bpp: int):
    """One PNG scanline with its filter (None, Sub, Up, Average, Paeth) undone."""
    if kind == 0:
        return line
    if kind == 2:
        return line + prior
    if kind == 1:
        return np.cumsum(line.reshape(-1, bpp), axis=0, dtype=np.uint8).reshape(-1)
    out = np.zeros_like(line)
    left = np.zeros(bpp, np.int32)
    pixels = line.reshape(-1, bpp).astype(np.int32)
    above = prior.reshape(-1, bpp).astype(np.int32)
    for i in range(pixels.shape[0]):
        up = above[i]
        if kind == 3:
            pred = (left + up) // 2
        else:
            corner = above[i - 1] if i else np.zeros(bpp, np.int32)
            p = left + up - corner
            pa, pb, pc = np.abs(p - left), np.abs(p - up), np.abs(p - corner)
            pred = np.where(
                (pa <= pb) & (pa <= pc), left, np.where(pb <= pc, up, corner)
            )
        left = (pixels[i] + pred) & 0xFF
        out[i * bpp : (i + 1) * bpp] = left
    return out


def _convert_16(pixels: np.ndarray, channels: int) -> np.ndarray:
    """16-bit pixels with `channels` channels (0: as stored), as TF's
    libpng transforms (grayscale from colour: Pillow's weights)."""
    have = pixels.shape[-1]
    if channels in (0, have):
        return pixels
    color = pixels[..., :3] if have >= 3 else np.repeat(pixels[..., :1], 3, -1)
    alpha = pixels[..., -1:] if have in (2, 4) else np.full_like(pixels[..., :1], 65535)
    if channels == 1:
        gray = (color.astype(np.float64) @ [0.299, 0.587, 0.114]).round()
        return gray.astype(np.uint16)[..., None]
    if channels == 2:
        return np.concatenate([_convert_16(pixels, 1), alpha], -1)
    return color if channels == 3 else np.concatenate([color, alpha], -1)


_NAMES = {"jpeg": "JPEG", "png": "PNG", "gif": "GIF", "bmp": "BMP", "webp": "WebP"}


def _check_op(kind: str, channels: int, op_name: str) -> None:
    """TF 2.21's DecodeImageV2 rules: which op reads which format, and the
    channels each format takes."""
    if op_name == "DecodeBmp" and kind != "bmp":
        raise _invalid(
            f"Trying to decode {_NAMES[kind]} format using DecodeBmp op. "
            f"Use `decode_{kind}` or `decode_image` instead.",
            op_name,
        )
    if op_name in ("DecodeJpeg", "DecodePng", "DecodeGif") and kind == "bmp":
        raise _invalid(
            "Trying to decode BMP format using a wrong op. Use "
            f"`decode_bmp` or `decode_image` instead. Op used: {op_name}",
            op_name,
        )
    if op_name == "DecodeAndCropJpeg" and kind != "jpeg":
        raise _invalid(
            "DecodeAndCropJpeg operation can run on JPEG only, but "
            f"detected {_NAMES[kind]}.",
            op_name,
        )
    if kind == "jpeg" and channels not in (0, 1, 3):
        raise _invalid(f"JPEG does not support {channels} channels", op_name)
    if kind == "bmp" and channels not in (0, 3, 4):
        raise _invalid(
            f"`channels` must be 0, 3 or 4 for BMP, but got {channels}", op_name
        )
    if kind == "gif" and channels not in (0, 3):
        raise _invalid(f"channels must be 0 or 3 for GIF, got {channels}", op_name)


def _decode(
    contents,
    channels,
    op_name: str,
    gif_frames: bool = False,
    expand_animations: bool = True,
) -> np.ndarray:
    """[H, W, C] pixels (uint8, or uint16 for 16-bit PNGs) of any format;
    [frames, H, W, C] for WebP, and for GIF when `gif_frames` (TF's
    shapes), the first frame only when not `expand_animations`."""
    data = _contents(contents, op_name)
    channels = 0 if channels is None else int(channels)
    if channels not in (0, 1, 3, 4):
        raise _invalid(f"`channels` must be 0, 1, 3 or 4 but got {channels}", op_name)
    kind = _format(data)
    if kind is None:
        raise _invalid(_FORMATS, op_name)
    _check_op(kind, channels, op_name)
    if kind == "png" and _png_bit_depth(data) == 16:
        return _convert_16(_png16_pixels(data, op_name), channels)
    image = _open(data, op_name)
    if kind == "webp" and channels:
        native = 4 if image.mode in ("RGBA", "LA", "PA") else 3
        if channels != native:
            raise _invalid("Number of channels requested does not match input", op_name)
    if kind == "gif":
        channels = 3
        count = getattr(image, "n_frames", 1)
        if count > 1 and not gif_frames:
            raise _invalid(
                f"Got {count} frames, but animated gifs can only be "
                "decoded by tf.io.decode_gif or tf.io.decode_image",
                op_name,
            )
    if kind == "webp" or (kind == "gif" and gif_frames):
        frames = []
        for k in range(getattr(image, "n_frames", 1) if expand_animations else 1):
            image.seek(k)
            frames.append(_pixels(image, channels, op_name))
        return np.stack(frames) if expand_animations else frames[0]
    return _pixels(image, channels, op_name)


def _to_dtype(pixels: np.ndarray, dtype, op_name: str):
    """TF's output dtype: uint8/uint16 rescaled, floats by convert_image_dtype."""
    want = dtypes.as_dtype(dtype)
    name = want.name
    if name == "uint8":
        if pixels.dtype == np.uint16:
            pixels = (pixels >> 8).astype(np.uint8)
        return host.numbers_out(pixels)
    if name == "uint16":
        if pixels.dtype == np.uint8:
            pixels = pixels.astype(np.uint16) * 257
        return host.numbers_out(pixels)
    if want.is_floating:
        return convert_image_dtype(host.numbers_out(pixels), want)
    if want.is_integer:
        raise NotImplementedError(
            f"{op_name}: dtype={name} is not supported (TF scales through uint16 "
            "with its own rounding); decode to uint8 or uint16 and convert."
        )
    raise _invalid(
        f"Value for attr 'dtype' of {name} is not in the list of allowed "
        "values: uint8, uint16, float",
        op_name,
    )


def decode_image(
    contents, channels=None, dtype=dtypes.uint8, name=None, expand_animations=True
):
    """Decodes a BMP, GIF, JPEG, PNG or WebP image (TF's `tf.io.decode_image`):
    [H, W, C], or [frames, H, W, C] for GIF and WebP unless
    `expand_animations=False` (then the first frame). `dtype` uint8,
    uint16 or a float type (scaled to [0, 1] as `convert_image_dtype`)."""
    del name
    pixels = _decode(contents, channels, "DecodeImage", True, expand_animations)
    return _to_dtype(pixels, dtype, "DecodeImage")


def decode_png(contents, channels=0, dtype=dtypes.uint8, name=None):
    """Decodes a PNG (or a JPEG, GIF's first frame or WebP, as TF 2.21's
    kernel) to [H, W, C] uint8 or uint16 (TF's `tf.io.decode_png`)."""
    del name
    if dtypes.as_dtype(dtype).name not in ("uint8", "uint16"):
        raise _invalid(
            f"Value for attr 'dtype' of {dtypes.as_dtype(dtype).name} is "
            "not in the list of allowed values: uint8, uint16",
            "DecodePng",
        )
    pixels = _decode(contents, channels, "DecodePng")
    return _to_dtype(pixels, dtype, "DecodePng")


def _jpeg_options(
    ratio, fancy_upscaling, try_recover_truncated, acceptable_fraction, dct_method
):
    if not fancy_upscaling:
        raise NotImplementedError(
            "fancy_upscaling=False is not supported (Pillow "
            "always upsamples chroma smoothly)."
        )
    if try_recover_truncated or acceptable_fraction != 1:
        raise NotImplementedError(
            "try_recover_truncated/acceptable_fraction are "
            "not supported: truncated JPEGs raise."
        )
    if dct_method not in ("", "INTEGER_ACCURATE"):
        raise NotImplementedError(
            f"dct_method={dct_method!r} is not supported "
            "(Pillow decodes with INTEGER_ACCURATE)."
        )
    if int(ratio) not in (1, 2, 4, 8):
        raise _invalid(f"ratio must be 1, 2, 4, or 8, got {ratio}", "DecodeJpeg")
    return int(ratio)


def _decode_jpeg_pixels(contents, channels, ratio, op_name):
    if int(channels) not in (0, 1, 3):
        raise _invalid(f"JPEG does not support {channels} channels", op_name)
    data = _contents(contents, op_name)
    if ratio == 1 or _format(data) != "jpeg":
        return _decode(contents, channels, op_name)
    from PIL import Image  # lazy: Pillow ~0.1 s

    try:
        image = Image.open(_io.BytesIO(data))
        w, h = image.size
        image.draft(image.mode, (-(-w // ratio), -(-h // ratio)))
        image.load()
    except Exception:
        raise _invalid(
            "jpeg::Uncompress failed. Invalid JPEG data or crop window.", op_name
        ) from None
    return _pixels(image, int(channels), op_name)


def decode_jpeg(
    contents,
    channels=0,
    ratio=1,
    fancy_upscaling=True,
    try_recover_truncated=False,
    acceptable_fraction=1,
    dct_method="",
    name=None,
):
    """Decodes a JPEG (or any supported format, as TF 2.21) to [H, W, C]
    uint8 (TF's `tf.io.decode_jpeg`); `ratio` 2, 4 or 8 downscales while
    decoding, as libjpeg does.

    Differences from TensorFlow: values may differ by a few levels
    (Pillow's libjpeg build); `fancy_upscaling=False`,
    `try_recover_truncated`, `acceptable_fraction` and
    `dct_method="INTEGER_FAST"` raise NotImplementedError.
    """
    del name
    r = _jpeg_options(
        ratio, fancy_upscaling, try_recover_truncated, acceptable_fraction, dct_method
    )
    return host.numbers_out(_decode_jpeg_pixels(contents, channels, r, "DecodeJpeg"))


def decode_and_crop_jpeg(
    contents,
    crop_window,
    channels=0,
    ratio=1,
    fancy_upscaling=True,
    try_recover_truncated=False,
    acceptable_fraction=1,
    dct_method="",
    name=None,
):
    """`decode_jpeg` then the crop `crop_window = [y, x, height, width]`
    (TF's `tf.io.decode_and_crop_jpeg`); a window outside the image raises
    InvalidArgumentError. Same differences as `decode_jpeg`."""
    del name
    r = _jpeg_options(
        ratio, fancy_upscaling, try_recover_truncated, acceptable_fraction, dct_method
    )
    pixels = _decode_jpeg_pixels(contents, channels, r, "DecodeAndCropJpeg")
    window = host.host_numbers(crop_window, "DecodeAndCropJpeg").reshape(-1)
    if window.size != 4:
        raise _invalid(
            f"crop_window must have 4 elements, got {window.size}", "DecodeAndCropJpeg"
        )
    y, x, h, w = (int(v) for v in window)
    height, width = pixels.shape[:2]
    if y < 0 or x < 0 or h <= 0 or w <= 0 or y + h > height or x + w > width:
        raise _invalid(
            "jpeg::Uncompress failed. Invalid JPEG data or crop window.",
            "DecodeAndCropJpeg",
        )
    return host.numbers_out(pixels[y : y + h, x : x + w])


def decode_gif(contents, name=None):
    """Decodes every frame of a GIF to [frames, H, W, 3] uint8 (TF's
    `tf.io.decode_gif`); a PNG or JPEG gives one frame, as TF 2.21's."""
    del name
    pixels = _decode(contents, 0, "DecodeGif", gif_frames=True)
    if pixels.ndim == 3:
        pixels = pixels[None]
    return host.numbers_out(pixels)


def decode_bmp(contents, channels=0, name=None):
    """Decodes a BMP to [H, W, C] uint8 (TF's `tf.io.decode_bmp`);
    `channels` 0, 3 or 4; other formats raise as TF's."""
    del name
    return host.numbers_out(_decode(contents, channels, "DecodeBmp"))


def decode_webp(contents, channels=0, dtype=dtypes.uint8, name=None):
    """Decodes a WebP to [frames, H, W, C] (TF's `tf.io.decode_webp`);
    `channels` 0 (as stored) or the image's own 3 or 4. Other formats
    decode to [H, W, C], as TF 2.21's."""
    del name
    return _to_dtype(_decode(contents, channels, "DecodeWebP"), dtype, "DecodeWebP")


def _image_array(image, op_name: str, allowed=("uint8", "uint16")) -> np.ndarray:
    array = host.host_numbers(image, op_name)
    if array.dtype.name not in allowed:
        name = dtypes.as_dtype(array.dtype).name
        raise _invalid(
            f"Value for attr 'T' of {name} is not in the list of allowed "
            f"values: {', '.join(allowed)}",
            op_name,
        )
    if array.ndim != 3:
        raise _invalid(f"images must be at least rank 3{list(array.shape)}", op_name)
    return array


def _png_chunk(kind: bytes, body: bytes) -> bytes:
    return (
        struct.pack(">I", len(body))
        + kind
        + body
        + struct.pack(">I", zlib.crc32(kind + body) & 0xFFFFFFFF)
    )


def _png_16(array: np.ndarray, level: int) -> bytes:
    """A 16-bit PNG (Pillow writes 8-bit colour only)."""
    h, w, c = array.shape
    color = {1: 0, 2: 4, 3: 2, 4: 6}[c]
    rows = array.astype(">u2").reshape(h, w * c).view(np.uint8).reshape(h, -1)
    raw = np.concatenate([np.zeros((h, 1), np.uint8), rows], 1).tobytes()
    header = struct.pack(">IIBBBBB", w, h, 16, color, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + _png_chunk(b"IHDR", header)
        + _png_chunk(b"IDAT", zlib.compress(raw, level))
        + _png_chunk(b"IEND", b"")
    )


def encode_png(image, compression=-1, name=None):
    """PNG-encodes a [H, W, C] uint8 or uint16 image, C in 1..4 (TF's
    `tf.io.encode_png`); `compression` 0-9, -1 for zlib's default.

    Differences from TensorFlow: the bytes differ from TF's (another
    encoder); the pixels read back the same."""
    del name
    from PIL import Image  # lazy: Pillow ~0.1 s

    array = _image_array(image, "EncodePng")
    channels = array.shape[-1]
    if channels not in (1, 2, 3, 4):
        raise _invalid(
            f"image must have 1, 2, 3, or 4 channels, got {channels}", "EncodePng"
        )
    level = int(compression)
    if level < -1 or level > 9:
        raise _invalid(f"compression should be in [-1,9], got {level}", "EncodePng")
    if array.dtype == np.uint16:
        return host.strings_out(_png_16(array, level))
    mode = {1: "L", 2: "LA", 3: "RGB", 4: "RGBA"}[channels]
    buffer = _io.BytesIO()
    pil = Image.fromarray(array[..., 0] if channels == 1 else array, mode)
    pil.save(buffer, "PNG", compress_level=6 if level == -1 else level)
    return host.strings_out(buffer.getvalue())


def encode_jpeg(
    image,
    format="",
    quality=95,
    progressive=False,  # noqa: A002
    optimize_size=False,
    chroma_downsampling=True,
    density_unit="in",
    x_density=300,
    y_density=300,
    xmp_metadata="",
    name=None,
):
    """JPEG-encodes a [H, W, 1 or 3] uint8 image (TF's `tf.io.encode_jpeg`),
    with TF's quality, progressive, optimize, chroma subsampling, density
    and XMP options.

    Differences from TensorFlow: the bytes differ from TF's (Pillow's
    libjpeg settings); the pixels read back within a few levels."""
    del name
    from PIL import Image  # lazy: Pillow ~0.1 s

    array = _image_array(image, "EncodeJpeg", allowed=("uint8",))
    channels = array.shape[-1]
    if format == "" and channels not in (1, 3):
        raise _invalid(
            f"image must have 1 or 3 channels, got {list(array.shape)}", "EncodeJpeg"
        )
    want = {"grayscale": 1, "rgb": 3}.get(format)
    if format and want is None:
        raise _invalid(
            f"format must be '', 'grayscale' or 'rgb', got {format!r}", "EncodeJpeg"
        )
    if want is not None and channels != want:
        raise _invalid(
            f"format {format} expects {want} channels, got {list(array.shape)}",
            "EncodeJpeg",
        )
    if density_unit not in ("in", "cm"):
        raise _invalid(
            f"density_unit must be 'in' or 'cm', got {density_unit!r}", "EncodeJpeg"
        )
    scale = 2.54 if density_unit == "cm" else 1.0
    pil = Image.fromarray(
        array[..., 0] if channels == 1 else array, "L" if channels == 1 else "RGB"
    )
    buffer = _io.BytesIO()
    options: dict[str, object] = dict(
        quality=int(quality),
        progressive=bool(progressive),
        optimize=bool(optimize_size),
        subsampling=2 if chroma_downsampling else 0,
        dpi=(x_density * scale, y_density * scale),
    )
    if xmp_metadata:
        options["xmp"] = (
            xmp_metadata.encode() if isinstance(xmp_metadata, str) else xmp_metadata
        )
    pil.save(buffer, "JPEG", **options)
    return host.strings_out(buffer.getvalue())


def extract_jpeg_shape(contents, output_type=dtypes.int32, name=None):
    """The [height, width, channels] of a JPEG, read from its header (TF's
    `tf.io.extract_jpeg_shape`)."""
    del name
    from PIL import Image  # lazy: Pillow ~0.1 s

    data = _contents(contents, "ExtractJpegShape")
    if _format(data) != "jpeg":
        raise _invalid(f"Invalid JPEG data, size {len(data)}", "ExtractJpegShape")
    try:
        image = Image.open(_io.BytesIO(data))
    except Exception:
        raise _invalid(
            f"Invalid JPEG data, size {len(data)}", "ExtractJpegShape"
        ) from None
    w, h = image.size
    channels = {"L": 1, "RGB": 3, "YCbCr": 3, "CMYK": 4}.get(image.mode, 3)
    out = np.asarray([h, w, channels], dtypes.np_dtype(dtypes.as_dtype(output_type)))
    return host.numbers_out(out)


def is_jpeg(contents, name=None):
    """Whether `contents` starts like a JPEG (TF's `tf.io.is_jpeg`)."""
    del name
    return host.numbers_out(
        np.asarray(_contents(contents, "IsJpeg")[:3] == b"\xff\xd8\xff")
    )


def decode_jxl(contents, channels=0, dtype=dtypes.uint8, name=None):
    """TF's `tf.io.decode_jxl`: not supported (Pillow reads no JPEG XL)."""
    del contents, channels, dtype, name
    raise NotImplementedError(
        "tf.io.decode_jxl is not supported by jaxtape: Pillow has no JPEG XL "
        "decoder. Convert the images to PNG or JPEG first."
    )


# -- JPEG quality (tf.image) -------------------------------------------------------
def adjust_jpeg_quality(image, jpeg_quality, dct_method="", name=None):
    """The image through a JPEG encode at `jpeg_quality` and back, in its own
    dtype (TF's `tf.image.adjust_jpeg_quality`: a [H, W, 1 or 3] image).

    Differences from TensorFlow: Pillow's libjpeg encodes, so pixels differ
    from TF's by a few levels (as `encode_jpeg`'s do)."""
    del name
    orig = dtypes.as_dtype(_dtype_of(image))
    pixels = convert_image_dtype(image, dtypes.uint8, saturate=True)
    quality = int(host.host_numbers(jpeg_quality, "EncodeJpegVariableQuality"))
    if not 0 <= quality <= 100:
        raise _invalid("quality must be in [0,100]", "EncodeJpegVariableQuality")
    channels = int(pixels.shape[-1])
    data = encode_jpeg(pixels, quality=quality)
    out = decode_jpeg(data, channels=channels, dct_method=dct_method)
    return convert_image_dtype(out, orig, saturate=True)


def _check_quality_range(min_jpeg_quality, max_jpeg_quality) -> None:
    if not (0 <= min_jpeg_quality <= 100 and 0 <= max_jpeg_quality <= 100):
        raise ValueError("jpeg encoding range must be between 0 and 100.")
    if min_jpeg_quality >= max_jpeg_quality:
        raise ValueError("`min_jpeg_quality` must be less than `max_jpeg_quality`.")


def random_jpeg_quality(image, min_jpeg_quality, max_jpeg_quality, seed=None):
    """`adjust_jpeg_quality` at a quality drawn from [min, max) (TF's)."""
    _check_quality_range(min_jpeg_quality, max_jpeg_quality)
    quality = random_ops.uniform(
        [], min_jpeg_quality, max_jpeg_quality, dtype=dtypes.int32, seed=seed
    )
    return adjust_jpeg_quality(image, quality)


def stateless_random_jpeg_quality(image, min_jpeg_quality, max_jpeg_quality, seed):
    """`adjust_jpeg_quality` at a quality drawn from [min, max) by the
    stateless `seed` (TF's; the same seed gives the same quality)."""
    _check_quality_range(min_jpeg_quality, max_jpeg_quality)
    quality = stateless_random_ops.stateless_uniform(
        [], seed, min_jpeg_quality, max_jpeg_quality, dtype=dtypes.int32
    )
    return adjust_jpeg_quality(image, quality)


def _dtype_of(x):
    dtype = getattr(x, "dtype", None)
    return dtype if dtype is not None else np.asarray(x).dtype
