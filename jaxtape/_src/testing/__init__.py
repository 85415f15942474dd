"""`tf.test` for TF test code on jaxtape: TestCase, compute_gradient, platform
queries. Layer L4: imports `core`, `ops`, `state`, `structured`, `autodiff`."""
