/* Compile a kernel at run time with NVRTC and launch it with the CUDA driver API, from C,
 * with only NVIDIA's pip wheels: what pyctk.compiler and pyctk.driver do for Python.
 *
 * NVRTC (nvrtc.h, libnvrtc.so.N) is a C API in the nvidia-cuda-nvrtc wheel; the driver API
 * (cuda.h, in the runtime wheel) is reached through the runtime's cudaGetDriverEntryPoint,
 * as libgpumatmul does, so the program links no libcuda.so.1 and builds on a machine with
 * no driver. Build (CUDA 13; for CUDA 12 use nvidia/cuda_runtime and nvidia/cuda_nvrtc,
 * and .so.12):
 *
 *   SITE=$(python -c "import sysconfig; print(sysconfig.get_paths()['platlib'])")
 *   cc -std=c99 vector_add.c -I$SITE/nvidia/cu13/include -L$SITE/nvidia/cu13/lib \
 *      -l:libnvrtc.so.13 -l:libcudart.so.13 -Wl,-rpath,$SITE/nvidia/cu13/lib -o vector_add
 *   ./vector_add $SITE/nvidia/cu13/include      # the folder NVRTC searches for cuda_fp16.h
 *
 * Exit status: 0 and "OK" when the sums are right; 1 without a usable driver or GPU;
 * 2 when NVRTC cannot compile (its log is printed). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda.h>
#include <nvrtc.h>

/* The two runtime functions used, declared here: the runtime's headers need more wheels. */
extern int cudaGetDriverEntryPoint(const char *symbol, void **function, unsigned long long flags,
                                   int *found);
extern int cudaGetDriverEntryPointByVersion(const char *symbol, void **function, unsigned int version,
                                            unsigned long long flags, int *found);
extern const char *cudaGetErrorName(int error);

static const char source[] =
    "#include <cuda_fp16.h>\n" /* from the runtime wheel, through the include path below */
    "extern \"C\" __global__ void add(const float *x, const float *y, float *z, int n) {\n"
    "    int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "    if (i < n) z[i] = __half2float(__float2half(x[i])) + y[i];\n"
    "}\n";

static void *driver_function(const char *name) {
    void *function = NULL;
    int found = -1;
#if CUDA_VERSION >= 13000
    int error = cudaGetDriverEntryPointByVersion(name, &function, 13000, 0, &found);
#else
    int error = cudaGetDriverEntryPoint(name, &function, 0, &found);
#endif
    if (error || found != 0 || !function) {
        fprintf(stderr, "no usable CUDA driver for %s: %s\n", name, cudaGetErrorName(error));
        exit(1);
    }
    return function;
}

#define DRIVER(name, ...)                                                                        \
    do {                                                                                         \
        CUresult (*function)() = (CUresult(*)())driver_function(#name);                          \
        CUresult result = function(__VA_ARGS__);                                                 \
        if (result != CUDA_SUCCESS) {                                                            \
            fprintf(stderr, "%s failed: CUresult %d\n", #name, (int)result);                     \
            exit(1);                                                                             \
        }                                                                                        \
    } while (0)

int main(int argc, char **argv) {
    enum { N = 1000 };
    static float x[N], y[N], z[N];
    CUdevice device;
    CUcontext context;
    CUmodule module;
    CUfunction add;
    CUdeviceptr dx, dy, dz;
    int major, minor, n = N, i;
    char arch[32], include[4096];
    const char *options[2];
    nvrtcProgram program;
    size_t size;
    char *image;
    void *parameters[4];

    DRIVER(cuInit, 0);
    DRIVER(cuDeviceGet, &device, 0);
    DRIVER(cuDeviceGetAttribute, &major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, device);
    DRIVER(cuDeviceGetAttribute, &minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, device);
    DRIVER(cuDevicePrimaryCtxRetain, &context, device);
    DRIVER(cuCtxSetCurrent, context);

    /* SASS for this GPU (pyctk falls back to PTX when NVRTC does not know the GPU). */
    snprintf(arch, sizeof arch, "--gpu-architecture=sm_%d%d", major, minor);
    snprintf(include, sizeof include, "--include-path=%s", argc > 1 ? argv[1] : ".");
    options[0] = arch;
    options[1] = include;
    nvrtcCreateProgram(&program, source, "kernel.cu", 0, NULL, NULL);
    if (nvrtcCompileProgram(program, 2, options) != NVRTC_SUCCESS) {
        nvrtcGetProgramLogSize(program, &size);
        image = malloc(size);
        nvrtcGetProgramLog(program, image);
        fprintf(stderr, "%s", image);
        return 2;
    }
    nvrtcGetCUBINSize(program, &size);
    image = malloc(size);
    nvrtcGetCUBIN(program, image);
    nvrtcDestroyProgram(&program);
    DRIVER(cuModuleLoadData, &module, image);
    DRIVER(cuModuleGetFunction, &add, module, "add");

    for (i = 0; i < N; ++i) x[i] = (float)i, y[i] = 2.0f * (float)i;
    DRIVER(cuMemAlloc, &dx, sizeof x);
    DRIVER(cuMemAlloc, &dy, sizeof y);
    DRIVER(cuMemAlloc, &dz, sizeof z);
    DRIVER(cuMemcpyHtoD, dx, x, sizeof x);
    DRIVER(cuMemcpyHtoD, dy, y, sizeof y);
    parameters[0] = &dx, parameters[1] = &dy, parameters[2] = &dz, parameters[3] = &n;
    DRIVER(cuLaunchKernel, add, (N + 255) / 256, 1, 1, 256, 1, 1, 0, NULL, parameters, NULL);
    DRIVER(cuMemcpyDtoH, z, dz, sizeof z); /* waits for the kernel */
    for (i = 0; i < N; ++i)
        if (z[i] != 3.0f * (float)i) {
            fprintf(stderr, "z[%d] = %g, expected %g\n", i, z[i], 3.0f * (float)i);
            return 1;
        }
    printf("%d sums on sm_%d%d, compiled at run time from %zu bytes of CUBIN: OK\n", N, major,
           minor, size);
    free(image);
    return 0;
}
