"""2-D and 3-D copies and 2-D fills: PyCUDA's ``Memcpy2D``, ``Memcpy3D``, ``Memcpy3DPeer`` and
``memset_d2d8``/``16``/``32``.

A copy object is the driver's own ``CUDA_MEMCPY2D`` / ``CUDA_MEMCPY3D`` / ``CUDA_MEMCPY3D_PEER``
(ctypes structures laid out as cuda.h has them), zeroed when made; its fields are read and
written under PyCUDA's names (``src_pitch``, ``width_in_bytes`` ...: one table, ``_NAMES``).
``set_src_host`` / ``set_src_array`` / ``set_src_device`` / ``set_src_unified`` (and the
``set_dst_*``) say where it reads and writes; calling it copies (``Memcpy2D`` has an
example). Describing a copy needs no GPU:

>>> import numpy as np
>>> a = np.arange(12, dtype=np.float32).reshape(3, 4)
>>> copy = Memcpy2D()
>>> copy.set_src_host(a)
>>> copy.width_in_bytes = copy.src_pitch = a.strides[0]
>>> copy.height = 3
>>> copy.src_memory_type, copy.width_in_bytes, copy.height
(<memory_type.HOST: 1>, 16, 3)

Pitches, offsets and widths are in bytes, heights and depths in rows and slices. A copy that
would reach past the end of a side whose size pyctk knows (a host buffer, counted from its
first element; an allocation; a GPU array) is a ValueError before the driver is called, as is
a 2-D fill past its memory. Without a stream a copy is done when the call returns; ``copy(stream)`` enqueues it (truly
asynchronous from page-locked host memory only). Unlike PyCUDA, a copy keeps the objects
it reads and writes alive until it is given others.
"""

from __future__ import annotations

import ctypes
import enum
import operator
from ctypes import byref, c_int, c_size_t, c_uint64, c_void_p
from typing import Any, Callable, TypeVar

import numpy as np

from ..._arrays.layout import extent
from ..._cuda import constants as cu
from ..._cuda import driver_api, streams
from .device import DevicePointer, device_pointer
from .sizes import byte_count

_Structure = TypeVar("_Structure", bound=type[ctypes.Structure])


class memory_type(enum.IntEnum):  # PyCUDA's name
    """Where one side of a copy is: ``CUmemorytype`` (cuda.h).

    The ``set_src_*`` and ``set_dst_*`` methods of :class:`Memcpy2D` and :class:`Memcpy3D`
    set it.
    """

    HOST = cu.CU_MEMORYTYPE_HOST  #: Host memory.
    DEVICE = cu.CU_MEMORYTYPE_DEVICE  #: Device memory.
    ARRAY = cu.CU_MEMORYTYPE_ARRAY  #: A CUDA :class:`Array`.
    UNIFIED = cu.CU_MEMORYTYPE_UNIFIED  #: An address of the unified address space: host or device memory.


# PyCUDA's attribute -> (the cuda.h field, the enum its values are), for every copy structure;
# each structure has the rows whose field it has.
_NAMES = {
    "src_x_in_bytes": ("srcXInBytes", None),
    "src_y": ("srcY", None),
    "src_z": ("srcZ", None),
    "src_lod": ("srcLOD", None),
    "src_memory_type": ("srcMemoryType", memory_type),
    "src_device": ("srcDevice", None),
    "src_pitch": ("srcPitch", None),
    "src_height": ("srcHeight", None),
    "dst_x_in_bytes": ("dstXInBytes", None),
    "dst_y": ("dstY", None),
    "dst_z": ("dstZ", None),
    "dst_lod": ("dstLOD", None),
    "dst_memory_type": ("dstMemoryType", memory_type),
    "dst_device": ("dstDevice", None),
    "dst_pitch": ("dstPitch", None),
    "dst_height": ("dstHeight", None),
    "width_in_bytes": ("WidthInBytes", None),
    "height": ("Height", None),
    "depth": ("Depth", None),
}


def _as(kind: type[enum.IntEnum] | None, value: int) -> Any:
    """``value`` as a member of ``kind`` where it is one (0: a field not set yet stays 0)."""
    try:
        return kind(value) if kind else value
    except ValueError:
        return value


def pycuda_names(
    names: dict[str, tuple[str, Any]], docs: dict[str, str] | None = None
) -> Callable[[_Structure], _Structure]:
    """A class decorator: the ctypes structure's fields also read and write under PyCUDA's names
    (``names``: PyCUDA's name -> (field, enum or None)), those rows whose field it has; ``docs``:
    PyCUDA's name -> what the field says (its docstring, followed by cuda.h's name)."""

    def decorate(cls: _Structure) -> _Structure:
        fields = {field for field, *_ in cls._fields_}
        for name, (field, kind) in names.items():
            if field in fields:
                text = (docs or {}).get(name, "")
                doc = f"{text} (cuda.h's ``{field}``)." if text else f"cuda.h's ``{field}``."
                setattr(cls, name, _named_field(field, kind, doc))
        # (Each class declares pycuda_names, which a type bound to Structure cannot say.)
        cls.pycuda_names = tuple(name for name, (field, _) in names.items() if field in fields)  # type: ignore[attr-defined]
        return cls

    return decorate


def _named_field(field: str, kind: Any, doc: str) -> property:
    """Field ``field`` under another name: read as ``kind`` (an enum, or None), written as an int."""

    def get(self: ctypes.Structure) -> Any:
        return _as(kind, getattr(self, field))

    def set_(self: ctypes.Structure, value: Any) -> None:
        setattr(self, field, operator.index(value))

    return property(get, set_, doc=doc)


# What each field says, by PyCUDA's name (the docstrings of the properties pycuda_names makes).
_SIDE_DOCS = {
    "x_in_bytes": "The {side}'s origin: bytes from the start of a row",
    "y": "The {side}'s origin: rows from the start",
    "z": "The {side}'s origin: slices from the start (3-D copies)",
    "lod": "The mipmap level of the {side} array (3-D copies)",
    "memory_type": "Where the {side} is, a :class:`memory_type`: the ``set_*`` methods set it",
    "device": "The {side}'s device address, which ``set_*_device`` and ``set_*_unified`` set",
    "pitch": "Bytes from one row of the {side} to the next (ignored for an array)",
    "height": "Rows from one slice of the {side} to the next (3-D copies; ignored for an array)",
}
_DOCS = {
    **{
        f"{side}_{name}": text.format(side=words)
        for side, words in (("src", "source"), ("dst", "destination"))
        for name, text in _SIDE_DOCS.items()
    },
    "width_in_bytes": "Bytes of each row to copy",
    "height": "Rows to copy",
    "depth": "Slices to copy (3-D copies)",
}


# One side of a copy in cuda.h's order, "{side}" being src or dst. A 3-D one adds Z, LOD, a
# pointer after the array ("{slot}": reserved0/1, or the context of a peer copy) and Height.
_SIDE_2D = [
    ("{side}XInBytes", c_size_t),
    ("{side}Y", c_size_t),
    ("{side}MemoryType", c_int),
    ("{side}Host", c_void_p),
    ("{side}Device", c_uint64),
    ("{side}Array", c_void_p),
    ("{side}Pitch", c_size_t),
]
_SIDE_3D = [
    ("{side}XInBytes", c_size_t),
    ("{side}Y", c_size_t),
    ("{side}Z", c_size_t),
    ("{side}LOD", c_size_t),
    ("{side}MemoryType", c_int),
    ("{side}Host", c_void_p),
    ("{side}Device", c_uint64),
    ("{side}Array", c_void_p),
    ("{slot}", c_void_p),
    ("{side}Pitch", c_size_t),
    ("{side}Height", c_size_t),
]


def _fields(side: list, slots: tuple[str, str], extent: list[str]) -> list:
    """A copy structure's ``_fields_``: the source side, the destination side, then the extent."""
    return [(name.format(side=s, slot=slot), kind) for s, slot in zip(("src", "dst"), slots) for name, kind in side] + [
        (name, c_size_t) for name in extent
    ]


def _host_place(buffer: Any, writable: bool) -> tuple[int, int]:
    """(address of a host buffer's first element, bytes from it to the end of the buffer's
    memory): any buffer, strided ones too, as in PyCUDA."""
    array = buffer if isinstance(buffer, np.ndarray) else np.asarray(memoryview(buffer))
    if writable and not array.flags.writeable:
        raise ValueError("the copy's host destination is read-only")
    address = array.ctypes.data
    return address, extent(address, array.shape, array.strides, array.itemsize)[1] - address


def device_address(memory: Any, what: str) -> DevicePointer:
    """Where device memory is (a ``DeviceAllocation``, an int address, a GPU array), and its
    size where pyctk knows it."""
    pointer = device_pointer(memory)
    if pointer is None:
        raise TypeError(
            f"{what}: {type(memory).__name__} is not device memory: pass a "
            f"DeviceAllocation, an int address, or a GPU array (DeviceArray, CuPy ...)"
        )
    return pointer


class _Copy:
    """What the copy structures share: where they read and write, and the call."""

    pycuda_names: tuple[str, ...]  # set by pycuda_names, which each kind is decorated with

    def _set(
        self,
        side: str,
        kind: memory_type,
        owner: Any,
        host: int | None = None,
        device: int = 0,
        array: int | None = None,
        room: int | None = None,
    ) -> None:
        setattr(self, f"{side}MemoryType", kind)
        setattr(self, f"{side}Host", host)
        setattr(self, f"{side}Device", device)
        setattr(self, f"{side}Array", array)
        setattr(self, f"_{side}_owner", owner)  # kept alive while the copy may use it
        setattr(self, f"_{side}_room", room)  # bytes from the origin on, where known

    def set_src_host(self, buffer: Any) -> None:
        """Read from host memory.

        Parameters
        ----------
        buffer : buffer
            Any buffer (a NumPy array, bytes ...), strided ones too; its first element is
            the origin. It is kept alive with the copy.
        """
        host, room = _host_place(buffer, False)
        self._set("src", memory_type.HOST, buffer, host=host, room=room)

    def set_src_array(self, array: Any) -> None:
        """Read from a CUDA array.

        Parameters
        ----------
        array : Array
        """
        self._set("src", memory_type.ARRAY, array, array=array.live_handle())

    def set_src_device(self, memory: Any) -> None:
        """Read from device memory.

        Parameters
        ----------
        memory
            A :class:`DeviceAllocation`, an int address, a GPU array ...
        """
        pointer = device_address(memory, "set_src_device")
        self._set("src", memory_type.DEVICE, pointer.owner, device=pointer.address, room=pointer.nbytes)

    def set_src_unified(self, memory: Any) -> None:
        """Read from memory of the unified address space: the driver finds out where it is.

        Parameters
        ----------
        memory
            Device memory, or a host buffer (managed or page-locked memory, say).
        """
        address, room = _unified_place(memory, False)
        self._set("src", memory_type.UNIFIED, memory, device=address, room=room)

    def set_dst_host(self, buffer: Any) -> None:
        """Write into host memory.

        Parameters
        ----------
        buffer : buffer
            Writable; its first element is the origin. It is kept alive with the copy.
        """
        host, room = _host_place(buffer, True)
        self._set("dst", memory_type.HOST, buffer, host=host, room=room)

    def set_dst_array(self, array: Any) -> None:
        """Write into a CUDA array.

        Parameters
        ----------
        array : Array
        """
        self._set("dst", memory_type.ARRAY, array, array=array.live_handle())

    def set_dst_device(self, memory: Any) -> None:
        """Write into device memory.

        Parameters
        ----------
        memory
            A :class:`DeviceAllocation`, an int address, a GPU array ...
        """
        pointer = device_address(memory, "set_dst_device")
        self._set("dst", memory_type.DEVICE, pointer.owner, device=pointer.address, room=pointer.nbytes)

    def set_dst_unified(self, memory: Any) -> None:
        """Write into memory of the unified address space: the driver finds out where it is.

        Parameters
        ----------
        memory
            Device memory, or a writable host buffer.
        """
        address, room = _unified_place(memory, True)
        self._set("dst", memory_type.UNIFIED, memory, device=address, room=room)

    def _check_room(self) -> None:
        """Refuse a copy that would read or write past the end of a side whose size is known
        (a host buffer, an allocation, a GPU array), before the driver does it."""
        width, rows, depth = (getattr(self, field, 1) for field in ("WidthInBytes", "Height", "Depth"))
        if not (width and rows and depth):  # nothing to copy
            return
        for side in ("src", "dst"):
            room = getattr(self, f"_{side}_room", None)
            if room is None:
                continue
            # (3-D: slices are {side}Height rows apart; a 2-D copy has no Z, Height or Depth)
            z, slice_rows = getattr(self, f"{side}Z", 0), getattr(self, f"{side}Height", 0)
            last_row = (z + depth - 1) * slice_rows + getattr(self, f"{side}Y") + rows - 1
            end = last_row * getattr(self, f"{side}Pitch") + getattr(self, f"{side}XInBytes") + width
            if end > room:
                raise ValueError(
                    f"{type(self).__name__}: the copy would reach byte {end} of its {side} side, which "
                    f"has {room} bytes from its origin: check {side}_pitch, {side}_x_in_bytes, "
                    f"{side}_y, width_in_bytes and height"
                    + (f", {side}_z, {side}_height and depth" if z or depth > 1 else "")
                )

    def _copy(self, function: str, stream: Any) -> None:
        self._check_room()
        driver_api.current_context()
        # Every kind of copy is a ctypes Structure too, which a mixin's type cannot say.
        description = byref(self)  # type: ignore[arg-type]
        if stream is None:
            driver_api.call(function, description)
        else:
            driver_api.call(function + "Async", description, streams.handle(stream))

    def __repr__(self) -> str:
        return f"<{type(self).__name__} " + ", ".join(f"{n}={getattr(self, n)}" for n in self.pycuda_names) + ">"


def _unified_place(memory: Any, writable: bool) -> tuple[int, int | None]:
    """(address, bytes from it on where known) of device memory or a host buffer."""
    pointer = device_pointer(memory)
    return (pointer.address, pointer.nbytes) if pointer is not None else _host_place(memory, writable)


@pycuda_names(_NAMES, _DOCS)
class Memcpy2D(_Copy, ctypes.Structure):
    """A 2-D copy: ``height`` rows of ``width_in_bytes`` bytes (PyCUDA's ``Memcpy2D``).

    The copy is the driver's ``CUDA_MEMCPY2D``, zeroed when made. Rows are ``src_pitch``
    bytes apart in the source and ``dst_pitch`` in the destination (pitches are ignored for
    arrays); the copy goes from (``src_x_in_bytes``, ``src_y``) to (``dst_x_in_bytes``,
    ``dst_y``). The ``set_src_*`` and ``set_dst_*`` methods say where it reads and writes;
    unlike PyCUDA's, it keeps what they were given alive.

    Calling it copies: ``copy()`` or ``copy(aligned=True)`` now (``aligned=False``:
    ``cuMemcpy2DUnaligned``, which tolerates unaligned device pitches and offsets), and
    ``copy(stream)`` or ``copy(stream=stream)`` enqueues it on a stream (truly asynchronous
    from page-locked host memory only).

    Examples
    --------
    A 3 x 4 matrix into pitched device memory, and back:

    >>> import numpy as np                           # doctest: +GPU
    >>> import pyctk.driver as cuda
    >>> a = np.arange(12, dtype=np.float32).reshape(3, 4)
    >>> a_gpu, pitch = cuda.mem_alloc_pitch(a.strides[0], 3, 4)
    >>> copy = cuda.Memcpy2D()
    >>> copy.set_src_host(a)
    >>> copy.set_dst_device(a_gpu)
    >>> copy.width_in_bytes = copy.src_pitch = a.strides[0]
    >>> copy.dst_pitch, copy.height = pitch, 3
    >>> copy()
    >>> b = np.zeros_like(a)
    >>> back = cuda.Memcpy2D()
    >>> back.set_src_device(a_gpu)
    >>> back.set_dst_host(b)
    >>> back.src_pitch, back.dst_pitch = pitch, b.strides[0]
    >>> back.width_in_bytes, back.height = b.strides[0], 3
    >>> back()
    >>> b
    array([[ 0.,  1.,  2.,  3.],
           [ 4.,  5.,  6.,  7.],
           [ 8.,  9., 10., 11.]], dtype=float32)
    """

    _fields_ = _fields(_SIDE_2D, ("", ""), ["WidthInBytes", "Height"])

    def __call__(self, aligned: Any = True, *, stream: Any = None) -> None:
        """Copy now, or enqueue the copy on a stream.

        Parameters
        ----------
        aligned : bool or Stream, optional
            False: ``cuMemcpy2DUnaligned``. A stream in its place is ``stream``, as in
            PyCUDA's ``copy(stream)``.
        stream : Stream, optional
            Enqueue the copy on it and return at once.
        """
        if not isinstance(aligned, (bool, np.bool_)):  # PyCUDA's copy(stream)
            aligned, stream = True, aligned
        if stream is None and not aligned:
            self._copy("cuMemcpy2DUnaligned", None)
        else:
            self._copy("cuMemcpy2D", stream)


@pycuda_names(_NAMES, _DOCS)
class Memcpy3D(_Copy, ctypes.Structure):
    """A 3-D copy: ``depth`` slices of ``height`` rows of ``width_in_bytes`` bytes (PyCUDA's
    ``Memcpy3D``).

    The copy is the driver's ``CUDA_MEMCPY3D``, zeroed when made. In host or device memory
    rows are ``*_pitch`` bytes apart and slices ``*_height`` rows apart; (``*_x_in_bytes``,
    ``*_y``, ``*_z``) is each side's origin. It has :class:`Memcpy2D`'s methods;
    ``copy()`` copies now, ``copy(stream)`` enqueues it on a stream.

    Examples
    --------
    A 2 x 3 x 4 NumPy array into a 3-D CUDA array:

    >>> import numpy as np                           # doctest: +GPU
    >>> import pyctk.driver as cuda
    >>> a = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    >>> array = cuda.Array(cuda.ArrayDescriptor3D(width=4, height=3, depth=2, num_channels=1,
    ...                                           format=cuda.array_format.FLOAT))
    >>> copy = cuda.Memcpy3D()
    >>> copy.set_src_host(a)
    >>> copy.set_dst_array(array)
    >>> copy.width_in_bytes = copy.src_pitch = a.strides[1]
    >>> copy.src_height = copy.height = 3
    >>> copy.depth = 2
    >>> copy()
    >>> array.get_descriptor_3d().depth
    2
    """

    _fields_ = _fields(_SIDE_3D, ("reserved0", "reserved1"), ["WidthInBytes", "Height", "Depth"])

    def __call__(self, stream: Any = None) -> None:
        """Copy now, or enqueue the copy on ``stream`` and return at once."""
        self._copy("cuMemcpy3D", stream)


@pycuda_names(_NAMES, _DOCS)
class Memcpy3DPeer(_Copy, ctypes.Structure):
    """A :class:`Memcpy3D` between the memory of two contexts (``CUDA_MEMCPY3D_PEER``).

    The contexts come from :meth:`set_src_context` and :meth:`set_dst_context`; one not set
    is the context current when the copy is made (PyCUDA's intent; its own code left it
    NULL).
    """

    _fields_ = _fields(_SIDE_3D, ("srcContext", "dstContext"), ["WidthInBytes", "Height", "Depth"])

    def set_src_context(self, context: Any) -> None:
        """Say which context the source memory belongs to.

        Parameters
        ----------
        context : Context
        """
        self.srcContext, self._src_context = context.handle, context

    def set_dst_context(self, context: Any) -> None:
        """Say which context the destination memory belongs to.

        Parameters
        ----------
        context : Context
        """
        self.dstContext, self._dst_context = context.handle, context

    def __call__(self, stream: Any = None) -> None:
        """Copy now, or enqueue the copy on ``stream`` and return at once."""
        self._check_room()  # (the copy made below has the fields, not what they were set from)
        current = driver_api.current_context()
        copy = Memcpy3DPeer.from_buffer_copy(self)  # this one keeps "not set" for later calls
        copy.srcContext, copy.dstContext = self.srcContext or current, self.dstContext or current
        copy._copy("cuMemcpy3DPeer", stream)


# ---------------------------------------------------------------------------
# 2-D fills: ``height`` rows of ``width`` elements, rows ``pitch`` bytes apart.


def _memset_2d(
    bits: int, dest: Any, pitch: int, data: int, width: int, height: int, stream: Any, asynchronous: bool
) -> None:
    what = f"memset_d2d{bits}"
    # (a list, not a generator: PyPy 3.9 turns an error raised while unpacking one into its own TypeError)
    pitch, width, height = [
        byte_count(n, f"{what}: {name}") for n, name in ((pitch, "pitch"), (width, "width"), (height, "height"))
    ]
    pointer = device_address(dest, what)
    end = (height - 1) * pitch + width * bits // 8 if width and height else 0
    if pointer.nbytes is not None and end > pointer.nbytes:
        raise ValueError(
            f"{what}: {height} rows of {width} {bits}-bit words, {pitch} bytes apart, end at byte {end} "
            f"of this {type(dest).__name__}'s {pointer.nbytes}: check pitch, width and height"
        )
    value = operator.index(data) & ((1 << bits) - 1)  # -1 is all ones, as in C
    arguments = (pointer.address, pitch, value, width, height)
    driver_api.current_context()
    if asynchronous:
        driver_api.call(f"cuMemsetD2D{bits}Async", *arguments, streams.handle(stream))
    else:
        driver_api.call(f"cuMemsetD2D{bits}", *arguments)


def memset_d2d8(dest: Any, pitch: int, data: int, width: int, height: int) -> None:
    """Set ``height`` rows of ``width`` bytes of device memory, ``pitch`` bytes apart, to ``data``.

    Parameters
    ----------
    dest
        Device memory: a :class:`DeviceAllocation`, an int address, a GPU array ...
    pitch : int
        Bytes from one row to the next (:func:`mem_alloc_pitch`'s).
    data : int
        The value of each byte; -1 sets every bit.
    width : int
        Bytes of each row.
    height : int
        Rows.

    Examples
    --------
    >>> import numpy as np                           # doctest: +GPU
    >>> import pyctk.driver as cuda
    >>> a_gpu, pitch = cuda.mem_alloc_pitch(4, 3, 4)
    >>> cuda.memset_d8(a_gpu, 0, pitch * 3)
    >>> cuda.memset_d2d8(a_gpu, pitch, 0xFF, 2, 3)   # the first 2 bytes of each row
    >>> rows = cuda.from_device(a_gpu, (3, pitch), np.uint8)
    >>> rows[:, :4]
    array([[255, 255,   0,   0],
           [255, 255,   0,   0],
           [255, 255,   0,   0]], dtype=uint8)
    """
    _memset_2d(8, dest, pitch, data, width, height, None, False)


def memset_d2d16(dest: Any, pitch: int, data: int, width: int, height: int) -> None:
    """Set ``height`` rows of ``width`` 16-bit words of device memory, ``pitch`` bytes apart,
    to ``data``.

    Parameters
    ----------
    dest
        Device memory: a :class:`DeviceAllocation`, an int address, a GPU array ...
    pitch : int
        Bytes from one row to the next (:func:`mem_alloc_pitch`'s).
    data : int
        The value of each word; -1 sets every bit.
    width : int
        Words of each row.
    height : int
        Rows.

    See Also
    --------
    memset_d2d8 : An example.
    """
    _memset_2d(16, dest, pitch, data, width, height, None, False)


def memset_d2d32(dest: Any, pitch: int, data: int, width: int, height: int) -> None:
    """Set ``height`` rows of ``width`` 32-bit words of device memory, ``pitch`` bytes apart,
    to ``data``.

    Parameters
    ----------
    dest
        Device memory: a :class:`DeviceAllocation`, an int address, a GPU array ...
    pitch : int
        Bytes from one row to the next (:func:`mem_alloc_pitch`'s).
    data : int
        The value of each word; -1 sets every bit.
    width : int
        Words of each row.
    height : int
        Rows.

    See Also
    --------
    memset_d2d8 : An example.
    """
    _memset_2d(32, dest, pitch, data, width, height, None, False)


def memset_d2d8_async(dest: Any, pitch: int, data: int, width: int, height: int, stream: Any = None) -> None:
    """:func:`memset_d2d8`, enqueued on a stream; return at once.

    Parameters
    ----------
    dest, pitch, data, width, height
        As for :func:`memset_d2d8`.
    stream : Stream, optional
        Default None, the legacy default stream.
    """
    _memset_2d(8, dest, pitch, data, width, height, stream, True)


def memset_d2d16_async(dest: Any, pitch: int, data: int, width: int, height: int, stream: Any = None) -> None:
    """:func:`memset_d2d16`, enqueued on a stream; return at once.

    Parameters
    ----------
    dest, pitch, data, width, height
        As for :func:`memset_d2d16`.
    stream : Stream, optional
        Default None, the legacy default stream.
    """
    _memset_2d(16, dest, pitch, data, width, height, stream, True)


def memset_d2d32_async(dest: Any, pitch: int, data: int, width: int, height: int, stream: Any = None) -> None:
    """:func:`memset_d2d32`, enqueued on a stream; return at once.

    Parameters
    ----------
    dest, pitch, data, width, height
        As for :func:`memset_d2d32`.
    stream : Stream, optional
        Default None, the legacy default stream.
    """
    _memset_2d(32, dest, pitch, data, width, height, stream, True)
