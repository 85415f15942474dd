"""`keras.datasets.boston_housing.load_data` over Keras's `boston_housing.npz`."""

from __future__ import annotations

from jaxtape._src.keras.datasets import _files
from jaxtape._src.keras.datasets import _sequences as seq

ORIGIN = _files.ORIGIN_FOLDER + "boston_housing.npz"
SHA256 = "f553886a1f8d56431e820c5b82552d9d95cfcb96d1e678153f8839538947dff5"


def load_data(path="boston_housing.npz", test_split=0.2, seed=113):
    """Keras's Boston Housing: `(x_train, y_train), (x_test, y_test)`, 13
    features per house and the median value in k$ (float64), shuffled by
    `RandomState(seed)`; the last `test_split` of them are the test set.

    Keras discourages this dataset (its "B" feature encodes a racist
    assumption); `california_housing` is its suggested replacement.

    Differences from Keras: none known.
    """
    seq.check_test_split(test_split)
    file = _files.fetch(path, ORIGIN, SHA256)
    x, y = _files.load_arrays(file, ("x", "y"), "boston_housing.npz")
    return seq.split_shuffled(x, y, test_split, seed)
