"""`keras.layers.TFSMLayer`: an export reloaded as a Keras layer. Layer L6.

Keras's `TFSMLayer` wraps `tf.saved_model.load(filepath)`: one endpoint (an
attribute of the loaded object, or one of its signatures) is the layer's
`call`, another may serve `training=True`, and the loaded Variables are the
layer's weights, so the reloaded model can be fine-tuned in a larger one.
"""

from __future__ import annotations

from typing import Any

from jaxtape._src.keras.layers.base import Layer
from jaxtape._src.saved_model.load import load


def _endpoint(loaded, name: str):
    if hasattr(loaded, name):
        return getattr(loaded, name)
    if name in loaded.signatures:
        return loaded.signatures[name]
    raise ValueError(
        f"The endpoint '{name}' is neither an attribute of the reloaded "
        "SavedModel, nor an entry in the `signatures` field of the reloaded "
        "SavedModel. Select another endpoint via the `call_endpoint` argument. "
        f"Available endpoints for this SavedModel: {list(loaded.signatures.keys())}"
    )


class TFSMLayer(Layer):
    """An export of `jaxtape.saved_model.save` as a layer (Keras's
    `TFSMLayer`): `call_endpoint` ('serve' by default, as `model.export`
    names it; a plain `saved_model.save` export has 'serving_default' or its
    functions' names) computes the outputs, `call_training_endpoint` (if
    given) those of `training=True`; the export's Variables are the layer's
    weights (trainable as saved, unless `trainable=False`).

    Differences from Keras: it reloads jaxtape exports (TensorFlow
    SavedModels raise NotImplementedError, as `saved_model.load` does).
    """

    def __init__(self, filepath, call_endpoint="serve", call_training_endpoint=None,
                 trainable=True, name=None, dtype=None):  # fmt: skip
        super().__init__(trainable=trainable, name=name, dtype=dtype)
        self._reloaded_obj = load(str(filepath))
        self.filepath = filepath
        self.call_endpoint = call_endpoint
        self.call_training_endpoint = call_training_endpoint
        self.call_endpoint_fn = _endpoint(self._reloaded_obj, call_endpoint)
        self.call_training_endpoint_fn = (
            _endpoint(self._reloaded_obj, call_training_endpoint)
            if call_training_endpoint
            else None
        )
        # The loaded Variables themselves: training the layer trains the export.
        self._reloaded_weights = list(self._reloaded_obj.variables)
        self.built = True

    def call(self, inputs: Any, training: bool = False, **kwargs: Any) -> Any:
        if training and self.call_training_endpoint_fn is not None:
            return self.call_training_endpoint_fn(inputs, **kwargs)
        return self.call_endpoint_fn(inputs, **kwargs)

    def get_config(self) -> dict:
        return {
            **super().get_config(),
            "filepath": self.filepath,
            "call_endpoint": self.call_endpoint,
            "call_training_endpoint": self.call_training_endpoint,
        }
