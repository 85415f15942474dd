"""MNIST with a GradientTape custom training loop, in the seeds' style.

    python examples/mnist_tape.py            # 3 epochs, >= 97% test accuracy
    python examples/mnist_tape.py --limit 512 --epochs 1   # a quick smoke run

The data comes from `keras.datasets.mnist.load_data()` ($JAXTAPE_MNIST_PATH
points it at a local mnist.npz; otherwise Keras's cache or a download).
"""

import argparse
import time

import numpy as np
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn

import jaxtape as tf


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--limit", type=int, default=None, help="use only N images")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    tf.random.set_seed(args.seed)
    console = Console(highlight=False)

    (x_train, y_train), (x_test, y_test) = tf.keras.datasets.mnist.load_data()
    x_train, x_test = x_train / 255.0, x_test / 255.0
    if args.limit:
        x_train, y_train = x_train[: args.limit], y_train[: args.limit]
        x_test, y_test = x_test[: args.limit], y_test[: args.limit]

    model = tf.keras.Sequential(
        [
            tf.keras.layers.Flatten(input_shape=(28, 28)),
            tf.keras.layers.Dense(128, activation="relu"),
            tf.keras.layers.Dense(10),
        ]
    )
    loss_object = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True)
    optimizer = tf.keras.optimizers.Adam()
    train_loss = tf.keras.metrics.Mean(name="train_loss")
    train_accuracy = tf.keras.metrics.SparseCategoricalAccuracy(name="train_accuracy")
    test_accuracy = tf.keras.metrics.SparseCategoricalAccuracy(name="test_accuracy")

    def train_step(images, labels):
        with tf.GradientTape() as tape:
            predictions = model(images, training=True)
            loss = loss_object(labels, predictions)
        gradients = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(gradients, model.trainable_variables))
        train_loss(loss)
        train_accuracy(labels, predictions)
        return loss

    def test_step(images, labels):
        test_accuracy(labels, model(images, training=False))

    rng = np.random.default_rng(args.seed)
    steps = int(np.ceil(len(x_train) / args.batch_size))
    history = []
    for epoch in range(args.epochs):
        for metric in (train_loss, train_accuracy, test_accuracy):
            metric.reset_state()
        order = rng.permutation(len(x_train))
        start = time.perf_counter()
        console.print(f"Epoch {epoch + 1}/{args.epochs}")
        with Progress(
            MofNCompleteColumn(),
            BarColumn(bar_width=20),
            TextColumn("{task.fields[info]}"),
            console=console,
        ) as progress:
            task = progress.add_task("train", total=steps, info="")
            for step in range(steps):
                idx = order[step * args.batch_size : (step + 1) * args.batch_size]
                train_step(x_train[idx].astype(np.float32), y_train[idx])
                if step % 50 == 0 or step == steps - 1:
                    progress.update(
                        task,
                        completed=step + 1,
                        info=f"loss: {float(train_loss.result()):.4f} - accuracy: "
                        f"{float(train_accuracy.result()):.4f}",
                    )
        for i in range(0, len(x_test), 1000):
            test_step(x_test[i : i + 1000].astype(np.float32), y_test[i : i + 1000])
        elapsed = time.perf_counter() - start
        record = {
            "loss": float(train_loss.result()),
            "accuracy": float(train_accuracy.result()),
            "test_accuracy": float(test_accuracy.result()),
        }
        history.append(record)
        console.print(
            f"  {elapsed:.1f}s ({elapsed / steps * 1e3:.2f} ms/step) - loss: "
            f"{record['loss']:.4f} - accuracy: {record['accuracy']:.4f} - "
            f"test accuracy: {record['test_accuracy']:.4f}"
        )
    console.print(f"Final test accuracy: {history[-1]['test_accuracy']:.4f}")
    return history


if __name__ == "__main__":
    main()
