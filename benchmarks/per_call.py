"""Host time per call, as the benchmarks take it: rounds in which every case takes its turn,
and speedups taken round by round. It imports no pyctk, so that builds.py can run it
against any build.

A host's pace changes while it runs, by more than the libraries differ: on one H200 host the
same calls took 7.5 us for seconds at a time, then 11 (docs/kernel-log.md, step 17). A median
of each case's rounds then compares rounds of different paces; the ratio of two cases within
a round does not, so the speedups here are the median over rounds of that ratio.
"""

from __future__ import annotations

import functools
import statistics
import time
from types import ModuleType
from typing import Callable

ROUNDS = 7  # rounds per case (median)
SIZES = (16, 32, 64)  # n of the n x n float32 products timed per call
WARM_UP = 100  # calls of each case before the first round
# The peer each of pyctk's cases is timed against: the library whose arrays it multiplies,
# and for DeviceArrays torch.matmul (issue 23's reference); builds.py's host products beside
# NumPy's and gpuarray's additions beside torch's.
PEERS = {
    "pyctk": "torch",
    "pyctk-torch": "torch",
    "pyctk-cupy": "cupy",
    "pyctk-host": "numpy",
    "gpuarray-add": "torch-add",
}


def peers(pyctk: ModuleType, torch: ModuleType) -> dict[str, tuple[Callable, Callable]]:
    """Each library's (array maker from a torch tensor, product): pyctk on DeviceArrays,
    torch's tensors and CuPy's arrays, torch.matmul and cupy.matmul; CuPy's only where it
    imports. ``pyctk`` is passed in: builds.py's children import the build they time."""
    found = {
        "pyctk": (pyctk.asarray, pyctk.matmul),
        "pyctk-torch": (_same, pyctk.matmul),
        "torch": (_same, torch.matmul),
    }
    try:
        import cupy
    except ImportError:
        return found
    return {**found, "pyctk-cupy": (cupy.asarray, pyctk.matmul), "cupy": (cupy.asarray, cupy.matmul)}


def _same(tensor: object) -> object:
    return tensor


def cases(peers: dict[str, tuple[Callable, Callable]], torch: ModuleType) -> dict[tuple, Callable]:
    """Zero-argument calls keyed (name, n): each of ``peers``' products of an n x n float32
    array of ones by itself, for n in SIZES, made from one torch tensor on the GPU."""
    made = {}
    for n in SIZES:
        tensor = torch.ones(n, n, device="cuda")
        for name, (convert, product) in peers.items():
            x = convert(tensor)
            made[name, n] = functools.partial(product, x, x)
    return made


def rounds(
    cases: dict, calls: int, synchronize: Callable[[], object], count: int = ROUNDS
) -> dict[object, list[float]]:
    """Seconds per call of each of ``cases`` (zero-argument calls), once per round: wall clock
    over ``calls`` calls, then ``synchronize()``. Every case runs in each round, in turn."""
    for case in cases.values():
        for _ in range(WARM_UP):
            case()
    seconds: dict[object, list[float]] = {key: [] for key in cases}
    for _ in range(count):
        for key, case in cases.items():
            synchronize()
            start = time.perf_counter()
            for _ in range(calls):
                case()
            synchronize()
            seconds[key].append((time.perf_counter() - start) / calls)
    return seconds


def speedup(seconds: dict[tuple, list[float]], name: str, n: int) -> dict:
    """{"peer", "speedup"} of case (name, n) over its peer (PEERS) at n: the median over rounds
    of the peer's time / its own in the same round; {} where it has no peer or the peer was
    not timed."""
    peer = PEERS.get(name)
    if (peer, n) not in seconds:
        return {}
    return {
        "peer": peer,
        "speedup": statistics.median(theirs / ours for ours, theirs in zip(seconds[name, n], seconds[peer, n])),
    }
