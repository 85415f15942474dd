"""MNIST with `compile`/`fit`/`evaluate`, the Keras way.

python examples/mnist_fit.py                 # 3 epochs
python examples/mnist_fit.py --limit 512 --epochs 1
"""

import argparse

import jaxtape as tf


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--limit", type=int, default=None, help="use only N images")
    parser.add_argument("--verbose", type=int, default=1)
    args = parser.parse_args(argv)
    tf.random.set_seed(0)

    (x_train, y_train), (x_test, y_test) = tf.keras.datasets.mnist.load_data()
    x_train = (x_train / 255.0).astype("float32")
    x_test = (x_test / 255.0).astype("float32")
    if args.limit:
        x_train, y_train = x_train[: args.limit], y_train[: args.limit]
        x_test, y_test = x_test[: args.limit], y_test[: args.limit]

    model = tf.keras.Sequential(
        [
            tf.keras.Input(shape=(28, 28)),
            tf.keras.layers.Flatten(),
            tf.keras.layers.Dense(128, activation="relu"),
            tf.keras.layers.Dense(10),
        ]
    )
    model.compile(
        optimizer="adam",
        loss=tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True),
        metrics=["accuracy"],
    )
    history = model.fit(
        x_train,
        y_train,
        batch_size=args.batch_size,
        epochs=args.epochs,
        verbose=args.verbose,
    )
    loss, accuracy = model.evaluate(x_test, y_test, verbose=args.verbose)
    print(f"Test accuracy: {accuracy:.4f}")
    return history, accuracy


if __name__ == "__main__":
    main()
