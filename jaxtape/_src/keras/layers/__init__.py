"""Keras's layers, one module per family (as Keras's `keras/src/layers`). Layer L5.

`base` (Layer), `input_spec`, `core` (Input, Dense, Embedding),
`activations`, `convolutional`, `pooling`, `normalization`, `merging`,
`reshaping`, `regularization`, `recurrent`, `attention`, `preprocessing`;
`arguments` holds the argument checks they share. Each family module lists
its public layers (with Keras's aliases) in `__all__`; they are re-exported
here and known to `serialization.LAYERS`, which `.keras` files are read with.
"""

from jaxtape._src.keras import serialization
from jaxtape._src.keras.layers import (
    activations,
    adaptive_pooling,
    attention,
    conv_lstm,
    convolutional,
    core,
    merging,
    normalization,
    pooling,
    preprocessing,
    recurrent,
    regularization,
    reshaping,
    spectrogram,
    wrappers,
)
from jaxtape._src.keras.layers.activations import *  # noqa: F403
from jaxtape._src.keras.layers.adaptive_pooling import *  # noqa: F403
from jaxtape._src.keras.layers.attention import *  # noqa: F403
from jaxtape._src.keras.layers.base import Layer
from jaxtape._src.keras.layers.conv_lstm import *  # noqa: F403
from jaxtape._src.keras.layers.convolutional import *  # noqa: F403
from jaxtape._src.keras.layers.core import *  # noqa: F403
from jaxtape._src.keras.layers.input_spec import InputSpec
from jaxtape._src.keras.layers.merging import *  # noqa: F403
from jaxtape._src.keras.layers.normalization import *  # noqa: F403
from jaxtape._src.keras.layers.pooling import *  # noqa: F403
from jaxtape._src.keras.layers.preprocessing import *  # noqa: F403
from jaxtape._src.keras.layers.preprocessing import (
    augment,
    augment_policies,
    image_more,
)
from jaxtape._src.keras.layers.preprocessing.augment import *  # noqa: F403
from jaxtape._src.keras.layers.preprocessing.augment_policies import *  # noqa: F403
from jaxtape._src.keras.layers.preprocessing.image_more import *  # noqa: F403
from jaxtape._src.keras.layers.recurrent import *  # noqa: F403
from jaxtape._src.keras.layers.regularization import *  # noqa: F403
from jaxtape._src.keras.layers.reshaping import *  # noqa: F403
from jaxtape._src.keras.layers.spectrogram import *  # noqa: F403
from jaxtape._src.keras.layers.wrappers import *  # noqa: F403

__all__ = ["InputSpec", "Layer"]
__all__ += activations.__all__
__all__ += adaptive_pooling.__all__
__all__ += attention.__all__
__all__ += conv_lstm.__all__
__all__ += convolutional.__all__
__all__ += core.__all__
__all__ += merging.__all__
__all__ += normalization.__all__
__all__ += pooling.__all__
__all__ += preprocessing.__all__
__all__ += image_more.__all__
__all__ += augment.__all__
__all__ += augment_policies.__all__
__all__ += recurrent.__all__
__all__ += regularization.__all__
__all__ += reshaping.__all__
__all__ += spectrogram.__all__
__all__ += wrappers.__all__

for _name in __all__:
    _layer = globals()[_name]
    if isinstance(_layer, type) and issubclass(_layer, Layer) and _layer is not Layer:
        serialization.LAYERS.add(_layer, _name)
