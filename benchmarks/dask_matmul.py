"""Benchmark pyctk.dask.matmul on a local cluster against pyctk.matmul on the whole arrays.

    python benchmarks/dask_matmul.py [--n 65536] [--workers 2] [--repeats 2] [--out FILE]
    python benchmarks/dask_matmul.py --cluster cuda [--n 65536]    # a worker per GPU (dask-cuda)
    python benchmarks/dask_matmul.py --from-json FILE              # the table again
    python benchmarks/plot.py                                      # the plots (needs matplotlib)

Issue 27's target: an n x n by n x n float32 product (n = 65536 by default: 16 GiB per
operand, about 11 s at an H100's 51 TFLOP/s) through Dask within 15% of the same product
by pyctk.matmul in one process, both from operands in host memory to a result in host
memory. The rows, each the best of --repeats timed runs after a warm-up product:

- "whole": pyctk.matmul(a, b) on NumPy arrays, in a process of its own (this script with
  --whole-child, so that its memory, host and GPU, is given back before the cluster starts);
  with --cluster cuda, on all the machine's GPUs (devices="all").
- "dask-persist": pyctk.dask.matmul(x, y).persist() on the cluster (--cluster shared, the
  default: a distributed.LocalCluster of --workers processes sharing GPU 0, each allowed
  1/workers of its memory through PYCTK_DEVICE_MEMORY_LIMIT; --cluster cuda: dask-cuda's
  LocalCUDACluster, a worker per GPU). The result stays in the workers' host memory, as a
  result that the workers go on with or write out (to_zarr) would: from host operands to a
  host result, as "whole". The target's row.
- "dask-compute": the same graph, .compute(): what it adds to "dask-persist" is the copy of
  the whole result into this one process over Dask's TCP comms (Dask joins the blocks on a
  worker, then sends them), a step the one-process product does not have.
- "dask-store": the same graph, da.store into a float32 array in a file of /dev/shm that
  each worker maps and writes its blocks into as they are made (SharedResult): the result
  in host memory that this process maps, with no TCP copy (a new file each run, so its
  pages are new, as a new array's are). Skipped where there is no /dev/shm.

The operands of the Dask rows are made on the workers (da.map_blocks of the fill below),
persisted, and y's blocks copied to every worker (client.replicate) before any timing: so
the timed graph starts from data in the workers' memory, as the whole product starts from
data in its process's, and no operand crosses between workers while it runs. (Through
da.from_array instead, the 16 GiB arrays would be pickled into the graph and sent through
the scheduler at every compute: that times Dask's handling of a graph holding the data,
not the product.) Chunks: pyctk.dask.suggest_chunks for the GPU's memory and --workers
workers sharing it (--chunks to choose).

Operands are a cheap fill, exact in float32: x[i, j] = (i + j) % 8, y[i, j] = (i + 2 j) % 8
(a broadcast copy of 8 rows; random numbers take minutes at this size), so every entry of
the product is an integer below 2^24, and SAMPLES entries of each result are checked
exactly against the formula.

The JSON goes to benchmarks/results/<machine>/dask.json (measured.py: h200-cu13 for a shared
GPU, h200x2-cu13 for two; --out to choose), with its "measured" object; benchmarks/plot.py
draws it as dask-overhead.png: seconds per row, dashed at 115% of "whole".
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Callable

import numpy as np

import measured  # benchmarks/measured.py: this folder is first on sys.path

TARGET_OVERHEAD = 0.15  # issue 27: Dask at most 15% slower than "whole" ...
TARGET_ROW = "dask-persist"  # ... from host operands to a host result, as "whole" (see above)
SAMPLES = (0, 1, 7, 4099)  # rows and columns (and the last of each) checked exactly
WARMUP_N = 4096  # the warm-up product's size, in every process that times


def filled(rows: int, cols: int, row0: int = 0, col0: int = 0, step: int = 1) -> np.ndarray:
    """Rows row0.. and columns col0.. of the matrix m[i, j] = (i + step * j) % 8, float32:
    8 rows made, then copied down (the matrix repeats every 8 rows)."""
    period = ((row0 + np.arange(8)[:, None] + step * (col0 + np.arange(cols))) % 8).astype(np.float32)
    out = np.empty((rows, cols), np.float32)
    whole = rows - rows % 8
    out[:whole].reshape(-1, 8, cols)[:] = period
    out[whole:] = period[: rows - whole]
    return out


def filled_block(step: int, block_info: dict | None = None) -> np.ndarray:
    """A block of the filled matrix, for da.map_blocks (made on the worker)."""
    (row0, row1), (col0, col1) = block_info[None]["array-location"]
    return filled(row1 - row0, col1 - col0, row0, col0, step)


def expected_entry(i: int, j: int, n: int) -> float:
    """Entry (i, j) of x @ y, exactly: sum over l of ((i + l) % 8) * ((l + 2 j) % 8)."""
    depth = np.arange(n, dtype=np.int64)
    return float(np.sum(((i + depth) % 8) * ((depth + 2 * j) % 8)))


def sample_indices(n: int) -> list[int]:
    return sorted({index for index in SAMPLES if index < n} | {n - 1})


def right(entry: Callable[[int, int], float], n: int) -> bool:
    """Whether the sampled entries of a result (``entry(i, j)``) are the formula's."""
    indices = sample_indices(n)
    return all(entry(i, j) == expected_entry(i, j, n) for i in indices for j in indices)


def best_of(run: Callable[[], Any], repeats: int, gone: Callable[[], None] = lambda: None) -> tuple[list[float], Any]:
    """Wall-clock seconds of ``repeats`` runs, and the last run's value; before each run the
    previous one's value is dropped, and ``gone()`` waits until it is."""
    seconds, value = [], None
    for _ in range(repeats):
        value = None
        gone()
        start = time.perf_counter()
        value = run()
        seconds.append(time.perf_counter() - start)
    return seconds, value


class SharedResult:
    """``da.store``'s target: an n x n float32 array in a file of /dev/shm (host memory) that
    each worker maps and writes its result blocks into, and this process maps to read."""

    def __init__(self, path: str, n: int) -> None:
        self.path, self.shape = path, (n, n)
        np.memmap(path, np.float32, "w+", shape=self.shape)  # a new file: pages come as written

    def __setitem__(self, index: Any, block: np.ndarray) -> None:
        np.memmap(self.path, np.float32, "r+", shape=self.shape)[index] = block

    def array(self) -> np.ndarray:
        return np.memmap(self.path, np.float32, "r", shape=self.shape)


def held(keys: set, dask_scheduler: Any = None) -> bool:
    """On the scheduler (client.run_on_scheduler): whether it still has any of ``keys``."""
    return any(key in dask_scheduler.tasks for key in keys)


def warm_up() -> None:
    """CUDA, cuBLAS, the staging buffers and copy threads of this process: started untimed."""
    import pyctk

    pyctk.matmul(np.ones((WARMUP_N, WARMUP_N), np.float32), np.ones((WARMUP_N, WARMUP_N), np.float32))


# ---------------------------------------------------------------------------
# The rows.


def whole_child(n: int, repeats: int, devices: str | None) -> dict:
    """--whole-child: the "whole" row's measurements and the GPU's description, as JSON."""
    import pyctk

    report = pyctk.info()
    if not report["devices"]:
        raise SystemExit(f"no GPU: {report['error']}")
    a, b = filled(n, n), filled(n, n, step=2)
    warm_up()
    seconds, c = best_of(lambda: pyctk.matmul(a, b, devices=devices), repeats)
    return {
        "seconds": seconds,
        "right": right(lambda i, j: float(c[i, j]), n),
        "device": report["devices"][0]["name"],
        "memory": report["devices"][0]["total_memory_bytes"],
        "gpus": len(report["devices"]),
        "cuda_major": report["cuda_major"],
        "pyctk": pyctk.__version__,
        "info": report,
    }


def whole_row(n: int, repeats: int, cluster: str) -> dict:
    command = [
        sys.executable,
        __file__,
        "--whole-child",
        "--n",
        str(n),
        "--repeats",
        str(repeats),
        "--cluster",
        cluster,
    ]
    child = subprocess.run(command, capture_output=True, text=True)
    if child.returncode:  # its own message (no GPU, say), not a traceback of this process
        raise SystemExit(
            child.stderr.strip().splitlines()[-1]
            if child.stderr.strip()
            else f"the whole-product process exited {child.returncode}"
        )
    found = json.loads(child.stdout)
    return {"kind": "whole", **found}


def dealt(client: Any, x: Any) -> Any:
    """``x`` persisted with its row blocks dealt to the workers in turn. Dask runs a block
    product on the worker that holds its block of x; left to itself, it gives a new worker
    its root tasks two at a time, in order, so that x's blocks were all made on one worker
    and y's on the other, and one of two GPUs idled (seen on two H200s)."""
    import dask.array as da

    addresses = list(client.scheduler_info()["workers"])
    bounds = np.cumsum((0,) + x.chunks[0])
    return da.concatenate(
        [
            client.persist(x[bounds[i] : bounds[i + 1]], workers=[addresses[i % len(addresses)]])
            for i in range(len(x.chunks[0]))
        ]
    )


def start_cluster(cluster: str, workers: int, gpu_memory: int) -> Any:
    """The cluster of --cluster: "shared" (LocalCluster, --workers processes on GPU 0) or
    "cuda" (dask-cuda's LocalCUDACluster, a worker per GPU). memory_limit=0: no spilling
    to disk or pausing, which would time the disk (check_host_memory checks the memory)."""
    options = {"threads_per_worker": 1, "memory_limit": 0, "dashboard_address": None}
    if cluster == "cuda":
        from dask_cuda import LocalCUDACluster

        return LocalCUDACluster(**options)
    from distributed import LocalCluster

    return LocalCluster(
        n_workers=workers,
        processes=True,
        worker_dashboard_address=None,
        env={"PYCTK_DEVICE_MEMORY_LIMIT": str(gpu_memory // workers)},
        **options,
    )


def dask_rows(
    n: int, cluster_kind: str, workers: int, repeats: int, chunks: tuple[int, int, int] | None, gpu_memory: int
) -> tuple[list[dict], dict[str, str]]:
    """The "dask-persist", "dask-store" and "dask-compute" rows, and the versions of Dask."""
    import dask.array as da
    from dask.array.core import normalize_chunks
    from distributed import Client, get_task_stream, wait

    import pyctk.dask

    # direct_to_workers: results come to this process straight from the workers, not
    # through the scheduler (a second copy over TCP)
    with start_cluster(cluster_kind, workers, gpu_memory) as cluster, Client(cluster, direct_to_workers=True) as client:
        workers = len(client.scheduler_info()["workers"])
        if chunks is None:
            per_gpu = 1 if cluster_kind == "cuda" else workers
            blocks = pyctk.dask.suggest_chunks(
                (n, n), (n, n), np.float32, gpu_memory, workers_per_gpu=per_gpu, workers=workers
            )
            chunks = (blocks.rows, blocks.k, blocks.cols)
        rows, depth, cols = chunks
        client.run(warm_up)
        start = time.perf_counter()
        x, y = (
            da.map_blocks(
                filled_block,
                step,
                dtype=np.float32,
                meta=np.empty((0, 0), np.float32),
                chunks=normalize_chunks(sizes, (n, n)),
            )
            for step, sizes in ((1, (rows, depth)), (2, (depth, cols)))
        )
        x, y = dealt(client, x), client.persist(y)
        wait([x, y])
        client.replicate(y)
        prepared = time.perf_counter() - start
        z = pyctk.dask.matmul(x, y)
        common = {"workers": workers, "cluster": cluster_kind, "chunks": list(chunks), "operands_seconds": prepared}
        # A run's keys are the next run's (the graph is the same): until the scheduler has
        # forgotten them, the next run would find the product made
        product_keys = set(z.__dask_graph__()) - set(x.__dask_graph__()) - set(y.__dask_graph__())

        def gone():
            while client.run_on_scheduler(held, product_keys):
                time.sleep(0.05)

        def persisted():
            result = z.persist()
            wait(result)
            return result

        with get_task_stream(client) as stream:
            seconds, kept = best_of(persisted, repeats, gone)
        entries = {(i, j): float(kept[i, j].compute()) for i in sample_indices(n) for j in sample_indices(n)}
        kept = None
        persist = {
            "kind": "dask-persist",
            "seconds": seconds,
            "right": right(lambda i, j: entries[i, j], n),
            "block_products": block_products(stream.data, list(client.scheduler_info()["workers"])),
            **common,
        }
        rows = [persist]
        if os.path.isdir("/dev/shm"):
            path = f"/dev/shm/pyctk-dask-benchmark-{os.getpid()}"

            def stored():
                shared = SharedResult(path, n)
                da.store(z, shared, lock=False)
                return shared.array()

            try:
                seconds, c = best_of(stored, repeats, gone)
                rows.append(
                    {"kind": "dask-store", "seconds": seconds, "right": right(lambda i, j: float(c[i, j]), n), **common}
                )
            finally:
                c = None
                os.remove(path)
        else:
            print("(no /dev/shm: no dask-store row)")
        seconds, c = best_of(z.compute, repeats, gone)
        rows.append(
            {"kind": "dask-compute", "seconds": seconds, "right": right(lambda i, j: float(c[i, j]), n), **common}
        )
        versions = {name: sys.modules[name].__version__ for name in ("dask", "distributed")}
    return rows, versions


def block_products(tasks: list[dict], workers: list[str]) -> list[dict]:
    """Each block product of the timed runs: the worker (its index) and its seconds, from
    Dask's task stream, in the order they started: whether the workers' GPUs overlapped."""
    found = []
    for task in tasks:
        if "pyctk-block-product" in str(task["key"]):
            start, stop = next((s["start"], s["stop"]) for s in task["startstops"] if s["action"] == "compute")
            found.append({"worker": workers.index(task["worker"]), "start": start, "seconds": stop - start})
    first = min((block["start"] for block in found), default=0)
    return sorted(({**block, "start": block["start"] - first} for block in found), key=lambda b: b["start"])


def check_host_memory(n: int, workers: int) -> None:
    """SystemExit naming a smaller --n where the Dask rows' peak would not fit in host memory:
    x, and y on each worker, the result there, and in this process the gathered blocks and
    the array they are joined into."""
    needed = (4 + workers) * n * n * 4
    with open("/proc/meminfo") as meminfo:
        available = int(re.search(r"MemAvailable:\s+(\d+) kB", meminfo.read())[1]) * 1024
    if needed > 0.9 * available:
        raise SystemExit(
            f"--n {n} needs about {needed / 2**30:.0f} GiB of host memory at its peak; "
            f"{available / 2**30:.0f} GiB is available: choose a smaller --n"
        )


def measure(n: int, cluster: str, workers: int, repeats: int, chunks: tuple[int, int, int] | None) -> dict:
    check_host_memory(n, workers)
    whole = whole_row(n, repeats, cluster)
    report = whole.pop("info")
    rows, versions = dask_rows(n, cluster, workers, repeats, chunks, whole["memory"])
    rows = [whole] + rows
    for r in rows:
        r["n"] = n
        r["best_seconds"] = min(r["seconds"])
        r["tflops"] = 2 * n**3 / r["best_seconds"] / 1e12
        r["overhead"] = r["best_seconds"] / whole["best_seconds"] - 1
    target = next(r for r in rows if r["kind"] == TARGET_ROW)
    target["target"] = f"overhead <= {TARGET_OVERHEAD:.0%}"
    target["met"] = target["overhead"] <= TARGET_OVERHEAD
    versions = {"numpy": np.__version__, "pyctk": whole["pyctk"], **versions}
    gpus = whole["gpus"] if cluster == "cuda" else 1
    return {
        "measured": measured.measured(report, gpus, versions=versions),
        "device": whole["device"],
        "cuda_major": whole["cuda_major"],
        "info": report,
        "versions": versions,
        "settings": {
            "n": n,
            "cluster": cluster,
            "workers": rows[-1]["workers"],
            "gpus": gpus,
            "repeats": repeats,
            "dtype": "float32",
        },
        "rows": rows,
    }


# ---------------------------------------------------------------------------
# Report: a table (benchmarks/plot.py draws the plot).


def print_table(data: dict) -> None:
    print(
        f"GPU: {data['device']}; CUDA {data['cuda_major']}; "
        + ", ".join(f"{k} {v}" for k, v in data["versions"].items())
    )
    print(
        f"{'row':<13} {'n':>6} {'workers':>7} {'chunks':>20} {'best':>9} {'TFLOP/s':>8} {'overhead':>9}  right / target"
    )
    for r in data["rows"]:
        chunks = "x".join(map(str, r.get("chunks", []))) or "-"
        target = f"; {r['target']}: {'met' if r['met'] else 'MISSED'}" if "target" in r else ""
        print(
            f"{r['kind']:<13} {r['n']:>6} {r.get('workers', 1):>7} {chunks:>20} "
            f"{r['best_seconds']:>8.2f}s {r['tflops']:>8.1f} {100 * r['overhead']:>8.1f}%  "
            f"{'right' if r['right'] else 'WRONG RESULT'}{target}"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=65536, help="matrix size (default 65536)")
    parser.add_argument(
        "--cluster",
        choices=["shared", "cuda"],
        default="shared",
        help="shared: --workers processes on GPU 0; cuda: a worker per GPU (dask-cuda)",
    )
    parser.add_argument("--workers", type=int, default=2, help="worker processes sharing GPU 0 (default 2)")
    parser.add_argument("--repeats", type=int, default=2, help="timed runs per row (best)")
    parser.add_argument(
        "--chunks",
        type=int,
        nargs=3,
        metavar=("ROWS", "K", "COLS"),
        help="block sizes (default: pyctk.dask.suggest_chunks for the GPU)",
    )
    parser.add_argument(
        "--out",
        "--json",
        dest="out",
        metavar="FILE",
        help="where the JSON goes (default: benchmarks/results/<machine>/dask.json)",
    )
    parser.add_argument("--from-json", metavar="FILE", help="no measuring: the table of FILE")
    parser.add_argument("--whole-child", action="store_true", help=argparse.SUPPRESS)  # whole_row's child
    args = parser.parse_args()
    if args.whole_child:
        print(json.dumps(whole_child(args.n, args.repeats, "all" if args.cluster == "cuda" else None)))
        return
    if args.from_json:
        data = json.loads(Path(args.from_json).read_text())
    else:
        data = measure(args.n, args.cluster, args.workers, args.repeats, tuple(args.chunks) if args.chunks else None)
        path = args.out or measured.default_path(data["device"], data["cuda_major"], "dask", data["settings"]["gpus"])
        measured.write(path, data)
        print(f"wrote {path}")
    print_table(data)


if __name__ == "__main__":
    main()
