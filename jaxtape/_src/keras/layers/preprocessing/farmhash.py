"""FarmHash's `Fingerprint64`, for Keras's `Hashing` layer: it lives in
`structured/farmhash` (used by `jaxtape.strings.to_hash_bucket_fast` too)."""

from jaxtape._src.structured.farmhash import fingerprint64

__all__ = ["fingerprint64"]
