"""`keras.utils.audio_dataset_from_directory`: `.wav` files in class
subfolders as a labelled, batched jaxtape `Dataset`. Layer L5.

Files are indexed as for `image_dataset_from_directory`
(`directory_datasets.py`); each file is decoded with the standard library's
`wave` module as TF's `audio.decode_wav` decodes it (16-bit PCM only,
samples / 32768 as float32, shape `(samples, channels)`).
"""

from __future__ import annotations

import wave

import numpy as np

from jaxtape._src.core import errors
from jaxtape._src.core.tensor import TensorSpec
from jaxtape._src.data.dataset import Dataset
from jaxtape._src.keras import directory_datasets as _dirs


def _decode_wav(path, desired_samples=-1) -> np.ndarray:
    """TF's `decode_wav`: float32 `(samples, channels)` in [-1, 1), cut or
    zero-padded to `desired_samples` (-1: all)."""
    with wave.open(path, "rb") as f:
        bits = f.getsampwidth() * 8
        if bits != 16:
            raise errors.InvalidArgumentError(
                None, None, f"Can only read 16-bit WAV files, but received {bits}"
            )
        channels = f.getnchannels()
        frames = f.readframes(f.getnframes())
    audio = np.frombuffer(frames, "<i2").reshape(-1, channels) / np.float32(32768.0)
    audio = audio.astype(np.float32)
    if desired_samples >= 0:
        out = np.zeros((desired_samples, channels), np.float32)
        n = min(desired_samples, len(audio))
        out[:n] = audio[:n]
        audio = out
    return audio


def audio_dataset_from_directory(
    directory, labels="inferred", label_mode="int", class_names=None,
    batch_size=32, sampling_rate=None, output_sequence_length=None,
    ragged=False, shuffle=True, seed=None, validation_split=None, subset=None,
    follow_links=False, verbose=True,
):  # fmt: skip
    """`.wav` files in class subfolders as a Dataset of `(audio, labels)`
    batches (Keras's `audio_dataset_from_directory`): audio float32
    `(batch, samples, channels)`, each batch zero-padded to its longest clip
    (Keras's `padded_batch`) or every clip cut/padded to
    `output_sequence_length`; labels as for `image_dataset_from_directory`
    ('int' int32, 'categorical' one-hot float32, 'binary' float32 (n, 1),
    None no labels). The Dataset has `class_names`.

    Differences from Keras: `sampling_rate` (resampling, which needs
    tensorflow-io in Keras) and `ragged=True` raise NotImplementedError;
    the files are decoded when the Dataset is made.
    """
    if labels not in ("inferred", None):
        if not isinstance(labels, (list, tuple)):
            raise ValueError(
                "The `labels` argument should be a list/tuple of integer labels, "
                "of the same size as the number of audio files in the target "
                "directory. If you wish to infer the labels from the "
                "subdirectory names in the target directory, pass "
                '`labels="inferred"`. If you wish to get a dataset that only '
                "contains audio samples (no labels), pass `labels=None`. "
                f"Received: labels={labels}"
            )
        if class_names:
            raise ValueError(
                'You can only pass `class_names` if `labels="inferred"`. '
                f"Received: labels={labels}, and class_names={class_names}"
            )
    if label_mode not in {"int", "categorical", "binary", None}:
        raise ValueError(
            '`label_mode` argument must be one of "int", "categorical", "binary", '
            f"or None. Received: label_mode={label_mode}"
        )
    if ragged and output_sequence_length is not None:
        raise ValueError("Cannot set both `ragged` and `output_sequence_length`")
    if sampling_rate is not None:
        if not isinstance(sampling_rate, int):
            raise ValueError(
                "`sampling_rate` should have an integer value. "
                f"Received: sampling_rate={sampling_rate}"
            )
        if sampling_rate <= 0:
            raise ValueError(
                "`sampling_rate` should be higher than 0. "
                f"Received: sampling_rate={sampling_rate}"
            )
        raise NotImplementedError(
            "audio_dataset_from_directory(sampling_rate=...) (resampling, "
            "tensorflow-io's in Keras) is not supported by jaxtape; resample the "
            "files beforehand and leave `sampling_rate=None`."
        )
    if ragged:
        raise NotImplementedError(
            "audio_dataset_from_directory(ragged=True) is not supported by "
            "jaxtape; use padded batches (the default) or `output_sequence_length`."
        )
    if labels is None or label_mode is None:
        labels, label_mode = None, None
    _dirs._check_split(validation_split, subset, shuffle, seed)
    if seed is None:
        seed = np.random.randint(int(1e6))
    buffer = 1024 if batch_size is None else batch_size * 8
    paths, label_array, names = _dirs._index(
        directory, labels, (".wav",), class_names, shuffle, seed, follow_links,
        verbose,
    )  # fmt: skip
    if label_mode == "binary" and len(names or []) != 2:
        raise ValueError(
            'When passing `label_mode="binary"`, there must be exactly 2 '
            f"class_names. Received: class_names={names}"
        )
    length = -1 if output_sequence_length is None else int(output_sequence_length)

    def make(subset_name, shuffled, what=""):
        # (Keras reports the split even when not verbose)
        p, lab = _dirs._split(paths, label_array, validation_split, subset_name, True)
        if not p:
            raise ValueError(
                f"No {what}audio files found in directory {directory}. "
                "Allowed format(s): ('.wav',)"
            )
        clips = [_decode_wav(path, length) for path in p]
        channels = clips[0].shape[-1]
        spec = TensorSpec((None, channels), "float32")
        if label_mode is None:
            ds = Dataset.from_generator(lambda: iter(clips), output_signature=spec)
        else:
            y = _dirs._labels(lab, label_mode, len(names or []))
            label_spec = TensorSpec(y.shape[1:], y.dtype.name)
            ds = Dataset.from_generator(
                lambda: zip(clips, y), output_signature=(spec, label_spec)
            )
        if shuffled:
            ds = ds.shuffle(buffer, seed=seed)
        if batch_size is not None:
            if output_sequence_length is None:
                ds = ds.padded_batch(batch_size)
            else:
                ds = ds.batch(batch_size)
        ds.class_names = names  # type: ignore[attr-defined]
        return ds

    if subset == "both":
        return (
            make("training", shuffle, "training "),
            make("validation", False, "validation "),
        )
    return make(subset, shuffle)
