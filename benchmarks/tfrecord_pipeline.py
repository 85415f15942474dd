"""A TFRecord input pipeline against tf.data on the same files (images/s).

Writes 8 TFRecord files of `tf.train.Example`s (a 28x28 uint8 image as raw
bytes, an int64 label), then reads them through

    list_files -> interleave(TFRecordDataset, cycle_length=4, parallel)
               -> map(parse) -> batch(256) -> prefetch

in two forms: `map` per record (`parse_single_example` + `decode_raw`), and
TF's vectorized form, `batch` before `map` (`parse_example` on a batch of
records). Each side runs the same pipeline code with its own module
(`jaxtape` or real TensorFlow, from the `parity` extra) over the same files,
alternating, and consumes each batch as NumPy. Printed: images/s of each and
the ratio jaxtape / TF (above 1: jaxtape is faster).

Run: python benchmarks/tfrecord_pipeline.py [--images 40000] [--rounds 3]
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time

import numpy as np

import jaxtape

SHAPE = (28, 28)


def write_files(mod, folder, n_images, n_files=8):
    rng = np.random.default_rng(0)
    per_file = n_images // n_files
    for f in range(n_files):
        path = os.path.join(folder, f"part-{f:02d}.tfrecord")
        with mod.io.TFRecordWriter(path) as writer:
            for _ in range(per_file):
                image = rng.integers(0, 256, SHAPE, dtype=np.uint8)
                example = mod.train.Example(
                    features=mod.train.Features(
                        feature={
                            "image": mod.train.Feature(
                                bytes_list=mod.train.BytesList(value=[image.tobytes()])
                            ),
                            "label": mod.train.Feature(
                                int64_list=mod.train.Int64List(
                                    value=[int(rng.integers(10))]
                                )
                            ),
                        }
                    )
                )
                writer.write(example.SerializeToString())
    return os.path.join(folder, "part-*.tfrecord"), per_file * n_files


def pipeline(mod, pattern, vectorized):
    spec = {
        "image": mod.io.FixedLenFeature([], mod.string),
        "label": mod.io.FixedLenFeature([], mod.int64),
    }
    autotune = mod.data.AUTOTUNE

    def parse_one(record):
        parsed = mod.io.parse_single_example(record, spec)
        image = mod.reshape(mod.io.decode_raw(parsed["image"], mod.uint8), SHAPE)
        return mod.cast(image, mod.float32) / 255.0, parsed["label"]

    def parse_batch(records):
        parsed = mod.io.parse_example(records, spec)
        images = mod.io.decode_raw(parsed["image"], mod.uint8)
        images = mod.reshape(images, (-1, *SHAPE))
        return mod.cast(images, mod.float32) / 255.0, parsed["label"]

    ds = mod.data.Dataset.list_files(pattern, shuffle=False).interleave(
        mod.data.TFRecordDataset, cycle_length=4, num_parallel_calls=autotune
    )
    if vectorized:
        ds = ds.batch(256).map(parse_batch, num_parallel_calls=autotune)
    else:
        ds = ds.map(parse_one, num_parallel_calls=autotune).batch(256)
    return ds.prefetch(autotune)


def images_per_second(ds, n_images):
    t0 = time.perf_counter()
    seen = 0
    for images, _ in ds:
        seen += int(np.asarray(images).shape[0])
    elapsed = time.perf_counter() - t0
    if seen != n_images:
        raise RuntimeError(f"the pipeline gave {seen} images of {n_images}")
    return n_images / elapsed


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--images", type=int, default=40000)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    try:
        import tensorflow as tf_real
    except ImportError:  # pragma: no cover
        tf_real = None
    with tempfile.TemporaryDirectory() as folder:
        pattern, n = write_files(jaxtape, folder, args.images)
        print(f"# tfrecord_pipeline: {n} images of 28x28 uint8 in 8 files")
        for vectorized in (False, True):
            name = (
                "batch -> map(parse_example)"
                if vectorized
                else ("map(parse_single_example) -> batch")
            )
            ours, theirs, ratios = [], [], []
            for _ in range(args.rounds):
                a = images_per_second(pipeline(jaxtape, pattern, vectorized), n)
                ours.append(a)
                if tf_real is not None:
                    b = images_per_second(pipeline(tf_real, pattern, vectorized), n)
                    theirs.append(b)
                    ratios.append(a / b)
            line = f"{name:36s} jaxtape {statistics.median(ours):10.0f} images/s"
            if theirs:
                line += (
                    f"   tf.data {statistics.median(theirs):10.0f} images/s"
                    f"   jaxtape/tf.data {statistics.median(ratios):5.2f}x"
                )
            print(line)


if __name__ == "__main__":
    main()
