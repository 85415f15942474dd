"""Seed 000's pattern: record the loss for TensorBoard once every 100 training steps.

    python examples/tensorboard_summaries.py             # 1000 steps, eager
    python examples/tensorboard_summaries.py --compiled  # step as a jaxtape.function
    tensorboard --logdir /tmp/jaxtape_logs               # then look at 'loss'

The data is MNIST from `keras.datasets.mnist.load_data()` ($JAXTAPE_MNIST_PATH
points it at a local mnist.npz).
"""

import argparse

import numpy as np

import jaxtape as tf


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--logdir", default="/tmp/jaxtape_logs")
    parser.add_argument("--steps", type=int, default=1000)
    parser.add_argument("--every", type=int, default=100)
    parser.add_argument("--compiled", action="store_true")
    args = parser.parse_args(argv)
    tf.random.set_seed(0)

    (x_train, y_train), _ = tf.keras.datasets.mnist.load_data()
    x_train = (x_train / 255.0).astype(np.float32)
    model = tf.keras.Sequential(
        [
            tf.keras.layers.Flatten(input_shape=(28, 28)),
            tf.keras.layers.Dense(128, activation="relu"),
            tf.keras.layers.Dense(10),
        ]
    )
    loss_object = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True)
    optimizer = tf.keras.optimizers.Adam()

    writer = tf.summary.create_file_writer(args.logdir)
    global_step = tf.Variable(0, dtype=tf.int64, trainable=False, name="global_step")

    def train_step(images, labels):
        global_step.assign_add(1)
        with tf.GradientTape() as tape:
            loss = loss_object(labels, model(images, training=True))
        grads = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(grads, model.trainable_variables))
        # Recorded only on every `every`-th step; inside a jaxtape.function the
        # condition and the write happen when the compiled step runs.
        with tf.summary.record_if(lambda: global_step % args.every == 0):
            tf.summary.scalar("loss", loss, step=global_step)
        return loss

    if args.compiled:
        train_step = tf.function(train_step)

    rng = np.random.default_rng(0)
    with writer.as_default():
        for _ in range(args.steps):
            idx = rng.integers(0, len(x_train), 32)
            loss = train_step(x_train[idx], y_train[idx])
    writer.close()
    print(
        f"{args.steps} steps, final loss {float(loss):.4f}; summaries in {args.logdir}"
    )


if __name__ == "__main__":
    main()
