"""A short GradientTape demo: fit y = 3x + 2 with a hand-written training loop.

Run: python examples/gradient_tape_demo.py [--steps N]
(The MNIST GradientTape example becomes the main job with the Keras issue.)
"""

import argparse

import numpy as np

import jaxtape as tf


def main(steps: int = 200) -> float:
    rng = np.random.default_rng(0)
    xs = tf.constant(rng.uniform(-1, 1, (256, 1)).astype(np.float32))
    ys = 3.0 * xs + 2.0 + tf.constant(rng.normal(0, 0.05, (256, 1)).astype(np.float32))

    w = tf.Variable(0.0, name="w")
    b = tf.Variable(0.0, name="b")
    lr = 0.1
    for step in range(steps):
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(tf.square(w * xs + b - ys))
        dw, db = tape.gradient(loss, [w, b])
        w.assign_sub(lr * dw)
        b.assign_sub(lr * db)
        if step % 50 == 0 or step == steps - 1:
            print(
                f"step {step:4d}  loss {loss.numpy():.5f}  w {w.numpy():.3f}  "
                f"b {b.numpy():.3f}"
            )
    print("compiled-backward cache:", tf.autodiff.cache_stats())
    return float(loss.numpy())


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=200)
    main(parser.parse_args().steps)
