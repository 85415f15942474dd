"""`jaxtape.keras.datasets` against tf.keras's (Keras 3's) loaders, offline.

Each dataset gets a small synthetic file in the exact on-disk format Keras
downloads (npz, gzipped IDX, tar of pickled CIFAR batches, word-index json),
written once into a temporary Keras cache. Keras reads it through its own
`get_file` (pointed at that cache, hash check off); jaxtape reads it with its
module's hash constant set to the synthetic file's hash. Both must return the
same values, dtypes, shapes and order, or raise the same exception type.
"""

import inspect
import io
import json
import os
import pickle
import sys
import tarfile
import urllib.error
import zipfile

import numpy as np
import pytest

import jaxtape
from jaxtape._src.keras.datasets import _files
from jaxtape.keras import datasets

# -- synthetic files in Keras's formats ------------------------------------------


def _ragged(rng, n, vocab, longest):
    out = np.empty(n, dtype=object)
    for i in range(n):  # lists of Python ints, as in Keras's files
        out[i] = rng.integers(1, vocab, rng.integers(1, longest)).tolist()
    return out


def _idx(path, header, data):
    import gzip

    with gzip.open(path, "wb") as f:
        f.write(header + data.tobytes())


def _cifar_tar(path, folder, batches, mode):
    with tarfile.open(path, mode) as tar:
        for name, batch in batches.items():
            payload = pickle.dumps(batch, protocol=4)
            info = tarfile.TarInfo(f"{folder}/{name}")
            info.size = len(payload)
            tar.addfile(info, io.BytesIO(payload))


def _cifar10_batch(i, n):
    rng = np.random.default_rng(i)
    block = rng.integers(0, 256, (1000, 3072), dtype=np.uint8)
    # Keras's loader assumes 10,000 images per batch: full size, cheaply made.
    data = np.tile(block, (n // 1000, 1)) + np.uint8(i)
    labels = rng.integers(0, 10, n).tolist()
    return {b"batch_label": b"b%d" % i, b"labels": labels, b"data": data}


def _write_cache(home):
    rng = np.random.default_rng(0)
    d = home / "datasets"
    (d / "fashion-mnist").mkdir(parents=True)
    mnist = {
        "x_train": rng.integers(0, 256, (6, 28, 28), dtype=np.uint8),
        "y_train": rng.integers(0, 10, 6).astype(np.uint8),
        "x_test": rng.integers(0, 256, (3, 28, 28), dtype=np.uint8),
        "y_test": rng.integers(0, 10, 3).astype(np.uint8),
    }
    np.savez(d / "mnist.npz", **mnist)
    for split, n in (("train", 5), ("t10k", 4)):
        labels = rng.integers(0, 10, n).astype(np.uint8)
        images = rng.integers(0, 256, (n, 28, 28), dtype=np.uint8)
        _idx(d / f"fashion-mnist/{split}-labels-idx1-ubyte.gz",
             np.array([2049, n], ">i4").tobytes(), labels)  # fmt: skip
        _idx(d / f"fashion-mnist/{split}-images-idx3-ubyte.gz",
             np.array([2051, n, 28, 28], ">i4").tobytes(), images)  # fmt: skip
    names = [f"data_batch_{i}" for i in range(1, 6)] + ["test_batch"]
    batches = {name: _cifar10_batch(i, 10000) for i, name in enumerate(names)}
    # Uncompressed (any tar is read, by Keras too): gzip of 180 MB is slow here.
    _cifar_tar(d / "cifar-10-batches-py-target_archive", "cifar-10-batches-py",
               batches, "w")  # fmt: skip

    def c100(n):
        return {
            b"data": rng.integers(0, 256, (n, 3072), dtype=np.uint8),
            b"fine_labels": rng.integers(0, 100, n).tolist(),
            b"coarse_labels": rng.integers(0, 20, n).tolist(),
        }

    _cifar_tar(d / "cifar-100-python-target_archive", "cifar-100-python",
               {"train": c100(7), "meta": {b"x": 1}, "test": c100(4)},
               "w:gz")  # fmt: skip
    np.savez(d / "imdb.npz", x_train=_ragged(rng, 12, 30, 9),
             y_train=rng.integers(0, 2, 12), x_test=_ragged(rng, 9, 30, 9),
             y_test=rng.integers(0, 2, 9))  # fmt: skip
    np.savez(d / "reuters.npz", x=_ragged(rng, 15, 25, 8), y=rng.integers(0, 46, 15))
    for name in ("imdb", "reuters"):
        index = {f"w{i}": i for i in range(1, 30)}
        (d / f"{name}_word_index.json").write_text(json.dumps(index))
    np.savez(d / "boston_housing.npz", x=rng.normal(size=(23, 13)),
             y=rng.normal(20, 5, 23))  # fmt: skip
    np.savez(d / "california_housing.npz",
             x=rng.normal(size=(640, 8)).astype(np.float32),
             y=rng.normal(2e5, 5e4, 640).astype(np.float32))  # fmt: skip


# Each jaxtape module's hash constants and the cached file they guard.
_HASHED = {
    "mnist": {"SHA256": "mnist.npz"},
    "cifar10": {"SHA256": "cifar-10-batches-py-target_archive"},
    "cifar100": {"SHA256": "cifar-100-python-target_archive"},
    "imdb": {"SHA256": "imdb.npz", "WORD_INDEX_MD5": "imdb_word_index.json"},
    "reuters": {"SHA256": "reuters.npz", "WORD_INDEX_MD5": "reuters_word_index.json"},
    "boston_housing": {"SHA256": "boston_housing.npz"},
    "california_housing": {"SHA256": "california_housing.npz"},
}


@pytest.fixture(scope="module")
def cache(tmp_path_factory):
    home = tmp_path_factory.mktemp("keras_home")
    _write_cache(home)
    return home


@pytest.fixture
def offline(monkeypatch):
    """No download may happen: one would raise like a machine without network."""

    def no_network(url, *args, **kwargs):
        raise urllib.error.URLError("no network in tests")

    monkeypatch.setattr(_files.urllib.request, "urlretrieve", no_network)
    monkeypatch.delenv("JAXTAPE_MNIST_PATH", raising=False)


def _jaxtape_fn(monkeypatch, home, name, fn):
    monkeypatch.setenv("KERAS_HOME", str(home))
    module = sys.modules[getattr(getattr(datasets, name), fn).__module__]
    for const, fname in _HASHED.get(name, {}).items():
        algorithm = "md5" if const.endswith("MD5") else "sha256"
        monkeypatch.setattr(
            module, const, _files.file_hash(home / "datasets" / fname, algorithm)
        )
    return getattr(getattr(datasets, name), fn)


def _keras_fn(tf, monkeypatch, home, name, fn):
    keras_fn = getattr(getattr(tf.keras.datasets, name), fn)
    module = sys.modules[keras_fn.__module__]
    if hasattr(module, "get_file"):
        real = module.get_file

        def get_file(*args, **kwargs):  # Keras's own, on our cache, no hash
            return real(*args, **{**kwargs, "file_hash": None, "cache_dir": str(home)})

        monkeypatch.setattr(module, "get_file", get_file)
    return keras_fn


def _assert_same(got, want, where="result"):
    assert type(got) is type(want), (where, type(got), type(want))
    if isinstance(want, (tuple, list)):
        assert len(got) == len(want), where
        for i, (g, w) in enumerate(zip(got, want)):
            _assert_same(g, w, f"{where}[{i}]")
    elif isinstance(want, np.ndarray):
        assert (got.dtype, got.shape) == (want.dtype, want.shape), where
        if want.dtype == object:  # ragged sequences: lists of Python ints
            assert got.tolist() == want.tolist(), where
            flat_g, flat_w = got.ravel().tolist(), want.ravel().tolist()
            assert [type(x) for x in flat_g] == [type(x) for x in flat_w], where
        elif not np.array_equal(got, want):  # fast for CIFAR's 150 MB
            np.testing.assert_array_equal(got, want, err_msg=where)
    else:
        assert got == want, where


_SEQ = [
    {},
    {"num_words": 12, "skip_top": 4},
    {"maxlen": 6},
    {"seed": 7},
    {"start_char": None},
    {"start_char": None, "index_from": 0},
    {"oov_char": None, "num_words": 15},
    {"start_char": 5, "oov_char": 3, "index_from": 6, "skip_top": 2},
    {"maxlen": 1},  # nothing kept
]
CASES = [
    ("mnist", "load_data", {}),
    ("mnist", "load_data", {"path": os.path.join("sub", "mnist.npz")}),
    ("fashion_mnist", "load_data", {}),
    ("cifar10", "load_data", {}),
    ("cifar100", "load_data", {}),
    ("cifar100", "load_data", {"label_mode": "coarse"}),
    ("cifar100", "load_data", {"label_mode": "superclass"}),
    *[("imdb", "load_data", kw) for kw in _SEQ],
    ("imdb", "load_data", {"path": os.path.join("sub", "imdb.npz")}),
    ("imdb", "get_word_index", {}),
    *[("reuters", "load_data", kw) for kw in _SEQ],
    ("reuters", "load_data", {"test_split": 0.5, "seed": 3}),
    ("reuters", "get_word_index", {}),
    ("reuters", "get_label_names", {}),
    ("boston_housing", "load_data", {}),
    ("boston_housing", "load_data", {"test_split": 0.3, "seed": 1}),
    ("boston_housing", "load_data", {"test_split": 0}),
    ("boston_housing", "load_data", {"test_split": 1.0}),
    ("california_housing", "load_data", {}),
    ("california_housing", "load_data", {"version": "small", "seed": 5}),
    ("california_housing", "load_data", {"test_split": 0.25}),
    ("california_housing", "load_data", {"version": "medium"}),
]


@pytest.mark.parametrize(
    "name,fn,kwargs", CASES, ids=[f"{n}.{f}{k or ''}" for n, f, k in CASES]
)
def test_loader_matches_keras_on_the_same_cached_file(
    name, fn, kwargs, cache, offline, monkeypatch, tf
):
    keras_fn = _keras_fn(tf, monkeypatch, cache, name, fn)
    ours = _jaxtape_fn(monkeypatch, cache, name, fn)
    try:
        want = keras_fn(**kwargs)
    except Exception as e:  # noqa: BLE001 - the same type must come out of ours
        with pytest.raises(type(e)):
            ours(**kwargs)
        return
    _assert_same(ours(**kwargs), want)


@pytest.mark.parametrize("name", ["cifar100"])  # the layout code cifar10 shares
def test_cifar_follows_the_image_data_format_as_keras(
    name, cache, offline, tf, monkeypatch
):
    keras_fn = _keras_fn(tf, monkeypatch, cache, name, "load_data")
    ours = _jaxtape_fn(monkeypatch, cache, name, "load_data")
    tf.keras.config.set_image_data_format("channels_first")
    jaxtape.keras.config.set_image_data_format("channels_first")
    try:
        want, got = keras_fn(), ours()
    finally:
        tf.keras.config.set_image_data_format("channels_last")
        jaxtape.keras.config.set_image_data_format("channels_last")
    assert got[0][0].shape[1:] == (3, 32, 32)
    _assert_same(got, want)


@pytest.mark.parametrize(
    "name,fname,subdir,url",
    [
        ("cifar10", "cifar-10-batches-py-target_archive", "datasets",
         "https://www.cs.toronto.edu/~kriz/cifar-10-python.tar.gz"),
        ("fashion_mnist", "train-labels-idx1-ubyte.gz", "datasets/fashion-mnist",
         _files.ORIGIN_FOLDER + "train-labels-idx1-ubyte.gz"),
        ("imdb", "imdb.npz", "datasets", _files.ORIGIN_FOLDER + "imdb.npz"),
        ("california_housing", "california_housing.npz", "datasets",
         _files.ORIGIN_FOLDER + "california_housing.npz"),
    ],
    ids=["cifar10", "fashion_mnist", "imdb", "california_housing"],
)  # fmt: skip
def test_missing_file_offline_names_the_url_and_the_cache_path(
    name, fname, subdir, url, offline, monkeypatch, tmp_path
):
    monkeypatch.setenv("KERAS_HOME", str(tmp_path))
    with pytest.raises(OSError, match="URL fetch failure") as err:
        getattr(datasets, name).load_data()
    assert url in str(err.value) and str(tmp_path / subdir / fname) in str(err.value)
    assert list((tmp_path / subdir).iterdir()) == []  # no partial file left


def test_stale_cached_file_is_fetched_again_and_replaced_atomically(
    cache, monkeypatch, tmp_path
):
    from jaxtape._src.keras.datasets import imdb

    monkeypatch.setenv("KERAS_HOME", str(tmp_path))
    good = cache / "datasets" / "imdb_word_index.json"
    stale = tmp_path / "datasets" / "imdb_word_index.json"
    stale.parent.mkdir()
    stale.write_text('{"old": 1}')
    served = []

    def fake_download(url, target):
        served.append(url)
        with open(target, "wb") as f:
            f.write(good.read_bytes())

    monkeypatch.setattr(_files.urllib.request, "urlretrieve", fake_download)
    with pytest.raises(ValueError, match="MD5") as err:  # Keras's real hash
        imdb.get_word_index()
    assert str(stale) in str(err.value) and stale.read_text() == '{"old": 1}'
    monkeypatch.setattr(imdb, "WORD_INDEX_MD5", _files.file_hash(good, "md5"))
    assert imdb.get_word_index() == json.loads(good.read_text())
    assert served == [imdb.WORD_INDEX_ORIGIN] * 2
    assert sorted(p.name for p in stale.parent.iterdir()) == [stale.name]
    umask = os.umask(0)
    os.umask(umask)
    assert stale.stat().st_mode & 0o777 == 0o666 & ~umask  # not mkstemp's 0600
    assert imdb.get_word_index()["w3"] == 3 and len(served) == 2  # now cached


def test_pickled_payloads_may_only_rebuild_arrays(tmp_path, monkeypatch, tf):
    """A tampered `.npz` cannot run code: both loaders refuse its pickle."""

    class Exploit:
        def __reduce__(self):
            return (os.system, ("echo pwned",))

    path = tmp_path / "datasets" / "reuters.npz"
    path.parent.mkdir()
    with zipfile.ZipFile(path, "w") as z:
        for key in ("x", "y"):
            buf = io.BytesIO()
            np.lib.format.write_array_header_1_0(
                buf, {"descr": "|O", "fortran_order": False, "shape": (1,)}
            )
            buf.write(pickle.dumps(np.array([Exploit()], dtype=object)))
            z.writestr(f"{key}.npy", buf.getvalue())
    keras_fn = _keras_fn(tf, monkeypatch, tmp_path, "reuters", "load_data")
    with pytest.raises(pickle.UnpicklingError):
        keras_fn()
    monkeypatch.setenv("KERAS_HOME", str(tmp_path))
    module = sys.modules[datasets.reuters.load_data.__module__]
    monkeypatch.setattr(module, "SHA256", _files.file_hash(path))
    with pytest.raises(pickle.UnpicklingError, match="Refusing"):
        datasets.reuters.load_data()


def test_imdb_refuses_unknown_keyword_arguments(cache, offline, monkeypatch):
    ours = _jaxtape_fn(monkeypatch, cache, "imdb", "load_data")
    with pytest.raises(TypeError, match="nb_words"):
        ours(nb_words=10)


def test_public_layout_and_signatures_match_keras(tf):
    import jaxtape.keras.datasets.cifar10 as cifar10  # importable as Keras's

    assert cifar10.load_data is jaxtape.keras.datasets.cifar10.load_data
    for name, fn in sorted({(n, f) for n, f, _ in CASES}):
        ours = getattr(getattr(jaxtape.keras.datasets, name), fn)
        want = getattr(getattr(tf.keras.datasets, name), fn)
        assert _params(ours) == _params(want), (name, fn)


def _params(fn):
    return [
        (p.name, p.default, p.kind) for p in inspect.signature(fn).parameters.values()
    ]


@pytest.mark.parametrize("name", ["imdb", "cifar100", "boston_housing"])
def test_corrupt_cached_file_says_which_file_and_what_to_do(
    name, offline, monkeypatch, tmp_path
):
    fname = _HASHED[name]["SHA256"]
    path = tmp_path / "datasets" / fname
    path.parent.mkdir()
    if name == "cifar100":  # a tar without the test batch
        train = {b"data": np.zeros((1, 3072)), b"fine_labels": [0]}
        _cifar_tar(path, "cifar-100-python", {"train": train}, "w:gz")
    else:
        path.write_bytes(b"not a zip file")
    monkeypatch.setenv("KERAS_HOME", str(tmp_path))
    module = sys.modules[getattr(datasets, name).load_data.__module__]
    monkeypatch.setattr(module, "SHA256", _files.file_hash(path))
    with pytest.raises(ValueError, match="Delete it") as err:
        getattr(datasets, name).load_data()
    assert str(path) in str(err.value)
