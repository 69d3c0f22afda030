"""On a GPU: threads multiplying at once through the one context of each device, and processes.

Threads: 16 threads each call pyctk.matmul 50 times at once on host arrays of their own
shapes, dtypes and backends, on every GPU in turn; every result is checked against NumPy and
every thread is left on the device it was on. Processes: a child forked after the parent used
the GPU gets ForkedAfterCudaError naming the fix (through os.fork and a 'fork' pool) and
never hangs; one forked before any GPU use computes; a 'spawn' pool computes. Each process
scenario runs as a script under a timeout, so a hang fails the test instead of stalling it.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
import threading

import numpy as np
import pytest

import pyctk
from pyctk._cuda import contexts as _contexts
from pyctk._cuda import cudart as _cudart

pytestmark = pytest.mark.gpu
posix_only = pytest.mark.skipif(sys.platform == "win32", reason="fork is POSIX")

THREADS, CALLS = 16, 50
# dtype -> (backends that compute it, relative tolerance against NumPy's own product)
KINDS = {
    np.float32: (("auto", "tiled", "cublas"), 1e-4),
    np.float64: (("auto", "tiled", "cublas"), 1e-11),
    np.complex64: (("auto", "tiled", "cublas"), 1e-4),
    np.int32: (("auto", "tiled"), 0),
    np.int8: (("tiled",), 0),
}


def operands(rng: np.random.Generator, dtype: type) -> tuple[np.ndarray, np.ndarray]:
    """A random product: matrices or stacks, sizes 1 to 80, values of ``dtype``."""
    m, n, k = rng.integers(1, 81, 3)
    batch = tuple(rng.integers(1, 4, rng.integers(0, 2)))  # () or one stack axis
    if np.dtype(dtype).kind in "iu":
        info = np.iinfo(dtype)
        return (
            rng.integers(info.min, info.max, (*batch, m, k), dtype, endpoint=True),
            rng.integers(info.min, info.max, (k, n), dtype, endpoint=True),
        )
    imaginary = np.dtype(dtype).kind == "c"
    values = [
        rng.standard_normal(shape) + (1j * rng.standard_normal(shape) if imaginary else 0)
        for shape in ((*batch, m, k), (k, n))
    ]
    return values[0].astype(dtype), values[1].astype(dtype)


def test_sixteen_threads_multiply_at_once_on_every_gpu():
    devices = _cudart.device_count()
    barrier, failures = threading.Barrier(THREADS), []

    def work(seed: int) -> None:
        rng = np.random.default_rng(seed)
        kinds = list(KINDS.items())
        barrier.wait()  # every thread's first call at once: the contexts are created in the race
        for call in range(CALLS):
            dtype, (backends, tolerance) = kinds[(seed + call) % len(kinds)]
            backend, device = backends[call % len(backends)], (seed + call) % devices
            a, b = operands(rng, dtype)
            try:
                result = pyctk.matmul(a, b, backend=backend, device=device)
                expected = np.matmul(a, b)
                assert result.dtype == expected.dtype and result.shape == expected.shape
                if tolerance:
                    scale = np.abs(a).max() * np.abs(b).max() * a.shape[-1]
                    assert np.abs(result - expected).max() <= tolerance * scale
                else:
                    assert np.array_equal(result, expected)
                assert _cudart.get_device() == 0, "the thread was left on another device"
            except BaseException as error:  # noqa: BLE001 - reported below with what failed
                failures.append(
                    f"thread {seed}, call {call} ({np.dtype(dtype)}, {backend}, "
                    f"GPU {device}, {a.shape} @ {b.shape}): {error!r}"
                )
                return

    threads = [threading.Thread(target=work, args=(seed,)) for seed in range(THREADS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not failures, "\n".join(failures)
    assert sorted(_contexts._contexts) == list(range(devices))  # one context per GPU, shared


def run_script(tmp_path, body: str) -> str:
    """Run PRELUDE and ``body`` as a script in a fresh interpreter; its stdout. A hang fails
    the test."""
    script = tmp_path / "script.py"
    script.write_text(PRELUDE + textwrap.dedent(body))
    try:
        run = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=180, cwd=tmp_path)
    except subprocess.TimeoutExpired as expired:
        pytest.fail(f"hung: the script did not finish in {expired.timeout} s\n{expired.stdout}{expired.stderr}")
    assert run.returncode == 0, run.stdout + run.stderr
    assert "initialization error" not in run.stdout + run.stderr
    return run.stdout


PRELUDE = """
import multiprocessing, os, sys, traceback
import numpy as np
import pyctk

A, B = np.arange(12.0).reshape(3, 4), np.arange(8.0).reshape(4, 2)

def product(scale):
    return bool(np.array_equal(pyctk.matmul(A * scale, B), (A * scale) @ B))

def in_child(body):
    '''Run body() in a child made with os.fork; its exit code. Children leave with os._exit,
    as multiprocessing's do: not through the parent's exit handlers.'''
    sys.stdout.flush()
    pid = os.fork()
    if pid == 0:
        try:
            code = body()
        except BaseException:
            traceback.print_exc(file=sys.stdout)
            code = 9
        sys.stdout.flush()
        os._exit(code)
    return os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1])
"""

REFUSAL = "ForkedAfterCudaError: pyctk cannot use the GPU in this process: it was forked (os.fork"


@posix_only
def test_a_child_forked_after_gpu_use_is_refused_and_does_not_hang(tmp_path):
    out = run_script(
        tmp_path,
        """
    def child():
        report = pyctk.info()  # never raises, never calls CUDA here: says why
        refused = report["error"].startswith("pyctk cannot use the GPU in this process: it was forked")
        print("info:", refused, report["devices"], flush=True)
        pyctk.matmul(A, B)     # raises ForkedAfterCudaError: printed by in_child, exit code 9

    print("parent:", product(1), flush=True)
    print("child exit code:", in_child(child), flush=True)
    print("parent after the fork:", product(2), flush=True)
    """,
    )
    assert "parent: True" in out and "parent after the fork: True" in out
    assert "info: True []" in out
    assert REFUSAL in out, out
    assert "'spawn'" in out and "'forkserver'" in out and "multiprocessing.get_context('spawn')" in out
    assert "child exit code: 9" in out


@posix_only
def test_a_fork_pool_after_gpu_use_raises_the_refusal_in_the_parent(tmp_path):
    out = run_script(
        tmp_path,
        """
    if __name__ == "__main__":
        print("parent:", product(1), flush=True)
        with multiprocessing.get_context("fork").Pool(2) as pool:
            try:
                pool.apply(product, (3,))
                print("fork pool: computed", flush=True)
            except pyctk.ForkedAfterCudaError as error:
                print("fork pool: refused:", error, flush=True)
    """,
    )
    assert "parent: True" in out
    assert "fork pool: refused: pyctk cannot use the GPU in this process" in out, out


@posix_only
def test_a_child_forked_before_gpu_use_computes(tmp_path):
    out = run_script(
        tmp_path,
        """
    print("child exit code:", in_child(lambda: 0 if product(3) else 1), flush=True)
    print("parent:", product(1), flush=True)
    """,
    )
    assert "child exit code: 0" in out and "parent: True" in out, out


def test_a_spawn_pool_computes_after_gpu_use(tmp_path):
    out = run_script(
        tmp_path,
        """
    if __name__ == "__main__":
        print("parent:", product(1), flush=True)
        with multiprocessing.get_context("spawn").Pool(2) as pool:
            print("spawn:", pool.map(product, [2, 3, 4, 5]), flush=True)
    """,
    )
    assert "parent: True" in out and "spawn: [True, True, True, True]" in out, out
