"""Reading checkpoints written by real TensorFlow (its tensor-bundle format). Layer L4.

A TF checkpoint `prefix` is `prefix.index` and `prefix.data-NNNNN-of-MMMMM`.
The index is a LevelDB table (data blocks of prefix-compressed entries, an
index block, a 48-byte footer) mapping each tensor name to a serialized
`BundleEntryProto` (dtype, shape, shard, offset, size, masked CRC32C), the
empty key to the `BundleHeaderProto`. The object graph of an object-based
checkpoint (`tf.train.Checkpoint`, a SavedModel's `variables/variables`) is
the string tensor `_CHECKPOINTABLE_OBJECT_GRAPH`, a serialized
`TrackableObjectGraph`: nodes with named children, their tensors
(`attributes`: `VARIABLE_VALUE` -> checkpoint key) and optimizer slots.
The protocol buffers are parsed here by their wire format (a few field
numbers), so no TensorFlow is needed; every tensor's checksum is verified.
"""

from __future__ import annotations

import os
import struct
from typing import Any

import google_crc32c
import ml_dtypes
import numpy as np

from jaxtape._src.core import errors
from jaxtape._src.state import trackable
from jaxtape._src.state.variable import Variable

OBJECT_GRAPH_KEY = "_CHECKPOINTABLE_OBJECT_GRAPH"
VARIABLE_VALUE = "VARIABLE_VALUE"
_MAGIC = 0xDB4775248B80FB57  # LevelDB's table magic number
_FOOTER = 48

# TF's DataType enum (types.proto) -> NumPy; 7 is DT_STRING (object arrays).
_DTYPES = {
    1: np.float32,
    2: np.float64,
    3: np.int32,
    4: np.uint8,
    5: np.int16,
    6: np.int8,
    7: object,
    8: np.complex64,
    9: np.int64,
    10: np.bool_,
    14: ml_dtypes.bfloat16,
    17: np.uint16,
    18: np.complex128,
    19: np.float16,
    22: np.uint32,
    23: np.uint64,
}


# -- protocol buffer wire format -----------------------------------------------------
def _varint(buf, pos: int) -> tuple[int, int]:
    result = shift = 0
    while True:
        b = buf[pos]
        pos += 1
        result |= (b & 0x7F) << shift
        if b < 0x80:
            return result, pos
        shift += 7


def _fields(buf) -> list[tuple[int, Any]]:
    """`(field number, value)` of a message: ints for varints and fixed
    fields, bytes for length-delimited ones."""
    out, pos, end = [], 0, len(buf)
    while pos < end:
        key, pos = _varint(buf, pos)
        number, kind = key >> 3, key & 7
        if kind == 0:
            value, pos = _varint(buf, pos)
        elif kind == 1:
            value, pos = struct.unpack_from("<Q", buf, pos)[0], pos + 8
        elif kind == 2:
            size, pos = _varint(buf, pos)
            value, pos = bytes(buf[pos : pos + size]), pos + size
        elif kind == 5:
            value, pos = struct.unpack_from("<I", buf, pos)[0], pos + 4
        else:
            raise ValueError(f"unsupported protobuf wire type {kind}")
        out.append((number, value))
    return out


def _signed(value: int) -> int:
    return value - (1 << 64) if value >= 1 << 63 else value


class _Entry:
    """A `BundleEntryProto`."""

    def __init__(self, buf: bytes):
        self.dtype, self.shard, self.offset, self.size = 1, 0, 0, 0
        self.shape: tuple = ()
        self.crc32c = None
        self.sliced = False
        for number, value in _fields(buf):
            if number == 1:
                self.dtype = value
            elif number == 2:
                dims = []
                for n, dim in _fields(value):  # TensorShapeProto.dim
                    if n == 2:
                        size = dict(_fields(dim)).get(1, 0)
                        dims.append(_signed(int(size)))
                self.shape = tuple(dims)
            elif number == 3:
                self.shard = value
            elif number == 4:
                self.offset = value
            elif number == 5:
                self.size = value
            elif number == 6:
                self.crc32c = value
            elif number == 7:
                self.sliced = True


# -- the LevelDB table of the index ---------------------------------------------------
def _block(data: bytes, offset: int, size: int, path: str) -> bytes:
    kind = data[offset + size]
    if kind != 0:
        raise NotImplementedError(
            f"{path} has compressed index blocks (LevelDB compression {kind}); "
            "jaxtape reads TF's uncompressed index only. Read it with "
            "tf.train.load_checkpoint."
        )
    return data[offset : offset + size]


def _block_entries(block: bytes):
    """The `(key, value)` pairs of one table block (keys prefix-compressed)."""
    (restarts,) = struct.unpack_from("<I", block, len(block) - 4)
    end = len(block) - 4 - 4 * restarts
    pos, key = 0, b""
    while pos < end:
        shared, pos = _varint(block, pos)
        unshared, pos = _varint(block, pos)
        size, pos = _varint(block, pos)
        key = key[:shared] + block[pos : pos + unshared]
        pos += unshared
        yield key, block[pos : pos + size]
        pos += size


def _read_table(path: str) -> dict[bytes, bytes]:
    with open(path, "rb") as f:
        data = f.read()
    if (
        len(data) < _FOOTER
        or struct.unpack_from("<Q", data, len(data) - 8)[0] != _MAGIC
    ):
        raise errors.DataLossError(
            None,
            None,
            f"Unable to read {path}: not a TensorFlow checkpoint index (no LevelDB "
            "table footer). The file is damaged or of another kind.",
        )
    footer = data[len(data) - _FOOTER :]
    _, pos = _varint(footer, 0)  # (the metaindex block: unused)
    _, pos = _varint(footer, pos)
    index_offset, pos = _varint(footer, pos)
    index_size, _ = _varint(footer, pos)
    out = {}
    for _, handle in _block_entries(_block(data, index_offset, index_size, path)):
        offset, pos = _varint(handle, 0)
        size, _ = _varint(handle, pos)
        out.update(_block_entries(_block(data, offset, size, path)))
    return out


def _mask(crc: int) -> int:
    """LevelDB's/TF's masked CRC32C."""
    return (((crc >> 15) | (crc << 17)) + 0xA282EAD8) & 0xFFFFFFFF


# -- the reader -----------------------------------------------------------------------
def is_tf_checkpoint(prefix) -> bool:
    """Whether `prefix` names a TF checkpoint (`prefix.index` exists)."""
    return os.path.isfile(os.fspath(prefix) + ".index")


class BundleReader:
    """The tensors of a TF checkpoint `prefix`, by name (TF's
    `CheckpointReader`, without TensorFlow)."""

    def __init__(self, prefix):
        self.prefix = os.fspath(prefix)
        table = _read_table(self.prefix + ".index")
        header = dict(_fields(table.pop(b"", b"")))
        self._shards = int(header.get(1, 1))
        if header.get(2, 0):
            raise NotImplementedError(
                f"{self.prefix} was written big-endian; jaxtape reads little-endian "
                "TF checkpoints only."
            )
        self._entries = {k.decode(): _Entry(v) for k, v in table.items()}

    def keys(self) -> list[str]:
        return sorted(self._entries)

    def has_tensor(self, name: str) -> bool:
        return name in self._entries

    def shape(self, name: str) -> tuple:
        return self._entry(name).shape

    def dtype(self, name: str):
        code = self._entry(name).dtype
        if code not in _DTYPES:
            raise NotImplementedError(
                f"{self.prefix}: tensor {name!r} has TF DataType {code}, which "
                "jaxtape does not read."
            )
        return np.dtype(_DTYPES[code])

    def _entry(self, name: str) -> _Entry:
        try:
            return self._entries[name]
        except KeyError:
            raise errors.NotFoundError(
                None, None, f"Key {name} not found in checkpoint"
            ) from None

    def _read(self, entry: _Entry) -> bytes:
        """The entry's bytes, read from its data file (only those bytes)."""
        path = f"{self.prefix}.data-{entry.shard:05d}-of-{self._shards:05d}"
        try:
            with open(path, "rb") as f:
                f.seek(entry.offset)
                return f.read(entry.size)
        except FileNotFoundError:
            raise errors.NotFoundError(
                None,
                None,
                f"The TF checkpoint's data file {path} is missing; copy it "
                f"together with {self.prefix}.index.",
            ) from None

    def get_tensor(self, name: str) -> np.ndarray:
        entry = self._entry(name)
        if entry.sliced:
            raise NotImplementedError(
                f"{self.prefix}: {name!r} is saved in slices (a partitioned "
                "variable); jaxtape does not read those."
            )
        dtype = self.dtype(name)
        raw = self._read(entry)
        value, crc = None, None
        if len(raw) == entry.size:
            if dtype == np.dtype(object):
                value, crc = _strings(raw, entry.shape)
            else:
                crc = _mask(google_crc32c.value(raw))
                value = np.frombuffer(raw, dtype.newbyteorder("<")).astype(dtype)
                value = value.reshape(entry.shape)
        if value is None or (entry.crc32c is not None and crc != entry.crc32c):
            raise errors.DataLossError(
                None,
                None,
                f"The TF checkpoint {self.prefix} is corrupt: the value of {name!r} "
                "does not match its checksum.",
            )
        return value

    def object_graph(self) -> list[dict]:
        """The `TrackableObjectGraph`: per node, `children` (name -> node id),
        `attributes` (name -> checkpoint key) and `slots` ((original node
        id, slot name) -> node id)."""
        if not self.has_tensor(OBJECT_GRAPH_KEY):
            raise errors.NotFoundError(
                None,
                None,
                f"{self.prefix} is a name-based TF checkpoint (no object graph); "
                "jaxtape restores object-based ones (tf.train.Checkpoint).",
            )
        data = bytes(self.get_tensor(OBJECT_GRAPH_KEY).reshape(()).item())
        nodes = []
        for number, node in _fields(data):
            if number != 1:
                continue
            children, attributes, slots = {}, {}, {}
            for n, value in _fields(node):
                fields = _fields(value)
                if n == 1:  # ObjectReference(node_id, local_name)
                    ref = dict(fields)
                    children[ref.get(2, b"").decode()] = ref.get(1, 0)
                elif n == 2:  # SerializedTensor(name, full_name, checkpoint_key)
                    t = dict(fields)
                    attributes[t.get(1, b"").decode()] = t.get(3, b"").decode()
                elif n == 3:  # SlotVariableReference
                    s = dict(fields)
                    key = (s.get(1, 0), s.get(2, b"").decode())
                    slots[key] = s.get(3, 0)
            nodes.append(
                {"children": children, "attributes": attributes, "slots": slots}
            )
        return nodes


def _strings(raw: bytes, shape: tuple) -> tuple[np.ndarray | None, int]:
    """A DT_STRING tensor (`[varint64 length]... [masked CRC32C of the
    lengths] [bytes]...`, TF's `WriteStringTensor`) and its masked CRC32C
    (over each length as a little-endian uint32, that checksum and the
    bytes)."""
    n = int(np.prod(shape)) if shape else 1
    lengths, pos, crc = [], 0, 0
    for _ in range(n):
        length, pos = _varint(raw, pos)
        lengths.append(length)
        crc = google_crc32c.extend(crc, struct.pack("<I", length))
    crc = google_crc32c.extend(crc, raw[pos : pos + 4])
    pos += 4
    out = []
    for length in lengths:
        out.append(raw[pos : pos + length])
        crc = google_crc32c.extend(crc, raw[pos : pos + length])
        pos += length
    if pos != len(raw):
        return None, 0
    return np.array(out, dtype=object).reshape(shape), _mask(crc)


# -- matching TF's object graph to jaxtape objects ------------------------------------
# jaxtape's Keras models hold their layers in these lists; Keras 3 on TF saves
# them as the Functional's `_operations` (a Sequential's under `_functional`),
# InputLayers included: paired by order, counting only layers with Variables.
_KERAS_LAYER_LISTS = {"_stack", "_functional_layers"}
_TF_LAYER_LISTS = (("_functional", "_operations"), ("_operations",), ("_layers",))


def _tf_holds_variables(nodes: list, node_id: int) -> bool:
    stack, seen = [node_id], set()
    while stack:
        i = stack.pop()
        if i in seen:
            continue
        seen.add(i)
        if VARIABLE_VALUE in nodes[i]["attributes"]:
            return True
        stack.extend(nodes[i]["children"].values())
    return False


def _holds_variables(obj) -> bool:
    stack, seen = [obj], set()
    while stack:
        o = stack.pop()
        if id(o) in seen:
            continue
        seen.add(id(o))
        if isinstance(o, Variable):
            return True
        stack.extend(c for _, c in trackable.children(o))
    return False


def _tf_child(nodes: list, node_id: int, name: str) -> int | None:
    """The TF child of `node_id` that jaxtape's child `name` is: the same
    name, or Keras 3's private name (`_kernel`, `_iterations`)."""
    found = nodes[node_id]["children"]
    for candidate in (name, "_" + name):
        if candidate in found:
            return found[candidate]
    return None


def _tf_layer_list(nodes: list, node_id: int) -> list[int]:
    for names in _TF_LAYER_LISTS:
        i = node_id
        for n in names:
            i = nodes[i]["children"].get(n)
            if i is None:
                break
        if i is not None:
            items = nodes[i]["children"]
            return [items[k] for k in sorted(items, key=lambda k: int(k))]
    return []


class Match:
    """TF's object graph `nodes` walked together with jaxtape's objects from
    `roots` (`{name: object}`, as `trackable.Graph` takes them), breadth
    first: `variables` is `{jaxtape path: (Variable, TF checkpoint key)}`;
    `deferred` is `[(Keras layer, attribute, TF key)]` for the values of a
    layer's own Variables that it has not created yet (not built: TF's
    deferred restoration), named as jaxtape's layers name them (Keras 3's
    `_kernel` as `kernel`)."""

    def __init__(self, roots: dict, nodes: list):
        self.nodes = nodes
        self.variables: dict[str, tuple[Variable, str]] = {}
        self.deferred: list[tuple[object, str, str]] = []
        visits = []  # (object, TF node, TF children its own children took)
        queue = [(name, obj, _tf_child(nodes, 0, name)) for name, obj in roots.items()]
        seen: set[int] = set()
        while queue:
            path, obj, node_id = queue.pop(0)
            if node_id is None or id(obj) in seen:
                continue
            seen.add(id(obj))
            attributes = nodes[node_id]["attributes"]
            if isinstance(obj, Variable):
                if VARIABLE_VALUE in attributes:
                    self.variables[path] = (obj, attributes[VARIABLE_VALUE])
                continue
            taken: set[int] = set()
            visits.append((obj, node_id, taken))
            for item in self._children(path, obj, node_id):
                if item[2] is not None:
                    taken.add(item[2])
                queue.append(item)
        matched = {key for _, key in self.variables.values()}
        for obj, node_id, taken in visits:
            if hasattr(obj, "add_weight"):  # (a Keras layer or model)
                self._defer(obj, node_id, taken, matched)

    def _children(self, path: str, obj, node_id: int):
        """`(path, jaxtape child, TF node)` for the children of `obj`."""
        nodes = self.nodes
        keras_variables = getattr(obj, "_keras_variables", None)
        listed = _tf_child(nodes, node_id, "variables")
        if keras_variables is not None and listed is not None:
            # A Keras 3 optimizer: its `_variables` in Keras's order (the
            # counter, the learning rate, then the slots), as jaxtape's are.
            items = nodes[listed]["children"]
            for i, v in enumerate(keras_variables()):
                yield (f"{path}/_variables/{i}", v, items.get(str(i)))
        for name, child in trackable.children(obj):
            child_path = f"{path}/{trackable._escape(name)}"
            child_id = _tf_child(nodes, node_id, name)
            if (
                child_id is None
                and name in _KERAS_LAYER_LISTS
                and isinstance(child, (list, tuple))
            ):
                mine = [(i, x) for i, x in enumerate(child) if _holds_variables(x)]
                theirs = [
                    i
                    for i in _tf_layer_list(nodes, node_id)
                    if _tf_holds_variables(nodes, i)
                ]
                for (i, layer), tf_id in zip(mine, theirs):
                    yield (f"{child_path}/{i}", layer, tf_id)
                continue
            yield (child_path, child, child_id)

    def _defer(self, layer, node_id: int, taken: set, matched: set) -> None:
        """The layer's own saved Variables (its direct children in TF's
        graph) that no jaxtape Variable took: the ones `build` makes."""
        for name, i in self.nodes[node_id]["children"].items():
            key = self.nodes[i]["attributes"].get(VARIABLE_VALUE)
            if i in taken or key is None or key in matched:
                continue
            matched.add(key)
            name = name[1:] if name.startswith("_") else name
            self.deferred.append((layer, trackable._escape(name), key))


def variable_keys(nodes: list) -> list[str]:
    """The checkpoint keys of all saved Variables (one per object)."""
    return [
        n["attributes"][VARIABLE_VALUE]
        for n in nodes
        if VARIABLE_VALUE in n["attributes"]
    ]
