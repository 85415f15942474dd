"""TF's `Example` protocol buffers (`tf.train.Example`, `Feature`, ...).

The messages are built here from descriptors with TF's field names and
numbers (`tensorflow/core/example/feature.proto`, `example.proto`), in a
private descriptor pool, so that `SerializeToString()` gives TF's bytes and
`FromString` reads TF's, without TensorFlow and without clashing with TF's
own registration when both are imported.

Layer L4 (`io`): imports no jaxtape module.
"""

from __future__ import annotations

from google.protobuf import descriptor_pb2, descriptor_pool, message_factory

_F = descriptor_pb2.FieldDescriptorProto
_REPEATED, _OPTIONAL = _F.LABEL_REPEATED, _F.LABEL_OPTIONAL


def _field(message, name, number, kind, label=_OPTIONAL, type_name=None, **opt):
    f = message.field.add(name=name, number=number, type=kind, label=label)
    if type_name:
        f.type_name = type_name
    if opt:
        f.options.packed = opt["packed"]
    return f


def _map(message, entry, field, value_type):
    nested = message.nested_type.add(name=entry)
    nested.options.map_entry = True
    _field(nested, "key", 1, _F.TYPE_STRING)
    _field(nested, "value", 2, _F.TYPE_MESSAGE, type_name=value_type)
    _field(
        message,
        field,
        1,
        _F.TYPE_MESSAGE,
        _REPEATED,
        f".tensorflow.{message.name}.{entry}",
    )


def _feature_file(packed_lists: bool = True) -> descriptor_pb2.FileDescriptorProto:
    fd = descriptor_pb2.FileDescriptorProto(
        name="tensorflow/core/example/feature.proto",
        package="tensorflow",
        syntax="proto3",
    )
    for name, kind, packed in (
        ("BytesList", _F.TYPE_BYTES, False),
        ("FloatList", _F.TYPE_FLOAT, True),
        ("Int64List", _F.TYPE_INT64, True),
    ):
        m = fd.message_type.add(name=name)
        if packed:
            _field(m, "value", 1, kind, _REPEATED, packed=packed_lists)
        else:
            _field(m, "value", 1, kind, _REPEATED)
    feature = fd.message_type.add(name="Feature")
    feature.oneof_decl.add(name="kind")
    kinds = (("bytes_list", "BytesList"), ("float_list", "FloatList"),
             ("int64_list", "Int64List"))  # fmt: skip
    for number, (name, kind) in enumerate(kinds, 1):
        f = _field(
            feature, name, number, _F.TYPE_MESSAGE, type_name=f".tensorflow.{kind}"
        )
        f.oneof_index = 0
    _map(fd.message_type.add(name="Features"), "FeatureEntry", "feature",
         ".tensorflow.Feature")  # fmt: skip
    feature_list = fd.message_type.add(name="FeatureList")
    _field(
        feature_list, "feature", 1, _F.TYPE_MESSAGE, _REPEATED, ".tensorflow.Feature"
    )
    _map(fd.message_type.add(name="FeatureLists"), "FeatureListEntry",
         "feature_list", ".tensorflow.FeatureList")  # fmt: skip
    return fd


def _example_file() -> descriptor_pb2.FileDescriptorProto:
    fd = descriptor_pb2.FileDescriptorProto(
        name="tensorflow/core/example/example.proto",
        package="tensorflow",
        syntax="proto3",
        dependency=["tensorflow/core/example/feature.proto"],
    )
    example = fd.message_type.add(name="Example")
    _field(example, "features", 1, _F.TYPE_MESSAGE, type_name=".tensorflow.Features")
    sequence = fd.message_type.add(name="SequenceExample")
    _field(sequence, "context", 1, _F.TYPE_MESSAGE, type_name=".tensorflow.Features")
    _field(sequence, "feature_lists", 2, _F.TYPE_MESSAGE,
           type_name=".tensorflow.FeatureLists")  # fmt: skip
    return fd


_POOL = descriptor_pool.DescriptorPool()
_POOL.Add(_feature_file())
_POOL.Add(_example_file())
# The same messages with unpacked number lists: the encoding TF's C++ JSON
# conversion (`decode_json_example`) writes.
_UNPACKED_POOL = descriptor_pool.DescriptorPool()
_UNPACKED_POOL.Add(_feature_file(packed_lists=False))
_UNPACKED_POOL.Add(_example_file())


def _message(name: str, pool=_POOL):
    cls = message_factory.GetMessageClass(pool.FindMessageTypeByName(name))
    cls.__module__ = __name__
    return cls


BytesList = _message("tensorflow.BytesList")
FloatList = _message("tensorflow.FloatList")
Int64List = _message("tensorflow.Int64List")
Feature = _message("tensorflow.Feature")
Features = _message("tensorflow.Features")
FeatureList = _message("tensorflow.FeatureList")
FeatureLists = _message("tensorflow.FeatureLists")
Example = _message("tensorflow.Example")
SequenceExample = _message("tensorflow.SequenceExample")

UnpackedExample = _message("tensorflow.Example", _UNPACKED_POOL)
