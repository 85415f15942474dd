"""Keras's `keras.utils.FeatureSpace`: one preprocessing step for a dict of
structured features (numbers, categories, crosses) into one vector. Layer L5.

Keras's FeatureSpace runs its preprocessors as TF data ops; here they run
eagerly, on the host for the lookup and hashing layers (whose strings are
NumPy arrays in jaxtape), as a step of the input pipeline: `adapt` it on the
training data, then map it over the dataset. The encodings are Keras's:
each feature's preprocessor (identity, `Rescaling`, `Normalization`,
`Discretization`, `IntegerLookup`, `StringLookup`, `Hashing`), crosses by
`HashedCrossing`, one-hot features as `CategoryEncoding(multi_hot)`, then the
features concatenated in sorted name order (crosses last).
"""

from __future__ import annotations

import typing

import numpy as np

from jaxtape._src.core.tensor import Tensor
from jaxtape._src.data.dataset import Dataset
from jaxtape._src.keras import layers, serialization
from jaxtape._src.keras.layers.base import Layer
from jaxtape._src.keras.layers.wrappers import HashedCrossing
from jaxtape._src.ops import array_ops, math_ops
from jaxtape._src.ops.creation_ops import convert_to_tensor

_COUNTS: dict = {}


def _auto_name(prefix: str) -> str:
    """Keras's `auto_name`: `prefix`, then `prefix_1`, `prefix_2`, ..."""
    n = _COUNTS.get(prefix, 0)
    _COUNTS[prefix] = n + 1
    return prefix if n == 0 else f"{prefix}_{n}"


class Cross:
    """A crossing of categorical features (`FeatureSpace.cross`): hashed into
    `crossing_dim` bins; `output_mode` `"one_hot"` or `"int"`."""

    def __init__(self, feature_names, crossing_dim, output_mode="one_hot"):
        if output_mode not in {"int", "one_hot"}:
            raise ValueError(
                "Invalid value for argument `output_mode`. Expected one of "
                f"{{'int', 'one_hot'}}. Received: output_mode={output_mode}"
            )
        self.feature_names = tuple(feature_names)
        self.crossing_dim = crossing_dim
        self.output_mode = output_mode

    @property
    def name(self):
        return "_X_".join(self.feature_names)

    def get_config(self):
        return {
            "feature_names": self.feature_names,
            "crossing_dim": self.crossing_dim,
            "output_mode": self.output_mode,
        }

    @classmethod
    def from_config(cls, config):
        return cls(**config)


class Feature:
    """One feature of a FeatureSpace: its input dtype, its preprocessor layer
    and how it is encoded (`"int"`, `"one_hot"` or `"float"`)."""

    def __init__(self, dtype, preprocessor, output_mode):
        if output_mode not in {"int", "one_hot", "float"}:
            raise ValueError(
                "Invalid value for argument `output_mode`. Expected one of "
                f"{{'int', 'one_hot', 'float'}}. Received: output_mode={output_mode}"
            )
        self.dtype = dtype
        if isinstance(preprocessor, dict):
            preprocessor = serialization.deserialize_layer(preprocessor)
        self.preprocessor = preprocessor
        self.output_mode = output_mode

    def get_config(self):
        return {
            "dtype": self.dtype,
            "preprocessor": self.preprocessor._serialize(),
            "output_mode": self.output_mode,
        }

    @classmethod
    def from_config(cls, config):
        return cls(**config)


def _entry(obj) -> dict:
    """Keras's `serialize_keras_object` entry of a Feature or a Cross."""
    name = type(obj).__name__
    return {
        "module": "keras.src.layers.preprocessing.feature_space",
        "class_name": name,
        "config": obj.get_config(),
        "registered_name": name,
    }


def _from_entry(entry):
    cls = {"Feature": Feature, "Cross": Cross}[entry["class_name"]]
    return cls.from_config(entry["config"])


class TFDIdentity(Layer):
    """Keras's `TFDIdentity` of `FeatureSpace.float`: the values as float32."""

    def __call__(self, inputs, *args, **kwargs):
        return math_ops.cast(_as_tensor(inputs), "float32")


serialization.LAYERS.add(TFDIdentity)


def _as_tensor(x) -> Tensor:
    return x if isinstance(x, Tensor) else convert_to_tensor(np.asarray(x))


def _host(x) -> np.ndarray:
    """A feature column as a NumPy array (strings as `str`)."""
    if isinstance(x, Tensor):
        return np.asarray(x.numpy())
    arr = np.asarray(x)
    if arr.dtype.kind in "SO":
        arr = np.vectorize(
            lambda v: v.decode("utf-8") if isinstance(v, bytes) else str(v),
            otypes=[object],
        )(arr).astype(str)
    return arr


class FeatureSpace(Layer):
    """Keras's `FeatureSpace`: preprocesses a dict of features into one
    float vector (`output_mode="concat"`) or a dict of encoded features.

    Features are given by name: `"float"`, `"float_rescaled"`,
    `"float_normalized"`, `"float_discretized"`, `"integer_categorical"`,
    `"integer_hashed"`, `"string_categorical"`, `"string_hashed"`, or by the
    class methods of the same names (with arguments), or
    `FeatureSpace.feature(dtype, preprocessor, output_mode)`. `crosses` are
    tuples of feature names (or `FeatureSpace.cross(...)`), hashed into
    `crossing_dim` bins. Call `adapt` on the training data (a dict of arrays
    or a `Dataset` of dicts) before calling the FeatureSpace on a dict of
    batched (or single) values.

    Differences from Keras: the FeatureSpace runs eagerly (on the host for
    lookups, hashing and strings), not inside `jaxtape.function`; use it in
    the input pipeline. `get_encoded_features()` returns a `keras.Input` of
    the encoded width (`"concat"`; a dict of Inputs for `"dict"`) for
    building the model that takes the preprocessed data, rather than the
    symbolic preprocessing graph; `save` writes no `.keras` file
    (NotImplementedError).
    """

    # -- feature constructors (Keras's class methods) ------------------------------
    @classmethod
    def cross(cls, feature_names, crossing_dim, output_mode="one_hot"):
        return Cross(feature_names, crossing_dim, output_mode=output_mode)

    @classmethod
    def feature(cls, dtype, preprocessor, output_mode):
        return Feature(dtype, preprocessor, output_mode)

    @classmethod
    def float(cls, name=None):
        name = name or _auto_name("float")
        return Feature("float32", TFDIdentity(name=f"{name}_preprocessor"), "float")

    @classmethod
    def float_rescaled(cls, scale=1.0, offset=0.0, name=None):
        name = name or _auto_name("float_rescaled")
        layer = layers.Rescaling(
            scale=scale, offset=offset, name=f"{name}_preprocessor"
        )
        return Feature("float32", layer, "float")

    @classmethod
    def float_normalized(cls, name=None):
        name = name or _auto_name("float_normalized")
        layer = layers.Normalization(axis=-1, name=f"{name}_preprocessor")
        return Feature("float32", layer, "float")

    @classmethod
    def float_discretized(
        cls, num_bins, bin_boundaries=None, output_mode="one_hot", name=None
    ):
        name = name or _auto_name("float_discretized")
        layer = layers.Discretization(
            num_bins=num_bins,
            bin_boundaries=bin_boundaries,
            name=f"{name}_preprocessor",
        )
        return Feature("float32", layer, output_mode)

    @classmethod
    def integer_categorical(
        cls, max_tokens=None, num_oov_indices=1, output_mode="one_hot", name=None
    ):
        name = name or _auto_name("integer_categorical")
        layer = layers.IntegerLookup(
            name=f"{name}_preprocessor",
            max_tokens=max_tokens,
            num_oov_indices=num_oov_indices,
        )
        return Feature("int32", layer, output_mode)

    @classmethod
    def string_categorical(
        cls, max_tokens=None, num_oov_indices=1, output_mode="one_hot", name=None
    ):
        name = name or _auto_name("string_categorical")
        layer = layers.StringLookup(
            name=f"{name}_preprocessor",
            max_tokens=max_tokens,
            num_oov_indices=num_oov_indices,
        )
        return Feature("string", layer, output_mode)

    @classmethod
    def string_hashed(cls, num_bins, output_mode="one_hot", name=None):
        name = name or _auto_name("string_hashed")
        layer = layers.Hashing(name=f"{name}_preprocessor", num_bins=num_bins)
        return Feature("string", layer, output_mode)

    @classmethod
    def integer_hashed(cls, num_bins, output_mode="one_hot", name=None):
        name = name or _auto_name("integer_hashed")
        layer = layers.Hashing(name=f"{name}_preprocessor", num_bins=num_bins)
        return Feature("int32", layer, output_mode)

    # -- construction ----------------------------------------------------------------
    def __init__(
        self,
        features,
        output_mode="concat",
        crosses=None,
        crossing_dim=32,
        hashing_dim=32,
        num_discretization_bins=32,
        name=None,
    ):
        super().__init__(name=name)
        if not features:
            raise ValueError("The `features` argument cannot be None or empty.")
        self.crossing_dim = crossing_dim
        self.hashing_dim = hashing_dim
        self.num_discretization_bins = num_discretization_bins
        self.features = {
            key: self._standardize_feature(key, value)
            for key, value in features.items()
        }
        self.crosses = []
        for cross in crosses or ():
            if isinstance(cross, dict):
                cross = _from_entry(cross)
            if not isinstance(cross, Cross):
                if not crossing_dim:
                    raise ValueError(
                        "When specifying `crosses`, the argument `crossing_dim` "
                        "(dimensionality of the crossing space) should be "
                        "specified as well."
                    )
                for key in cross:
                    if key not in features:
                        raise ValueError(
                            "All features referenced in the `crosses` argument "
                            "should be present in the `features` dict. "
                            f"Received unknown features: {cross}"
                        )
                cross = Cross(cross, crossing_dim=crossing_dim)
            self.crosses.append(cross)
        self.crosses_by_name = {cross.name: cross for cross in self.crosses}
        if output_mode not in {"dict", "concat"}:
            raise ValueError(
                "Invalid value for argument `output_mode`. Expected one of "
                f"{{'dict', 'concat'}}. Received: output_mode={output_mode}"
            )
        self.output_mode = output_mode
        self.preprocessors = {k: f.preprocessor for k, f in self.features.items()}
        self.crossers = {
            c.name: HashedCrossing(c.crossing_dim, name=c.name) for c in self.crosses
        }
        self.one_hot_encoders = {}
        self.inputs = None
        self.encoded_features = None
        self._is_adapted = False

    def _standardize_feature(self, name, feature):
        if isinstance(feature, Feature):
            return feature
        if isinstance(feature, dict):
            return _from_entry(feature)
        makers = {
            "float": lambda: self.float(name=name),
            "float_normalized": lambda: self.float_normalized(name=name),
            "float_rescaled": lambda: self.float_rescaled(name=name),
            "float_discretized": lambda: self.float_discretized(
                name=name, num_bins=self.num_discretization_bins
            ),
            "integer_categorical": lambda: self.integer_categorical(name=name),
            "string_categorical": lambda: self.string_categorical(name=name),
            "integer_hashed": lambda: self.integer_hashed(self.hashing_dim, name=name),
            "string_hashed": lambda: self.string_hashed(self.hashing_dim, name=name),
        }
        if not isinstance(feature, str) or feature not in makers:
            raise ValueError(f"Invalid feature type: {feature}")
        return makers[feature]()

    # -- adapting --------------------------------------------------------------------
    def _adaptable(self) -> list:
        out = []
        for name in self.features:
            pre = self.preprocessors[name]
            if isinstance(pre, layers.Normalization) and pre.input_mean is not None:
                continue
            if hasattr(pre, "adapt"):
                out.append(name)
        return out

    def adapt(self, dataset):
        """Fits the preprocessors that learn from data (normalization
        statistics, vocabularies, bin boundaries), as Keras's `adapt`.
        `dataset` is a dict of arrays/lists or a `Dataset` of such dicts."""
        if isinstance(dataset, Dataset):
            columns: dict = {}
            for element in dataset:
                for key, value in typing.cast(dict, element).items():
                    columns.setdefault(key, []).append(np.atleast_1d(_host(value)))
            data = {k: np.concatenate(vs) for k, vs in columns.items()}
        elif isinstance(dataset, dict):
            data = {k: _host(v) for k, v in dataset.items()}
        else:
            raise ValueError(
                "`adapt()` can only be called on a tf.data.Dataset or a dict of "
                f"arrays/lists. Received instead: {dataset} (of type "
                f"{type(dataset)})"
            )
        for name in self._adaptable():
            column = data[name]
            if column.ndim in (0, 1):
                column = column.reshape(-1, 1)
            self.preprocessors[name].adapt(column)
        self._is_adapted = True
        self.built = True

    def _check_if_adapted(self):
        if not self._is_adapted:
            if self._adaptable():
                raise ValueError(
                    "You need to call `.adapt(dataset)` on the FeatureSpace "
                    "before you can start using it."
                )
            self._is_adapted = True

    # -- calling ---------------------------------------------------------------------
    def __call__(self, data, *args, **kwargs):
        self._check_if_adapted()
        if not isinstance(data, dict):
            raise ValueError(
                "A FeatureSpace can only be called with a dict. "
                f"Received: data={data} (of type {type(data)}"
            )
        columns, rebatched = {}, False
        for name, value in data.items():
            x = _host(value)
            if x.ndim == 0:
                x, rebatched = x.reshape(1, 1), True
            elif x.ndim == 1:
                x = x[:, None]
            columns[name] = x
        pre = {}
        for name in self.features:
            x = columns[name]
            if x.dtype.kind in "iuf" and self.features[name].dtype == "float32":
                x = x.astype(np.float32)
            pre[name] = self.preprocessors[name](x)
        crossed = {}
        for cross in self.crosses:
            inputs = [_host(pre[n]) for n in cross.feature_names]
            crossed[cross.name] = self.crossers[cross.name](inputs)
        merged: typing.Any = self._merge(pre, crossed)
        if rebatched:
            if self.output_mode == "concat":
                merged = array_ops.squeeze(merged, axis=0)
            else:
                merged = {
                    k: array_ops.squeeze(v, axis=0)
                    if len(v.shape) == 2 and v.shape[0] == 1
                    else v
                    for k, v in merged.items()
                }
        return merged

    def _cardinality(self, name, preprocessor):
        if isinstance(preprocessor, (layers.IntegerLookup, layers.StringLookup)):
            return preprocessor.vocabulary_size()
        if isinstance(preprocessor, layers.CategoryEncoding):
            return preprocessor.num_tokens
        if isinstance(
            preprocessor, (layers.Discretization, layers.Hashing, HashedCrossing)
        ):
            return preprocessor.num_bins
        raise ValueError(
            f"Feature '{name}' has `output_mode='one_hot'`. However it isn't a "
            "standard feature and the dimensionality of its output space is not "
            "known, thus it cannot be one-hot encoded. Try using "
            "`output_mode='int'`."
        )

    def _merge(self, pre, crossed):
        names = sorted(pre) + sorted(crossed)
        specs = [self.features[n] for n in sorted(pre)]
        specs += [self.crosses_by_name[n] for n in sorted(crossed)]
        values = {**pre, **crossed}
        out = {}
        for name, spec in zip(names, specs):
            feature = _as_tensor(values[name])
            if spec.output_mode == "one_hot":
                if not feature.dtype.is_integer:
                    raise ValueError(
                        f"Feature '{name}' has `output_mode='one_hot'`. Thus its "
                        "preprocessor should return an integer dtype. Instead it "
                        f"returns a {feature.dtype.name} dtype."
                    )
                encoder = self.one_hot_encoders.get(name)
                if encoder is None:
                    layer = self.preprocessors.get(name) or self.crossers.get(name)
                    encoder = layers.CategoryEncoding(
                        num_tokens=self._cardinality(name, layer),
                        output_mode="multi_hot",
                    )
                    self.one_hot_encoders[name] = encoder
                feature = encoder(feature)
            elif self.output_mode == "concat" and not feature.dtype.is_floating:
                raise ValueError(
                    f"Cannot concatenate features because feature '{name}' has "
                    f"not been encoded (it has dtype {feature.dtype.name}). "
                    "Consider using `output_mode='dict'`."
                )
            out[name] = feature
        if self.output_mode == "dict":
            return out
        return array_ops.concat([out[n] for n in names], axis=-1)

    # -- model building ----------------------------------------------------------------
    def get_inputs(self):
        """A `keras.Input(shape=(1,))` per feature, with the feature's dtype
        (Keras's), for a model that takes the raw features."""
        if self.inputs is None:
            Input = layers.Input
            self.inputs = {
                name: Input(shape=(1,), dtype=f.dtype, name=name)
                for name, f in self.features.items()
                if f.dtype != "string"
            }
            strings = [n for n, f in self.features.items() if f.dtype == "string"]
            if strings:
                raise NotImplementedError(
                    f"FeatureSpace.get_inputs: the string features {strings} have "
                    "no symbolic Input in jaxtape (no string tensors); apply the "
                    "FeatureSpace in the input pipeline and build the model on "
                    "`get_encoded_features()`."
                )
        return self.inputs

    def get_encoded_features(self):
        """Symbolic Inputs shaped like the FeatureSpace's output (one vector for
        `"concat"`, a dict for `"dict"`), for the model that takes the
        preprocessed data. Found by encoding one probe row."""
        self._check_if_adapted()
        if self.encoded_features is None:
            probe = {}
            for name, f in self.features.items():
                probe[name] = np.asarray([[""]] if f.dtype == "string" else [[0]])
            out: typing.Any = self(probe)
            Input = layers.Input
            if self.output_mode == "concat":
                self.encoded_features = Input(shape=(out.shape[-1],))
            else:
                self.encoded_features = {
                    k: Input(shape=tuple(v.shape[1:]), dtype=v.dtype.name, name=k)
                    for k, v in out.items()
                }
        return self.encoded_features

    # -- config ------------------------------------------------------------------------
    def get_config(self):
        return {
            "features": {k: _entry(f) for k, f in self.features.items()},
            "output_mode": self.output_mode,
            "crosses": [_entry(c) for c in self.crosses],
            "crossing_dim": self.crossing_dim,
            "hashing_dim": self.hashing_dim,
            "num_discretization_bins": self.num_discretization_bins,
        }

    @classmethod
    def from_config(cls, config):
        return cls(**config)

    def save(self, filepath):
        raise NotImplementedError(
            "FeatureSpace.save (a .keras file of the adapted preprocessors) is "
            "not supported by jaxtape; keep the FeatureSpace in the input "
            "pipeline and save the model."
        )
