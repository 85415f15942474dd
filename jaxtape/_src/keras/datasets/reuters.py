"""`keras.datasets.reuters`: `load_data`, `get_word_index` and
`get_label_names` over the files Keras downloads (`reuters.npz` of ragged
word-index sequences, `reuters_word_index.json`)."""

from __future__ import annotations

import json

import numpy as np

from jaxtape._src.keras.datasets import _files
from jaxtape._src.keras.datasets import _sequences as seq

ORIGIN = _files.ORIGIN_FOLDER + "reuters.npz"
SHA256 = "d6586e694ee56d7a4e65172e12b3e987c03096cb01eab99753921ef915959916"
WORD_INDEX_ORIGIN = _files.ORIGIN_FOLDER + "reuters_word_index.json"
WORD_INDEX_MD5 = "4d44cc38712099c9e383dc6e5f11a921"

_LABELS = (
    "cocoa grain veg-oil earn acq wheat copper housing money-supply coffee "
    "sugar trade reserves ship cotton carcass crude nat-gas cpi money-fx "
    "interest gnp meal-feed alum oilseed gold tin strategic-metal livestock "
    "retail ipi iron-steel rubber heat jobs lei bop zinc orange pet-chem dlr "
    "gas silver wpi hog lead"
)


def load_data(
    path="reuters.npz",
    num_words=None,
    skip_top=0,
    maxlen=None,
    test_split=0.2,
    seed=113,
    start_char=1,
    oov_char=2,
    index_from=3,
):
    """Keras's Reuters newswires: `(x_train, y_train), (x_test, y_test)`.

    The 11,228 wires are shuffled by `RandomState(seed)`, words are shifted by
    `index_from` and prefixed by `start_char`, sequences of `maxlen` or more
    indices are dropped (not truncated), words outside `[skip_top, num_words)`
    become `oov_char` (or are removed when it is None), and the first
    `int(n * (1 - test_split))` wires are the training set. `x_*` are object
    arrays of word-index lists, `y_*` the topic indices (names:
    `get_label_names()`).

    Differences from Keras: none known (like Keras, `test_split` is not
    checked here).
    """
    file = _files.fetch(path, ORIGIN, SHA256)
    xs, labels = _files.load_arrays(file, ("x", "y"), "reuters.npz", objects=True)
    xs, labels = seq.shuffled(np.random.RandomState(seed), xs, labels)
    if start_char is not None or index_from:
        xs = seq.offset_words(xs, start_char, index_from)
    if maxlen:
        xs, labels = seq.drop_long(maxlen, xs, labels)
    xs = seq.cut_vocabulary(xs, num_words, skip_top, oov_char)
    idx = seq.split_point(len(xs), test_split)
    x_train, y_train = np.array(xs[:idx], dtype="object"), np.array(labels[:idx])
    x_test, y_test = np.array(xs[idx:], dtype="object"), np.array(labels[idx:])
    return (x_train, y_train), (x_test, y_test)


def get_word_index(path="reuters_word_index.json"):
    """Keras's Reuters word index: `{word: rank}`, ranks from 1 (the data's
    word `i` is `rank + index_from`)."""
    file = _files.fetch(path, WORD_INDEX_ORIGIN, WORD_INDEX_MD5)
    with open(file) as f:
        return json.load(f)


def get_label_names():
    """The 46 topic names, indexed as the labels of `load_data` (a tuple).

    >>> jaxtape.keras.datasets.reuters.get_label_names()[:3]
    ('cocoa', 'grain', 'veg-oil')
    """
    return tuple(_LABELS.split())
