"""`keras.preprocessing.text`: Keras 3's legacy text utilities. Layer L5.

`Tokenizer`, `text_to_word_sequence`, `one_hot`, `hashing_trick` and
`tokenizer_from_json`, as `keras/src/legacy/preprocessing/text.py` (Keras
3.15) defines them: pure Python over strings, returning lists and NumPy
arrays, with the same word order, hashing and matrix modes.
"""

from __future__ import annotations

import collections
import hashlib
import json
import warnings

import numpy as np

FILTERS = '!"#$%&()*+,-./:;<=>?@[\\]^_`{|}~\t\n'


def text_to_word_sequence(input_text, filters=FILTERS, lower=True, split=" "):
    """Splits `input_text` on `split` after mapping each of `filters` to it
    (and lower-casing); empty pieces are dropped."""
    if lower:
        input_text = input_text.lower()
    input_text = input_text.translate(str.maketrans({c: split for c in filters}))
    return [w for w in input_text.split(split) if w]


def _md5(w):
    return int(hashlib.md5(w.encode()).hexdigest(), 16)


def hashing_trick(
    text, n, hash_function=None, filters=FILTERS, lower=True, split=" ", analyzer=None
):
    """Each word of `text` as `hash(word) % (n - 1) + 1`.

    `hash_function` is Python's `hash` by default (salted per process for
    strings, as in Keras: use `"md5"` for stable indices) or a callable.
    """
    if hash_function is None:
        hash_function = hash
    elif hash_function == "md5":
        hash_function = _md5

    if analyzer is None:
        seq = text_to_word_sequence(text, filters=filters, lower=lower, split=split)
    else:
        seq = analyzer(text)
    return [hash_function(w) % (n - 1) + 1 for w in seq]


def one_hot(input_text, n, filters=FILTERS, lower=True, split=" ", analyzer=None):
    """`hashing_trick` with Python's `hash` (word indices in `[1, n)`)."""
    return hashing_trick(
        input_text,
        n,
        hash_function=hash,
        filters=filters,
        lower=lower,
        split=split,
        analyzer=analyzer,
    )


class Tokenizer:
    """Keras's text tokenizer: a word index by descending frequency (ties in
    first-seen order), index 0 reserved, optional `oov_token` at index 1.

    >>> t = jaxtape.keras.preprocessing.text.Tokenizer()
    >>> t.fit_on_texts(["the cat", "the dog"])
    >>> t.texts_to_sequences(["the dog sat"])
    [[1, 3]]
    """

    def __init__(
        self,
        num_words=None,
        filters=FILTERS,
        lower=True,
        split=" ",
        char_level=False,
        oov_token=None,
        analyzer=None,
        **kwargs,
    ):
        if "nb_words" in kwargs:
            warnings.warn(
                "The `nb_words` argument in `Tokenizer` has been renamed `num_words`.",
                stacklevel=2,
            )
            num_words = kwargs.pop("nb_words")
        document_count = kwargs.pop("document_count", 0)
        if kwargs:
            raise TypeError(f"Unrecognized keyword arguments: {kwargs!s}")
        self.word_counts: dict = collections.OrderedDict()
        self.word_docs: dict = collections.defaultdict(int)
        self.filters = filters
        self.split = split
        self.lower = lower
        self.num_words = num_words
        self.document_count = document_count
        self.char_level = char_level
        self.oov_token = oov_token
        self.index_docs: dict = collections.defaultdict(int)
        self.word_index: dict = {}
        self.index_word: dict = {}
        self.analyzer = analyzer

    def _words(self, text):
        if self.char_level or isinstance(text, list):
            if self.lower:
                text = (
                    [t.lower() for t in text]
                    if isinstance(text, list)
                    else text.lower()
                )
            return text
        if self.analyzer is None:
            return text_to_word_sequence(
                text, filters=self.filters, lower=self.lower, split=self.split
            )
        return self.analyzer(text)

    def fit_on_texts(self, texts):
        """Counts the words of `texts` (strings, or lists of tokens) and
        rebuilds `word_index` / `index_word` / `index_docs`."""
        for text in texts:
            self.document_count += 1
            seq = self._words(text)
            for w in seq:
                self.word_counts[w] = self.word_counts.get(w, 0) + 1
            for w in set(seq):
                self.word_docs[w] += 1
        wcounts = sorted(self.word_counts.items(), key=lambda x: x[1], reverse=True)
        vocab = [] if self.oov_token is None else [self.oov_token]
        vocab.extend(w for w, _ in wcounts)
        self.word_index = dict(zip(vocab, range(1, len(vocab) + 1)))
        self.index_word = {c: w for w, c in self.word_index.items()}
        for w, c in list(self.word_docs.items()):
            self.index_docs[self.word_index[w]] = c

    def fit_on_sequences(self, sequences):
        """Counts document frequencies of already-indexed sequences (for tfidf)."""
        self.document_count += len(sequences)
        for seq in sequences:
            for i in set(seq):
                self.index_docs[i] += 1

    def texts_to_sequences(self, texts):
        return list(self.texts_to_sequences_generator(texts))

    def texts_to_sequences_generator(self, texts):
        """Each text as a list of word indices; words at or above `num_words`
        (and unknown words) become the OOV index, or are dropped without one."""
        num_words = self.num_words
        oov_index = self.word_index.get(self.oov_token)
        for text in texts:
            vect = []
            for w in self._words(text):
                i = self.word_index.get(w)
                if i is not None:
                    if num_words and i >= num_words:
                        if oov_index is not None:
                            vect.append(oov_index)
                    else:
                        vect.append(i)
                elif self.oov_token is not None:
                    vect.append(oov_index)
            yield vect

    def sequences_to_texts(self, sequences):
        return list(self.sequences_to_texts_generator(sequences))

    def sequences_to_texts_generator(self, sequences):
        """Each sequence of indices as a space-joined string of words."""
        num_words = self.num_words
        oov_index = self.word_index.get(self.oov_token)
        for seq in sequences:
            vect = []
            for num in seq:
                word = self.index_word.get(num)
                if word is not None:
                    if num_words and num >= num_words:
                        if oov_index is not None:
                            vect.append(self.index_word[oov_index])
                    else:
                        vect.append(word)
                elif self.oov_token is not None:
                    vect.append(self.index_word[oov_index])
            yield " ".join(vect)

    def texts_to_matrix(self, texts, mode="binary"):
        return self.sequences_to_matrix(self.texts_to_sequences(texts), mode=mode)

    def sequences_to_matrix(self, sequences, mode="binary"):
        """A float64 `(len(sequences), num_words)` matrix: `"binary"`,
        `"count"`, `"freq"` or `"tfidf"` per word index."""
        if not self.num_words:
            if not self.word_index:
                raise ValueError(
                    "Specify a dimension (`num_words` argument), "
                    "or fit on some text data first."
                )
            num_words = len(self.word_index) + 1
        else:
            num_words = self.num_words
        if mode == "tfidf" and not self.document_count:
            raise ValueError("Fit the Tokenizer on some data before using tfidf mode.")
        x = np.zeros((len(sequences), num_words))
        for i, seq in enumerate(sequences):
            if not seq:
                continue
            counts = collections.defaultdict(int)
            for j in seq:
                if j < num_words:
                    counts[j] += 1
            for j, c in list(counts.items()):
                if mode == "count":
                    x[i][j] = c
                elif mode == "freq":
                    x[i][j] = c / len(seq)
                elif mode == "binary":
                    x[i][j] = 1
                elif mode == "tfidf":
                    tf = 1 + np.log(c)
                    idf = np.log(
                        1 + self.document_count / (1 + self.index_docs.get(j, 0))
                    )
                    x[i][j] = tf * idf
                else:
                    raise ValueError("Unknown vectorization mode:", mode)
        return x

    def get_config(self):
        return {
            "num_words": self.num_words,
            "filters": self.filters,
            "lower": self.lower,
            "split": self.split,
            "char_level": self.char_level,
            "oov_token": self.oov_token,
            "document_count": self.document_count,
            "word_counts": json.dumps(self.word_counts),
            "word_docs": json.dumps(self.word_docs),
            "index_docs": json.dumps(self.index_docs),
            "index_word": json.dumps(self.index_word),
            "word_index": json.dumps(self.word_index),
        }

    def to_json(self, **kwargs):
        """The tokenizer as a JSON string (`tokenizer_from_json` reads it)."""
        return json.dumps(
            {"class_name": type(self).__name__, "config": self.get_config()}, **kwargs
        )


def tokenizer_from_json(json_string):
    """A `Tokenizer` from `Tokenizer.to_json()`'s string."""
    config = json.loads(json_string).get("config")
    word_counts = json.loads(config.pop("word_counts"))
    word_docs = json.loads(config.pop("word_docs"))
    index_docs = {int(k): v for k, v in json.loads(config.pop("index_docs")).items()}
    index_word = {int(k): v for k, v in json.loads(config.pop("index_word")).items()}
    word_index = json.loads(config.pop("word_index"))
    tokenizer = Tokenizer(**config)
    tokenizer.word_counts = word_counts
    tokenizer.word_docs = word_docs
    tokenizer.index_docs = index_docs
    tokenizer.word_index = word_index
    tokenizer.index_word = index_word
    return tokenizer
