"""CUDA arrays, 2-D/3-D copies and fills, texture and surface objects and vector types on a GPU,
each against NumPy or the driver's own answer, called as a PyCUDA program calls them.

Covered: 2-D and 3-D arrays filled and read back with Memcpy2D/Memcpy3D from host and device
memory (windows at offsets, pitched memory, unaligned and stream copies, peer copies);
memset_d2d8/16/32 and their _async forms leaving the row padding alone; the 1-D array
copies; matrix_to_array, np_to_array (3-D, "F" order, float64 as int32 pairs), gpuarray_to_array and
make_multichannel_2d_array read through texture objects; POINT and LINEAR filtering, CLAMP,
BORDER and WRAP with normalized coordinates against NumPy; textures over pitched and linear
device memory (float4 elements); surface writes into a 2-D and a layered array; vector types
by value (direct and prepared calls) and as array dtypes; get_texref's error on a real module.
"""

from __future__ import annotations

import numpy as np
import pytest

import pyctk
import pyctk.driver as cuda
from pyctk import gpuarray
from pyctk.compiler import SourceModule
from pyctk.gpuarray import vec

pytestmark = pytest.mark.gpu

KERNELS = """
__global__ void sample2d(float *out, cudaTextureObject_t tex, int w, int h, float dx, float dy,
                         int normalized) {
    int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= w || y >= h) return;
    float u = x + 0.5f + dx, v = y + 0.5f + dy;
    if (normalized) { u /= w; v /= h; }
    out[y * w + x] = tex2D<float>(tex, u, v);
}

__global__ void sample3d(float *out, cudaTextureObject_t tex, int w, int h) {
    int x = threadIdx.x, y = threadIdx.y, z = blockIdx.x;
    out[(z * h + y) * w + x] = tex3D<float>(tex, x + 0.5f, y + 0.5f, z + 0.5f);
}

__global__ void sample_double(double *out, cudaTextureObject_t tex, int w) {
    int x = threadIdx.x, y = blockIdx.x;
    int2 v = tex2D<int2>(tex, x + 0.5f, y + 0.5f);
    out[y * w + x] = __hiloint2double(v.y, v.x);
}

__global__ void sample_uchar4(uchar4 *out, cudaTextureObject_t tex, int w) {
    int x = threadIdx.x, y = blockIdx.x;
    out[y * w + x] = tex2D<uchar4>(tex, x + 0.5f, y + 0.5f);
}

__global__ void fetch_float4(float4 *out, cudaTextureObject_t tex, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = tex1Dfetch<float4>(tex, i);
}

__global__ void write_surface(cudaSurfaceObject_t surf, int layered) {
    int x = threadIdx.x, y = blockIdx.x;
    float v = y * 1000.0f + x;
    if (layered) surf2DLayeredwrite(v, surf, x * (int) sizeof(float), y, 0);
    else surf2Dwrite(v, surf, x * (int) sizeof(float), y);
}

__global__ void vectors(double *out, float3 a, double2 b, char3 c, long4 d, int1 e, uchar4 f) {
    double v[] = {a.x, a.y, a.z, b.x, b.y, (double) c.x, (double) c.y, (double) c.z, (double) d.x,
                  (double) d.y, (double) d.z, (double) d.w, (double) e.x, (double) f.x, (double) f.w};
    for (int i = 0; i < 15; i++) out[i] = v[i];
}

__global__ void scale_vectors(float4 *p, int3 *q, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        p[i].x *= 2; p[i].y *= 3; p[i].z *= 4; p[i].w *= 5;
        q[i].x += 1; q[i].y += 2; q[i].z += 3;
    }
}
"""


@pytest.fixture(scope="module")
def kernels():
    return SourceModule(KERNELS, cache_dir=False)


@pytest.fixture
def image():
    return np.random.default_rng(7).random((24, 40), dtype=np.float32)  # (height, width)


def attribute(name: str) -> int:
    return cuda.Context.get_device().get_attribute(cuda.device_attribute[name])


def round_up(n: int, step: int) -> int:
    return (n + step - 1) // step * step


def aligned(nbytes: int, alignment: int = 4096) -> tuple[cuda.DeviceAllocation, int]:
    """Device memory and an address in it aligned to ``alignment`` (textures need
    TEXTURE_ALIGNMENT, which pyctk's pool does not promise)."""
    memory = cuda.mem_alloc(nbytes + alignment)
    return memory, round_up(int(memory), alignment)


def sample2d(kernels, texture, shape, dx=0.0, dy=0.0, normalized=False) -> np.ndarray:
    h, w = shape
    out = np.empty(shape, np.float32)
    kernels.get_function("sample2d")(
        cuda.Out(out),
        texture,
        np.int32(w),
        np.int32(h),
        np.float32(dx),
        np.float32(dy),
        np.int32(normalized),
        block=(16, 16, 1),
        grid=((w + 15) // 16, (h + 15) // 16),
    )
    return out


def bilinear(a: np.ndarray, dx: float, dy: float) -> np.ndarray:
    """CUDA's linear filtering of ``a`` at (x + 0.5 + dx, y + 0.5 + dy), edges clamped."""
    h, w = a.shape
    xs, ys = np.arange(w) + dx, np.arange(h) + dy
    x0, y0 = np.floor(xs).astype(int), np.floor(ys).astype(int)
    fx, fy = (xs - x0)[None, :], (ys - y0)[:, None]
    cx0, cx1 = np.clip(x0, 0, w - 1), np.clip(x0 + 1, 0, w - 1)
    cy0, cy1 = np.clip(y0, 0, h - 1), np.clip(y0 + 1, 0, h - 1)
    return (1 - fy) * ((1 - fx) * a[np.ix_(cy0, cx0)] + fx * a[np.ix_(cy0, cx1)]) + fy * (
        (1 - fx) * a[np.ix_(cy1, cx0)] + fx * a[np.ix_(cy1, cx1)]
    )


# ---------------------------------------------------------------------------
# Arrays and copies.


def copy_2d(src, dst, width_in_bytes, height, aligned=True, run=True, **fields):
    """A Memcpy2D from ``src`` to ``dst`` (("host" | "device" | "array", object)) with ``fields``
    (PyCUDA's names), made now unless not ``run``."""
    copy = cuda.Memcpy2D()
    getattr(copy, f"set_src_{src[0]}")(src[1])
    getattr(copy, f"set_dst_{dst[0]}")(dst[1])
    copy.width_in_bytes, copy.height = width_in_bytes, height
    for name, value in fields.items():
        assert name in copy.pycuda_names, name
        setattr(copy, name, value)
    if run:
        copy(aligned=aligned)
    return copy


def test_2d_array_round_trip_and_a_window(image):
    h, w = image.shape
    array = cuda.Array(cuda.ArrayDescriptor(width=w, height=h, format=cuda.array_format.FLOAT, num_channels=1))
    descriptor = array.get_descriptor()
    assert (descriptor.width, descriptor.height, descriptor.format, descriptor.num_channels) == (
        w,
        h,
        cuda.array_format.FLOAT,
        1,
    )
    copy_2d(("host", image), ("array", array), w * 4, h, src_pitch=w * 4)
    back = np.zeros_like(image)
    copy_2d(("array", array), ("host", back), w * 4, h, dst_pitch=w * 4)
    assert np.array_equal(back, image)
    # A 5 x 7 window of a new image, from (3, 2) in it to (1, 4) in the array.
    other = image + 10
    copy_2d(
        ("host", other),
        ("array", array),
        7 * 4,
        5,
        src_pitch=w * 4,
        src_x_in_bytes=3 * 4,
        src_y=2,
        dst_x_in_bytes=1 * 4,
        dst_y=4,
    )
    copy_2d(("array", array), ("host", back), w * 4, h, dst_pitch=w * 4)
    expected = image.copy()
    expected[4:9, 1:8] = other[2:7, 3:10]
    assert np.array_equal(back, expected)
    array.free()
    array.free()  # twice: nothing


def test_pitched_device_memory_and_unaligned_and_stream_copies(image):
    h, w = image.shape
    pitch = round_up(w * 4, 512)
    pitched = cuda.mem_alloc(pitch * h)
    copy_2d(("host", image), ("device", pitched), w * 4, h, src_pitch=w * 4, dst_pitch=pitch)
    rows = np.empty((h, pitch // 4), np.float32)
    cuda.memcpy_dtoh(rows, pitched)
    assert np.array_equal(rows[:, :w], image)
    # Device to device with an unaligned pitch (cuMemcpy2DUnaligned), then compacted on a stream.
    packed, compact = cuda.mem_alloc((w * 4 + 4) * h), cuda.mem_alloc(w * 4 * h)
    copy_2d(("device", pitched), ("device", packed), w * 4, h, src_pitch=pitch, dst_pitch=w * 4 + 4, aligned=False)
    stream = cuda.Stream()
    copy = copy_2d(("device", packed), ("device", compact), w * 4, h, src_pitch=w * 4 + 4, dst_pitch=w * 4, run=False)
    copy(stream)
    stream.synchronize()
    assert np.array_equal(cuda.from_device(compact, image.shape, image.dtype), image)


def test_3d_array_from_host_and_device():
    d, h, w = 4, 6, 8
    volume = np.arange(d * h * w, dtype=np.float32).reshape(d, h, w)
    array = cuda.Array(
        cuda.ArrayDescriptor3D(width=w, height=h, depth=d, format=cuda.array_format.FLOAT, num_channels=1)
    )
    descriptor = array.get_descriptor_3d()
    assert (descriptor.width, descriptor.height, descriptor.depth, descriptor.flags) == (w, h, d, 0)
    copy = cuda.Memcpy3D()
    copy.set_src_host(volume)
    copy.set_dst_array(array)
    copy.width_in_bytes = copy.src_pitch = w * 4
    copy.src_height = copy.height = h
    copy.depth = d
    copy()
    # Array -> pitched device memory (rows 256 bytes apart, slices 8 rows apart) -> host.
    pitch, slice_rows = 256, 8
    device = cuda.mem_alloc(pitch * slice_rows * d)
    out = cuda.Memcpy3D()
    out.set_src_array(array)
    out.set_dst_device(device)
    out.dst_pitch, out.dst_height = pitch, slice_rows
    out.width_in_bytes, out.height, out.depth = w * 4, h, d
    stream = cuda.Stream()
    out(stream)
    stream.synchronize()
    back = cuda.Memcpy3D()
    back.set_src_device(device)
    result = np.zeros_like(volume)
    back.set_dst_host(result)
    back.src_pitch, back.src_height = pitch, slice_rows
    back.dst_pitch, back.dst_height = w * 4, h
    back.width_in_bytes, back.height, back.depth = w * 4, h, d
    back()
    assert np.array_equal(result, volume)


def test_peer_copy_in_one_context():
    data = np.arange(3 * 4 * 5, dtype=np.int32).reshape(3, 4, 5)
    source, target = cuda.to_device(data), cuda.mem_alloc(data.nbytes)
    for contexts in (False, True):
        cuda.memset_d8(target, 0, data.nbytes)
        copy = cuda.Memcpy3DPeer()
        copy.set_src_device(source)
        copy.set_dst_device(target)
        if contexts:
            context = cuda.Context.get_device().retain_primary_context()
            copy.set_src_context(context)
            copy.set_dst_context(context)
        copy.width_in_bytes = copy.src_pitch = copy.dst_pitch = 5 * 4
        copy.height = copy.src_height = copy.dst_height = 4
        copy.depth = 3
        copy()
        assert np.array_equal(cuda.from_device(target, data.shape, data.dtype), data)


@pytest.mark.parametrize(
    "bits, value, dtype", [(8, 0x5A, np.uint8), (16, 0xBEEF, np.uint16), (32, 0x3F800000, np.uint32)]
)
@pytest.mark.parametrize("asynchronous", [False, True])
def test_memset_d2d_fills_the_rows_and_leaves_the_padding(bits, value, dtype, asynchronous):
    width, height, pitch = 50, 7, 256
    memory = cuda.mem_alloc(pitch * height)
    cuda.memset_d8(memory, 0xAB, pitch * height)
    if asynchronous:
        stream = cuda.Stream()
        getattr(cuda, f"memset_d2d{bits}_async")(memory, pitch, value, width, height, stream)
        stream.synchronize()
    else:
        getattr(cuda, f"memset_d2d{bits}")(memory, pitch, value, width, height)
    rows = cuda.from_device(memory, (height, pitch), np.uint8)
    row_bytes = width * np.dtype(dtype).itemsize
    assert (rows[:, :row_bytes].copy().view(dtype) == value).all()
    assert (rows[:, row_bytes:] == 0xAB).all()


def test_1d_array_copies():
    n = 64
    data = np.arange(n, dtype=np.float32)
    first, second = (
        cuda.Array(cuda.ArrayDescriptor(width=n, height=0, format=cuda.array_format.FLOAT, num_channels=1))
        for _ in range(2)
    )
    cuda.memcpy_htoa(first, 0, data)
    cuda.py_memcpy_htoa(first, 8, np.full(4, -1, np.float32))  # PyCUDA's exported name; byte 8 is element 2
    expected = data.copy()
    expected[2:6] = -1
    back = np.empty_like(data)
    cuda.py_memcpy_atoh(back, first, 0)
    assert np.array_equal(back, expected)
    cuda.memcpy_atoa(second, 0, first, 0, data.nbytes)
    device = cuda.mem_alloc(data.nbytes)
    cuda.memcpy_atod(device, second, 4, data.nbytes - 4)
    assert np.array_equal(cuda.from_device(device, (n - 1,), np.float32), expected[1:])
    cuda.memcpy_dtoa(first, 0, cuda.to_device(data), data.nbytes)
    cuda.memcpy_atoh(back, first, 0)
    assert np.array_equal(back, data)


# ---------------------------------------------------------------------------
# Textures.


@pytest.mark.parametrize("order", ["C", "F"])
def test_matrix_to_array_sampled_point(kernels, image, order):
    matrix = image if order == "C" else np.asfortranarray(image.T)  # "F": tex2D(x, y) is matrix[x, y]
    texture = cuda.TextureObject(cuda.matrix_to_array(matrix, order))
    assert texture.get_resource_desc()["type"] == cuda.resource_type.ARRAY
    assert np.array_equal(sample2d(kernels, texture, image.shape), image)


@pytest.mark.parametrize("dx, dy", [(0.25, 0.5), (-0.75, 0.25), (0.5, -0.5)])
def test_linear_filtering_matches_numpy(kernels, image, dx, dy):
    texture = cuda.TextureObject(cuda.matrix_to_array(image, "C"), filter_mode=cuda.filter_mode.LINEAR)
    # The hardware's weights have 8 fractional bits: these offsets are exact; its arithmetic is not.
    np.testing.assert_allclose(sample2d(kernels, texture, image.shape, dx, dy), bilinear(image, dx, dy), atol=2e-3)
    point = cuda.TextureObject(cuda.matrix_to_array(image, "C"))
    assert not np.allclose(sample2d(kernels, point, image.shape, dx, dy), bilinear(image, dx, dy), atol=2e-3)


def test_address_modes(kernels, image):
    h, w = image.shape
    array = cuda.matrix_to_array(image, "C")
    clamp = cuda.TextureObject(array, address_mode=cuda.address_mode.CLAMP)
    assert (sample2d(kernels, clamp, image.shape, -1000, -1000) == image[0, 0]).all()
    border = cuda.TextureObject(array, address_mode=cuda.address_mode.BORDER, border_color=(7, 7, 7, 7))
    assert (sample2d(kernels, border, image.shape, 1000, 0) == 7).all()
    wrap = cuda.TextureObject(array, address_mode=cuda.address_mode.WRAP, flags=cuda.TRSF_NORMALIZED_COORDINATES)
    assert np.array_equal(sample2d(kernels, wrap, image.shape, w, h, normalized=True), image)  # one period on
    texture_free_twice = cuda.TextureObject(array)
    texture_free_twice.free()
    texture_free_twice.free()


def test_np_to_array_3d_sampled(kernels):
    d, h, w = 3, 5, 8
    volume = np.random.default_rng(1).random((d, h, w), dtype=np.float32)
    for array in (cuda.np_to_array(volume, "C"), cuda.np_to_array(np.asfortranarray(volume.T), "F")):
        out = np.empty_like(volume)
        kernels.get_function("sample3d")(
            cuda.Out(out), cuda.TextureObject(array), np.int32(w), np.int32(h), block=(w, h, 1), grid=(d, 1)
        )
        assert np.array_equal(out, volume)


def test_gpuarray_to_array_sampled(kernels, image):
    """A GPUArray, a DeviceArray and a transposed (Fortran-ordered) view: what np_to_array makes
    of the same values, copied on the GPU."""
    d, h, w = 3, 5, 8
    volume = np.random.default_rng(3).random((d, h, w), dtype=np.float32)
    out = np.empty_like(volume)
    for gpu, order in ((gpuarray.to_gpu(volume), "C"), (pyctk.asarray(volume), "C"), (gpuarray.to_gpu(volume).T, "F")):
        out[:] = 0
        kernels.get_function("sample3d")(
            cuda.Out(out),
            cuda.TextureObject(cuda.gpuarray_to_array(gpu, order)),
            np.int32(w),
            np.int32(h),
            block=(w, h, 1),
            grid=(d, 1),
        )
        assert np.array_equal(out, volume), type(gpu)
    texture = cuda.TextureObject(cuda.gpuarray_to_array(gpuarray.to_gpu(image), "C"))
    assert np.array_equal(sample2d(kernels, texture, image.shape), image)


def test_float64_through_the_double_hack(kernels):
    h, w = 6, 10
    values = np.random.default_rng(2).random((h, w)) * 1e6
    texture = cuda.TextureObject(cuda.np_to_array(values, "C"), flags=cuda.TRSF_READ_AS_INTEGER)
    out = np.empty_like(values)
    kernels.get_function("sample_double")(cuda.Out(out), texture, np.int32(w), block=(w, 1, 1), grid=(h, 1))
    assert np.array_equal(out, values)


def test_multichannel_array(kernels):
    h, w = 5, 9
    rgba = np.random.default_rng(3).integers(0, 256, (h, w, 4), dtype=np.uint8)
    for array in (
        cuda.make_multichannel_2d_array(rgba, "C"),
        cuda.make_multichannel_2d_array(np.asfortranarray(rgba.T), "F"),
    ):
        out = np.empty((h, w), vec.uchar4)
        kernels.get_function("sample_uchar4")(
            cuda.Out(out),
            cuda.TextureObject(array, flags=cuda.TRSF_READ_AS_INTEGER),
            np.int32(w),
            block=(w, 1, 1),
            grid=(h, 1),
        )
        assert np.array_equal(out.view(np.uint8).reshape(h, w, 4), rgba)


def test_texture_over_pitched_device_memory(kernels, image):
    h, w = image.shape
    pitch = round_up(w * 4, attribute("TEXTURE_PITCH_ALIGNMENT"))
    memory, address = aligned(pitch * h, attribute("TEXTURE_ALIGNMENT"))
    copy_2d(("host", image), ("device", address), w * 4, h, src_pitch=w * 4, dst_pitch=pitch)
    texture = cuda.TextureObject(address, dtype=np.float32, shape=(h, w), pitch=pitch)
    assert np.array_equal(sample2d(kernels, texture, image.shape), image)
    resource = texture.get_resource_desc()
    assert resource["type"] == cuda.resource_type.PITCH2D
    assert (
        resource["devPtr"],
        resource["width"],
        resource["height"],
        resource["pitchInBytes"],
        resource["format"],
        resource["numChannels"],
    ) == (address, w, h, pitch, cuda.array_format.FLOAT, 1)
    linear = cuda.TextureObject(
        address, dtype=np.float32, shape=(h, w), pitch=pitch, filter_mode=cuda.filter_mode.LINEAR
    )
    np.testing.assert_allclose(sample2d(kernels, linear, image.shape, 0.25, 0.5), bilinear(image, 0.25, 0.5), atol=2e-3)
    memory.free()


def test_texture_over_linear_memory_of_float4(kernels):
    n = 300
    values = np.zeros(n, vec.float4)
    for i, field in enumerate("xyzw"):
        values[field] = np.arange(n) * 10 + i
    memory, address = aligned(values.nbytes, attribute("TEXTURE_ALIGNMENT"))
    cuda.memcpy_htod(address, values)
    texture = cuda.TextureObject(address, dtype=vec.float4, shape=(n,))
    assert texture.get_resource_desc()["sizeInBytes"] == values.nbytes
    out = np.zeros_like(values)
    kernels.get_function("fetch_float4")(cuda.Out(out), texture, np.int32(n), block=(128, 1, 1), grid=(3, 1))
    assert np.array_equal(out, values)
    memory.free()


@pytest.mark.parametrize("layered", [False, True])
def test_surface_writes(kernels, layered):
    h, w = 6, 12
    if layered:  # as PyCUDA makes it: a layered array of one layer
        array = cuda.np_to_array(np.zeros((h, w), np.float32), "C", allowSurfaceBind=True)
        assert array.get_descriptor_3d().flags == cuda.array3d_flags.LAYERED | cuda.array3d_flags.SURFACE_LDST
    else:
        array = cuda.Array(
            cuda.ArrayDescriptor3D(
                width=w, height=h, format=cuda.array_format.FLOAT, num_channels=1, flags=cuda.array3d_flags.SURFACE_LDST
            )
        )
    surface = cuda.SurfaceObject(array)
    assert surface.get_resource_desc()["hArray"] == array.handle
    kernels.get_function("write_surface")(surface, np.int32(layered), block=(w, 1, 1), grid=(h, 1))
    back = np.zeros((h, w), np.float32)
    copy = cuda.Memcpy3D()
    copy.set_src_array(array)
    copy.set_dst_host(back)
    copy.width_in_bytes = copy.dst_pitch = w * 4
    copy.height = copy.dst_height = h
    copy.depth = 1
    copy()
    assert np.array_equal(back, np.arange(h)[:, None] * 1000.0 + np.arange(w))


def test_get_texref_on_a_real_module(kernels):
    with pytest.raises(cuda.TextureReferenceError, match="TextureObject"):
        kernels.get_texref("tex")
    with pytest.raises(cuda.LogicError, match="texture references were removed"):
        kernels.get_function("sample2d")(np.uintp(0), block=(1, 1, 1), texrefs=[object()])


# ---------------------------------------------------------------------------
# Vector types.

VECTOR_VALUES = [
    vec.make_float3(1.5, 2.5, 3.5),
    vec.make_double2(4.25, -5.0),
    vec.make_char3(-6, 7, 8),
    vec.make_long4(9, -10, 11, 2**40),
    vec.make_int1(-13),
    vec.make_uchar4(14, 0, 0, 255),
]
VECTOR_EXPECTED = [1.5, 2.5, 3.5, 4.25, -5.0, -6, 7, 8, 9, -10, 11, 2**40, -13, 14, 255]


def test_vector_types_by_value(kernels):
    function = kernels.get_function("vectors")
    out = np.zeros(15)
    function(cuda.Out(out), *VECTOR_VALUES, block=(1, 1, 1))
    assert out.tolist() == VECTOR_EXPECTED
    out[:] = 0
    function(cuda.Out(out), *(v[()] for v in VECTOR_VALUES), block=(1, 1, 1))  # NumPy scalars of them
    assert out.tolist() == VECTOR_EXPECTED
    device = cuda.mem_alloc(out.nbytes)
    function.prepare(["P", vec.float3, vec.double2, vec.char3, vec.long4, vec.int1, vec.uchar4])
    function.prepared_call((1, 1), (1, 1, 1), device, *VECTOR_VALUES)
    assert cuda.from_device(device, (15,), np.float64).tolist() == VECTOR_EXPECTED


def test_vector_types_as_array_dtypes(kernels):
    n = 100
    floats, ints = np.zeros(n, vec.float4), np.zeros(n, vec.int3)
    for i, field in enumerate("xyzw"):
        floats[field] = np.arange(n) + i
    for i, field in enumerate("xyz"):
        ints[field] = np.arange(n) * (i + 1)
    assert ints.itemsize == 12  # CUDA's int3: packed
    p, q = cuda.to_device(floats), cuda.to_device(ints)
    kernels.get_function("scale_vectors")(p, q, np.int32(n), block=(128, 1, 1))
    scaled, added = cuda.from_device(p, (n,), vec.float4), cuda.from_device(q, (n,), vec.int3)
    for i, field in enumerate("xyzw"):
        assert np.array_equal(scaled[field], floats[field] * (i + 2))
    for i, field in enumerate("xyz"):
        assert np.array_equal(added[field], ints[field] + i + 1)
