"""`jaxtape.summary.scalar/histogram/image/text/audio` on tensorboardX protos.

Layer L4. Each call goes to the default writer (if any, and if every open
`record_if` condition holds) and returns a boolean Tensor saying whether it
wrote, as TF does. Inside a `jaxtape.function`, where the data, the step or a
condition is a traced value, the write becomes a host callback in the compiled
program: it runs on every call, with that call's values.
"""

from __future__ import annotations

import io
import wave

import jax
import jax.core
import jax.numpy as jnp
import numpy as np

from jaxtape._src.core import context
from jaxtape._src.core.dispatch import to_value
from jaxtape._src.core.tensor import Tensor
from jaxtape._src.summary import writer as _w


def _traced(*values) -> bool:
    return any(isinstance(v, jax.core.Tracer) for v in values)


def _bool(value) -> Tensor:
    return Tensor(jnp.asarray(value, bool))


def _emit(name: str, data, step, build, static_data: bool = False) -> Tensor:
    """Writes `build(tag, host_data)` at `step` to the default writer, if recording."""
    writer = _w.default_writer()
    if writer is None:
        return _bool(False)
    conditions = _w.current_conditions()
    if any(isinstance(c, (bool, np.bool_)) and not c for c in conditions):
        return _bool(False)
    if step is None:
        step = _w.get_step()
    if step is None:
        raise ValueError(
            f"No step set for summary {name!r}. Please specify one either through "
            "the `step` argument or through tf.summary.experimental.set_step()"
        )
    tag = context.current_name_scope() + name
    cond_values = [
        to_value(c) for c in conditions if not isinstance(c, (bool, np.bool_))
    ]
    step_value = to_value(step)
    data_value = data if static_data else to_value(data)

    def host_write(step_v, *rest):
        data_v = data_value if static_data else rest[0]
        conds = rest if static_data else rest[1:]
        if all(bool(np.asarray(c)) for c in conds):
            writer.add(build(tag, np.asarray(data_v)), int(np.asarray(step_v)))

    traced_args = [step_value, *([] if static_data else [data_value]), *cond_values]
    if _traced(*traced_args):
        jax.debug.callback(host_write, *traced_args, ordered=True)
        if not cond_values:
            return _bool(True)
        return Tensor(jnp.all(jnp.stack([jnp.asarray(c, bool) for c in cond_values])))
    if not all(bool(np.asarray(c)) for c in cond_values):
        return _bool(False)
    host_write(*traced_args)
    return _bool(True)


def should_record_summaries() -> Tensor:
    """True when there is a default writer and every `record_if` condition holds."""
    if _w.default_writer() is None:
        return _bool(False)
    values = [to_value(c) for c in _w.current_conditions()]
    if not values:
        return _bool(True)
    return Tensor(jnp.all(jnp.stack([jnp.asarray(v, bool) for v in values])))


# -- the summary kinds ----------------------------------------------------------------
def _proto():
    from tensorboardX.proto import summary_pb2

    # (protobuf builds the message classes at import: no names for pyright)
    return summary_pb2.Summary  # pyright: ignore[reportAttributeAccessIssue]


def scalar(name, data, step=None, description=None) -> Tensor:
    """Writes a scalar (TF's `tf.summary.scalar`); `data` must hold one value."""
    shape = np.shape(to_value(data))
    if int(np.prod(shape)) != 1:
        raise ValueError(
            f"Summary scalar {name!r} needs a single value, got shape {shape}. "
            "Reduce it first (e.g. jaxtape.reduce_mean)."
        )

    def build(tag, value):
        from tensorboardX import summary

        return summary.scalar(tag, float(value.reshape(())))

    return _emit(name, data, step, build)


def histogram(name, data, step=None, buckets=None, description=None) -> Tensor:
    """Writes a histogram of `data` with `buckets` equal-width buckets (default 30)."""
    bins = 30 if buckets is None else int(buckets)
    if bins < 1:
        raise ValueError(
            f"Summary histogram {name!r}: buckets must be >= 1, got {bins}."
        )

    def build(tag, value):
        from tensorboardX import summary

        return summary.histogram(tag, value.astype(np.float64).ravel(), bins=bins)

    return _emit(name, data, step, build)


def image(name, data, step=None, max_outputs=3, description=None) -> Tensor:
    """Writes up to `max_outputs` images from a `[k, h, w, c]` batch, c in 1, 3, 4.

    uint8 values are used as they are; floats are taken to lie in [0, 1].
    Tags follow TF's image summaries: `name/image/0`, `name/image/1`, ...
    """
    shape = np.shape(to_value(data))
    if len(shape) != 4 or shape[-1] not in (1, 3, 4):
        raise ValueError(
            f"Summary image {name!r} needs a [k, h, w, c] batch with c in 1, 3 or 4 "
            f"channels, got shape {tuple(shape)}. Add a batch axis with "
            "jaxtape.expand_dims(image, 0)."
        )
    count = min(int(max_outputs), shape[0])

    def build(tag, value):
        from tensorboardX import summary

        values = []
        for i in range(count):
            one = summary.image(f"{tag}/image/{i}", value[i], dataformats="HWC")
            values.extend(one.value)
        return _proto()(value=values)

    return _emit(name, data, step, build)


def text(name, data, step=None, description=None) -> Tensor:
    """Writes a string (TF's `tf.summary.text`)."""
    if isinstance(data, bytes):
        data = data.decode("utf-8")
    static = isinstance(data, str)
    if not static:
        data = np.asarray(data).reshape(()).item()
        data = data.decode("utf-8") if isinstance(data, bytes) else str(data)

    def build(tag, value):
        from tensorboardX import summary

        proto = summary.text(tag, str(value))
        proto.value[0].tag = tag  # TF's tag, without tensorboardX's suffix
        return proto

    return _emit(name, data, step, build, static_data=True)


def audio(
    name,
    data,
    sample_rate,
    step=None,
    max_outputs=3,
    encoding=None,
    description=None,
) -> Tensor:
    """Writes up to `max_outputs` clips from a `[k, t, c]` batch of values in [-1, 1].

    Encoded as 16-bit WAV (TF's only encoding); tags `name/audio/0`, ...
    """
    if encoding not in (None, "wav"):
        raise ValueError(f"Summary audio {name!r}: only 'wav' encoding is supported.")
    shape = np.shape(to_value(data))
    if len(shape) != 3:
        raise ValueError(
            f"Summary audio {name!r} needs a [k, t, c] batch, got shape {tuple(shape)}."
        )
    count = min(int(max_outputs), shape[0])
    rate = int(np.asarray(to_value(sample_rate)))

    def build(tag, value):
        Summary = _proto()
        values = []
        for i in range(count):
            clip = value[i]
            audio = Summary.Audio(
                sample_rate=rate,
                num_channels=clip.shape[1],
                length_frames=clip.shape[0],
                encoded_audio_string=_wav(clip, rate),
                content_type="audio/wav",
            )
            values.append(Summary.Value(tag=f"{tag}/audio/{i}", audio=audio))
        return Summary(value=values)

    return _emit(name, data, step, build)


def _wav(clip: np.ndarray, rate: int) -> bytes:
    pcm = (np.clip(clip.astype(np.float64), -1.0, 1.0) * 32767).astype("<i2")
    buffer = io.BytesIO()
    with wave.open(buffer, "wb") as f:
        f.setnchannels(clip.shape[1])
        f.setsampwidth(2)
        f.setframerate(rate)
        f.writeframes(pcm.tobytes())
    return buffer.getvalue()
