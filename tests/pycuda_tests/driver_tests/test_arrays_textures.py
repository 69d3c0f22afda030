"""CUDA arrays, 2-D/3-D copies, texture objects, the removed texture references and the vector
types of pyctk.driver / pyctk.gpuarray, on the CPU: no GPU, no driver.

Covered: every enum and flag against cuda.h (the runtime wheel's header); the copy and
descriptor structures' layouts against cuda.h's (offsets and sizes measured with gcc on the
headers of CUDA 12.9 and 13.0, identical, hard-coded here); PyCUDA's field names on them and
where the setters point them; what matrix_to_array / np_to_array / make_multichannel_2d_array
ask the driver for and the bytes they copy (the driver calls recorded); texture descriptors
as cuTexObjectCreate would get them; every texture-reference entry point raising the one
error that names texture objects, and NVRTC's real log for texture<> / surface<> sources
getting the same hint; the vector types (dtypes, make_*, C names, parsing) and their bytes
as kernel arguments, by value and through prepared calls, against parameters from real PTX.
"""

from __future__ import annotations

import ctypes
import re
from pathlib import Path

import numpy as np
import pytest

import pyctk.driver as cuda
from pyctk import compiler, tools
from pyctk._cuda import cudart as _cudart
from pyctk._cuda import driver_api
from pyctk._pycuda.compiling import headers as _cuda_headers
from pyctk._pycuda.kernels import kernel_args, modules, textures
from pyctk._pycuda.memory import arrays, copies_nd
from pyctk.gpuarray import vec

CUDA_H = Path(_cuda_headers.header_folders()[0].path, "cuda.h").read_text()


def header_value(name: str) -> int:
    """The value cuda.h gives ``name``: an enumerator (``NAME = 0x01,``) or a ``#define``."""
    match = re.search(rf"\b{name}\s*=\s*(0x[0-9a-fA-F]+|\d+)", CUDA_H) or re.search(
        rf"#define {name}\s+(0x[0-9a-fA-F]+|\d+)", CUDA_H
    )
    assert match, name
    return int(match[1], 0)


@pytest.mark.parametrize(
    "enum, prefix",
    [
        (cuda.array_format, "CU_AD_FORMAT_"),
        (cuda.memory_type, "CU_MEMORYTYPE_"),
        (cuda.address_mode, "CU_TR_ADDRESS_MODE_"),
        (cuda.filter_mode, "CU_TR_FILTER_MODE_"),
        (cuda.resource_type, "CU_RESOURCE_TYPE_"),
        (cuda.texture_flags, "CU_TRSF_"),
    ],
)
def test_enums_are_cuda_hs(enum, prefix):
    for member in enum.__members__.values():
        assert member == header_value(prefix + member.name), member


def test_array3d_flags_are_cuda_hs_under_pycudas_names():
    for name, member in cuda.array3d_flags.__members__.items():
        assert member == header_value("CUDA_ARRAY3D_" + name.removeprefix("ARRAY3D_")), name
    assert cuda.array3d_flags.LAYERED == cuda.array3d_flags.ARRAY3D_LAYERED == 1  # docs' and code's names


def test_pycudas_values_and_constants():
    assert {m.name: int(m) for m in cuda.array_format} == {
        "UNSIGNED_INT8": 1,
        "UNSIGNED_INT16": 2,
        "UNSIGNED_INT32": 3,
        "SIGNED_INT8": 8,
        "SIGNED_INT16": 9,
        "SIGNED_INT32": 10,
        "HALF": 16,
        "FLOAT": 32,
    }
    assert [int(m) for m in cuda.memory_type] == [1, 2, 3, 4]
    assert (
        cuda.address_mode.WRAP,
        cuda.address_mode.CLAMP,
        cuda.address_mode.MIRROR,
        cuda.address_mode.BORDER,
        cuda.filter_mode.POINT,
        cuda.filter_mode.LINEAR,
    ) == (0, 1, 2, 3, 0, 1)
    assert (cuda.TRSF_READ_AS_INTEGER, cuda.TRSF_NORMALIZED_COORDINATES, cuda.TRSF_SRGB) == (1, 2, 0x10)


# Offsets and sizes from cuda.h (gcc's offsetof/sizeof on the 12.9 and 13.0 headers; LP64).
LAYOUTS = {
    copies_nd.Memcpy2D: (
        128,
        {
            "srcXInBytes": 0,
            "srcY": 8,
            "srcMemoryType": 16,
            "srcHost": 24,
            "srcDevice": 32,
            "srcArray": 40,
            "srcPitch": 48,
            "dstXInBytes": 56,
            "dstY": 64,
            "dstMemoryType": 72,
            "dstHost": 80,
            "dstDevice": 88,
            "dstArray": 96,
            "dstPitch": 104,
            "WidthInBytes": 112,
            "Height": 120,
        },
    ),
    copies_nd.Memcpy3D: (
        200,
        {
            "srcXInBytes": 0,
            "srcY": 8,
            "srcZ": 16,
            "srcLOD": 24,
            "srcMemoryType": 32,
            "srcHost": 40,
            "srcDevice": 48,
            "srcArray": 56,
            "reserved0": 64,
            "srcPitch": 72,
            "srcHeight": 80,
            "dstXInBytes": 88,
            "dstY": 96,
            "dstZ": 104,
            "dstLOD": 112,
            "dstMemoryType": 120,
            "dstHost": 128,
            "dstDevice": 136,
            "dstArray": 144,
            "reserved1": 152,
            "dstPitch": 160,
            "dstHeight": 168,
            "WidthInBytes": 176,
            "Height": 184,
            "Depth": 192,
        },
    ),
    copies_nd.Memcpy3DPeer: (
        200,
        {
            "srcArray": 56,
            "srcContext": 64,
            "srcPitch": 72,
            "dstArray": 144,
            "dstContext": 152,
            "dstPitch": 160,
            "Depth": 192,
        },
    ),
    arrays.ArrayDescriptor: (24, {"Width": 0, "Height": 8, "Format": 16, "NumChannels": 20}),
    arrays.ArrayDescriptor3D: (
        40,
        {"Width": 0, "Height": 8, "Depth": 16, "Format": 24, "NumChannels": 28, "Flags": 32},
    ),
    textures.ResourceDesc: (144, {"resType": 0, "res": 8, "flags": 136}),
    textures._LinearResource: (24, {"devPtr": 0, "format": 8, "numChannels": 12, "sizeInBytes": 16}),
    textures._Pitch2DResource: (
        40,
        {"devPtr": 0, "format": 8, "numChannels": 12, "width": 16, "height": 24, "pitchInBytes": 32},
    ),
    textures.TextureDesc: (
        104,
        {
            "addressMode": 0,
            "filterMode": 12,
            "flags": 16,
            "maxAnisotropy": 20,
            "mipmapFilterMode": 24,
            "mipmapLevelBias": 28,
            "minMipmapLevelClamp": 32,
            "maxMipmapLevelClamp": 36,
            "borderColor": 40,
            "reserved": 56,
        },
    ),
}


@pytest.mark.parametrize("struct", LAYOUTS, ids=lambda s: s.__name__)
def test_structures_are_laid_out_as_cuda_h(struct):
    size, offsets = LAYOUTS[struct]
    assert ctypes.sizeof(struct) == size
    assert {name: getattr(struct, name).offset for name in offsets} == offsets
    if len(offsets) == len(struct._fields_):  # every field listed: cuda.h's order, no others
        assert [name for name, _ in struct._fields_] == list(offsets)


def test_copies_have_pycudas_names():
    two_d = [
        "src_x_in_bytes",
        "src_y",
        "src_memory_type",
        "src_device",
        "src_pitch",
        "dst_x_in_bytes",
        "dst_y",
        "dst_memory_type",
        "dst_device",
        "dst_pitch",
        "width_in_bytes",
        "height",
    ]
    three_d = two_d + ["src_z", "src_lod", "src_height", "dst_z", "dst_lod", "dst_height", "depth"]
    assert sorted(cuda.Memcpy2D.pycuda_names) == sorted(two_d)
    assert sorted(cuda.Memcpy3D.pycuda_names) == sorted(cuda.Memcpy3DPeer.pycuda_names) == sorted(three_d)
    copy = cuda.Memcpy3D()
    assert all(getattr(copy, name) == 0 for name in three_d)  # zeroed, as PyCUDA's
    for offset, name in enumerate(three_d, start=1):
        setattr(copy, name, offset)
    assert copy.srcPitch == three_d.index("src_pitch") + 1 and copy.Depth == len(three_d)
    assert copy.src_memory_type is cuda.memory_type.ARRAY  # 3: src_memory_type's position
    with pytest.raises(TypeError):
        copy.height = 2.5


def test_copy_setters_point_at_what_they_are_given():
    host = np.arange(24, dtype=np.float32).reshape(4, 6)
    copy = cuda.Memcpy2D()
    copy.set_src_host(host[1:, 2:])  # strided: its first element is the origin, as in PyCUDA
    assert (copy.src_memory_type, copy.srcHost) == (cuda.memory_type.HOST, host[1:, 2:].ctypes.data)
    copy.set_dst_device(0x7000)
    assert (copy.dst_memory_type, copy.dst_device, copy.dstHost) == (cuda.memory_type.DEVICE, 0x7000, None)
    copy.set_src_unified(host)
    assert (copy.src_memory_type, copy.src_device) == (cuda.memory_type.UNIFIED, host.ctypes.data)
    copy.set_dst_unified(0x9000)
    assert (copy.dst_memory_type, copy.dst_device) == (cuda.memory_type.UNIFIED, 0x9000)
    array = fake_array(0xA000)
    copy.set_src_array(array)
    assert (copy.src_memory_type, copy.srcArray, copy.srcHost) == (cuda.memory_type.ARRAY, 0xA000, None)
    copy.set_dst_host(bytearray(8))
    assert copy.dst_memory_type == cuda.memory_type.HOST
    with pytest.raises(ValueError, match="read-only"):
        copy.set_dst_host(b"12345678")
    with pytest.raises(TypeError, match="not device memory"):
        copy.set_src_device("0x7000")
    peer = cuda.Memcpy3DPeer()
    peer.set_src_context(type("Context", (), {"handle": 0x51})())
    assert peer.srcContext == 0x51 and peer.dstContext is None
    assert "width_in_bytes=0" in repr(copy)


def fake_array(handle: int) -> cuda.Array:
    """An Array as the driver would have made it (none is made here: there is no GPU)."""
    array = cuda.Array.__new__(cuda.Array)
    array.handle, array._pid = handle, NOT_THIS_PROCESS
    return array


NOT_THIS_PROCESS = -1  # the pid of the objects made here without the driver: never destroyed


def test_array_descriptors():
    descriptor = cuda.ArrayDescriptor(width=64, height=32, format=cuda.array_format.FLOAT, num_channels=4)
    assert (descriptor.Width, descriptor.Height, descriptor.NumChannels) == (64, 32, 4)
    assert descriptor.format is cuda.array_format.FLOAT
    three_d = cuda.ArrayDescriptor3D()
    three_d.flags = cuda.array3d_flags.LAYERED | cuda.array3d_flags.SURFACE_LDST
    assert three_d.Flags == 3 and three_d.flags == cuda.array3d_flags.SURFACE_LDST | 1
    assert "format=0" in repr(three_d)
    with pytest.raises(TypeError, match="no field 'depth'"):
        cuda.ArrayDescriptor(depth=2)
    with pytest.raises(TypeError, match="ArrayDescriptor or ArrayDescriptor3D"):
        cuda.Array(object())
    freed = fake_array(0)
    with pytest.raises(ValueError, match="freed"):
        freed.get_descriptor()


def test_dtype_to_array_format():
    expected = {
        np.uint8: "UNSIGNED_INT8",
        np.uint16: "UNSIGNED_INT16",
        np.uint32: "UNSIGNED_INT32",
        np.int8: "SIGNED_INT8",
        np.int16: "SIGNED_INT16",
        np.int32: "SIGNED_INT32",
        np.float16: "HALF",
        np.float32: "FLOAT",
    }
    assert {t: cuda.dtype_to_array_format(t).name for t in expected} == expected
    for unheld in (np.float64, np.int64, np.complex64, vec.float2):
        with pytest.raises(TypeError, match="cannot convert dtype"):
            cuda.dtype_to_array_format(unheld)


@pytest.fixture
def recorded(monkeypatch):
    """Arrays and copies recorded instead of made: (descriptors, copies)."""
    descriptors, copies = [], []

    class RecordedArray:
        def __init__(self, descriptor):
            descriptors.append(descriptor)

        def live_handle(self):
            return 0xA000

    monkeypatch.setattr(arrays, "Array", RecordedArray)
    for copy in (cuda.Memcpy2D, cuda.Memcpy3D):
        monkeypatch.setattr(copy, "__call__", lambda self, *args, **kwargs: copies.append(self))
    return descriptors, copies


def copied_bytes(copy) -> bytes:
    depth = getattr(copy, "depth", 1)
    return ctypes.string_at(copy.srcHost, copy.src_pitch * copy.height * depth)


@pytest.mark.parametrize("order", ["C", "F", "c"])
def test_matrix_to_array(recorded, order):
    descriptors, copies = recorded
    matrix = np.arange(12, dtype=np.float32).reshape(3, 4)
    cuda.matrix_to_array(matrix, order)
    (descriptor,), (copy,) = descriptors, copies
    rows = matrix if order.upper() == "C" else matrix.T  # "F": tex2D(x, y) is matrix[x, y]
    assert (descriptor.width, descriptor.height, descriptor.format, descriptor.num_channels) == (
        rows.shape[1],
        rows.shape[0],
        cuda.array_format.FLOAT,
        1,
    )
    assert isinstance(copy, cuda.Memcpy2D) and copy.dst_memory_type == cuda.memory_type.ARRAY
    assert (copy.width_in_bytes, copy.src_pitch, copy.height) == (rows.shape[1] * 4, rows.shape[1] * 4, rows.shape[0])
    assert copied_bytes(copy) == np.ascontiguousarray(rows).tobytes()


def test_the_double_hack_holds_float64_as_int32_pairs(recorded):
    descriptors, copies = recorded
    with pytest.raises(TypeError, match="float64"):
        cuda.matrix_to_array(np.ones((2, 2)), "C")
    cuda.matrix_to_array(np.ones((2, 3)), "C", allow_double_hack=True)
    cuda.np_to_array(np.ones((2, 3), np.complex128), "C")
    assert [(d.format, d.num_channels, d.width) for d in descriptors] == [
        (cuda.array_format.SIGNED_INT32, 2, 3),
        (cuda.array_format.SIGNED_INT32, 4, 3),
    ]
    assert [c.width_in_bytes for c in copies] == [24, 48]


def test_np_to_array_3d_and_surfaces(recorded):
    descriptors, copies = recorded
    volume = np.arange(2 * 3 * 4, dtype=np.int16).reshape(2, 3, 4)
    cuda.np_to_array(volume, "C")
    cuda.np_to_array(np.asfortranarray(volume.T), "F")  # (x, y, z) is a[x, y, z]: the same array
    cuda.np_to_array(volume[0], "C", allowSurfaceBind=True)  # a layered array of one layer
    assert [type(d).__name__ for d in descriptors] == ["ArrayDescriptor3D"] * 3
    assert [(d.width, d.height, d.depth, d.format, d.flags) for d in descriptors] == [
        (4, 3, 2, cuda.array_format.SIGNED_INT16, 0),
        (4, 3, 2, cuda.array_format.SIGNED_INT16, 0),
        (4, 3, 1, cuda.array_format.SIGNED_INT16, cuda.array3d_flags.LAYERED | cuda.array3d_flags.SURFACE_LDST),
    ]
    assert [(c.width_in_bytes, c.src_pitch, c.src_height, c.height, c.depth) for c in copies] == [
        (8, 8, 3, 3, 2),
        (8, 8, 3, 3, 2),
        (8, 8, 3, 3, 1),
    ]
    assert copied_bytes(copies[0]) == copied_bytes(copies[1]) == volume.tobytes()


def test_make_multichannel_2d_array(recorded):
    descriptors, copies = recorded
    rgba = np.arange(3 * 5 * 4, dtype=np.uint8).reshape(3, 5, 4)  # (height, width, channels)
    cuda.make_multichannel_2d_array(rgba, "C")
    cuda.make_multichannel_2d_array(np.asfortranarray(rgba.T), "F")  # (channels, width, height)
    assert [(d.width, d.height, d.format, d.num_channels) for d in descriptors] == [
        (5, 3, cuda.array_format.UNSIGNED_INT8, 4)
    ] * 2
    assert [(c.width_in_bytes, c.height) for c in copies] == [(20, 3)] * 2
    assert copied_bytes(copies[0]) == copied_bytes(copies[1]) == rgba.tobytes()


class GpuArrayLike:
    """A GPU array by the CUDA Array Interface (version 2: no stream to wait for)."""

    def __init__(self, shape, strides, dtype, pointer=0x7000):
        self.__cuda_array_interface__ = {
            "version": 2,
            "shape": shape,
            "strides": strides,
            "typestr": np.dtype(dtype).str,
            "data": (pointer, False),
        }


@pytest.fixture
def gpu_memory(monkeypatch):
    """Every pointer device memory of device 0 (what cudaPointerGetAttributes would say)."""
    monkeypatch.setattr(_cudart, "pointer_device", lambda pointer: (_cudart.MEMORY_DEVICE, 0))


def test_gpuarray_to_array_copies_on_the_device_as_np_to_array_from_the_host(recorded, gpu_memory):
    descriptors, copies = recorded
    cuda.gpuarray_to_array(GpuArrayLike((3, 4), (16, 4), np.float32), "C")
    cuda.gpuarray_to_array(GpuArrayLike((4, 3), (4, 16), np.float32), "F")  # the same, Fortran order
    cuda.gpuarray_to_array(GpuArrayLike((2, 3, 4), (96, 32, 8), np.float64), "C", allowSurfaceBind=True)
    assert [(d.width, d.height, d.format, d.num_channels) for d in descriptors[:2]] == [
        (4, 3, cuda.array_format.FLOAT, 1)
    ] * 2
    volume = descriptors[2]  # float64 as int32 pairs, as np_to_array holds it
    assert (volume.width, volume.height, volume.depth, volume.format, volume.num_channels, volume.flags) == (
        4,
        3,
        2,
        cuda.array_format.SIGNED_INT32,
        2,
        cuda.array3d_flags.SURFACE_LDST,
    )
    assert [(c.src_memory_type, c.srcDevice, c.width_in_bytes, c.src_pitch, c.height) for c in copies] == [
        (cuda.memory_type.DEVICE, 0x7000, 16, 16, 3)
    ] * 2 + [(cuda.memory_type.DEVICE, 0x7000, 32, 32, 3)]
    assert copies[2].depth == 2


@pytest.mark.parametrize(
    "array, order, error, match",
    [
        (GpuArrayLike((3, 4), (4, 12), np.float32), "C", ValueError, r"C-contiguous array.*\(4, 12\).*copy"),
        (GpuArrayLike((3, 4), (16, 4), np.float32), "F", ValueError, "Fortran-contiguous"),
        (GpuArrayLike((12,), (4,), np.float32), "C", ValueError, "2-D or 3-D array, not 1-D"),
        (GpuArrayLike((3, 4), (16, 4), np.float32), "X", cuda.LogicError, "order must be"),
        (np.ones((3, 4), np.float32), "C", TypeError, "takes a GPU array.*np_to_array"),
    ],
)
def test_gpuarray_to_array_errors(gpu_memory, array, order, error, match):
    with pytest.raises(error, match=match):
        cuda.gpuarray_to_array(array, order)


@pytest.mark.parametrize(
    "call, error, match",
    [
        (lambda: cuda.matrix_to_array(np.ones((2, 2), np.float32), "A"), cuda.LogicError, "order must be"),
        (lambda: cuda.np_to_array(np.ones(4, np.float32), "C"), ValueError, "2-D or 3-D array, not 1-D"),
        (lambda: cuda.matrix_to_array(np.ones((2, 2, 2), np.float32), "C"), ValueError, "2-D array"),
        (lambda: cuda.make_multichannel_2d_array(np.ones((2, 2), np.uint8), "C"), ValueError, "3-D"),
        (lambda: cuda.np_to_array(np.ones((2, 2), np.int64), "C"), TypeError, "int64"),
        (lambda: cuda.memset_d2d8("address", 512, 0, 16, 16), TypeError, "memset_d2d8.*not device memory"),
        (lambda: cuda.memcpy_dtoa(fake_array(1), 0, 1.5, 4), TypeError, "memcpy_dtoa"),
        (lambda: cuda.memcpy_atoh(b"read only", fake_array(1), 0), ValueError, "read-only"),
    ],
)
def test_errors_before_any_gpu_work(call, error, match):
    with pytest.raises(error, match=match):
        call()


# ---------------------------------------------------------------------------
# Texture objects, as cuTexObjectCreate would get them.


@pytest.fixture
def created(monkeypatch):
    """Objects' driver calls recorded instead of made: [(function, arguments)]."""
    calls = []

    def create(self, function, *arguments):
        calls.append((function, [getattr(a, "_obj", a) for a in arguments]))  # byref(x)._obj is x
        self.handle, self._pid = 0x7E0, NOT_THIS_PROCESS

    monkeypatch.setattr(arrays.Owned, "_create", create)
    return calls


def test_texture_over_an_array(created):
    array = fake_array(0xA000)
    texture = cuda.TextureObject(
        array,
        address_mode=[cuda.address_mode.WRAP, cuda.address_mode.BORDER],
        filter_mode=cuda.filter_mode.LINEAR,
        border_color=(1, 2, 3, 4),
        flags=cuda.TRSF_NORMALIZED_COORDINATES | cuda.TRSF_READ_AS_INTEGER,
    )
    ((function, (resource, description, view)),) = created
    assert function == "cuTexObjectCreate" and view is None
    assert (resource.resType, resource.res.array.hArray) == (cuda.resource_type.ARRAY, 0xA000)
    assert list(description.addressMode) == [0, 3, 3]  # the last mode for the dimensions not given
    assert (description.filterMode, description.flags, list(description.borderColor)) == (1, 3, [1, 2, 3, 4])
    assert texture.resource is array and texture.handle == 0x7E0
    cuda.TextureObject(array)
    assert list(created[1][1][1].addressMode) == [1, 1, 1] and created[1][1][1].filterMode == 0


def test_texture_over_device_memory(created):
    cuda.TextureObject(0x1000, dtype=np.float32, shape=(100,))
    cuda.TextureObject(0x2000, dtype=vec.float4, shape=(32, 16), pitch=512)
    cuda.TextureObject(0x3000, dtype=np.uint8, shape=(4, 6))
    linear, pitched, packed = (call[1][0] for call in created)
    assert linear.resType == cuda.resource_type.LINEAR
    assert (
        linear.res.linear.devPtr,
        linear.res.linear.format,
        linear.res.linear.numChannels,
        linear.res.linear.sizeInBytes,
    ) == (0x1000, cuda.array_format.FLOAT, 1, 400)
    assert pitched.resType == cuda.resource_type.PITCH2D
    assert (
        pitched.res.pitch2D.devPtr,
        pitched.res.pitch2D.format,
        pitched.res.pitch2D.numChannels,
        pitched.res.pitch2D.width,
        pitched.res.pitch2D.height,
        pitched.res.pitch2D.pitchInBytes,
    ) == (0x2000, cuda.array_format.FLOAT, 4, 16, 32, 512)
    assert packed.res.pitch2D.pitchInBytes == 6  # width * itemsize unless given


def test_surface_object(created):
    array = fake_array(0xB000)
    surface = cuda.SurfaceObject(array)
    ((function, (resource,)),) = created
    assert function == "cuSurfObjectCreate" and resource.res.array.hArray == 0xB000
    assert surface.resource is array
    with pytest.raises(TypeError, match="reads and writes an Array"):
        cuda.SurfaceObject(0x1000)


@pytest.mark.parametrize(
    "arguments, error, match",
    [
        ({"resource": 0x1000}, TypeError, "dtype= and shape="),
        ({"resource": 0x1000, "dtype": np.float64, "shape": (4,)}, TypeError, "cannot convert dtype 'float64'"),
        ({"resource": 0x1000, "dtype": vec.float3, "shape": (4,)}, TypeError, "1, 2 or 4"),
        ({"resource": 0x1000, "dtype": np.float32, "shape": (2, 3, 4)}, ValueError, "linear, shape=\\(n,\\)"),
        ({"resource": 0x1000, "dtype": np.float32, "shape": (4,), "pitch": 64}, ValueError, "pitch"),
        ({"resource": "memory", "dtype": np.float32, "shape": (4,)}, TypeError, "not device memory"),
        (
            {"resource": 0x1000, "dtype": np.float32, "shape": (4,), "address_mode": [0, 0, 0, 0]},
            ValueError,
            "address_mode",
        ),
    ],
)
def test_texture_object_errors(created, arguments, error, match):
    with pytest.raises(error, match=match):
        cuda.TextureObject(arguments.pop("resource"), **arguments)
    assert not created


def test_an_array_has_its_own_format(created):
    with pytest.raises(TypeError, match="own format and shape"):
        cuda.TextureObject(fake_array(0xA000), dtype=np.float32)


def test_element_formats_of_vector_types():
    assert textures.element_format(vec.uchar4) == (cuda.array_format.UNSIGNED_INT8, 4)
    assert textures.element_format(vec.float2) == (cuda.array_format.FLOAT, 2)
    assert textures.element_format(np.int16) == (cuda.array_format.SIGNED_INT16, 1)
    with pytest.raises(TypeError, match="equal scalars"):
        textures.element_format(np.dtype([("a", np.float32), ("b", np.int32)]))


# ---------------------------------------------------------------------------
# Texture and surface references: one error, naming texture objects.


def kernel_with_params(params):
    return modules.Function(None, 0, "k", params)


@pytest.mark.parametrize(
    "call",
    [
        lambda: cuda.TextureReference(),
        lambda: cuda.SurfaceReference(),
        lambda: cuda.matrix_to_texref(np.ones((2, 2), np.float32), object(), "C"),
        lambda: cuda.bind_array_to_texref(object(), object()),
        lambda: modules.Module.__new__(modules.Module).get_texref("tex"),
        lambda: modules.Module.__new__(modules.Module).get_surfref("surf"),
        lambda: kernel_with_params(None).prepare("P", texrefs=[object()]),
        lambda: kernel_with_params(None)(np.uintp(0), block=(1, 1, 1), texrefs=[object()]),
    ],
    ids=[
        "TextureReference",
        "SurfaceReference",
        "matrix_to_texref",
        "bind_array_to_texref",
        "get_texref",
        "get_surfref",
        "prepare",
        "call",
    ],
)
def test_texture_references_raise_the_error_that_names_texture_objects(call):
    with pytest.raises(cuda.TextureReferenceError) as caught:
        call()
    error = caught.value
    assert isinstance(error, cuda.LogicError)  # what a PyCUDA program catches
    message = str(error)
    assert "texture references were removed from CUDA in version 12.0" in message
    assert "cudaTextureObject_t" in message and "cuda.TextureObject(cuda.matrix_to_array(a" in message
    assert cuda.TextureReferenceError.__module__ == "pyctk.driver"


def test_an_empty_texrefs_is_fine():
    kernel = kernel_with_params([kernel_args.Param("int", 8)])
    assert kernel.prepare("P", texrefs=[]) is kernel


@pytest.fixture
def no_cache(monkeypatch):
    monkeypatch.setenv("PYCTK_DISABLE_CACHE", "1")


@pytest.mark.parametrize(
    "source",
    [
        (
            "texture<float, 2, cudaReadModeElementType> tex;\n"
            "__global__ void k(float *o) { o[0] = tex2D(tex, 0.5f, 0.5f); }"
        ),
        "surface<void, 2> surf;\n__global__ void k(float *o) { surf2Dwrite(o[0], surf, 0, 0); }",
    ],
    ids=["texture", "surface"],
)
def test_nvrtc_failing_on_references_adds_the_hint(no_cache, source):
    with pytest.raises(compiler.CompileError) as caught:
        compiler.compile(source, arch="compute_80")
    error = caught.value
    assert "is not a template" in str(error)  # NVRTC's own log first
    assert "This source declares texture or surface references: texture references were removed" in str(error)
    assert "pyctk.driver.TextureObject" in str(error) and "pyctk.driver" not in error.log  # the log stays NVRTC's


def test_other_compile_errors_get_no_hint(no_cache):
    with pytest.raises(compiler.CompileError) as caught:
        compiler.compile("__global__ void k(float *o) { o[0] = undefined_thing; }", arch="compute_80")
    assert "texture" not in str(caught.value)


TEXTURE_KERNEL = """
__global__ void sample(float *out, cudaTextureObject_t tex, cudaSurfaceObject_t surf, int w) {
    int x = threadIdx.x, y = blockIdx.x;
    float v = tex2D<float>(tex, x + 0.5f, y + 0.5f);
    surf2Dwrite(v, surf, x * 4, y);
    out[y * w + x] = v;
}"""


def test_texture_and_surface_objects_are_64_bit_parameters(no_cache, monkeypatch):
    ptx = compiler.compile(TEXTURE_KERNEL, arch="compute_80").decode()
    params = kernel_args.parse_ptx(ptx)["sample"]
    assert params[1] == params[2] == kernel_args.Param("int", 8)
    monkeypatch.setattr(driver_api, "current_device", lambda: 0)
    texture, surface = (
        textures.TextureObject.__new__(textures.TextureObject),
        textures.SurfaceObject.__new__(textures.SurfaceObject),
    )
    texture.handle, surface.handle = 0x1234, 0x5678
    texture._pid = surface._pid = NOT_THIS_PROCESS
    values = kernel_with_params(params)._values((np.uintp(0x1000), texture, surface, np.int32(4)), 0, [], [])
    assert values[1:3] == [(0x1234).to_bytes(8, "little"), (0x5678).to_bytes(8, "little")]
    surface.handle = None
    with pytest.raises(ValueError, match="SurfaceObject was freed"):
        kernel_with_params(params)._values((np.uintp(0), texture, surface, np.int32(4)), 0, [], [])


# ---------------------------------------------------------------------------
# Vector types.

PYCUDAS_VEC = [
    f"{base}{n}"
    for base in ("char", "uchar", "short", "ushort", "int", "uint", "long", "ulong", "float")
    for n in (1, 2, 3, 4)
] + [f"{base}{n}" for base in ("longlong", "ulonglong", "double") for n in (1, 2)]
BASES = {
    "char": np.int8,
    "uchar": np.uint8,
    "short": np.int16,
    "ushort": np.uint16,
    "int": np.int32,
    "uint": np.uint32,
    "long": np.int64,
    "ulong": np.uint64,
    "longlong": np.int64,
    "ulonglong": np.uint64,
    "float": np.float32,
    "double": np.float64,
}


@pytest.mark.parametrize("name", PYCUDAS_VEC)
def test_vector_types(name):
    base, count = BASES[name[:-1]], int(name[-1])
    dtype = getattr(vec, name)
    assert dtype.names == ("x", "y", "z", "w")[:count]
    assert dtype.itemsize == count * np.dtype(base).itemsize  # packed: float3 is 12 bytes
    assert all(dtype.fields[field][0] == base for field in dtype.names)
    value = getattr(vec, f"make_{name}")(*range(1, count + 1))
    assert value.shape == () and value.dtype == dtype
    assert [value[field] for field in dtype.names] == list(range(1, count + 1))
    with pytest.raises(TypeError, match=f"make_{name}\\(\\) takes {count} values"):
        getattr(vec, f"make_{name}")(*range(count + 1))
    c_name = name.replace("longlong", "long")  # longlong2 is long2's dtype: written long2, as in PyCUDA
    assert tools.dtype_to_ctype(dtype) == c_name
    assert tools.get_or_register_dtype(name) == dtype


def test_vec_is_exactly_pycudas():
    names = {n for n in vars(vec) if not n.startswith("_")}
    assert names == set(PYCUDAS_VEC) | {f"make_{n}" for n in PYCUDAS_VEC}


def test_vector_types_in_c_declarations():
    pointer, value = tools.parse_c_arg("const float3 *__restrict__ p"), tools.parse_c_arg("double2 v")
    assert isinstance(pointer, tools.VectorArg) and pointer.dtype == vec.float3
    assert isinstance(value, tools.ScalarArg) and value.dtype == vec.double2
    assert tools.get_arg_type("double2 v") == "16s" and tools.get_arg_type("uchar4 *p") == "P"
    assert value.declarator() == "double2 v"


VECTOR_KERNEL = """
__global__ void v(float3 a, double2 b, char3 c, long4 d, int1 e, float *out) {
    out[0] = a.z + b.y + c.z + d.w + e.x;
}"""


@pytest.fixture
def vector_kernel(no_cache, monkeypatch):
    """A Function of the parameters NVRTC gives VECTOR_KERNEL, whose launch records its arguments."""
    ptx = compiler.compile(VECTOR_KERNEL, arch="compute_80").decode()
    monkeypatch.setattr(driver_api, "current_device", lambda: 0)
    return kernel_with_params(kernel_args.parse_ptx(ptx)["v"])


def test_vector_values_are_kernel_arguments_by_value(vector_kernel):
    assert [p.size for p in vector_kernel.params] == [12, 16, 3, 32, 4, 8]
    arguments = (
        vec.make_float3(1, 2, 3),
        vec.make_double2(4, 5),
        vec.make_char3(6, 7, 8),
        vec.make_long4(9, 10, 11, 12),
        vec.make_int1(13),
        np.uintp(0x1000),
    )
    values = vector_kernel._values(arguments, 0, [], [])
    assert values[:5] == [a.tobytes() for a in arguments[:5]]
    scalars = vector_kernel._values(tuple(a[()] for a in arguments), 0, [], [])  # np.void scalars too
    assert scalars == values
    with pytest.raises(TypeError, match="argument 0 is 12 bytes"):
        vector_kernel._values((vec.make_float2(1, 2), *arguments[1:]), 0, [], [])
    with pytest.raises(TypeError, match="NumPy array in host memory"):  # a 1-d array still is not
        vector_kernel._values((*arguments[:5], np.zeros(3, np.float32)), 0, [], [])


def test_vector_types_in_prepared_calls(vector_kernel, monkeypatch):
    launched = []
    monkeypatch.setattr(modules.Function, "__call__", lambda self, *args, **kwargs: launched.append(args))
    vector_kernel.prepare([vec.float3, vec.double2, "3s", vec.long4, vec.int1, "P"])
    assert vector_kernel._prepared[0] == ["12s", "16s", "3s", "32s", "4s", "P"]
    vector_kernel.prepared_call(
        (1,),
        (1, 1, 1),
        vec.make_float3(1, 2, 3),
        vec.make_double2(4, 5)[()],
        b"\x06\x07\x08",
        vec.make_long4(9, 10, 11, 12),
        vec.make_int1(13),
        0x1000,
    )
    (arguments,) = launched
    assert [type(a) for a in arguments[:5]] == [np.void] * 5
    assert arguments[0].tobytes() == vec.make_float3(1, 2, 3).tobytes() and arguments[2].tobytes() == b"\x06\x07\x08"
    with pytest.raises(TypeError, match="12-byte struct or vector argument got 8 bytes"):
        vector_kernel.prepared_call((1,), (1, 1, 1), vec.make_float2(1, 2), *arguments[1:])
    with pytest.raises(TypeError, match="takes a 0-d array or scalar"):
        vector_kernel.prepared_call((1,), (1, 1, 1), 1.5, *arguments[1:])
