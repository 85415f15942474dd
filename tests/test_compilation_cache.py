"""The persistent compilation cache: a second process runs its compiled
programs from disk instead of compiling them again (JAX's own cache)."""

from __future__ import annotations

import json
import os
import pathlib
import subprocess
import sys

import pytest

from jaxtape._src import config_env

_CHILD = """
import json, jax
from jax._src import monitoring
hits = []
monitoring.register_event_listener(
    lambda event, **kw: hits.append(event) if event.endswith("cache_hits") else None
)
import jaxtape as tf
v = tf.Variable(tf.ones([4, 4]))
step = tf.function(lambda x: v.assign_add(tf.matmul(x, v) * 0.5))
out = step(tf.ones([4, 4]))
print(json.dumps({"hits": len(hits), "dir": jax.config.jax_compilation_cache_dir,
                  "value": float(tf.reduce_sum(out))}))
"""


@pytest.mark.parametrize(
    "environ,expected",
    [
        ({"HOME": "/h"}, "/h/.cache/jaxtape/xla"),
        ({"XDG_CACHE_HOME": "/x"}, "/x/jaxtape/xla"),
        ({"JAXTAPE_COMPILATION_CACHE": "/my/cache"}, "/my/cache"),
        ({"JAXTAPE_COMPILATION_CACHE": "0"}, None),
        ({"JAXTAPE_COMPILATION_CACHE": "off"}, None),
        ({"JAX_COMPILATION_CACHE_DIR": "/theirs"}, None),
    ],
)
def test_cache_directory_settings(monkeypatch, environ, expected):
    monkeypatch.setenv("HOME", environ.get("HOME", "/h"))
    assert config_env.compilation_cache_dir(environ) == expected


def test_a_users_own_jax_cache_directory_is_left_alone():
    assert config_env.compilation_cache_dir({}, jax_dir="/theirs") is None


def _run(env):
    out = subprocess.run(
        [sys.executable, "-c", _CHILD], env=env, capture_output=True, text=True
    )
    assert out.returncode == 0, out.stderr[-2000:]
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_a_second_process_reads_compiled_programs_from_the_cache(tmp_path):
    env = {**os.environ, "JAXTAPE_COMPILATION_CACHE": str(tmp_path / "xla")}
    env.pop("JAX_COMPILATION_CACHE_DIR", None)
    first = _run(env)
    assert first["dir"] == str(tmp_path / "xla") and first["hits"] == 0
    assert any(pathlib.Path(first["dir"]).iterdir())  # programs written
    second = _run(env)
    assert second["hits"] > 0 and second["value"] == first["value"] == 48.0
    off = _run({**env, "JAXTAPE_COMPILATION_CACHE": "0"})
    assert off["dir"] is None and off["hits"] == 0


def test_trimming_removes_the_least_recently_used_programs(tmp_path):
    for i in range(6):  # six 100-byte programs, used at times 0..5
        f = tmp_path / f"jit_f{i}-cache"
        f.write_bytes(b"x" * 100)
        os.utime(f, (1_000_000 + i, 1_000_000 + i))
    (tmp_path / "jit_f0-atime").write_bytes(b"12345678")  # JAX's; not a program
    freed = config_env.trim_compilation_cache(str(tmp_path), 350)
    left = sorted(p.name for p in tmp_path.glob("*-cache"))
    assert freed == 300 and left == ["jit_f3-cache", "jit_f4-cache", "jit_f5-cache"]
    assert config_env.trim_compilation_cache(str(tmp_path), 350) == 0
    assert config_env.trim_compilation_cache(str(tmp_path / "missing"), 0) == 0
