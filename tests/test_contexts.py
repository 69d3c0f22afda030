"""Contexts and fork: a child forked after GPU use gets a clear error, never a hang; a child
forked before any GPU use is not refused. Simulated here (no GPU needed): the parent's state
says a context was created."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

CHILD = textwrap.dedent("""
    import os, sys
    from pyctk import _contexts, ForkedAfterCudaError
    _contexts._used_in_this_process = {used}
    pid = os.fork()
    if pid == 0:
        try:
            _contexts.context(0)
        except ForkedAfterCudaError as error:
            print("forked-error:", error)
            os._exit(0)
        except Exception as error:  # no GPU here: any other failure means it was not refused
            print("other:", type(error).__name__)
            os._exit(0)
        print("created")
        os._exit(0)
    os.waitpid(pid, 0)
""")


@pytest.mark.skipif(sys.platform == "win32", reason="fork is POSIX")
@pytest.mark.parametrize("used, expected", [(True, "forked-error:"), (False, "other:|created")])
def test_a_child_forked_after_gpu_use_is_refused_clearly(tmp_path, used, expected):
    run = subprocess.run([sys.executable, "-c", CHILD.format(used=used)], capture_output=True,
                         text=True, timeout=60, cwd=tmp_path)
    assert run.returncode == 0, run.stderr
    assert any(line.startswith(tuple(expected.split("|"))) for line in run.stdout.splitlines()), run.stdout
    if used:
        assert "spawn" in run.stdout and "fork" in run.stdout


GPU_SCRIPT = textwrap.dedent("""
    import multiprocessing, os
    import numpy as np
    import pyctk

    def product(n):
        return float(pyctk.matmul(np.ones((n, n)), np.ones((n, n)))[0, 0])

    if __name__ == "__main__":
        before = os.fork()  # forked before any GPU use: works
        if before == 0:
            print("before-fork child:", product(3), flush=True)
            os._exit(0)
        os.waitpid(before, 0)
        print("parent:", product(4), flush=True)
        after = os.fork()
        if after == 0:
            try:
                product(5)
                print("after-fork child: computed", flush=True)
            except pyctk.ForkedAfterCudaError as error:
                print("after-fork child: refused:", error, flush=True)
            os._exit(0)
        os.waitpid(after, 0)
        with multiprocessing.get_context("spawn").Pool(2) as pool:
            print("spawn:", pool.map(product, [6, 7]), flush=True)
""")


@pytest.mark.gpu
@pytest.mark.skipif(sys.platform == "win32", reason="fork is POSIX")
def test_fork_and_spawn_on_a_gpu(tmp_path):
    script = tmp_path / "forks.py"
    script.write_text(GPU_SCRIPT)
    run = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=300,
                         cwd=tmp_path)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "before-fork child: 3.0" in run.stdout and "parent: 4.0" in run.stdout
    assert "after-fork child: refused:" in run.stdout and "spawn" in run.stdout
    assert "spawn: [6.0, 7.0]" in run.stdout
