"""TF's public `tf.DeviceSpec`: a (partial) device name, parsed and composed.

`core/device` parses device strings to pick a JAX device; this is the value
class TF code builds device strings with (`DeviceSpec(device_type="GPU",
device_index=0).to_string()`), immutable as TF 2's.

Layer L0: no jaxtape imports.
"""

from __future__ import annotations

from typing import Any

_VALID_DEVICE_TYPES = frozenset({"CPU", "GPU", "TPU", "CUSTOM", "EPU"})


def _str_or_none(value) -> str | None:
    return None if value is None else str(value)


def _int_or_none(value) -> int | None:
    return None if value is None else int(value)


class DeviceSpec:
    """A (possibly partial) device specification (TF 2's `tf.DeviceSpec`).

    Five optional parts: job, replica, task, device type and device index;
    `to_string()` gives `/job:<job>/replica:<r>/task:<t>/device:<TYPE>:<i>`
    with the parts that are set (`*` for a device type without an index).

    >>> jaxtape.DeviceSpec.from_string("/gpu:1").to_string()
    '/device:GPU:1'

    Differences from TensorFlow:
      Device types are TF's built-in ones (CPU, GPU, TPU, CUSTOM, EPU); TF
      also accepts the types of installed pluggable devices.
    """

    __slots__ = ("_job", "_replica", "_task", "_device_type", "_device_index")

    def __init__(
        self, job=None, replica=None, task=None, device_type=None, device_index=None
    ):
        self._job = _str_or_none(job)
        self._replica = _int_or_none(replica)
        self._task = _int_or_none(task)
        if device_type in ("cpu", "gpu"):
            device_type = device_type.upper()
        self._device_type = _str_or_none(device_type)
        self._device_index = _int_or_none(device_index)

    @property
    def job(self) -> str | None:
        return self._job

    @property
    def replica(self) -> int | None:
        return self._replica

    @property
    def task(self) -> int | None:
        return self._task

    @property
    def device_type(self) -> str | None:
        return self._device_type

    @property
    def device_index(self) -> int | None:
        return self._device_index

    def _parts(self) -> tuple:
        return (
            self._job,
            self._replica,
            self._task,
            self._device_type,
            self._device_index,
        )

    def to_string(self) -> str:
        """`/job:<name>/replica:<id>/task:<id>/device:<type>:<id>`, set parts only."""
        out = ""
        if self._job is not None:
            out += "/job:" + self._job
        if self._replica is not None:
            out += f"/replica:{self._replica}"
        if self._task is not None:
            out += f"/task:{self._task}"
        if self._device_type is not None:
            index = "*" if self._device_index is None else str(self._device_index)
            out += f"/device:{self._device_type}:{index}"
        return out

    @classmethod
    def from_string(cls, spec: str) -> DeviceSpec:
        """Parses `/job:w/task:1/device:GPU:0`, `/cpu:0`, `GPU:*`... (all optional).

        Raises `ValueError` for an unknown part or two device types, as TF.
        """
        return cls(*_parse(spec))

    def parse_from_string(self, spec: str) -> DeviceSpec:
        """A new spec parsed from `spec` (TF 2: DeviceSpecs are immutable)."""
        return self.from_string(spec)

    def make_merged_spec(self, dev: DeviceSpec) -> DeviceSpec:
        """A new spec with `dev`'s set parts over this one's."""
        return type(self)(
            *(
                theirs if theirs is not None else mine
                for mine, theirs in zip(self._parts(), dev._parts())
            )
        )

    def replace(self, **kwargs: Any) -> DeviceSpec:
        """A new spec with the given constructor arguments replaced."""
        args = dict(
            job=self._job,
            replica=self._replica,
            task=self._task,
            device_type=self._device_type,
            device_index=self._device_index,
        )
        args.update(kwargs)
        return type(self)(**args)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, DeviceSpec) and self.to_string() == other.to_string()

    def __hash__(self) -> int:
        return hash(self.to_string())

    def __repr__(self) -> str:  # (TF's)
        return (
            f"<DeviceSpec(job={self._job}, replica={self._replica}, task={self._task}, "
            f"device_type={self._device_type}, device_index={self._device_index})>"
        )


def _parse(spec: str | None) -> tuple:
    """TF's `DeviceSpecV2._string_to_components`."""
    job = replica = task = device_type = device_index = None
    for fields in (part.split(":") for part in (spec or "").split("/")):
        n = len(fields)
        if n == 2 and fields[0] == "job":
            job = fields[1]
        elif n == 2 and fields[0] == "replica":
            replica = fields[1]
        elif n == 2 and fields[0] == "task":
            task = fields[1]
        elif n in (1, 2) and fields[0].upper() in _VALID_DEVICE_TYPES:
            if device_type is not None:
                raise ValueError(
                    "Multiple device types are not allowed while parsing the "
                    f"device spec: {spec}."
                )
            device_type = fields[0].upper()
            if n == 2 and fields[1] != "*":
                device_index = int(fields[1])
        elif n == 3 and fields[0] == "device":
            if device_type is not None:
                raise ValueError(
                    "Multiple device types are not allowed while parsing the "
                    f"device spec: {spec}."
                )
            device_type = fields[1]
            if fields[2] != "*":
                device_index = int(fields[2])
        elif fields[0] != "":
            raise ValueError(
                f"Unknown attribute '{fields[0]}' is encountered while parsing the "
                f"device spec: '{spec}'."
            )
    return job, replica, task, device_type, device_index
