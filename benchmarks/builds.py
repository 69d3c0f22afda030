"""Host time per call of builds of pyctk side by side on one host: a table, JSON and plots.

    python benchmarks/builds.py before=/tmp/site-d7ee68f after=/tmp/site-main \
        [--processes 3] [--calls 2000] [--out FILE]
    python benchmarks/plot.py                   # the plots, builds-speedup.png among them

Each build is a folder pyctk is installed in (`pip install --no-deps --target DIR
pyctk_cu13-*.whl`). The builds take turns, --processes times over, each in a fresh process
with its folder first on sys.path, timing 16 x 16, 32 x 32 and 64 x 64 float32 products as
benchmarks/matmul.py's "device-call-tiny" rows do (per_call.py): pyctk on DeviceArrays
("pyctk"), on torch's tensors and on CuPy's arrays, beside torch.matmul and cupy.matmul in
the same rounds; a 16 x 16 product of NumPy arrays ("pyctk-host", beside numpy.matmul); and
gpuarray's `a + a` at those sizes ("gpuarray-add", beside torch's). Only public names
(`asarray`, `matmul`, `gpuarray.to_gpu`) are used, so older builds run too.

Rows: "device-call-tiny", backend "<build> <case>", with "build" and "case", the median and
range of the rounds of all processes, and for pyctk's cases "speedup" over the peer
(per_call.speedup) and "cost": the case's cost relative to the first build's, the first's
speedup over its speedup. A host's pace changes by more than builds differ (per_call.py), so
it is "cost", not the medians of the seconds, that compares builds.

The JSON goes to benchmarks/results/<machine>/builds.json (measured.py; --out to choose), with
its "measured" object, from the first build's pyctk.info() in its first process.
"""

from __future__ import annotations

import argparse
import functools
import json
import operator
import statistics
import subprocess
import sys
from pathlib import Path
from typing import Any, Callable

import measured  # benchmarks/measured.py and per_call.py: this folder is first on sys.path
import per_call


def child(folder: str, calls: int) -> dict[str, list[float]]:
    """Seconds per call of every case in this process, with pyctk from ``folder``: keyed
    "case n" (JSON keys are strings), and "info": that pyctk's info()."""
    sys.path.insert(0, folder)
    import pyctk  # before torch, as in the other benchmarks: keep the import order

    # isort: split
    import torch

    if not pyctk.__file__.startswith(str(Path(folder).resolve())):
        raise SystemExit(f"pyctk came from {pyctk.__file__}, not from {folder}")
    torch.backends.cuda.matmul.allow_tf32 = False
    cases = {**per_call.cases(per_call.peers(pyctk, torch), torch), **other_cases(pyctk, torch)}
    seconds = per_call.rounds(cases, calls, torch.cuda.synchronize)
    versions = {
        name: sys.modules[name].__version__
        for name in ("numpy", "torch", "cupy")
        if name in sys.modules and hasattr(sys.modules[name], "__version__")
    }
    return {
        "info": pyctk.info(),
        "versions": versions,
        **{f"{name} {n}": rounds for (name, n), rounds in seconds.items()},
    }


def other_cases(pyctk: Any, torch: Any) -> dict[tuple[str, int], Callable[[], object]]:
    """The calls besides device products, keyed as per_call.cases keys its own: a 16 x 16
    product of host arrays and gpuarray's ``a + a``, each beside its peer (``PEERS``)."""
    import numpy as np

    from pyctk import gpuarray

    host = np.ones((16, 16), np.float32)
    made: dict[tuple[str, int], Callable[[], object]] = {
        ("pyctk-host", 16): functools.partial(pyctk.matmul, host, host),
        ("numpy", 16): functools.partial(np.matmul, host, host),
    }
    for n in per_call.SIZES:
        a, t = gpuarray.to_gpu(np.ones((n, n), np.float32)), torch.ones(n, n, device="cuda")
        made["gpuarray-add", n] = functools.partial(operator.add, a, a)
        made["torch-add", n] = functools.partial(operator.add, t, t)
    return made


def measure(builds: dict[str, str], processes: int, calls: int) -> tuple[dict[str, dict[tuple, list[float]]], dict]:
    """Every build's rounds of every case, from ``processes`` fresh processes each, in turns;
    and the first process's pyctk.info() and versions."""
    seconds: dict[str, dict[tuple, list[float]]] = {label: {} for label in builds}
    first: dict = {}
    for turn in range(processes):
        for label, folder in builds.items():
            print(f"({label}, process {turn + 1} of {processes})", flush=True)
            output = subprocess.run(
                [sys.executable, __file__, "--child", folder, "--calls", str(calls)],
                check=True,
                capture_output=True,
                text=True,
            ).stdout
            found = json.loads(output.splitlines()[-1])
            first = first or {"info": found.pop("info"), "versions": found.pop("versions")}
            found.pop("info", None), found.pop("versions", None)
            for key, rounds in found.items():
                name, n = key.rsplit(" ", 1)
                seconds[label].setdefault((name, int(n)), []).extend(rounds)
    return seconds, first


def rows_of(seconds: dict[str, dict[tuple, list[float]]]) -> list[dict]:
    """The rows (see the module's docstring) of ``measure``'s rounds; the first build is the
    one the others' "cost" is relative to."""
    first = next(iter(seconds))
    rows = []
    for label, by_case in seconds.items():
        for (name, n), rounds in by_case.items():
            row = {
                "kind": "device-call-tiny",
                "backend": f"{label} {name}",
                "build": label,
                "case": name,
                "dtype": "float32",
                "n": n,
                "seconds": statistics.median(rounds),
                "least_seconds": min(rounds),
                "most_seconds": max(rounds),
                "rounds": len(rounds),
                **per_call.speedup(by_case, name, n),
            }
            if "speedup" in row:
                row["cost"] = per_call.speedup(seconds[first], name, n)["speedup"] / row["speedup"]
            rows.append(row)
    return rows


def table(rows: list[dict]) -> str:
    lines = [f"{'build':<12} {'case':<12} {'n':>3} {'median':>9} {'range':>16} {'speedup':>14} {'cost':>6}"]
    for r in rows:
        speedup = f"{r['speedup']:.2f}x {r['peer']}" if "speedup" in r else ""
        cost = f"{r['cost']:.2f}" if "cost" in r else ""
        spread = f"{r['least_seconds'] * 1e6:.2f}-{r['most_seconds'] * 1e6:.2f} us"
        lines.append(
            f"{r['build']:<12} {r['case']:<12} {r['n']:>3} {r['seconds'] * 1e6:>6.2f} us "
            f"{spread:>16} {speedup:>14} {cost:>6}".rstrip()
        )
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("builds", nargs="*", metavar="LABEL=FOLDER", help="pyctk installed in FOLDER")
    parser.add_argument("--processes", type=int, default=3, help="fresh processes per build")
    parser.add_argument("--calls", type=int, default=2000, help="calls timed per case and round")
    parser.add_argument(
        "--out",
        "--json",
        dest="out",
        metavar="FILE",
        help="where the JSON goes (default: benchmarks/results/<machine>/builds.json)",
    )
    parser.add_argument("--child", metavar="FOLDER", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(child(args.child, args.calls)))
        return
    builds = dict(build.split("=", 1) for build in args.builds if "=" in build)
    if not builds or len(builds) != len(args.builds):
        parser.error("give each build as LABEL=FOLDER, a folder pyctk is installed in")
    seconds, first = measure(builds, args.processes, args.calls)
    rows = rows_of(seconds)
    print(table(rows))
    report = first["info"]
    path = args.out or measured.default_path(report["devices"][0]["name"], report["cuda_major"], "builds")
    record = measured.measured(report, versions=first["versions"])
    record["build"] = ", ".join(builds)  # the builds' labels: what each is, the command says
    measured.write(
        path,
        {
            "measured": record,
            "builds": builds,
            "processes": args.processes,
            "calls": args.calls,
            "rounds": per_call.ROUNDS,
            "rows": rows,
        },
    )
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
