"""CUDA sources for the tests of JIT linking, on the CPU and on a GPU."""

# Two relocatable sources: the kernel uses a __device__ function and variable of the other.
HELPERS = "__device__ float scale(float x) { return 3.0f * x; }\n__device__ int calls;\n"
KERNELS = """__device__ float scale(float x);
extern __device__ int calls;
__global__ void apply(float *x, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) { x[i] = scale(x[i]); atomicAdd(&calls, 1); }
}"""
