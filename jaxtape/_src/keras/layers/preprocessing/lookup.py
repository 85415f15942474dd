"""Keras's hashing and lookup layers: Hashing, IntegerLookup, StringLookup.
Layer L5.

Strings live on the host (string tensors, `jaxtape.string`, hold NumPy
arrays of bytes), and these layers run eagerly on the host (as Keras runs
them on TF's CPU ops), returning integer or encoded Tensors (string tensors
for `StringLookup(invert=True)`). Called inside a
compiled function (`jaxtape.function`, traced values) they raise a
TypeError that says to apply them in the input pipeline (`Dataset.map`) or
before the compiled step. Hash values are TF's (FarmHash Fingerprint64,
`farmhash.py`), so bins match tf.keras's.
"""

from __future__ import annotations

import re
from typing import Any

import jax
import jax.core
import numpy as np

from jaxtape._src.core import errors
from jaxtape._src.core.tensor import Tensor
from jaxtape._src.keras.keras_tensor import KerasTensor, Node, flatten, map_structure
from jaxtape._src.keras.layers.base import Layer
from jaxtape._src.keras.layers.preprocessing.farmhash import fingerprint64
from jaxtape._src.keras.layers.preprocessing.numeric import _batches, _encode
from jaxtape._src.structured import strings
from jaxtape._src.structured.string_ops import siphash

__all__ = [
    "Hashing",
    "IntegerLookup",
    "StringLookup",
    "TextVectorization",
]

_MODES = ("int", "one_hot", "multi_hot", "count")


def _host(layer, inputs) -> np.ndarray:
    """The inputs as a NumPy array on the host (strings as `str`)."""
    if isinstance(inputs, Tensor):
        if isinstance(inputs._v, jax.core.Tracer):
            raise TypeError(
                f"{type(layer).__name__} layer {layer.name!r} runs on the host "
                "(strings are host values in jaxtape) and cannot be called inside "
                "a compiled function. Apply it in the input pipeline "
                "(`dataset.map(layer)`) or before the `jaxtape.function` step."
            )
        inputs = inputs.numpy()  # (a StringTensor's: bytes, decoded below)
    arr = np.asarray(inputs)
    if arr.dtype.kind in "SO":
        arr = np.vectorize(
            lambda v: v.decode("utf-8") if isinstance(v, bytes) else str(v),
            otypes=[object],
        )(arr)
        arr = arr.astype(str) if arr.size else arr.astype("U1")
    return arr


def _host_call(layer, inputs, call, free_axes=()):
    """`call(inputs)` for a layer that runs on the host; on KerasTensors (a
    functional model being built, or read from a `.keras` file) the call is
    recorded as a Node whose outputs take the shape (batch and `free_axes`
    unknown) and dtype of a call on placeholders: zeros, or empty strings."""
    if not any(isinstance(t, KerasTensor) for t in flatten(inputs)):
        return call(inputs)

    def placeholder(t):
        if not isinstance(t, KerasTensor):
            return t
        shape = tuple(1 if d is None else d for d in t.shape.as_list())
        if t.dtype.name == "string":
            return np.full(shape, "", dtype=object)
        return np.zeros(shape, t.dtype.as_numpy_dtype)

    out = call(map_structure(placeholder, inputs))
    node = Node(layer, inputs, (), {})
    node.index = len(layer.__dict__.setdefault("_inbound_nodes", []))
    layer._inbound_nodes.append(node)

    def symbolic(t):
        shape = [None if i in free_axes else d for i, d in enumerate(t.shape)]
        return KerasTensor((None, *shape[1:]), t.dtype, name=layer.name, producer=node)

    node.outputs = map_structure(symbolic, out)
    return node.outputs


def _hash_bins(values: np.ndarray, bins: int, salt=None) -> np.ndarray:
    """TF's `to_hash_bucket_fast` of each value (numbers as `as_string`), or
    with a `salt` `[k0, k1]` its keyed `to_hash_bucket_strong` (SipHash)."""
    if values.dtype.kind == "f":
        values = values.astype(np.int64)
    if salt is None:
        hash64 = fingerprint64
    else:
        k0, k1 = (int(k) & ((1 << 64) - 1) for k in salt)

        def hash64(data: bytes) -> int:
            return siphash(k0, k1, data)

    flat = [hash64(str(v).encode("utf-8")) % bins for v in values.reshape(-1).tolist()]
    return np.asarray(flat, np.int64).reshape(values.shape)


def _encoded(layer, ids: np.ndarray, depth: int, dtype: str):
    """Keras's `encode_categorical_inputs` of host ids as a Tensor (`dtype`
    for the encoded modes: the layer's, or int64 for lookups, as Keras)."""
    if layer.output_mode == "int":
        return Tensor(jax.numpy.asarray(ids.astype(np.int64)))
    if layer.output_mode == "one_hot" and ids.ndim and ids.shape[-1] == 1:
        ids = ids[..., 0]
    return _encode(ids, np.True_, depth, layer.output_mode, dtype)


class Hashing(Layer):
    """Hashes values into `num_bins` bins (Keras's `Hashing`), with TF's
    FarmHash (strings; numbers hash their decimal text), so the bins are
    tf.keras's. `mask_value` gets bin 0; `output_mode` `'int'` (int64) or
    one of CategoryEncoding's modes. Eager only (host strings).

    A `salt` (two integers, or one used twice) keys TF's SipHash
    (`to_hash_bucket_strong`), as Keras.

    Differences from Keras: `sparse=True` raises NotImplementedError.
    """

    _RUNS_ON_HOST = True

    def __init__(self, num_bins, mask_value=None, salt=None, output_mode="int",
                 sparse=False, **kwargs):  # fmt: skip
        if salt is not None:
            if isinstance(salt, (tuple, list)) and len(salt) == 2:
                salt = list(salt)
            elif isinstance(salt, int):
                salt = [salt, salt]
            else:
                raise ValueError(
                    "The `salt` argument for `Hashing` can only be a tuple of "
                    "size 2 integers, or a single integer. "
                    f"Received: salt={salt}."
                )
        if sparse:
            raise NotImplementedError("Hashing(sparse=True) is not supported.")
        kwargs.setdefault("dtype", "int64" if output_mode == "int" else "float32")
        super().__init__(**kwargs)
        if num_bins is None or num_bins <= 0:
            raise ValueError(
                "The `num_bins` for `Hashing` cannot be `None` or non-positive "
                f"values. Received: num_bins={num_bins}."
            )
        if output_mode not in _MODES:
            raise ValueError(
                "Invalid value for argument `output_mode`. Expected one of "
                f"{_MODES}. Received: output_mode={output_mode}"
            )
        self.num_bins, self.mask_value = int(num_bins), mask_value
        self.output_mode, self.salt, self.sparse = output_mode, salt, False
        self._autocast = False

    def __call__(self, inputs: Any, *args: Any, **kwargs: Any) -> Any:
        return _host_call(self, inputs, lambda x: self.call(_host(self, x)))

    def call(self, inputs):
        values = _host(self, inputs)
        bins = self.num_bins
        mask = None
        if self.mask_value is not None and bins > 1:
            bins -= 1
            mask = values == np.asarray(self.mask_value).astype(values.dtype)
        out = _hash_bins(values, bins, self.salt)
        if mask is not None:
            out = np.where(mask, 0, out + 1)
        return _encoded(self, out, self.num_bins, self.dtype)

    def get_config(self):
        return {
            **super().get_config(),
            "num_bins": self.num_bins,
            "salt": self.salt,
            "mask_value": self.mask_value,
            "output_mode": self.output_mode,
            "sparse": self.sparse,
        }


def _check_adaptable(layer) -> None:
    if layer._static_vocab:
        raise ValueError(
            f"Cannot adapt layer '{layer.name}' after setting a static vocabulary "
            "via `vocabulary` argument or `set_vocabulary()` method."
        )


class _IndexLookup(Layer):
    """Keras's `IndexLookup` on the host: vocabulary (given or adapted by
    frequency, ties by token, descending, as Keras), mask and OOV indices
    first, `invert`, and CategoryEncoding's output modes."""

    _RUNS_ON_HOST = True

    _DEFAULT_OOV: Any = None
    _VOCABULARY_DTYPE = "string"

    def __init__(self, max_tokens=None, num_oov_indices=1, mask_token=None,
                 oov_token=None, vocabulary=None, invert=False, output_mode="int",
                 sparse=False, pad_to_max_tokens=False, idf_weights=None,
                 **kwargs):  # fmt: skip
        for arg, value in (("sparse", sparse), ("idf_weights", idf_weights)):
            if value:
                raise NotImplementedError(
                    f"{type(self).__name__}({arg}=...) is not supported by jaxtape."
                )
        if output_mode == "tf_idf":
            raise NotImplementedError(
                f"{type(self).__name__}(output_mode='tf_idf') is not supported by "
                "jaxtape; use 'count' and weigh the counts."
            )
        vocabulary_dtype = kwargs.pop("vocabulary_dtype", self._VOCABULARY_DTYPE)
        encoding = kwargs.pop("encoding", "utf-8")
        oov_method = kwargs.pop("oov_method", "floormod")
        salt = kwargs.pop("salt", None)
        frozen_size = kwargs.pop("vocabulary_size", None)  # (a Keras config's)
        static = kwargs.pop("has_input_vocabulary", None)
        if oov_method not in ("floormod", "farmhash"):
            raise ValueError(
                "Invalid value for argument `oov_method`. Expected one of "
                f"('floormod', 'farmhash'). Received: oov_method={oov_method}"
            )
        if salt is not None:
            raise NotImplementedError(
                f"{type(self).__name__}(salt=...) (TF's SipHash "
                "`to_hash_bucket_strong`) is not supported by jaxtape; leave "
                "`salt` unset."
            )
        if str(encoding).lower().replace("_", "-") not in ("utf-8", "utf8"):
            raise NotImplementedError(
                f"{type(self).__name__}(encoding={encoding!r}): jaxtape reads "
                "strings as UTF-8 only."
            )
        if vocabulary_dtype not in ("int32", "int64", "string"):
            raise ValueError(
                f"{type(self).__name__}: `vocabulary_dtype` must be 'int32' or "
                f"'int64' (or 'string'). Received: vocabulary_dtype={vocabulary_dtype}"
            )
        super().__init__(**kwargs)
        self.vocabulary_dtype, self.encoding = vocabulary_dtype, encoding
        self.oov_method, self.salt = oov_method, salt
        self._frozen_vocab_size = frozen_size
        if output_mode not in _MODES:
            raise ValueError(
                "Invalid value for argument `output_mode`. Expected one of "
                f"{_MODES}. Received: output_mode={output_mode}"
            )
        if num_oov_indices < 0:
            raise ValueError(
                "`num_oov_indices` must be greater than or equal to 0. "
                f"Received: num_oov_indices={num_oov_indices}"
            )
        if invert and output_mode != "int":
            raise ValueError(
                "`output_mode` must be `'int'` when `invert` is true. Received: "
                f"output_mode={output_mode}"
            )
        self.max_tokens, self.num_oov_indices = max_tokens, int(num_oov_indices)
        self.mask_token = mask_token
        self.oov_token = self._DEFAULT_OOV if oov_token is None else oov_token
        self.invert, self.output_mode = invert, output_mode
        self.pad_to_max_tokens, self.sparse = pad_to_max_tokens, False
        self._autocast = False
        self._vocab: list = []
        # A vocabulary given to the constructor is static: `adapt` raises (Keras).
        self._static_vocab = vocabulary is not None if static is None else bool(static)
        if vocabulary is not None:
            self.set_vocabulary(vocabulary)

    def _key(self, v):
        raise NotImplementedError

    def _masks_to_zero(self) -> bool:
        return self.mask_token is not None and self.output_mode == "int"

    def _reserved(self) -> list:
        # (Keras's: the mask token has an id in 'int' mode only)
        head = [] if not self._masks_to_zero() else [self._key(self.mask_token)]
        return head + [self._key(self.oov_token)] * self.num_oov_indices

    def set_vocabulary(self, vocabulary, idf_weights=None) -> None:
        """Sets the vocabulary (without the mask and OOV tokens)."""
        if idf_weights is not None:
            raise NotImplementedError("idf_weights are not supported by jaxtape.")
        vocab = [self._key(v) for v in np.asarray(vocabulary).reshape(-1).tolist()]
        if len(set(vocab)) != len(vocab):
            repeated = sorted({v for v in vocab if vocab.count(v) > 1})
            raise ValueError(
                "The passed vocabulary has at least one repeated term. Please "
                f"uniquify your dataset. The repeated terms are: {repeated}"
            )
        reserved = set(self._reserved())
        if any(v in reserved for v in vocab):
            raise ValueError(
                f"Found reserved tokens in `vocabulary`: {sorted(reserved)}. The "
                "mask and OOV tokens are added by the layer; remove them."
            )
        new_size = len(self._reserved()) + len(vocab)
        fixed = self.output_mode != "int" and not self.pad_to_max_tokens
        if fixed and self._frozen_vocab_size not in (None, new_size):
            raise RuntimeError(  # (Keras's: the encoded width is fixed)
                f"When using `output_mode={self.output_mode}` and "
                "`pad_to_max_tokens=False`, the vocabulary size cannot be changed "
                f"after the layer is called. Old vocab size is "
                f"{self._frozen_vocab_size}, new vocab size is {new_size}"
            )
        self._frozen_vocab_size = new_size  # (Keras's `vocabulary_size` entry)
        self._vocab = vocab
        self._index = {v: i for i, v in enumerate(self._reserved() + vocab)}

    def adapt(self, data, steps=None) -> None:
        """Builds the vocabulary from `data`, most frequent first."""
        _check_adaptable(self)
        _, batches = _batches(data, type(self).__name__)
        counts: dict = {}
        for i, batch in enumerate(batches):
            if steps is not None and i >= steps:
                break
            for v in _host(self, batch).reshape(-1).tolist():
                key = self._key(v)
                counts[key] = counts.get(key, 0) + 1
        for token in self._reserved():
            counts.pop(token, None)
        tokens = sorted(counts, key=lambda t: (counts[t], t), reverse=True)
        if self.max_tokens is not None:
            tokens = tokens[: max(self.max_tokens - len(self._reserved()), 0)]
        self.set_vocabulary(tokens)

    def get_vocabulary(self, include_special_tokens=True) -> list:
        vocab = list(self._vocab)
        return self._reserved() + vocab if include_special_tokens else vocab

    def vocabulary_size(self) -> int:
        return len(self._reserved()) + len(self._vocab)

    def __call__(self, inputs: Any, *args: Any, **kwargs: Any) -> Any:
        return _host_call(self, inputs, lambda x: self.call(_host(self, x)))

    def call(self, inputs):
        values = _host(self, inputs)
        if not self._vocab and not hasattr(self, "_index"):
            self._index = {v: i for i, v in enumerate(self._reserved())}
        if self.invert:
            table = self.get_vocabulary()
            oov = self._key(self.oov_token)
            flat = [
                table[i] if 0 <= i < len(table) else oov
                for i in values.reshape(-1).tolist()
            ]
            if self.mask_token is not None:
                flat = [
                    self._key(self.mask_token) if i == 0 else f
                    for i, f in zip(values.reshape(-1).tolist(), flat)
                ]
            return strings.convert(np.asarray(flat).reshape(values.shape))
        start = 1 if self._masks_to_zero() else 0
        keys = [self._key(v) for v in values.reshape(-1).tolist()]
        ids = []
        for k in keys:
            if self.mask_token is not None and k == self._key(self.mask_token):
                ids.append(start - 1)  # (0; in other modes -1: no id)
            elif k in self._index and self._index[k] >= start + self.num_oov_indices:
                ids.append(self._index[k])
            elif self.num_oov_indices == 0:
                raise errors.invalid_argument(
                    "When `num_oov_indices=0` all inputs should be in vocabulary, "
                    f"found OOV values [{k}], consider setting `num_oov_indices=1`.",
                    None,
                )
            else:
                ids.append(start + self._oov_bucket(k))
        out = np.asarray(ids, np.int64).reshape(values.shape)
        depth = (
            self.max_tokens
            if self.pad_to_max_tokens and self.max_tokens
            else self.vocabulary_size()
        )
        out = np.where(out < 0, depth, out)  # (masked: past the last id, dropped)
        return _encoded(self, out, depth, "int64")

    def _oov_bucket(self, key) -> int:
        if self.num_oov_indices == 1:
            return 0
        return fingerprint64(str(key).encode("utf-8")) % self.num_oov_indices

    def get_config(self):
        return {
            **super().get_config(),
            "max_tokens": self.max_tokens,
            "num_oov_indices": self.num_oov_indices,
            "mask_token": self.mask_token,
            "oov_token": self.oov_token,
            "invert": self.invert,
            "output_mode": self.output_mode,
            "pad_to_max_tokens": self.pad_to_max_tokens,
            "vocabulary": list(self._vocab) or None,
            "sparse": False,
            "idf_weights": None,
            "vocabulary_size": self._frozen_vocab_size,
            "oov_method": self.oov_method,
            "salt": self.salt,
            **self._dtype_entry(),
        }

    def _dtype_entry(self) -> dict:
        return {"vocabulary_dtype": self.vocabulary_dtype}


class StringLookup(_IndexLookup):
    """Maps strings to integer ids (Keras's `StringLookup`): index 0 is the
    mask token if there is one, then `num_oov_indices` OOV ids (`[UNK]`;
    several are FarmHash buckets, as Keras), then the vocabulary. Host-side
    and eager: inputs are NumPy string arrays or lists; ids are int64
    Tensors (`invert=True` maps ids back to a NumPy string array).

    Differences from Keras: `tf_idf`, `sparse`, `idf_weights` and
    vocabulary files raise NotImplementedError.
    """

    _DEFAULT_OOV = "[UNK]"

    def __init__(self, max_tokens=None, num_oov_indices=1, mask_token=None,
                 oov_token="[UNK]", vocabulary=None, idf_weights=None, invert=False,
                 output_mode="int", pad_to_max_tokens=False, sparse=False,
                 encoding="utf-8", name=None, salt=None, **kwargs):  # fmt: skip
        # (Keras's argument order, so positional arguments bind as there)
        super().__init__(
            max_tokens=max_tokens, num_oov_indices=num_oov_indices,
            mask_token=mask_token, oov_token=oov_token, vocabulary=vocabulary,
            idf_weights=idf_weights, invert=invert, output_mode=output_mode,
            pad_to_max_tokens=pad_to_max_tokens, sparse=sparse, encoding=encoding,
            name=name, salt=salt, **kwargs,
        )  # fmt: skip

    def _key(self, v):
        return v.decode("utf-8") if isinstance(v, bytes) else str(v)

    def _dtype_entry(self) -> dict:
        return {"encoding": self.encoding}  # (Keras's StringLookup lists no dtype)


class IntegerLookup(_IndexLookup):
    """Maps integers to contiguous ids (Keras's `IntegerLookup`): as
    StringLookup, with OOV token -1; several OOV ids are `value mod
    num_oov_indices`, as Keras's default. Host-side and eager.

    Differences from Keras: as StringLookup's.
    """

    _DEFAULT_OOV = -1
    _VOCABULARY_DTYPE = "int64"

    def __init__(self, max_tokens=None, num_oov_indices=1, mask_token=None,
                 oov_token=-1, vocabulary=None, vocabulary_dtype="int64",
                 idf_weights=None, invert=False, output_mode="int", sparse=False,
                 pad_to_max_tokens=False, oov_method="floormod", salt=None,
                 name=None, **kwargs):  # fmt: skip
        # (Keras's argument order, so positional arguments bind as there)
        super().__init__(
            max_tokens=max_tokens, num_oov_indices=num_oov_indices,
            mask_token=mask_token, oov_token=oov_token, vocabulary=vocabulary,
            vocabulary_dtype=vocabulary_dtype, idf_weights=idf_weights,
            invert=invert, output_mode=output_mode, sparse=sparse,
            pad_to_max_tokens=pad_to_max_tokens, oov_method=oov_method, salt=salt,
            name=name, **kwargs,
        )  # fmt: skip

    def _key(self, v):
        return int(v)

    def _oov_bucket(self, key) -> int:
        if self.oov_method == "farmhash":  # (FarmHash of the decimal text)
            return super()._oov_bucket(key)
        return int(np.mod(key, self.num_oov_indices)) if self.num_oov_indices else 0


_PUNCTUATION = re.compile(r'[!"#$%&()\*\+,-\./:;<=>?@\[\\\]^_`{|}~\']')
_ASCII_LOWER = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz")


class TextVectorization(Layer):
    """Turns strings into token ids or encodings (Keras's
    `TextVectorization`): standardize (`'lower_and_strip_punctuation'`,
    `'lower'` (ASCII, as TF's `strings.lower`), `'strip_punctuation'`, None
    or a callable on one string), split (`'whitespace'`, `'character'`, None
    or a callable returning a list), `ngrams` (n: widths 1..n, or a tuple
    of widths), then a StringLookup with mask token `''`. `output_mode`
    `'int'` pads rows with 0 (to `output_sequence_length` when set,
    truncating), or CategoryEncoding's modes. Inputs are NumPy string arrays
    or lists of shape `(n,)` or `(n, 1)`; host-side and eager.

    Differences from Keras: `tf_idf`, `ragged=True`, `sparse=True` and
    `idf_weights` raise NotImplementedError; callables get Python strings
    (Keras's get TF string tensors).
    """

    _RUNS_ON_HOST = True

    def __init__(self, max_tokens=None, standardize="lower_and_strip_punctuation",
                 split="whitespace", ngrams=None, output_mode="int",
                 output_sequence_length=None, pad_to_max_tokens=False,
                 vocabulary=None, idf_weights=None, sparse=False, ragged=False,
                 encoding="utf-8", name=None, **kwargs):  # fmt: skip
        if ragged:
            raise NotImplementedError(
                "TextVectorization(ragged=True) is not supported by jaxtape (no "
                "RaggedTensor outputs here); rows are padded with 0."
            )
        if not (
            standardize is None
            or callable(standardize)
            or standardize
            in ("lower_and_strip_punctuation", "lower", "strip_punctuation")
        ):
            raise ValueError(
                "Invalid value for argument `standardize`. Expected one of "
                "('lower_and_strip_punctuation', 'lower', 'strip_punctuation'), a "
                f"callable or None. Received: standardize={standardize}"
            )
        if not (
            split is None or callable(split) or split in ("whitespace", "character")
        ):
            raise ValueError(
                "Invalid value for argument `split`. Expected one of ('whitespace', "
                f"'character'), a callable or None. Received: split={split}"
            )
        if output_mode != "int" and output_sequence_length is not None:
            raise ValueError(
                "`output_sequence_length` must not be set if `output_mode` is not "
                f"'int'. Received output_sequence_length={output_sequence_length}."
            )
        self._ngrams_arg = ngrams  # (as given, for the config: Keras's)
        if isinstance(ngrams, int):
            ngrams = tuple(range(1, ngrams + 1))
        vocabulary_size = kwargs.pop("vocabulary_size", None)
        static = kwargs.pop("has_input_vocabulary", None)
        super().__init__(name=name, **kwargs)
        if output_mode == "tf_idf" or idf_weights is not None or sparse:
            raise NotImplementedError(
                "TextVectorization's tf_idf mode, idf_weights and sparse=True are "
                "not supported by jaxtape."
            )
        if output_mode not in ("int", "multi_hot", "count"):
            raise ValueError(
                "Invalid value for argument `output_mode`. Expected one of "
                "('int', 'multi_hot', 'count', 'tf_idf'). Received: "
                f"output_mode={output_mode}"
            )
        # Ids from an int lookup; Keras's vocabulary has the mask token ''
        # only in 'int' mode.
        self._lookup = StringLookup(
            max_tokens=max_tokens,
            vocabulary=vocabulary,
            mask_token="" if output_mode == "int" else None,
            name=f"{self.name}_lookup",
            vocabulary_size=vocabulary_size,
            has_input_vocabulary=static,
        )
        self._max_tokens, self._standardize, self._split = (
            max_tokens,
            standardize,
            split,
        )
        self._ngrams, self._output_mode = ngrams, output_mode
        self._output_sequence_length = output_sequence_length
        self._pad_to_max_tokens, self._encoding = pad_to_max_tokens, encoding
        self._autocast = False

    def _tokens(self, inputs) -> list:
        values = _host(self, inputs)
        if values.ndim > 1:
            if values.shape[-1] != 1:
                raise ValueError(
                    "When using `TextVectorization` to tokenize strings, the input "
                    "rank must be 1 or the last shape dimension must be 1. "
                    f"Received: inputs.shape={values.shape} with rank={values.ndim}"
                )
            values = values[..., 0]
        rows = []
        for text in values.reshape(-1).tolist():
            text = text.decode(self._encoding) if isinstance(text, bytes) else str(text)
            if self._standardize in ("lower", "lower_and_strip_punctuation"):
                text = text.translate(_ASCII_LOWER)
            if self._standardize in (
                "strip_punctuation",
                "lower_and_strip_punctuation",
            ):
                text = _PUNCTUATION.sub("", text)
            if callable(self._standardize):
                text = self._standardize(text)
            if self._split is None:
                tokens = [text]
            elif self._split == "whitespace":
                tokens = text.split()
            elif self._split == "character":
                tokens = list(text)
            else:
                split: Any = self._split  # a callable here
                tokens = list(split(text))
            if self._ngrams is not None:
                tokens = [
                    " ".join(tokens[i : i + n])
                    for n in self._ngrams
                    for i in range(len(tokens) - n + 1)
                ]
            rows.append(tokens)
        return rows

    def adapt(self, data, batch_size=None, steps=None) -> None:
        """Builds the vocabulary from the standardized, split tokens."""
        _check_adaptable(self._lookup)
        _, batches = _batches(data, "TextVectorization")
        tokens = []
        for i, batch in enumerate(batches):
            if steps is not None and i >= steps:
                break
            tokens.extend(t for row in self._tokens(batch) for t in row)
        self._lookup.adapt([np.asarray(tokens, dtype=str)])

    def get_vocabulary(self, include_special_tokens=True) -> list:
        return self._lookup.get_vocabulary(include_special_tokens)

    def vocabulary_size(self) -> int:
        return self._lookup.vocabulary_size()

    def set_vocabulary(self, vocabulary, idf_weights=None) -> None:
        self._lookup.set_vocabulary(vocabulary, idf_weights)

    def __call__(self, inputs: Any, *args: Any, **kwargs: Any) -> Any:
        ragged = self._output_mode == "int" and self._output_sequence_length is None
        return _host_call(self, inputs, self.call, free_axes=(1,) if ragged else ())

    def call(self, inputs):
        rows = self._tokens(inputs)
        if self._output_mode != "int":
            depth = (
                self._max_tokens
                if self._pad_to_max_tokens and self._max_tokens
                else self.vocabulary_size()
            )
            out = np.zeros((len(rows), depth), np.int64)
            for r, row in enumerate(rows):
                if row:
                    ids = self._lookup(np.asarray(row, dtype=str)).numpy()
                    out[r] = _rowwise(self._output_mode, ids, depth)
            return Tensor(jax.numpy.asarray(out))
        width = max((len(r) for r in rows), default=0)
        if self._output_sequence_length is not None:
            width = self._output_sequence_length
        out = np.zeros((len(rows), width), np.int64)
        for r, row in enumerate(rows):
            row = row[:width]
            if row:
                out[r, : len(row)] = self._lookup(np.asarray(row, dtype=str)).numpy()
        return Tensor(jax.numpy.asarray(out))

    def get_config(self):
        return {
            **super().get_config(),
            "max_tokens": self._max_tokens,
            "standardize": self._standardize,
            "split": self._split,
            "ngrams": self._ngrams_arg,
            "output_mode": self._output_mode,
            "output_sequence_length": self._output_sequence_length,
            "pad_to_max_tokens": self._pad_to_max_tokens,
            "vocabulary": self._lookup.get_vocabulary(False) or None,
            "encoding": self._encoding,
            "sparse": False,
            "ragged": False,
            "idf_weights": None,
            "vocabulary_size": self.vocabulary_size(),
        }


def _rowwise(mode, ids, depth):
    """One row's multi-hot or count vector."""
    counts = np.bincount(ids, minlength=depth)[:depth]
    return counts if mode == "count" else (counts > 0).astype(np.int64)
