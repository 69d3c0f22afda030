"""CUDA graphs: work captured from a stream, or built node by node, then launched as a whole.

Released PyCUDA has no graphs; this is the API of its open pull request #424 (graphs,
``Stream.begin_capture`` ...), the least surprising one for PyCUDA programs: work captured
from a stream (``Graph`` has an example), or ``graph = Graph()``,
``node = graph.add_kernel_node(*args, func=f, block=(256, 1, 1),
dependencies=[earlier_node])``, ``graph.instantiate().launch()``. A kernel node's arguments
are a launch's (``Function.__call__``'s), less ``In``/``Out``/``InOut``, whose copies would
be made once, not at each launch. Graphs keep the device memory their kernel nodes were given
alive; work captured from a stream does not: its memory must outlive the graph's launches.
Capture on a ``Stream(stream_flags.NON_BLOCKING)``: while a blocking stream is captured, work
on the legacy default stream breaks the capture, and pyctk's pool frees garbage ``mem_alloc``
memory there at any time.

``Stream``'s capture methods are added to it here, as PyCUDA adds its Python-side methods to
its classes: ``streams.py`` cannot import this module (graphs -> modules -> streams).
"""

from __future__ import annotations

import ctypes
import enum
import functools
import operator
import os
from collections.abc import Sequence
from ctypes import POINTER, byref, c_int, c_size_t, c_uint, c_uint64, c_void_p
from typing import Any

from ..._cuda import constants as cu
from ..._cuda import driver_api, streams
from ..contexts.streams import Stream
from .modules import ArgumentHandler, Function, _dimensions, _pack


class capture_mode(enum.IntEnum):  # noqa: N801 - PyCUDA's name
    """Which unsafe calls a stream capture refuses: ``CUstreamCaptureMode`` (cuda.h), for
    :meth:`Stream.begin_capture`."""

    GLOBAL = cu.CU_STREAM_CAPTURE_MODE_GLOBAL  #: Those of every thread, while any thread captures in this mode.
    THREAD_LOCAL = cu.CU_STREAM_CAPTURE_MODE_THREAD_LOCAL  #: Those of the capturing thread.
    RELAXED = cu.CU_STREAM_CAPTURE_MODE_RELAXED  #: None.


class capture_status(enum.IntEnum):  # noqa: N801 - PyCUDA's name
    """Whether a stream is capturing: ``CUstreamCaptureStatus`` (cuda.h), of
    :meth:`Stream.get_capture_info_v2`."""

    NONE = cu.CU_STREAM_CAPTURE_STATUS_NONE  #: Not capturing.
    ACTIVE = cu.CU_STREAM_CAPTURE_STATUS_ACTIVE  #: Capturing.
    INVALIDATED = (
        cu.CU_STREAM_CAPTURE_STATUS_INVALIDATED
    )  #: Capturing, but broken by an error: :meth:`Stream.end_capture` fails.


class update_capture_dependencies_flags(enum.IntEnum):  # noqa: N801 - PyCUDA's name
    """How :meth:`Stream.update_capture_dependencies` changes them:
    ``CUstreamUpdateCaptureDependencies_flags`` (cuda.h)."""

    ADD_CAPTURE_DEPENDENCIES = cu.CU_STREAM_ADD_CAPTURE_DEPENDENCIES  #: Add the nodes to the dependencies.
    SET_CAPTURE_DEPENDENCIES = cu.CU_STREAM_SET_CAPTURE_DEPENDENCIES  #: Replace the dependencies with the nodes.


# The enums, under names that Stream's methods' parameters (PyCUDA's names) do not shadow.
_CAPTURE_MODES, _UPDATE_FLAGS = capture_mode, update_capture_dependencies_flags


class _KernelNodeParams(ctypes.Structure):
    """``CUDA_KERNEL_NODE_PARAMS`` (``_v2``, CUDA 12.0): the kernel is a ``CUkernel`` (``kern``),
    run in the current context (``ctx`` NULL)."""

    _fields_ = [
        ("func", c_void_p),
        ("gridDimX", c_uint),
        ("gridDimY", c_uint),
        ("gridDimZ", c_uint),
        ("blockDimX", c_uint),
        ("blockDimY", c_uint),
        ("blockDimZ", c_uint),
        ("sharedMemBytes", c_uint),
        ("kernelParams", c_void_p),
        ("extra", c_void_p),
        ("kern", c_void_p),
        ("ctx", c_void_p),
    ]


class _InstantiateParams(ctypes.Structure):
    """``CUDA_GRAPH_INSTANTIATE_PARAMS``: no flags, no upload stream; the driver fills the rest."""

    _fields_ = [("flags", c_uint64), ("hUploadStream", c_void_p), ("hErrNode_out", c_void_p), ("result_out", c_int)]


# These two took more arguments in CUDA 12.3, and a CUDA 12 runtime's entry-point query (the
# _PROTOTYPES' way) hands out its own version's forms: they are asked of the driver for the
# 12.0 ABI, whose forms every later driver keeps.
# (type[Any]: typeshed's union of the ctypes types is private.)
_CAPTURE_FUNCTIONS: dict[str, list[type[Any]]] = {
    "cuStreamGetCaptureInfo": [
        c_void_p,
        POINTER(c_int),
        POINTER(c_uint64),
        POINTER(c_void_p),
        POINTER(POINTER(c_void_p)),
        POINTER(c_size_t),
    ],
    "cuStreamUpdateCaptureDependencies": [c_void_p, POINTER(c_void_p), c_size_t, c_uint],
}


@functools.cache
def _capture_function(name: str) -> Any:
    address, status = c_void_p(), c_int()  # (the call fails when the driver lacks the function)
    driver_api.call(
        "cuGetProcAddress",
        name.encode(),
        byref(address),
        driver_api.ABI_VERSION,
        cu.CU_GET_PROC_ADDRESS_LEGACY_STREAM,
        byref(status),
    )
    return ctypes.CFUNCTYPE(c_int, *_CAPTURE_FUNCTIONS[name])(address.value or 0)


def _member(kind: type[enum.IntEnum], value: Any, name: str) -> enum.IntEnum:
    """``value`` as a member of enum ``kind``; ValueError naming the members if it is none."""
    try:
        return kind(value)
    except ValueError:
        raise ValueError(
            f"{name}={value!r}; it is one of {', '.join(f'{kind.__name__}.{m.name}' for m in kind)}"
        ) from None


class GraphNode:
    """A node of a :class:`Graph`: :meth:`Graph.add_kernel_node`'s result, or a capture's
    dependency (:meth:`Stream.get_capture_info_v2`).

    Nodes are equal when their ``handle`` (the ``CUgraphNode``) is. Not made by calling it.
    """

    __slots__ = ("handle",)

    def __init__(self, handle: int) -> None:
        self.handle = handle

    def __eq__(self, other: object) -> bool:
        return isinstance(other, GraphNode) and other.handle == self.handle

    def __hash__(self) -> int:
        return hash(("GraphNode", self.handle))

    def __repr__(self) -> str:
        return f"<pyctk.driver.GraphNode {self.handle:#x}>"


def _nodes(dependencies: Sequence[GraphNode]) -> tuple[Any, int]:
    """``dependencies`` as a ``CUgraphNode`` array, and its length."""
    dependencies = list(dependencies)
    for node in dependencies:
        if not isinstance(node, GraphNode):
            raise TypeError(f"dependencies must be GraphNodes (add_kernel_node's results), not {type(node).__name__}")
    return (c_void_p * len(dependencies))(*(node.handle for node in dependencies)), len(dependencies)


def _kernel_node(
    args: tuple, func: Any, block: Any, grid: Any, shared_mem_bytes: int, keep: list
) -> tuple[_KernelNodeParams, Any]:
    """A kernel node's parameters, and what they point into (alive until the driver copied it).
    The arguments are converted as a launch converts them; their owners go to ``keep``."""
    if not isinstance(func, Function):
        raise TypeError(f"func= must be a Function (module.get_function(name)), not {type(func).__name__}")
    if any(isinstance(argument, ArgumentHandler) for argument in args):
        raise TypeError(
            f"{func.name}: a graph node's arguments cannot be In/Out/InOut, whose copies "
            f"would be made once, not at each launch: copy to device memory "
            f"(cuda.to_device(a)) and pass that"
        )
    blocks, threads = _dimensions(grid, "grid"), _dimensions(block, "block")
    shared = operator.index(shared_mem_bytes)
    parameters, buffer = _pack(func._values(args, 0, keep, []))
    params = _KernelNodeParams(
        None, *blocks, *threads, shared, ctypes.cast(parameters, c_void_p), None, func.handle, None
    )
    return params, (parameters, buffer)


class _Owned:
    """A driver object destroyed by ``_destroy`` when garbage, if this wrapper owns it; not in a
    forked child (it is the parent's)."""

    _destroy = ""

    def __init__(self, handle: int, owned: bool = True) -> None:
        self.handle, self._owned, self._pid = handle, owned, os.getpid()

    def __del__(self) -> None:
        if self._owned and self.handle and os.getpid() == self._pid and driver_api._driver is not None:
            getattr(driver_api._driver, self._destroy)(self.handle)


# CUgraph -> the owners of the memory its kernel nodes' arguments point into, until the graph
# is destroyed: kept by graph, not by wrapper, since a capture's graph has two wrappers
# (get_capture_info_v2's, then end_capture's).
_kept: dict[int, list] = {}


class Graph(_Owned):
    """A CUDA graph: nodes of work and the dependencies between them (``cuGraphCreate``).

    Released PyCUDA has no graphs; this is the API of its pull request #424. A graph is
    built node by node (:meth:`add_kernel_node`), or captured from a stream
    (:meth:`Stream.begin_capture`, :meth:`Stream.end_capture`), then made launchable by
    :meth:`instantiate`. A graph keeps the device memory its kernel nodes were given alive;
    work captured from a stream does not: its memory must outlive the graph's launches.
    Capture on a ``Stream(stream_flags.NON_BLOCKING)``: while a blocking stream is captured,
    work on the legacy default stream breaks the capture, and pyctk's pool frees garbage
    :func:`mem_alloc` memory there at any time.

    Examples
    --------
    Two launches, the second after the first, launched three times:

    >>> import numpy as np                           # doctest: +GPU
    >>> import pyctk.driver as cuda
    >>> from pyctk.compiler import SourceModule
    >>> plus = SourceModule('''
    ... __global__ void plus(int *a, int b) { a[threadIdx.x] += b; }''').get_function("plus")
    >>> a_gpu = cuda.to_device(np.zeros(4, np.int32))
    >>> graph = cuda.Graph()
    >>> first = graph.add_kernel_node(a_gpu, np.int32(1), func=plus, block=(4, 1, 1))
    >>> second = graph.add_kernel_node(a_gpu, np.int32(10), func=plus, block=(4, 1, 1),
    ...                                dependencies=[first])
    >>> launchable = graph.instantiate()
    >>> for _ in range(3):
    ...     launchable.launch()
    >>> cuda.from_device(a_gpu, (4,), np.int32)
    array([33, 33, 33, 33], dtype=int32)

    The same work captured from a stream:

    >>> stream = cuda.Stream(cuda.stream_flags.NON_BLOCKING)
    >>> stream.begin_capture()
    >>> plus(a_gpu, np.int32(1), block=(4, 1, 1), stream=stream)
    >>> plus(a_gpu, np.int32(10), block=(4, 1, 1), stream=stream)
    >>> captured = stream.end_capture()
    >>> captured.instantiate().launch(stream)
    >>> stream.synchronize()
    >>> cuda.from_device(a_gpu, (4,), np.int32)
    array([44, 44, 44, 44], dtype=int32)
    """

    _destroy = "cuGraphDestroy"

    def __init__(self) -> None:
        super().__init__(0)
        driver_api.current_context()
        handle = c_void_p()
        driver_api.call("cuGraphCreate", byref(handle), 0)
        self.handle = handle.value or 0

    @classmethod
    def _wrap(cls, handle: int, owned: bool) -> Graph:
        graph = cls.__new__(cls)
        _Owned.__init__(graph, handle, owned)
        return graph

    def __del__(self) -> None:
        if self._owned:
            _kept.pop(self.handle, None)
        super().__del__()

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Graph) and other.handle == self.handle

    def __hash__(self) -> int:
        return hash(("Graph", self.handle))

    def add_kernel_node(
        self,
        *args: Any,
        func: Function,
        block: Sequence[int],
        grid: Sequence[int] = (1,),
        dependencies: Sequence[GraphNode] = (),
        shared_mem_bytes: int = 0,
    ) -> GraphNode:
        """Add a node that launches a kernel, after the nodes ``dependencies``.

        The node launches ``func(*args, block=block, grid=grid, shared=shared_mem_bytes)``.

        Parameters
        ----------
        *args
            The kernel's arguments, checked and converted as a launch's
            (:class:`Function`), but no :class:`In`, :class:`Out` or :class:`InOut`, whose
            copies would be made once, not at each launch. The device memory they name is
            kept alive with the graph.
        func : Function
        block : tuple of int
        grid : tuple of int, optional
            Default ``(1,)``.
        dependencies : sequence of GraphNode, optional
            The nodes that must be done before it runs.
        shared_mem_bytes : int, optional
            Bytes of dynamic shared memory.

        Returns
        -------
        GraphNode

        Raises
        ------
        TypeError
            ``func`` is not a :class:`Function`, an argument is ``In``/``Out``/``InOut`` or
            does not fit the kernel, or a dependency is not a :class:`GraphNode`.
        """
        nodes, count = _nodes(dependencies)
        keep: list = []
        params, _ = _kernel_node(args, func, block, grid, shared_mem_bytes, keep)
        node = c_void_p()
        driver_api.call("cuGraphAddKernelNode", byref(node), self.handle, nodes, count, byref(params))
        _kept.setdefault(self.handle, []).extend(keep)
        return GraphNode(node.value or 0)

    def instantiate(self) -> GraphExec:
        """Make the graph launchable (``cuGraphInstantiateWithParams``).

        Returns
        -------
        GraphExec
            A snapshot, which later changes of the graph do not reach.
        """
        graph_exec = c_void_p()
        driver_api.call("cuGraphInstantiateWithParams", byref(graph_exec), self.handle, byref(_InstantiateParams()))
        return GraphExec(graph_exec.value or 0, _kept.setdefault(self.handle, []))

    def debug_dot_print(self, path: str) -> None:
        """Write the graph to a file in Graphviz's DOT language, with all the driver's details.

        Parameters
        ----------
        path : str
        """
        driver_api.call("cuGraphDebugDotPrint", self.handle, os.fsencode(path), cu.CU_GRAPH_DEBUG_DOT_FLAGS_VERBOSE)


class GraphExec(_Owned):
    """A launchable graph, made by :meth:`Graph.instantiate` (PyCUDA's pull request #424).

    It keeps the device memory its graph's kernel nodes were given alive.
    """

    _destroy = "cuGraphExecDestroy"

    def __init__(self, handle: int, graph_kept: list) -> None:
        super().__init__(handle)
        # The graph's memory stays alive with this, and so does what set_params gave each node.
        self._graph_kept = graph_kept
        self._node_kept: dict[int, list[Any]] = {}  # kernel node -> what set_params gave it

    def launch(self, stream: Any = None) -> None:
        """Enqueue the graph's work on a stream; return at once.

        Parameters
        ----------
        stream : Stream, optional
            Default None, the legacy default stream.
        """
        driver_api.call("cuGraphLaunch", self.handle, streams.handle(stream))

    def kernel_node_set_params(
        self,
        *args: Any,
        kernel_node: GraphNode,
        func: Function,
        block: Sequence[int],
        grid: Sequence[int] = (1,),
        shared_mem_bytes: int = 0,
    ) -> None:
        """Give a kernel node new arguments, block, grid and shared memory, for the launches
        from now on (``cuGraphExecKernelNodeSetParams``).

        Parameters
        ----------
        *args
            The kernel's new arguments, as for :meth:`Graph.add_kernel_node`.
        kernel_node : GraphNode
            A kernel node of the graph this was made from.
        func : Function
            Its kernel, which must stay the same.
        block : tuple of int
        grid : tuple of int, optional
        shared_mem_bytes : int, optional

        Examples
        --------
        >>> import numpy as np                           # doctest: +GPU
        >>> import pyctk.driver as cuda
        >>> from pyctk.compiler import SourceModule
        >>> plus = SourceModule('''
        ... __global__ void plus(int *a, int b) { a[threadIdx.x] += b; }''').get_function("plus")
        >>> a_gpu = cuda.to_device(np.zeros(4, np.int32))
        >>> graph = cuda.Graph()
        >>> node = graph.add_kernel_node(a_gpu, np.int32(1), func=plus, block=(4, 1, 1))
        >>> launchable = graph.instantiate()
        >>> launchable.kernel_node_set_params(a_gpu, np.int32(5), kernel_node=node, func=plus,
        ...                                   block=(4, 1, 1))
        >>> launchable.launch()
        >>> cuda.from_device(a_gpu, (4,), np.int32)
        array([5, 5, 5, 5], dtype=int32)
        """
        if not isinstance(kernel_node, GraphNode):
            raise TypeError(
                f"kernel_node= must be a GraphNode (add_kernel_node's result), not {type(kernel_node).__name__}"
            )
        keep: list = []
        params, _ = _kernel_node(args, func, block, grid, shared_mem_bytes, keep)
        driver_api.call("cuGraphExecKernelNodeSetParams", self.handle, kernel_node.handle, byref(params))
        self._node_kept[kernel_node.handle] = keep


# ---------------------------------------------------------------------------
# Stream capture: Stream's methods.


def begin_capture(self: Stream, capture_mode: int = capture_mode.GLOBAL) -> None:
    """Record the work enqueued on the stream from now on into a graph, instead of running it.

    Until :meth:`end_capture`, which gives the graph (:class:`Graph` has an example).

    Parameters
    ----------
    capture_mode : capture_mode, optional
        Which unsafe calls (a synchronisation, say) the capture refuses: ``GLOBAL``, the
        default, those of every thread.
    """
    mode = _member(_CAPTURE_MODES, capture_mode, "capture_mode")
    driver_api.call("cuStreamBeginCapture", self.handle, int(mode))


def end_capture(self: Stream) -> Graph:
    """End the capture :meth:`begin_capture` started.

    Returns
    -------
    Graph
        The graph of the work captured.

    Raises
    ------
    pyctk.driver.Error
        The capture was broken (``CUDA_ERROR_STREAM_CAPTURE_INVALIDATED``) or was not
        started.
    """
    graph = c_void_p()
    driver_api.call("cuStreamEndCapture", self.handle, byref(graph))
    return Graph._wrap(graph.value or 0, owned=True)


def get_capture_info_v2(self: Stream) -> tuple[capture_status, int, Graph | None, list[GraphNode]]:
    """What the stream's capture is: its status, id, graph and dependencies.

    Returns
    -------
    status : capture_status
    id : int
        The capture's id; 0 when the stream is not capturing.
    graph : Graph or None
        The graph being captured; None when the stream is not capturing. Nodes added to it
        join the capture through :meth:`update_capture_dependencies`.
    dependencies : list of GraphNode
        The nodes the next work captured will depend on.

    Examples
    --------
    >>> import pyctk.driver as cuda                  # doctest: +GPU
    >>> stream = cuda.Stream(cuda.stream_flags.NON_BLOCKING)
    >>> stream.get_capture_info_v2()
    (<capture_status.NONE: 0>, 0, None, [])
    >>> stream.begin_capture()
    >>> stream.get_capture_info_v2()[0]
    <capture_status.ACTIVE: 1>
    >>> graph = stream.end_capture()
    """
    status, identifier, graph = c_int(), c_uint64(), c_void_p()
    nodes, count = POINTER(c_void_p)(), c_size_t()
    driver_api.check(
        _capture_function("cuStreamGetCaptureInfo")(
            self.handle, byref(status), byref(identifier), byref(graph), byref(nodes), byref(count)
        ),
        "cuStreamGetCaptureInfo",
    )
    return (
        capture_status(status.value),
        identifier.value,
        Graph._wrap(graph.value, owned=False) if graph.value else None,
        [GraphNode(nodes[index]) for index in range(count.value)],
    )


def update_capture_dependencies(
    self: Stream,
    dependencies: Sequence[GraphNode],
    flags: int = update_capture_dependencies_flags.ADD_CAPTURE_DEPENDENCIES,
) -> None:
    """Make the stream's next captured work depend on other nodes of the graph being captured.

    Parameters
    ----------
    dependencies : sequence of GraphNode
    flags : update_capture_dependencies_flags, optional
        ``ADD_CAPTURE_DEPENDENCIES`` (the default): on these too;
        ``SET_CAPTURE_DEPENDENCIES``: on these only.
    """
    flag = _member(_UPDATE_FLAGS, flags, "flags")
    nodes, count = _nodes(dependencies)
    driver_api.check(
        _capture_function("cuStreamUpdateCaptureDependencies")(self.handle, nodes, count, int(flag)),
        "cuStreamUpdateCaptureDependencies",
    )


# Stream's capture methods, given here (see the module docstring): set by name, for Stream
# declares none of them to type checkers.
for _method in (begin_capture, end_capture, get_capture_info_v2, update_capture_dependencies):
    setattr(Stream, _method.__name__, _method)
del _method
