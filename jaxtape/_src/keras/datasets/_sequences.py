"""What the word-sequence datasets (IMDB, Reuters) and the housing tables share:
Keras's seeded shuffle, word-index offsets, vocabulary cut and splits. Layer L5.

Each step repeats Keras 3's own operations (same NumPy RNG calls, same Python
list building), so the same seed gives the same order and the same values.
"""

from __future__ import annotations

import numpy as np


def shuffled(rng: np.random.RandomState, *arrays):
    """`arrays` permuted alike by one `rng.shuffle` call (Keras's order)."""
    indices = np.arange(len(arrays[0]))
    rng.shuffle(indices)
    return [a[indices] for a in arrays]


def offset_words(xs, start_char, index_from):
    """Sequences as lists: `index_from` added to every word, `start_char` first."""
    if start_char is not None:
        return [[start_char] + [w + index_from for w in x] for x in xs]
    return [[w + index_from for w in x] for x in xs]


def drop_long(maxlen, xs, labels):
    """Keras's `remove_long_seq`: keeps sequences shorter than `maxlen`."""
    kept = [(x, y) for x, y in zip(xs, labels) if len(x) < maxlen]
    return [x for x, _ in kept], [y for _, y in kept]


def cut_vocabulary(xs, num_words, skip_top, oov_char):
    """Words outside `[skip_top, num_words)` become `oov_char` (dropped when it
    is None); `num_words=None` (or 0) means the largest index seen, which Keras
    also treats as out of range."""
    if not num_words:
        num_words = max(max(x) for x in xs)
    if oov_char is not None:
        return [[w if skip_top <= w < num_words else oov_char for w in x] for x in xs]
    return [[w for w in x if skip_top <= w < num_words] for x in xs]


def split_point(n, test_split):
    """Where Keras splits `n` samples into train and test."""
    return int(n * (1 - test_split))


def split_shuffled(x, y, test_split, seed):
    """Keras's housing split: one seeded shuffle, then the train part first."""
    x, y = shuffled(np.random.RandomState(seed), x, y)
    n = split_point(len(x), test_split)
    return (np.array(x[:n]), np.array(y[:n])), (np.array(x[n:]), np.array(y[n:]))


def check_test_split(test_split):
    if not (0 <= test_split < 1):
        raise ValueError(
            f"Invalid `test_split` argument: {test_split}. "
            "It must be between 0 and 1 (exclusive of 1)."
        )
