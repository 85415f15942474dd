"""`keras.datasets.imdb`: `load_data` and `get_word_index` over the files Keras
downloads (`imdb.npz` of ragged word-index sequences, `imdb_word_index.json`)."""

from __future__ import annotations

import json

import numpy as np

from jaxtape._src.keras.datasets import _files
from jaxtape._src.keras.datasets import _sequences as seq

ORIGIN = _files.ORIGIN_FOLDER + "imdb.npz"
SHA256 = "69664113be75683a8fe16e3ed0ab59fda8886cb3cd7ada244f7d9544e4676b9f"
WORD_INDEX_ORIGIN = _files.ORIGIN_FOLDER + "imdb_word_index.json"
WORD_INDEX_MD5 = "bfafd718b763782e994055a2d397834f"


def load_data(
    path="imdb.npz",
    num_words=None,
    skip_top=0,
    maxlen=None,
    seed=113,
    start_char=1,
    oov_char=2,
    index_from=3,
    **kwargs,
):
    """Keras's IMDB reviews: `(x_train, y_train), (x_test, y_test)`.

    `x_*` are object arrays of word-index lists (a 2-D object array when every
    kept review has the same length, as Keras's `np.array` makes it), `y_*` the
    0/1 labels. Each split is shuffled by `RandomState(seed)` (train, then
    test, one generator), words are shifted by `index_from` and prefixed by
    `start_char`, sequences of `maxlen` or more indices (`start_char`
    included) are dropped, not truncated, and words
    outside `[skip_top, num_words)` become `oov_char` (or are removed when it
    is None). With `num_words=None` the vocabulary ends below the largest
    index seen, which Keras maps to `oov_char` too.

    Differences from Keras: Keras 3 silently ignores other keyword arguments;
    jaxtape raises TypeError for them, as tf.keras 2 did.
    """
    if kwargs:
        raise TypeError(f"Unrecognized keyword arguments: {sorted(kwargs)}")
    file = _files.fetch(path, ORIGIN, SHA256)
    x_train, labels_train, x_test, labels_test = _files.load_arrays(
        file, ("x_train", "y_train", "x_test", "y_test"), "imdb.npz", objects=True
    )
    rng = np.random.RandomState(seed)
    x_train, labels_train = seq.shuffled(rng, x_train, labels_train)
    x_test, labels_test = seq.shuffled(rng, x_test, labels_test)
    x_train = seq.offset_words(x_train, start_char, index_from)
    x_test = seq.offset_words(x_test, start_char, index_from)
    if maxlen:
        x_train, labels_train = seq.drop_long(maxlen, x_train, labels_train)
        x_test, labels_test = seq.drop_long(maxlen, x_test, labels_test)
        if not x_train or not x_test:
            raise ValueError(
                "After filtering for sequences shorter than maxlen="
                f"{str(maxlen)}, no sequence was kept. Increase maxlen."
            )
    xs = seq.cut_vocabulary(x_train + x_test, num_words, skip_top, oov_char)
    labels = np.concatenate([labels_train, labels_test])
    idx = len(x_train)
    x_train, y_train = np.array(xs[:idx], dtype="object"), labels[:idx]
    x_test, y_test = np.array(xs[idx:], dtype="object"), labels[idx:]
    return (x_train, y_train), (x_test, y_test)


def get_word_index(path="imdb_word_index.json"):
    """Keras's IMDB word index: `{word: rank}`, ranks from 1 (the data's word
    `i` is `rank + index_from`)."""
    file = _files.fetch(path, WORD_INDEX_ORIGIN, WORD_INDEX_MD5)
    with open(file) as f:
        return json.load(f)
