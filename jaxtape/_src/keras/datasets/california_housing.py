"""`keras.datasets.california_housing.load_data` over Keras's
`california_housing.npz` (20,640 block groups, 8 features)."""

from __future__ import annotations

from jaxtape._src.keras.datasets import _files
from jaxtape._src.keras.datasets import _sequences as seq

ORIGIN = _files.ORIGIN_FOLDER + "california_housing.npz"
SHA256 = "1a2e3a52e0398de6463aebe6f4a8da34fb21fbb6b934cf88c3425e766f2a1a6f"


def load_data(version="large", path="california_housing.npz", test_split=0.2, seed=113):
    """Keras's California Housing: `(x_train, y_train), (x_test, y_test)`, 8
    features per block group (MedInc, HouseAge, AveRooms, AveBedrms,
    Population, AveOccup, Latitude, Longitude) and the median house value in
    dollars. `version="small"` keeps the first 600 samples. Shuffled by
    `RandomState(seed)`; the last `test_split` of them are the test set.

    Differences from Keras: a bad `version` is refused before the file is
    fetched (Keras downloads first).
    """
    seq.check_test_split(test_split)
    if version not in ("small", "large"):
        raise ValueError(
            "Argument `version` must be one of 'small', 'large'. "
            f"Received: version={version}"
        )
    file = _files.fetch(path, ORIGIN, SHA256)
    x, y = _files.load_arrays(file, ("x", "y"), "california_housing.npz")
    if version == "small":
        x, y = x[:600], y[:600]
    return seq.split_shuffled(x, y, test_split, seed)
