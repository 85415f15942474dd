"""`jaxtape.audio` (TF's `tf.audio`): re-exports only."""

from jaxtape._src.io.audio_codecs import decode_wav, encode_wav  # noqa: F401

from jaxtape._src import missing as _missing

__getattr__ = _missing.module_getattr(__name__)  # TF names jaxtape lacks say so
