"""`jaxtape.io.gfile` against TF 2.21's `tf.io.gfile` on local paths.

Each row runs one scenario in a fresh directory under both modules and
compares what it returns, with the directory written as `<root>`; an
exception compares by its class name (TF's `errors.*` classes).
"""

from __future__ import annotations

import os

import pytest

import jaxtape


def _setup(root: str) -> None:
    os.makedirs(os.path.join(root, "d", "e"))
    with open(os.path.join(root, "a.txt"), "w") as f:
        f.write("hello\nworld\nlast")
    with open(os.path.join(root, "d", "b.bin"), "wb") as f:
        f.write(b"\x00\x01\x02\n\xff")


def _reads(g, p):
    with g.GFile(p) as f:
        return [f.read(3), f.tell(), f.readline(), f.readlines(), f.read(), f.size()]


def _seeks(g, p):
    out = []
    with g.GFile(p, "rb") as f:
        for args, kwargs in (((2,), {}), ((), {"offset": 1}), ((-2, 2), {}),
                             ((1, 1), {}), ((-1,), {}), ((0, 2), {})):  # fmt: skip
            try:
                f.seek(*args, **kwargs)
            except Exception as e:  # noqa: BLE001 - the class is the result
                out.append(type(e).__name__)
            out.append((f.tell(), f.read(2)))
    return out


def _writes(g, root):
    p = os.path.join(root, "w.txt")
    f = g.GFile(p, "w")
    f.write("text ")
    f.write(b"bytes")
    before = open(p).read() if os.path.exists(p) else None  # buffered, as TF
    f.flush()
    after_flush = open(p).read()
    f.close()
    with g.GFile(p, "a") as f:
        f.write("\nappended")
    with g.GFile(p, "rb") as f:
        return [before, after_flush, f.read(), g.GFile(p).mode, g.GFile(p, "wb").name]


def _error(fn):
    def run(g, root):
        try:
            fn(g, root)
        except Exception as e:  # noqa: BLE001 - the class is the result
            return type(e).__name__
        return "no error"

    return run


def _walk(g, root, topdown):
    return [(d, sorted(s), sorted(f)) for d, s, f in g.walk(root, topdown=topdown)]


def _copy_rename(g, root):
    a, b, c = (os.path.join(root, n) for n in ("a.txt", "b.txt", "c.txt"))
    g.copy(a, b)
    copied = open(b).read()
    g.copy(a, b, overwrite=True)
    g.rename(b, c)
    g.rename(c, a, overwrite=True)
    return [copied, sorted(g.listdir(root)), open(a).read()]


def _dirs(g, root):
    x = os.path.join(root, "x", "y", "z")
    g.makedirs(x)
    g.makedirs(x)  # an existing directory is fine
    g.mkdir(os.path.join(root, "x", "new"))
    g.mkdir(os.path.join(root, "x", "new"))  # TF 2.21: no error either
    made = [g.isdir(x), sorted(g.listdir(os.path.join(root, "x")))]
    g.rmtree(os.path.join(root, "x"))
    g.remove(os.path.join(root, "a.txt"))
    return made + [g.exists(os.path.join(root, "x")), sorted(g.listdir(root))]


def _stat(g, root):
    st = g.stat(os.path.join(root, "a.txt"))
    d = g.stat(os.path.join(root, "d"))
    return [st.length, st.is_directory, type(st.mtime_nsec).__name__, d.is_directory]


J = os.path.join
ROWS = {
    "exists": lambda g, r: [g.exists(J(r, "a.txt")), g.exists(J(r, "zz")),
                            g.exists(J(r, "d")), g.isdir(J(r, "d")),
                            g.isdir(J(r, "a.txt")), g.isdir(J(r, "zz"))],
    "file_scheme": lambda g, r: [g.exists("file://" + J(r, "a.txt")),
                                 sorted(g.listdir("file://" + r))],
    "listdir": lambda g, r: sorted(g.listdir(r)),
    "glob": lambda g, r: [sorted(g.glob(J(r, "*"))), g.glob(J(r, "zz*")),
                          sorted(g.glob([J(r, "a*"), J(r, "d", "*")]))],
    "join": lambda g, r: [g.join("a", "b", "/c", "d"), g.join("gs://b", "c"),
                          g.join(b"a", b"b"), g.join("a/", "b")],
    "stat": _stat,
    "reads": lambda g, r: _reads(g, J(r, "a.txt")),
    "iterate": lambda g, r: [list(g.GFile(J(r, "a.txt"))),
                             list(g.GFile(J(r, "d", "b.bin"), "rb"))],
    "seeks": lambda g, r: _seeks(g, J(r, "a.txt")),
    "writes": _writes,
    "copy_rename": _copy_rename,
    "dirs": _dirs,
    "walk": lambda g, r: _walk(g, r, True),
    "walk_bottom_up": lambda g, r: _walk(g, r, False),
    "walk_missing": lambda g, r: list(g.walk(J(r, "zz"))),
    "rmtree_file": lambda g, r: [g.rmtree(J(r, "a.txt")), g.exists(J(r, "a.txt"))],
    # TF's errors for bad input
    "remove_missing": _error(lambda g, r: g.remove(J(r, "zz"))),
    "remove_dir": _error(lambda g, r: g.remove(J(r, "d"))),
    "stat_missing": _error(lambda g, r: g.stat(J(r, "zz"))),
    "listdir_missing": _error(lambda g, r: g.listdir(J(r, "zz"))),
    "listdir_file": _error(lambda g, r: g.listdir(J(r, "a.txt"))),
    "rmtree_missing": _error(lambda g, r: g.rmtree(J(r, "zz"))),
    "mkdir_no_parent": _error(lambda g, r: g.mkdir(J(r, "p", "q"))),
    "makedirs_through_file": _error(lambda g, r: g.makedirs(J(r, "a.txt", "q"))),
    "read_missing": _error(lambda g, r: g.GFile(J(r, "zz")).read()),
    "read_dir": _error(lambda g, r: g.GFile(J(r, "d")).read()),
    "bad_mode": _error(lambda g, r: g.GFile(J(r, "a.txt"), "x")),
    "write_on_read": _error(lambda g, r: g.GFile(J(r, "a.txt")).write("x")),
    "read_on_write": _error(lambda g, r: g.GFile(J(r, "n.txt"), "w").read()),
    "bad_whence": _error(lambda g, r: g.GFile(J(r, "a.txt")).seek(0, 5)),
    "copy_exists": _error(lambda g, r: g.copy(J(r, "a.txt"), J(r, "d", "b.bin"))),
    "copy_missing": _error(lambda g, r: g.copy(J(r, "zz"), J(r, "yy"))),
    "rename_exists": _error(lambda g, r: g.rename(J(r, "a.txt"), J(r, "d", "b.bin"))),
    "rename_missing": _error(lambda g, r: g.rename(J(r, "zz"), J(r, "yy"))),
    "unknown_scheme": _error(lambda g, r: g.exists("s3://bucket/x")),
    "unknown_scheme_open": _error(lambda g, r: g.GFile("foo://bucket/x").read()),
    "glob_bytes": _error(lambda g, r: g.glob(J(r, "*").encode())),
}  # fmt: skip


def _normalized(value, root: str):
    if isinstance(value, str):
        return value.replace(root, "<root>")
    if isinstance(value, (list, tuple)):
        return [_normalized(v, root) for v in value]
    return value


@pytest.mark.parametrize("row", sorted(ROWS))
def test_gfile_matches_tf(row, tf, tmp_path):
    results = []
    for name, g in (("tf", tf.io.gfile), ("jaxtape", jaxtape.io.gfile)):
        root = str(tmp_path / name)
        _setup(root)
        results.append(_normalized(ROWS[row](g, root), root))
    assert results[1] == results[0]


def test_registered_schemes_are_local():
    assert set(jaxtape.io.gfile.get_registered_schemes()) == {"file", ""}
