"""TF's `tf.io`: files (`gfile`), TFRecord writing, Example protos and
parsing, tensor serialization, encodings and image codecs. Layer L4
(beside `data`, which it does not import); host code, as TF's CPU kernels.
"""
