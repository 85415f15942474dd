"""A small Transformer encoder classifier, trained with a GradientTape loop.

    python examples/transformer_block.py               # 300 steps, under a minute
    python examples/transformer_block.py --steps 40    # a quick smoke run

The task is synthetic: sequences of 16 tokens from a vocabulary of 32, and
the label says whether token 1 appears before token 2 (order matters, so a
bag of words cannot solve it; attention can). The model is Embedding +
learned positions, one encoder block (MultiHeadAttention, residuals,
LayerNormalization, a Dense feed-forward), mean pooling and a Dense head,
written as TF 2 code: `import jaxtape as tf` runs it unchanged.
"""

import argparse
import time

import numpy as np

import jaxtape as tf

SEQ, VOCAB = 16, 32


def make_data(n, rng):
    """Token sequences holding tokens 1 and 2 once each; label 1 if 1 comes first."""
    x = rng.integers(3, VOCAB, size=(n, SEQ))
    pos = np.argsort(rng.random((n, SEQ)), axis=1)[:, :2]
    x[np.arange(n), pos[:, 0]] = 1
    x[np.arange(n), pos[:, 1]] = 2
    y = (pos[:, 0] < pos[:, 1]).astype(np.int32)
    return x.astype(np.int32), y


class TransformerBlock(tf.keras.layers.Layer):
    def __init__(self, dim, heads, ff_dim, rate=0.1, **kwargs):
        super().__init__(**kwargs)
        self.att = tf.keras.layers.MultiHeadAttention(
            num_heads=heads, key_dim=dim // heads
        )
        self.ffn = tf.keras.Sequential(
            [
                tf.keras.layers.Dense(ff_dim, activation="relu"),
                tf.keras.layers.Dense(dim),
            ]
        )
        self.norm1 = tf.keras.layers.LayerNormalization(epsilon=1e-6)
        self.norm2 = tf.keras.layers.LayerNormalization(epsilon=1e-6)
        self.drop1 = tf.keras.layers.Dropout(rate)
        self.drop2 = tf.keras.layers.Dropout(rate)

    def call(self, inputs, training=None):
        attended = self.att(inputs, inputs, training=training)
        x = self.norm1(inputs + self.drop1(attended, training=training))
        return self.norm2(x + self.drop2(self.ffn(x), training=training))


class TokenAndPosition(tf.keras.layers.Layer):
    def __init__(self, seq, vocab, dim, **kwargs):
        super().__init__(**kwargs)
        self.token = tf.keras.layers.Embedding(vocab, dim)
        self.position = tf.keras.layers.Embedding(seq, dim)

    def call(self, x):
        positions = tf.range(start=0, limit=x.shape[-1], delta=1)
        return self.token(x) + self.position(positions)


def build_model(dim=32, heads=4, ff_dim=64):
    return tf.keras.Sequential(
        [
            TokenAndPosition(SEQ, VOCAB, dim),
            TransformerBlock(dim, heads, ff_dim),
            tf.keras.layers.GlobalAveragePooling1D(),
            tf.keras.layers.Dense(2),
        ]
    )


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=300)
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    tf.random.set_seed(args.seed)
    rng = np.random.default_rng(args.seed)
    x_test, y_test = make_data(512, rng)

    model = build_model()
    loss_fn = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True)
    optimizer = tf.keras.optimizers.Adam(1e-3)
    accuracy = tf.keras.metrics.SparseCategoricalAccuracy()

    @tf.function
    def train_step(x, y):
        with tf.GradientTape() as tape:
            loss = loss_fn(y, model(x, training=True))
        grads = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(grads, model.trainable_variables))
        return loss

    history, start, window = [], time.perf_counter(), []
    for step in range(1, args.steps + 1):
        x, y = make_data(args.batch_size, rng)
        window.append(float(train_step(x, y)))
        if step % max(1, args.steps // 10) == 0 or step == args.steps:
            accuracy.reset_state()
            accuracy.update_state(y_test, model(x_test, training=False))
            record = {
                "step": step,
                "loss": float(np.mean(window)),
                "test_accuracy": float(accuracy.result()),
            }
            history.append(record)
            window = []
            print(
                f"step {step:4d}  loss {record['loss']:.4f}  "
                f"test accuracy {record['test_accuracy']:.3f}  "
                f"({time.perf_counter() - start:.1f} s)"
            )
    return history


if __name__ == "__main__":
    main()
