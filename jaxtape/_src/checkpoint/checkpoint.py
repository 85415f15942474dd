"""`train.Checkpoint` and `train.CheckpointManager` (TF's object-based checkpoints).

Layer L4. A checkpoint maps each Variable's attribute path from the named
roots (`model/dense1/kernel`, `optimizer/iterations`, optimizer slots under
`optimizer/.slots/<variable path>/slotN`) to its value; see
`state/trackable.py`. Restoring checks every shape and dtype before it
assigns anything, so a mismatched model is left untouched. Values for
objects that do not exist yet (a subclassed model before its first call,
optimizer slots before the first step) wait on the nearest existing object
and are assigned when it creates them, as TF's deferred restoration does.
"""

from __future__ import annotations

import os
import re

import numpy as np

from jaxtape._src.checkpoint import storage, tf_bundle
from jaxtape._src.core import dtypes, errors
from jaxtape._src.state import trackable
from jaxtape._src.state.scope import creating_state
from jaxtape._src.state.variable import Variable


class Checkpoint:
    """Saves and restores Variables reachable from the keyword roots.

    >>> import tempfile
    >>> v = jaxtape.Variable(1.0)
    >>> ckpt = jaxtape.train.Checkpoint(v=v)
    >>> path = ckpt.save(tempfile.mkdtemp() + '/ckpt')
    >>> _ = v.assign(5.0)
    >>> _ = ckpt.restore(path).assert_consumed()
    >>> float(v)
    1.0
    """

    def __init__(self, root=None, **kwargs):
        roots = dict(kwargs)
        if root is not None:
            roots["root"] = root
        for name, value in roots.items():
            if name == "save_counter":
                raise ValueError("'save_counter' is reserved by Checkpoint.")
            if not trackable._is_trackable(value):
                raise ValueError(
                    f"Checkpoint was expecting {name} to be a trackable object (a "
                    "Variable, Module, Keras layer or model, optimizer, Checkpoint, or "
                    f"a list/dict of them), got {value!r}."
                )
        self._roots = roots
        with creating_state():
            self.save_counter = Variable(
                0, dtype="int64", trainable=False, name="save_counter"
            )

    def _trackable_children(self) -> dict:
        return {**self._roots, "save_counter": self.save_counter}

    # -- writing ----------------------------------------------------------------------
    def _values(self) -> dict:
        graph = trackable.Graph(self._trackable_children())
        flat = {p: _host(v) for p, v in graph.variables.items()}
        flat.update({p: _host(s[3]) for p, s in graph.slots().items()})
        return flat

    def write(self, file_prefix) -> str:
        """Writes the values to exactly `file_prefix`; returns that path."""
        return storage.write(os.fspath(file_prefix), self._values())

    def save(self, file_prefix) -> str:
        """Writes `file_prefix-N` (N: the new `save_counter`), recorded as latest.

        Temporary files that a killed earlier save to `file_prefix-*` left
        behind are deleted first. A full disk raises `ResourceExhaustedError`
        and leaves the earlier checkpoints as they were.
        """
        file_prefix = os.fspath(file_prefix)
        _remove_leftovers(file_prefix)
        self.save_counter.assign_add(1)
        path = self.write(f"{file_prefix}-{int(self.save_counter)}")
        directory = os.path.dirname(path)
        _, kept = storage.read_state(directory)
        storage.write_state(directory, path, [p for p in kept if p != path] + [path])
        return path

    # -- reading ----------------------------------------------------------------------
    def restore(self, save_path) -> CheckpointLoadStatus:
        """Restores from `save_path` (None: nothing to do, as in TF).

        Raises ValueError naming the first Variable whose shape or dtype does
        not match, before anything is assigned.
        """
        if save_path is None:
            return CheckpointLoadStatus(self, {}, [], set())
        return self._restore(os.fspath(save_path))

    read = restore

    def _restore(self, path: str) -> CheckpointLoadStatus:
        if tf_bundle.is_tf_checkpoint(path):
            return self._restore_tf(path)
        saved = storage.read(path)
        graph = trackable.Graph(self._trackable_children())
        slots = graph.slots()
        targets = {**graph.variables, **{k: s[3] for k, s in slots.items()}}
        matched = {}
        for key, target in targets.items():  # in object order: the first mismatch
            if key in saved:
                _check_compatible(key, saved[key], target, path)
                matched[key] = (target, saved[key])
        for target, value in matched.values():
            target.assign(value)
        unmatched = []
        for key, value in saved.items():
            if key in matched:
                continue
            owner_path, sep, slot_key = key.partition("/.slots/")
            owner = graph.objects.get(owner_path) if sep else None
            if owner is not None and hasattr(owner, "_slot_variables"):
                trackable.defer_slots(
                    owner, self._trackable_children, {".slots/" + slot_key: value}
                )
            elif not trackable.place(self, key, value):
                unmatched.append(key)
        restored = {id(t) for t, _ in matched.values()}
        return CheckpointLoadStatus(self, graph.variables, unmatched, restored, path)

    def _restore_tf(self, path: str) -> CheckpointLoadStatus:
        """Restores a checkpoint written by TensorFlow (`path.index` and its
        data files): each Variable by the object-graph path that reaches it
        (`model/dense/kernel`; Keras 3's `_kernel` and layer lists too). As in
        TF, a `root` is the checkpoint's root object (a SavedModel's
        `variables/variables` restores into `Checkpoint(root=model)`)."""
        reader = tf_bundle.BundleReader(path)
        nodes = reader.object_graph()
        roots = self._trackable_children()
        if "root" in self._roots:
            roots.pop("root")
            roots = {**dict(trackable.children(self._roots["root"])), **roots}
        match = tf_bundle.Match(roots, nodes)
        matched = {}
        for key, (target, tf_key) in match.variables.items():
            value = reader.get_tensor(tf_key)
            _check_compatible(key, value, target, path)
            matched[key] = (target, value)
        for target, value in matched.values():
            target.assign(value)
        for layer, relative_path, tf_key in match.deferred:  # (not built yet)
            trackable.defer(layer, relative_path, reader.get_tensor(tf_key))
        used = {tf_key for _, tf_key in match.variables.values()}
        used.update(tf_key for _, _, tf_key in match.deferred)
        unmatched = [k for k in tf_bundle.variable_keys(nodes) if k not in used]
        restored = {id(t) for t, _ in matched.values()}
        variables = trackable.Graph(roots).variables
        return CheckpointLoadStatus(self, variables, unmatched, restored, path)

    def __repr__(self) -> str:
        return f"<jaxtape.train.Checkpoint roots={sorted(self._roots)}>"


def _remove_leftovers(file_prefix: str) -> None:
    """Deletes what killed saves to `file_prefix-N` left in the directory."""
    directory, name = os.path.split(os.path.abspath(file_prefix))
    storage.remove_leftovers(directory, re.escape(name) + r"-\d+")


def _host(var) -> np.ndarray:
    return np.asarray(var.read_value()._value)


def _check_compatible(key, value, target, path):
    want_shape = tuple(target.shape.as_list())
    want_dtype = np.dtype(dtypes.np_dtype(target.dtype))
    fits = len(value.shape) == len(want_shape) and all(
        w in (None, d) for w, d in zip(want_shape, value.shape)
    )  # (a `validate_shape=False` Variable's unknown dims take any size)
    if not fits or value.dtype != want_dtype:
        raise ValueError(
            f"Cannot restore {key!r} from {path!r}: the checkpoint holds shape "
            f"{tuple(value.shape)} {value.dtype.name} but the Variable "
            f"{target.name!r} has shape {want_shape} {want_dtype.name}. Build the "
            "model with the shapes it was saved with."
        )


class CheckpointLoadStatus:
    """What a restore matched (TF's load status, with its assertions)."""

    def __init__(self, checkpoint, variables, unmatched, restored, path=None):
        self._checkpoint = checkpoint
        self._variables = variables
        self._unmatched = list(unmatched)
        self._restored = restored
        self._path = path

    def _waiting(self) -> list:
        return sorted(trackable.pending_values(self._checkpoint))

    def _unrestored(self) -> list:
        return [
            p
            for p, v in self._variables.items()
            if id(v) not in self._restored and p != "save_counter"
        ]

    def assert_consumed(self) -> CheckpointLoadStatus:
        """Every saved value found its Variable and every Variable got a value."""
        problems = []
        if self._unmatched:
            problems.append(f"unmatched values in the checkpoint: {self._unmatched}")
        waiting = self._waiting()
        if waiting:
            problems.append(f"values still waiting for their objects: {waiting}")
        missing = self._unrestored()
        if missing and self._path is not None:
            problems.append(f"Variables not in the checkpoint: {missing}")
        if problems:
            raise AssertionError(
                f"Checkpoint {self._path!r} was not consumed exactly: "
                + "; ".join(problems)
                + ". Use expect_partial() if this is intended."
            )
        return self

    def assert_existing_objects_matched(self) -> CheckpointLoadStatus:
        """Every Variable that exists now got a value."""
        missing = self._unrestored()
        if missing and self._path is not None:
            raise AssertionError(
                f"Variables not found in checkpoint {self._path!r}: {missing}."
            )
        return self

    def assert_nontrivial_match(self) -> CheckpointLoadStatus:
        """At least one Variable besides the save counter was restored."""
        if not any(
            id(v) in self._restored
            for p, v in self._variables.items()
            if p != "save_counter"
        ):
            raise AssertionError(
                f"Nothing in {self._path!r} matched the objects of this Checkpoint."
            )
        return self

    def expect_partial(self) -> CheckpointLoadStatus:
        """Marks a partial restore as intended (there are no warnings to silence)."""
        return self


def _exists(path: str) -> bool:
    """A jaxtape checkpoint (a directory) or one TensorFlow wrote (a prefix)."""
    return os.path.isdir(path) or tf_bundle.is_tf_checkpoint(path)


class CheckpointManager:
    """Numbered saves in one directory, keeping the newest `max_to_keep`."""

    def __init__(
        self,
        checkpoint,
        directory,
        max_to_keep,
        keep_checkpoint_every_n_hours=None,
        checkpoint_name="ckpt",
        step_counter=None,
        checkpoint_interval=None,
        init_fn=None,
    ):
        if not isinstance(checkpoint, Checkpoint):
            raise TypeError(
                f"CheckpointManager expects a jaxtape.train.Checkpoint, got "
                f"{checkpoint!r}."
            )
        if keep_checkpoint_every_n_hours is not None:
            raise NotImplementedError(
                "CheckpointManager(keep_checkpoint_every_n_hours=...) is not "
                "supported by jaxtape; keep checkpoints with a larger `max_to_keep` "
                "(or None to keep all)."
            )
        if checkpoint_interval is not None and step_counter is None:
            raise ValueError(
                "`step_counter` should be passed if `checkpoint_interval` is not None."
            )
        self._checkpoint = checkpoint
        self.directory = os.fspath(directory)
        self._max_to_keep = max_to_keep
        self._step_counter = step_counter
        self._checkpoint_interval = checkpoint_interval
        self._last_checkpoint_step = None
        self._prefix = os.path.join(self.directory, checkpoint_name)
        self._init_fn = init_fn
        latest, kept = storage.read_state(self.directory)  # no directory yet: none
        if latest is not None:
            storage.latest_checkpoint(self.directory)  # puts back an interrupted swap
        self._checkpoints = [p for p in kept if _exists(p)]
        if latest and _exists(latest) and latest not in self._checkpoints:
            self._checkpoints.append(latest)

    @property
    def checkpoints(self) -> list:
        """The kept checkpoints, oldest first."""
        return list(self._checkpoints)

    @property
    def latest_checkpoint(self) -> str | None:
        return self._checkpoints[-1] if self._checkpoints else None

    @property
    def checkpoint(self) -> Checkpoint:
        return self._checkpoint

    def save(
        self, checkpoint_number=None, check_interval=True, options=None
    ) -> str | None:
        """Saves `ckpt-N`, records it as latest, deletes the oldest beyond the limit.

        With `checkpoint_interval`, saves only once `step_counter` has advanced
        that far since the last save (any new step when `check_interval` is
        False) and returns None otherwise, as TF does. The directory is created
        on the first save (a file in its place raises `FailedPreconditionError`,
        as in TF); what killed saves left there is deleted first.
        """
        if options is not None:
            raise NotImplementedError(
                "CheckpointManager.save(options=...) is not supported by jaxtape; "
                "call save() without options."
            )
        if self._checkpoint_interval is not None:
            step = int(np.asarray(self._step_counter))
            last = self._last_checkpoint_step
            if last is not None and (
                step == last
                or (check_interval and step < last + self._checkpoint_interval)
            ):
                return None
            self._last_checkpoint_step = step
        storage.make_directory(self.directory)
        _remove_leftovers(self._prefix)
        self._checkpoint.save_counter.assign_add(1)
        number = (
            int(self._checkpoint.save_counter)
            if checkpoint_number is None
            else int(np.asarray(checkpoint_number))
        )
        path = self._checkpoint.write(f"{self._prefix}-{number}")
        self._checkpoints = [p for p in self._checkpoints if p != path] + [path]
        doomed = []
        if self._max_to_keep is not None and self._max_to_keep > 0:
            doomed = self._checkpoints[: -self._max_to_keep]
            self._checkpoints = self._checkpoints[-self._max_to_keep :]
        storage.write_state(self.directory, path, self._checkpoints)
        for old in doomed:  # only after the state file no longer names them
            storage.remove_checkpoint(old)
        return path

    def restore_or_initialize(self):
        """Restores the latest checkpoint, or runs `init_fn` when there is none."""
        if self.latest_checkpoint is not None:
            self._checkpoint.restore(self.latest_checkpoint)
            return self.latest_checkpoint
        if self._init_fn is not None:
            self._init_fn()
        return None


latest_checkpoint = storage.latest_checkpoint


# -- reading a checkpoint's tensors by name (TF's `tf.train.load_checkpoint`) ---------
class CheckpointReader:
    """The saved tensors of one checkpoint, by name (TF's `CheckpointReader`).

    A checkpoint written by TensorFlow (`prefix.index` and its data files)
    is read without TensorFlow: its names are TF's checkpoint keys
    (`model/layer/_kernel/.ATTRIBUTES/VARIABLE_VALUE`, and
    `_CHECKPOINTABLE_OBJECT_GRAPH`). A jaxtape checkpoint's names are its
    object paths (`model/dense/kernel`).
    """

    def __init__(self, path: str):
        self._path = path
        if tf_bundle.is_tf_checkpoint(path):
            self._bundle: tf_bundle.BundleReader | None = tf_bundle.BundleReader(path)
            self._values: dict = {}
        else:
            self._bundle = None
            self._values = storage.read(path)

    def _names(self) -> list:
        return self._bundle.keys() if self._bundle else sorted(self._values)

    def has_tensor(self, tensor_str) -> bool:
        return tensor_str in set(self._names())

    def get_tensor(self, tensor_str):
        """The saved value (a NumPy array; a scalar string is `bytes`)."""
        if self._bundle is not None:
            value = self._bundle.get_tensor(tensor_str)
        elif tensor_str in self._values:
            value = self._values[tensor_str]
        else:
            raise errors.NotFoundError(
                None, None, f"Key {tensor_str} not found in checkpoint"
            )
        return value.item() if value.dtype == object and value.ndim == 0 else value

    def get_variable_to_shape_map(self) -> dict:
        if self._bundle is not None:
            return {k: list(self._bundle.shape(k)) for k in self._names()}
        return {k: list(v.shape) for k, v in self._values.items()}

    def get_variable_to_dtype_map(self) -> dict:
        if self._bundle is not None:
            raw = {k: self._bundle.dtype(k) for k in self._names()}
        else:
            raw = {k: v.dtype for k, v in self._values.items()}
        return {
            k: dtypes.string if d == np.dtype(object) else dtypes.as_dtype(d)
            for k, d in raw.items()
        }

    def __repr__(self) -> str:
        return f"<jaxtape.train.CheckpointReader {self._path!r}>"


def _checkpoint_path(ckpt_dir_or_file) -> str:
    """A checkpoint path, or the latest one of a directory (TF's lookup)."""
    path = os.fspath(ckpt_dir_or_file)
    if os.path.isdir(path) and not os.path.isdir(os.path.join(path, "manifest")):
        latest = storage.latest_checkpoint(path)
        if latest is None:
            raise ValueError(
                f"Couldn't find 'checkpoint' file or checkpoints in given directory "
                f"{path}"
            )
        return latest
    return path


def load_checkpoint(ckpt_dir_or_file) -> CheckpointReader:
    """A `CheckpointReader` for a checkpoint, or a directory's latest one
    (TF's `tf.train.load_checkpoint`); reads TF's checkpoints too."""
    return CheckpointReader(_checkpoint_path(ckpt_dir_or_file))


def load_variable(ckpt_dir_or_file, name):
    """The saved value of the tensor `name` (TF's `tf.train.load_variable`;
    a name ending in `:0` is taken without it, as TF does)."""
    if name.endswith(":0"):
        name = name[:-2]
    return load_checkpoint(ckpt_dir_or_file).get_tensor(name)


def list_variables(ckpt_dir_or_file) -> list:
    """`[(name, shape)]` of a checkpoint's tensors, sorted by name (TF's
    `tf.train.list_variables`)."""
    reader = load_checkpoint(ckpt_dir_or_file)
    shapes = reader.get_variable_to_shape_map()
    return [(name, shapes[name]) for name in sorted(shapes)]
