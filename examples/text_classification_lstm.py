"""Text classification with an Embedding + Bidirectional LSTM, trained with `fit`.

    python examples/text_classification_lstm.py               # 3 epochs, under a minute
    python examples/text_classification_lstm.py --epochs 1    # a quick smoke run

The data are synthetic reviews: sentences drawn from a small vocabulary, each
holding words of one sentiment and a few of the other, sometimes negated
("not good"), labelled by the sentiment they carry. `TextVectorization`
learns the vocabulary and turns the strings (NumPy, on the host) into padded
token ids before training; `Embedding(mask_zero=True)` masks the padding for
the LSTMs, as in TF's text classification tutorial. `import jaxtape as tf`
runs it unchanged.
"""

import argparse
import time

import numpy as np

import jaxtape as tf

POSITIVE = ["good", "great", "fine", "lovely", "superb", "pleasant"]
NEGATIVE = ["bad", "awful", "poor", "boring", "dreadful", "dull"]
NEUTRAL = ["the", "film", "plot", "was", "and", "acting", "music", "story", "it"]


def make_reviews(n, rng):
    """`n` sentences of 6 to 20 words and their labels (1 positive, 0 negative)."""
    texts, labels = [], []
    for _ in range(n):
        label = int(rng.integers(0, 2))
        own, other = (POSITIVE, NEGATIVE) if label else (NEGATIVE, POSITIVE)
        words = list(rng.choice(NEUTRAL, size=int(rng.integers(4, 14))))
        words += list(rng.choice(own, size=int(rng.integers(2, 4))))
        words += list(rng.choice(other, size=int(rng.integers(0, 2))))
        rng.shuffle(words)
        if rng.random() < 0.3:  # "not <other>" says the same sentiment
            words[int(rng.integers(0, len(words)))] = "not " + str(rng.choice(other))
        texts.append(" ".join(words))
        labels.append(label)
    return np.array(texts), np.array(labels, np.float32)


def build_model(vocabulary_size):
    return tf.keras.Sequential(
        [
            tf.keras.layers.Embedding(vocabulary_size, 16, mask_zero=True),
            tf.keras.layers.Bidirectional(tf.keras.layers.LSTM(16)),
            tf.keras.layers.Dense(16, activation="relu"),
            tf.keras.layers.Dense(1, activation="sigmoid"),
        ]
    )


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--examples", type=int, default=2000)
    args = parser.parse_args(argv)
    rng = np.random.default_rng(0)
    tf.random.set_seed(0)
    x_train, y_train = make_reviews(args.examples, rng)
    x_test, y_test = make_reviews(500, rng)
    print("example:", repr(x_train[0]), "->", int(y_train[0]))

    vectorize = tf.keras.layers.TextVectorization(output_sequence_length=24)
    vectorize.adapt(x_train)
    print("vocabulary:", vectorize.get_vocabulary()[:8], "...")

    # The strings become token ids before training (the tutorial's "apply it
    # to the dataset" option); the model sees only the ids.
    ids_train, ids_test = vectorize(x_train), vectorize(x_test)
    model = build_model(len(vectorize.get_vocabulary()))
    model.compile(
        optimizer=tf.keras.optimizers.Adam(0.01),
        loss=tf.keras.losses.BinaryCrossentropy(),
        metrics=["accuracy"],
    )
    start = time.perf_counter()
    model.fit(
        ids_train,
        y_train,
        batch_size=64,
        epochs=args.epochs,
        validation_data=(ids_test, y_test),
    )
    loss, accuracy = model.evaluate(ids_test, y_test, verbose=0)
    print(f"test accuracy {accuracy:.3f} (loss {loss:.3f}), "
          f"trained in {time.perf_counter() - start:.1f} s")  # fmt: skip
    return accuracy


if __name__ == "__main__":
    main()
