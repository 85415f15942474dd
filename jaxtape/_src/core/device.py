"""Devices: TF device strings, `jaxtape.device` placement, physical-device config.

Layer L0. `jaxtape.device('/gpu:0')` resolves TF's device string to one
`jax.Device` and pushes it on the context; tensor creation, Variables and the
dispatcher put values there (`jax.default_device` alone would only move
uncommitted arrays). Soft placement is on by default as in TF: a device this
machine lacks falls back to one of the same kind, then to CPU:0.

Memory growth is XLA's preallocation switch (`XLA_PYTHON_CLIENT_PREALLOCATE`),
read once when the backend starts. JAX must start its backend to list GPUs, so
after that a request that matches the setting in force is accepted (as TF
accepts one that changes nothing) and one that would change it raises TF's
`RuntimeError`.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import re
from typing import NamedTuple

import jax
import jax.core
import numpy as np

from jaxtape._src.core import context, errors

_state = context.state
_KINDS = {"cpu": "CPU", "gpu": "GPU", "tpu": "TPU"}
_ATTRS = ("job", "replica", "task", "device")


class _Settings:
    def __init__(self):
        self.soft_placement = True
        self.visible: dict[str, list[int]] = {}  # kind -> indices (all if absent)
        self.threads = {"inter_op": 0, "intra_op": 0}


settings = _Settings()


# -- device strings ---------------------------------------------------------------
@dataclasses.dataclass(frozen=True)
class DeviceSpec:
    """The parts of a TF device string that name a device: kind and index."""

    kind: str | None  # "CPU", "GPU", "TPU" or None (any)
    index: int | None  # None: the first of that kind


def parse(spec: str) -> DeviceSpec:
    """Parses `/cpu:0`, `GPU:1`, `/device:GPU:0`, `/job:localhost/.../device:CPU:0`.

    >>> parse('/job:localhost/replica:0/task:0/device:GPU:1')
    DeviceSpec(kind='GPU', index=1)
    """
    if not isinstance(spec, str):
        raise TypeError(
            f"jaxtape.device expects a device string such as '/cpu:0' or '/GPU:1' "
            f"(or None), got {spec!r}."
        )
    kind = index = None
    for part in (p for p in spec.split("/") if p):
        fields = part.split(":")
        name = fields[0].lower()
        if name in ("job", "replica", "task") and len(fields) == 2:
            continue  # one host, one task: nothing to choose
        if name == "device":
            fields = fields[1:]
            name = fields[0].lower() if fields else ""
        if name not in _KINDS or len(fields) > 2:
            raise ValueError(
                f"Unknown attribute {part.split(':')[0]!r} is encountered while "
                f"parsing the device spec: {spec!r}. Use a device string such as "
                "'/cpu:0', '/GPU:1' or '/job:localhost/replica:0/task:0/device:CPU:0'."
            )
        kind = _KINDS[name]
        if len(fields) == 2 and fields[1] != "*":
            if not re.fullmatch(r"\d+", fields[1]):
                raise ValueError(
                    f"Device index {fields[1]!r} in the device spec {spec!r} is not "
                    "a number. Write e.g. '/gpu:0'."
                )
            index = int(fields[1])
    return DeviceSpec(kind, index)


def kind_of(device) -> str:
    """TF's device type name for a `jax.Device`: 'CPU', 'GPU' or 'TPU'."""
    gpu = device.platform in ("gpu", "cuda", "rocm")
    return "GPU" if gpu else device.platform.upper()


def device_name(device) -> str:
    """TF's full device string for a `jax.Device`."""
    return f"/job:localhost/replica:0/task:0/device:{kind_of(device)}:{device.id}"


# -- the devices this process sees -------------------------------------------------
def all_devices(kind: str | None = None) -> list:
    """JAX's devices (every platform it started), optionally of one TF kind."""
    out = []
    for platform in ("cpu", "gpu", "tpu"):
        try:
            out.extend(jax.devices(platform))
        except RuntimeError:
            continue  # platform not present on this machine
    return [d for d in out if kind is None or kind_of(d) == kind]


def visible_devices(kind: str | None = None) -> list:
    """`all_devices` less what `config.set_visible_devices` hid."""
    return [
        d
        for d in all_devices(kind)
        if kind_of(d) not in settings.visible
        or _local_index(d) in settings.visible[kind_of(d)]
    ]


def _local_index(device) -> int:
    return [d.id for d in all_devices(kind_of(device))].index(device.id)


def resolve(spec: DeviceSpec, text: str):
    """The `jax.Device` for a parsed spec, with TF's soft placement."""
    kind = spec.kind or "CPU"
    same_kind = visible_devices(kind)
    index = spec.index or 0
    for d in same_kind:
        if _local_index(d) == index:
            return d
    if not settings.soft_placement:
        available = visible_devices()
        kinds = sorted({kind_of(d) for d in available})
        raise errors.InvalidArgumentError(
            None,
            None,
            f"Could not satisfy device specification '{_full(spec)}'. "
            f"enable_soft_placement=0. Supported device types [{', '.join(kinds)}]. "
            f"All available devices [{', '.join(device_name(d) for d in available)}]."
            " Call jaxtape.config.set_soft_device_placement(True) to fall back to "
            f"an available device, or pick one of these instead of {text!r}.",
        )
    if same_kind:
        return same_kind[0]
    cpus = visible_devices("CPU") or all_devices("CPU")
    return cpus[0]


def _full(spec: DeviceSpec) -> str:
    return f"/job:localhost/replica:0/task:0/device:{spec.kind}:{spec.index or 0}"


@contextlib.contextmanager
def device(name):
    """Places tensors, Variables and ops made inside on one device (TF's `tf.device`).

    `None` or `''` returns to JAX's default placement.

    >>> with jaxtape.device('/cpu:0'):
    ...     jaxtape.constant(1.0).device
    '/job:localhost/replica:0/task:0/device:CPU:0'
    """
    if hasattr(name, "to_string"):  # a `jaxtape.DeviceSpec` (TF takes one)
        name = name.to_string()
    if name is None or name == "":
        target = None
    else:
        target = resolve(parse(name), name)
    saved = _state.device, _state.device_spec
    _state.device, _state.device_spec = target, name or None
    try:
        yield
    finally:
        _state.device, _state.device_spec = saved


def place(value):
    """`value` on the current device scope's device (unchanged outside one)."""
    target = _state.device
    if target is None or isinstance(value, jax.core.Tracer):
        return value
    return jax.device_put(value, target)


def to_device(value):
    """A jax array for a new Tensor or Variable: in the device scope, else JAX's
    default placement."""
    if _state.device is None:
        if type(value) is np.ndarray:
            return _from_numpy(value)
        return jax.numpy.asarray(value)
    return place(value)


# NumPy arrays become jax arrays through `jax.device_put` (~80 us for a
# 100 KB batch here; `jnp.asarray` ~45 us, after compiling once per shape) or
# through a compiled identity (~17 us: JAX's C++ call path copies it), which
# compiles once per shape and dtype (~12 ms): used from the fourth array of a
# shape, as a training loop's batches are.
_identity = jax.jit(lambda a: a)
_conversions: dict = {}  # (shape, dtype) -> arrays converted so far
_COMPILE_FROM = 4


def _from_numpy(value: np.ndarray):
    key = (value.shape, value.dtype)
    seen = _conversions.get(key, 0)
    if seen >= _COMPILE_FROM and not _state.function_depth:
        out = _identity(value)
        if not isinstance(out, jax.core.Tracer):  # (called while JAX traces)
            return out
    if value.dtype.kind in "biufc" or value.dtype.name == "bfloat16":
        if len(_conversions) >= 4096:
            _conversions.clear()
        _conversions[key] = seen + 1
    return jax.device_put(value)


def run(fn, vals, params):
    """`fn(*vals, *params)`; inputs on different devices meet on the default one.

    TF copies inputs that live on different devices to the op's device; JAX
    refuses. Outside a device scope that is the default device.
    """
    try:
        return fn(*vals, *params)
    except ValueError as error:
        if "incompatible devices" not in str(error):
            errors.escaped(vals, error)  # a tracer that escaped a jaxtape.function
            raise
    except Exception as error:
        errors.escaped(vals, error)
        raise
    default = jax.devices()[0]
    vals = [jax.device_put(v, default) if isinstance(v, jax.Array) else v for v in vals]
    return fn(*vals, *params)


# -- physical devices and memory growth ---------------------------------------------
class PhysicalDevice(NamedTuple):
    """TF's `config.PhysicalDevice`."""

    name: str
    device_type: str


class LogicalDevice(NamedTuple):
    """TF's `config.LogicalDevice`."""

    name: str
    device_type: str


def list_physical_devices(device_type: str | None = None) -> list[PhysicalDevice]:
    """The devices JAX found, as TF's `PhysicalDevice`s.

    >>> jaxtape.config.list_physical_devices('CPU')[0]
    PhysicalDevice(name='/physical_device:CPU:0', device_type='CPU')
    """
    kind = _kind_arg(device_type)
    return [
        PhysicalDevice(f"/physical_device:{kind_of(d)}:{_local_index(d)}", kind_of(d))
        for d in all_devices(kind)
    ]


def list_logical_devices(device_type: str | None = None) -> list[LogicalDevice]:
    """The visible devices that ops can be placed on (`config.list_logical_devices`)."""
    kind = _kind_arg(device_type)
    return [
        LogicalDevice(f"/device:{kind_of(d)}:{_local_index(d)}", kind_of(d))
        for d in visible_devices(kind)
    ]


def _kind_arg(device_type: str | None) -> str | None:
    return None if device_type is None else _known_kind(device_type)


def _known_kind(device_type: str) -> str:
    kind = _KINDS.get(str(device_type).lower())
    if kind is None:
        raise ValueError(
            f"Unknown device type {device_type!r}. Use 'CPU', 'GPU' or 'TPU'."
        )
    return kind


def backend_started() -> bool:
    """Whether XLA's client exists (its allocator settings are then fixed)."""
    try:
        from jax._src import xla_bridge

        return bool(xla_bridge.backends_are_initialized())
    except (ImportError, AttributeError):
        return True


def get_memory_growth(device: PhysicalDevice | None = None) -> bool:
    """True when XLA allocates GPU memory on demand (preallocation off)."""
    if os.environ.get("XLA_PYTHON_CLIENT_ALLOCATOR", "").lower() == "platform":
        return True
    return os.environ.get("XLA_PYTHON_CLIENT_PREALLOCATE", "true").lower() in (
        "false",
        "0",
    )


def set_memory_growth(device: PhysicalDevice, enable: bool) -> None:
    """Grows GPU memory on demand instead of reserving most of it (TF's setting).

    One process-wide XLA switch for every GPU; see the module docstring for
    when it can still change.
    """
    if getattr(device, "device_type", None) != "GPU":
        raise ValueError(
            f"Cannot set memory growth on non-GPU and non-Pluggable devices "
            f"({device!r}). Pass one of config.list_physical_devices('GPU')."
        )
    enable = bool(enable)
    if enable == get_memory_growth():
        return
    if backend_started():
        raise RuntimeError(
            "Physical devices cannot be modified after being initialized"
        )
    os.environ.pop("XLA_PYTHON_CLIENT_ALLOCATOR", None)
    os.environ["XLA_PYTHON_CLIENT_PREALLOCATE"] = "false" if enable else "true"


def set_visible_devices(devices, device_type: str | None = None) -> None:
    """Hides the other devices of `device_type` from placement and listing.

    JAX has started every device by the time they can be listed, so this is a
    placement filter: hidden devices keep whatever memory XLA gave them.
    """
    if isinstance(devices, PhysicalDevice):
        devices = [devices]
    devices = list(devices)
    for d in devices:
        if not isinstance(d, PhysicalDevice):
            raise TypeError(
                f"set_visible_devices expects PhysicalDevice objects from "
                f"config.list_physical_devices(), got {d!r}."
            )
    kinds = [_known_kind(device_type)] if device_type else ["CPU", "GPU", "TPU"]
    for kind in kinds:
        if kind == "CPU" and not any(d.device_type == "CPU" for d in devices):
            if all_devices("CPU"):
                raise ValueError("CPU must remain visible: pass at least one CPU.")
        settings.visible[kind] = [
            int(d.name.rsplit(":", 1)[1]) for d in devices if d.device_type == kind
        ]


def get_visible_devices(device_type: str | None = None) -> list[PhysicalDevice]:
    visible = {d.id for d in visible_devices(_kind_arg(device_type))}
    return [
        p
        for p, d in zip(list_physical_devices(), all_devices())
        if d.id in visible and kind_of(d) == p.device_type
    ]


def get_memory_info(name: str) -> dict:
    """`{'current': bytes, 'peak': bytes}` from XLA's allocator stats (0 where none)."""
    spec = parse(name)
    matches = [
        d for d in visible_devices(spec.kind) if _local_index(d) == (spec.index or 0)
    ]
    if not matches:
        raise ValueError(f"No matching devices found for {name!r}.")
    stats = matches[0].memory_stats() or {}
    return {
        "current": int(stats.get("bytes_in_use", 0)),
        "peak": int(stats.get("peak_bytes_in_use", 0)),
    }


def get_memory_usage(name: str) -> int:
    """Bytes in use on a device (TF's deprecated `get_memory_usage`)."""
    return get_memory_info(name)["current"]


def reset_memory_stats(name: str) -> None:
    """Accepted for TF compatibility; XLA keeps its own peak statistic."""
    get_memory_info(name)  # still validates the name


def set_soft_device_placement(enabled: bool) -> None:
    """Whether a missing device falls back to an available one (on by default)."""
    settings.soft_placement = bool(enabled)


def get_soft_device_placement() -> bool:
    return settings.soft_placement


def is_gpu_available(cuda_only: bool = False, min_cuda_compute_capability=None) -> bool:
    """True when JAX has a GPU (TF's deprecated `test.is_gpu_available`)."""
    return bool(all_devices("GPU"))


def is_built_with_cuda() -> bool:
    """True when the installed jaxlib has a CUDA plugin (the `cuda12` extra)."""
    try:
        from jax._src import xla_bridge

        return any(name in ("cuda", "gpu") for name in xla_bridge._backend_factories)
    except (ImportError, AttributeError):
        return False


def gpu_device_name() -> str:
    """`'/device:GPU:0'` when a GPU is there, else `''` (TF's `gpu_device_name`)."""
    return "/device:GPU:0" if all_devices("GPU") else ""


def set_inter_op_parallelism_threads(num_threads: int) -> None:
    """Recorded only: XLA sizes its CPU thread pools when the backend starts."""
    settings.threads["inter_op"] = int(num_threads)


def set_intra_op_parallelism_threads(num_threads: int) -> None:
    """Recorded only: XLA sizes its CPU thread pools when the backend starts."""
    settings.threads["intra_op"] = int(num_threads)


def get_inter_op_parallelism_threads() -> int:
    return settings.threads["inter_op"]


def get_intra_op_parallelism_threads() -> int:
    return settings.threads["intra_op"]
