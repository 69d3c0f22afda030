"""pyctk.matmul on GPU data: PyTorch, CuPy, JAX, Numba and DeviceArray operands used in place,
out= in place, streams, threads, the caller's device, a second GPU. Compared with the library
that made the data."""

from __future__ import annotations

import subprocess
import sys
import textwrap
import threading

import numpy as np
import pytest

import pyctk
from pyctk._arrays import interop
from support.gpu_memory import process_device_bytes
from support.stages import STAGES, stage_route

pytestmark = pytest.mark.gpu


@pytest.fixture(scope="module")
def torch():
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.fail("PyTorch sees no GPU, but pyctk does")
    torch.backends.cuda.matmul.allow_tf32 = False  # compare with exact FP32
    return torch


def pointer(array) -> int:
    return array.__cuda_array_interface__["data"][0]


def assert_close(result, expected, rtol=1e-5):
    np.testing.assert_allclose(np.asarray(result), expected, rtol=rtol, atol=rtol)


def test_torch_operands_give_a_device_array_without_copies(torch):
    a = torch.randn(300, 200, device="cuda")
    b = torch.randn(200, 100, device="cuda")
    c = pyctk.matmul(a, b)
    assert isinstance(c, pyctk.DeviceArray) and c.device == 0 and c.shape == (300, 100)
    back = torch.from_dlpack(c)
    assert back.data_ptr() == pointer(c)  # zero-copy both ways
    torch.testing.assert_close(back, a @ b, rtol=1e-5, atol=1e-4)


@pytest.mark.parametrize(
    "shape_a, shape_b, repeat",
    [
        ((301, 203), (203, 97), ["execute"]),  # read in place: its plan is kept, and run at once
        ((1, 5, 33, 17), (6, 1, 17, 9), STAGES),  # a copy of each broadcast stack: not kept
    ],
)
def test_a_torch_operands_route_enters_each_stage_once_in_order(torch, shape_a, shape_b, repeat):
    """Shapes no other test uses: the first product of a layout goes through every stage; a
    repeat of one read in place runs by the plan the first left."""
    a, b = torch.randn(*shape_a, device="cuda"), torch.randn(*shape_b, device="cuda")
    results = []
    assert stage_route(lambda: results.append(pyctk.matmul(a, b))) == STAGES
    assert stage_route(lambda: results.append(pyctk.matmul(a, b))) == repeat
    for result in results:
        torch.testing.assert_close(torch.from_dlpack(result), a @ b, rtol=1e-5, atol=1e-4)


def test_torch_out_is_written_in_place_and_returned(torch):
    a, b = torch.randn(64, 32, device="cuda"), torch.randn(32, 48, device="cuda")
    out = torch.full((64, 48), float("nan"), device="cuda")
    assert pyctk.matmul(a, b, out=out) is out
    torch.testing.assert_close(out, a @ b, rtol=1e-5, atol=1e-4)


def test_torch_stacks_transposes_and_1d(torch):
    a = torch.randn(7, 30, 20, device="cuda")
    b = torch.randn(20, 10, device="cuda")
    torch.testing.assert_close(torch.from_dlpack(pyctk.matmul(a, b)), a @ b, rtol=1e-5, atol=1e-4)
    at = torch.randn(7, 20, 30, device="cuda").transpose(1, 2)  # column-major cores, no copy
    torch.testing.assert_close(torch.from_dlpack(pyctk.matmul(at, b)), at @ b, rtol=1e-5, atol=1e-4)
    v = torch.randn(20, device="cuda")
    torch.testing.assert_close(torch.from_dlpack(pyctk.matmul(a, v)), a @ v, rtol=1e-5, atol=1e-4)
    ints = torch.randint(-100, 100, (5, 6), device="cuda", dtype=torch.int32)
    expected = ints.cpu().numpy() @ ints.cpu().numpy().T
    np.testing.assert_array_equal(pyctk.matmul(ints, ints.T).get(), expected)


def test_work_on_a_torch_stream_is_ordered_on_it(torch):
    """The product reads a after the copy queued before it on the same non-default stream."""
    stream = torch.cuda.Stream()
    source = torch.randn(2048, 2048, device="cuda")
    b = torch.randn(2048, 64, device="cuda")
    torch.cuda.synchronize()
    with torch.cuda.stream(stream):
        a = torch.zeros(2048, 2048, device="cuda")
        for _ in range(20):  # keep the stream busy so that a race would show
            a.copy_(source)
        c = pyctk.matmul(a, b, stream=stream)
    stream.synchronize()
    torch.testing.assert_close(torch.from_dlpack(c), source @ b, rtol=1e-4, atol=1e-3)
    assert c.__cuda_array_interface__["stream"] == stream.cuda_stream


def test_cupy_operands_and_out(torch):
    cupy = pytest.importorskip("cupy")
    a, b = cupy.random.standard_normal((40, 50)), cupy.random.standard_normal((50, 30))
    out = cupy.empty((40, 30))
    assert pyctk.matmul(a, b, out=out) is out
    assert_close(out.get(), a.get() @ b.get(), rtol=1e-12)
    c = pyctk.matmul(a, b)
    assert cupy.asarray(c).data.ptr == pointer(c)
    assert_close(cupy.asarray(c).get(), a.get() @ b.get(), rtol=1e-12)


def test_jax_and_numba_operands(torch):
    jnp = pytest.importorskip("jax.numpy")
    import jax

    gpu = [d for d in jax.devices() if d.platform == "gpu"]
    if not gpu:
        pytest.skip("JAX sees no GPU here")
    a = jax.device_put(jnp.arange(12.0, dtype=jnp.float32).reshape(3, 4), gpu[0])
    b = jax.device_put(jnp.ones((4, 2), jnp.float32), gpu[0])
    assert_close(pyctk.matmul(a, b).get(), np.asarray(a) @ np.asarray(b))
    cuda = pytest.importorskip("numba.cuda")
    x = cuda.to_device(np.arange(6.0).reshape(2, 3))
    y = cuda.to_device(np.ones((3, 2)))
    assert_close(pyctk.matmul(x, y).get(), x.copy_to_host() @ y.copy_to_host(), rtol=1e-12)


def test_device_arrays_of_every_dtype():
    rng = np.random.default_rng(0)
    for dtype in (np.float16, np.float32, np.float64, np.complex64, np.int8, np.uint32, np.bool_):
        a = rng.integers(0, 3, (9, 5)).astype(dtype)
        b = rng.integers(0, 3, (5, 4)).astype(dtype)
        c = pyctk.matmul(pyctk.asarray(a), pyctk.asarray(b))
        assert c.dtype == np.matmul(a, b).dtype
        np.testing.assert_array_equal(c.get(), np.matmul(a, b))


def test_host_and_device_together_or_two_gpus_are_refused():
    d = pyctk.asarray(np.ones((2, 2), np.float32))
    with pytest.raises(pyctk.DeviceMismatchError, match="pyctk.asarray"):
        pyctk.matmul(d, np.ones((2, 2), np.float32))
    with pytest.raises(pyctk.DeviceMismatchError, match="host"):
        pyctk.matmul(d, d, out=np.empty((2, 2), np.float32))
    assert issubclass(pyctk.DeviceMismatchError, ValueError)


def current_device() -> int:
    from pyctk._cuda import cudart as _cudart

    return _cudart.get_device()


def test_the_callers_current_device_is_left_as_it_was():
    before = current_device()
    pyctk.matmul(np.ones((3, 3)), np.ones((3, 3)))
    d = pyctk.asarray(np.ones((3, 3)))
    pyctk.matmul(d, d)
    pyctk.info()
    assert current_device() == before


def test_a_second_gpu(torch):
    if torch.cuda.device_count() < 2:
        pytest.skip("one GPU: the second-GPU test runs on a machine with two")
    torch.cuda.set_device(0)
    a = torch.randn(50, 60, device="cuda:1")
    b = torch.randn(60, 70, device="cuda:1")
    c = pyctk.matmul(a, b)
    assert c.device == 1 and torch.cuda.current_device() == 0
    torch.testing.assert_close(torch.from_dlpack(c), a @ b, rtol=1e-5, atol=1e-4)
    host = pyctk.matmul(np.ones((4, 4)), np.ones((4, 4)), device=1)
    np.testing.assert_array_equal(host, np.full((4, 4), 4.0))
    assert torch.cuda.current_device() == 0
    with pytest.raises(pyctk.DeviceMismatchError, match="different GPUs"):
        pyctk.matmul(a, torch.randn(60, 70, device="cuda:0"))


def test_sixteen_threads_each_on_its_own_stream(torch):
    errors = []

    def work(seed: int) -> None:
        try:
            stream = torch.cuda.Stream()
            generator = torch.Generator(device="cuda").manual_seed(seed)
            with torch.cuda.stream(stream):
                a = torch.randn(128, 96, device="cuda", generator=generator)
                b = torch.randn(96, 80, device="cuda", generator=generator)
                for _ in range(20):
                    c = pyctk.matmul(a, b, stream=stream)
            stream.synchronize()
            torch.testing.assert_close(torch.from_dlpack(c), (a @ b), rtol=1e-4, atol=1e-3)
        except Exception as error:  # noqa: BLE001 - reported below, with the thread's seed
            errors.append((seed, error))

    threads = [threading.Thread(target=work, args=(seed,)) for seed in range(16)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not errors, errors


def test_no_device_memory_growth_over_10000_calls(torch):
    a = pyctk.asarray(np.ones((16, 16), np.float32))
    for _ in range(10):
        pyctk.matmul(a, a)
    torch.cuda.synchronize()
    before = process_device_bytes()
    for _ in range(10_000):
        pyctk.matmul(a, a)
    torch.cuda.synchronize()
    assert process_device_bytes() <= before + 2**20  # the pool may keep one small block


def test_repeated_products_of_one_layout_run_by_their_plan_on_new_data():
    """The second call of a layout takes the plan (pyctk._matmul.repeat.run); each result
    is of its own operands, and views of other layouts get plans of their own."""
    from pyctk._matmul import repeat

    rng = np.random.default_rng(5)
    repeat._device.clear()
    for round_ in range(3):
        a, b = rng.standard_normal((2, 40, 30)), rng.standard_normal((30, 20))
        da, db = pyctk.asarray(a), pyctk.asarray(b)
        for x, y, expected in (
            (da, db, a @ b),
            (da[:, ::2], db[:, :10], a[:, ::2] @ b[:, :10]),
            (db.T, da[1].T, b.T @ a[1].T),
            (da[0, 0], db, a[0, 0] @ b),
        ):
            repeated = repeat.run(x, y, None, ("same_kind", "auto", "highest"))
            assert (repeated is None) == (round_ == 0)  # a plan exists from the second round
            result = pyctk.matmul(x, y)
            for c in (result,) if repeated is None else (result, repeated):
                assert c.shape == expected.shape and c.dtype == expected.dtype
                np.testing.assert_allclose(c.get(), expected, rtol=1e-12, atol=1e-12)
    assert len(repeat._device) == 4


def test_a_plan_is_kept_per_stream_and_orders_its_work_there(torch):
    from pyctk._matmul import repeat

    stream, x = torch.cuda.Stream(), np.arange(64.0).reshape(8, 8)
    a = pyctk.matmul(pyctk.asarray(x), pyctk.asarray(x), stream=stream)  # pending on the stream
    results = [pyctk.matmul(a, a, stream=stream) for _ in range(3)]
    assert results[0]._stream == stream.cuda_stream
    stream.synchronize()
    for result in results:
        np.testing.assert_array_equal(result.get(), (x @ x) @ (x @ x))
    keys = [key for key in repeat._device if key[2] == stream.cuda_stream]
    assert keys, "no plan kept for the stream"


def test_repeated_products_of_torch_tensors_each_compute_their_own_data(torch):
    from pyctk._matmul import repeat

    repeat._device.clear()
    for seed in range(4):
        generator = torch.Generator(device="cuda").manual_seed(seed)
        a = torch.randn(3, 33, 17, device="cuda", generator=generator)
        b = torch.randn(17, 9, device="cuda", generator=generator).t().contiguous().t()
        torch.testing.assert_close(torch.from_dlpack(pyctk.matmul(a, b)), a @ b, rtol=1e-5, atol=1e-4)
    # made by the first call, kept under the operands' layouts and under torch's own key,
    # by which the others found it
    assert len(repeat._device) == 2
    assert sum(isinstance(key[0][0], torch.dtype) for key in repeat._device) == 1


def test_a_plan_kept_by_torchs_key_runs_only_tensors_of_its_layout(torch):
    """Tensors of the same shape at other addresses, strides, dtypes or devices, or with
    autograd, never take another layout's plan."""
    from pyctk._matmul import repeat

    repeat._device.clear()
    a, b = torch.randn(40, 30, device="cuda"), torch.randn(30, 20, device="cuda")
    torch.testing.assert_close(torch.from_dlpack(pyctk.matmul(a, b)), a @ b, rtol=1e-5, atol=1e-4)
    shifted = torch.randn(41, 30, device="cuda")[1:]  # same layout, another address
    transposed = torch.randn(30, 40, device="cuda").t()  # same shape, other strides
    doubled = a.double()
    for x, y in ((shifted, b), (transposed, b), (doubled, b.double()), (a, b)):
        torch.testing.assert_close(torch.from_dlpack(pyctk.matmul(x, y)), x @ y, rtol=1e-5, atol=1e-4)
    assert interop._torch_key(a.clone().requires_grad_()) is None
    assert interop._torch_key(a.cpu()) is None


def test_repeated_products_of_cupy_arrays_each_compute_their_own_data_after_their_stream(torch):
    """CuPy arrays read by their own accessors: each product waits for the work CuPy queued on
    its current stream (a slow product ahead of it), by a plan kept per stream: pyctk's default
    (the legacy stream, CuPy's default) and a CuPy stream passed as stream=."""
    cupy = pytest.importorskip("cupy")
    from pyctk._matmul import repeat

    repeat._device.clear()
    big = cupy.ones((4096, 4096), cupy.float32)
    for stream in (cupy.cuda.Stream.null, cupy.cuda.Stream(non_blocking=True)):
        with stream:
            for seed in range(3):
                a = cupy.random.default_rng(seed).standard_normal((33, 17), cupy.float32)
                b = cupy.random.default_rng(seed + 9).standard_normal((17, 9), cupy.float32)
                for _ in range(4):
                    big @ big  # keeps CuPy's stream busy: the product must wait for it
                a *= 2  # queued after the slow work, on CuPy's stream
                c = cupy.asarray(pyctk.matmul(a, b, stream=None if stream.ptr == 0 else stream))
                assert_close(c.get(), a.get() @ b.get())
    assert len(repeat._device) == 2  # one plan per stream, each run by the later calls


def test_auto_takes_the_tiled_backend_for_complex64_at_tf32_from_1024_cubed():
    """Bit for bit: on an sm_90 image (auto_table.c, measured on an H200) auto's complex64
    product at TF32 is the tiled backend's one real product from 1024^3 up, cuBLAS's below."""
    if pyctk.info()["devices"][0]["kernel_image"]["arch"] != 90:
        pytest.skip("the table measures complex64 at TF32 on sm_90 images only")
    rng = np.random.default_rng(11)
    for n, tiled in ((1024, True), (256, False)):
        a, b = (
            pyctk.asarray((rng.standard_normal((n, n)) + 1j * rng.standard_normal((n, n))).astype(np.complex64))
            for _ in range(2)
        )
        auto = pyctk.matmul(a, b, precision="tf32").get()
        chosen = pyctk.matmul(a, b, precision="tf32", backend="tiled" if tiled else "cublas").get()
        np.testing.assert_array_equal(auto, chosen)


def test_auto_takes_the_tiled_kernels_for_tiny_float32_products_and_cublas_above():
    """Bit for bit: auto's result is the tiled kernel's where the measured table says so
    (libgpu/src/gemm/auto_table.c: on an H100 or H200, float32 products of m n k batch up to
    64^3) and cuBLAS's otherwise (the two round differently); unmeasured GPUs get cuBLAS."""
    rng = np.random.default_rng(9)
    measured = pyctk.info()["devices"][0]["kernel_image"]["arch"] == 90
    differ = 0
    for m, n, k, batch, tiny in (
        (16, 16, 16, (), True),
        (32, 7, 32, (), True),
        (33, 32, 32, (), True),
        (16, 16, 16, (9,), True),
        (64, 64, 64, (), True),
        (65, 64, 64, (), False),
        (16, 16, 16, (2,), True),
        (16, 16, 16, (65,), False),
        (128, 128, 128, (), False),
    ):
        a = pyctk.asarray(rng.standard_normal((*batch, m, k)).astype(np.float32))
        b = pyctk.asarray(rng.standard_normal((k, n)).astype(np.float32))
        auto, tiled, cublas = (pyctk.matmul(a, b, backend=name).get() for name in ("auto", "tiled", "cublas"))
        np.testing.assert_array_equal(auto, tiled if tiny and measured else cublas)
        differ += not np.array_equal(tiled, cublas)
    assert differ, "tiled and cuBLAS agreed bit for bit everywhere: the test shows nothing"


# A result ordered on a stream whose Python object goes first: CuPy's and pyctk.driver's
# streams destroy their CUDA stream when collected, and freeing memory on a destroyed stream
# crashes the process, so a result keeps its stream's object alive. In a child process: a
# crash must fail this test, not end the run.
STREAM_GOES_FIRST = textwrap.dedent(r"""
    import gc
    import numpy as np
    import cupy
    import pyctk
    import pyctk.driver as cuda
    for stream in (cuda.Stream(), cupy.cuda.Stream(non_blocking=True)):
        a = pyctk.asarray(np.arange(64 * 64, dtype=np.float32).reshape(64, 64))
        first = pyctk.matmul(a, a, stream=stream)   # the full path, which keeps a plan
        again = pyctk.matmul(a, a, stream=stream)   # the plan's path
        spare = pyctk.empty((8, 8), np.float32, stream=stream)
        del stream
        gc.collect()
        expected = a.get() @ a.get()
        assert np.allclose(first.get(), expected) and np.allclose(again.get(), expected)
        del first, again, spare, a
        gc.collect()
    print("freed")
""")


def test_a_result_outlives_its_stream_object():
    run = subprocess.run([sys.executable, "-c", STREAM_GOES_FIRST], capture_output=True, text=True, timeout=120)
    assert run.returncode == 0 and run.stdout.split() == ["freed"], run.stdout + run.stderr
