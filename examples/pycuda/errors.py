"""What goes wrong, and what pyctk says: compile errors, wrong arguments, bad launches, and a
kernel that writes where it must not (after which this process cannot use the GPU again,
so that part runs in a child process).
"""

import subprocess
import sys

import numpy as np

import pyctk.driver as cuda
from pyctk.compiler import CompileError, SourceModule

# 1. A compile error carries NVRTC's whole log, with the source's own line numbers.
try:
    SourceModule("""
__global__ void broken(float *x) {
    x[0] = undeclared;
}""")
except CompileError as error:
    assert "kernel.cu(3): error" in error.log
    print("CompileError:", error.log.splitlines()[0])

module = SourceModule(
    "__global__ void fill(float *x, float value, int n) { int i = threadIdx.x; if (i < n) x[i] = value; }"
)
fill = module.get_function("fill")
x = cuda.mem_alloc(4 * 32)

# 2. Arguments are checked against the kernel's parameters before anything is launched.
for arguments in [
    (x, 1.5, np.int32(32)),  # a Python float: float32 or float64?
    (x, np.float64(1.5), np.int32(32)),  # the kernel takes a float
    (x, np.float32(1.5)),  # one missing
    (np.zeros(32, np.float32), np.float32(1), np.int32(32)),
]:  # host memory
    try:
        fill(*arguments, block=(32, 1, 1))
    except TypeError as error:
        print("TypeError:", error)

# 3. A launch the GPU refuses names the CUDA error; the GPU stays usable.
try:
    fill(x, np.float32(1.5), np.int32(32), block=(4096, 1, 1))
except cuda.LogicError as error:
    assert error.status == "CUDA_ERROR_INVALID_VALUE"
    print(f"{type(error).__name__}:", error)
fill(x, np.float32(2.5), np.int32(32), block=(32, 1, 1))
assert (cuda.from_device(x, (32,), np.float32) == 2.5).all()

# 4. An illegal address is sticky: CUDA refuses every later call of the process.
CHILD = """
import numpy as np, pyctk.driver as cuda
from pyctk.compiler import SourceModule
SourceModule("__global__ void bad(int *p) { p[threadIdx.x] = 1; }").get_function("bad")(
    np.uintp(8), block=(32, 1, 1))
try:
    cuda.Context.synchronize()
except cuda.ContextLostError as error:
    print(error)
"""
child = subprocess.run([sys.executable, "-c", CHILD], capture_output=True, text=True)
assert child.returncode == 0 and "CUDA_ERROR_ILLEGAL_ADDRESS" in child.stdout, child.stderr
assert "The GPU context of this process is lost" in child.stdout
print("ContextLostError (in a child process):", child.stdout.strip())
print("OK")
