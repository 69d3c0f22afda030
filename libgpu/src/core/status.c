/* Status names, the per-thread error message, and CUDA error translation. */
#include <stdarg.h>
#include <stdio.h>

#include "core/core.h"

#if defined(_MSC_VER)
#  define THREAD_LOCAL __declspec(thread)
#else
#  define THREAD_LOCAL __thread
#endif

static THREAD_LOCAL char last_error[1024];

const char *gpumatmul_status_name(gpumatmul_status status) {
    switch (status) {
    case GPUMATMUL_SUCCESS: return "GPUMATMUL_SUCCESS";
    case GPUMATMUL_ERROR_INVALID_ARGUMENT: return "GPUMATMUL_ERROR_INVALID_ARGUMENT";
    case GPUMATMUL_ERROR_NOT_SUPPORTED: return "GPUMATMUL_ERROR_NOT_SUPPORTED";
    case GPUMATMUL_ERROR_NO_DRIVER: return "GPUMATMUL_ERROR_NO_DRIVER";
    case GPUMATMUL_ERROR_NO_DEVICE: return "GPUMATMUL_ERROR_NO_DEVICE";
    case GPUMATMUL_ERROR_OUT_OF_MEMORY: return "GPUMATMUL_ERROR_OUT_OF_MEMORY";
    case GPUMATMUL_ERROR_NO_KERNEL_IMAGE: return "GPUMATMUL_ERROR_NO_KERNEL_IMAGE";
    case GPUMATMUL_ERROR_CUDA: return "GPUMATMUL_ERROR_CUDA";
    case GPUMATMUL_ERROR_CUBLAS: return "GPUMATMUL_ERROR_CUBLAS";
    case GPUMATMUL_ERROR_CONTEXT_LOST: return "GPUMATMUL_ERROR_CONTEXT_LOST";
    }
    return "GPUMATMUL_STATUS_UNKNOWN";
}

const char *gpumatmul_last_error_message(void) { return last_error; }

gpumatmul_status set_error(gpumatmul_status status, const char *format, ...) {
    va_list args;
    va_start(args, format);
    vsnprintf(last_error, sizeof last_error, format, args);
    va_end(args);
    return status;
}

/* The errors after which CUDA fails every later call of the process on that
 * device with the same error (cuda.h: "the process is left in an inconsistent
 * state"). The runtime (cudaError_t) and the driver (CUresult) number them
 * alike; pyctk/_errors.py keeps the same list. */
static const int sticky_errors[] = {
    226, /* CONTAINED */
    700, /* ILLEGAL_ADDRESS */
    702, /* LAUNCH_TIMEOUT */
    710, /* ASSERT: a device-side assert */
    714, /* HARDWARE_STACK_ERROR */
    715, /* ILLEGAL_INSTRUCTION */
    716, /* MISALIGNED_ADDRESS */
    717, /* INVALID_ADDRESS_SPACE */
    718, /* INVALID_PC */
    719, /* LAUNCH_FAILED */
    721, /* TENSOR_MEMORY_LEAK */
    911, /* EXTERNAL_DEVICE */
};

/* The status of a CUDA error that no more specific status names. */
static gpumatmul_status cuda_status(int error) {
    size_t i;
    for (i = 0; i < sizeof sticky_errors / sizeof *sticky_errors; ++i)
        if (sticky_errors[i] == error) return GPUMATMUL_ERROR_CONTEXT_LOST;
    return GPUMATMUL_ERROR_CUDA;
}

/* What a message adds for CONTEXT_LOST: that only a new process can use the
 * GPU again, and how to find the faulty kernel (an earlier launch, maybe
 * another library's). */
static const char context_lost_help[] =
    ". The GPU context of this process is lost: a kernel faulted (perhaps one "
    "launched before this call), and CUDA now fails every call on this device "
    "in this process. Restart the process to use the GPU again; to find the "
    "fault, run the program under compute-sanitizer or with CUDA_LAUNCH_BLOCKING=1";

static const char *help(gpumatmul_status status) {
    return status == GPUMATMUL_ERROR_CONTEXT_LOST ? context_lost_help : "";
}

/* What a message adds for NO_DRIVER: whether the runtime found the driver's
 * library at all (cudaDriverGetVersion gives 0 when it did not) and what to
 * install, which a C caller has no other way to learn. */
static void no_driver_help(char *help, size_t size) {
    int version = 0;
    const char *needed = CUDART_VERSION >= 13000 ? "580" : "525";
    cudaDriverGetVersion(&version);
    if (version == 0)
        snprintf(help, size,
                 ". No NVIDIA driver was found: the dynamic linker found no libcuda.so.1. "
                 "Install the NVIDIA driver (%s or newer for CUDA %d; nvidia-smi must list "
                 "your GPU); in a container, pass the host's in (docker run --gpus all)",
                 needed, CUDART_VERSION / 1000);
    else
        snprintf(help, size,
                 ". The NVIDIA driver's libcuda.so.1 supports CUDA %d.%d, older than this "
                 "library's CUDA %d runtime: update the driver to %s or newer",
                 version / 1000, version % 1000 / 10, CUDART_VERSION / 1000, needed);
}

gpumatmul_status check_cuda(cudaError_t error, const char *what) {
    gpumatmul_status status;
    char driver_help[320] = "";
    if (error == cudaSuccess) return GPUMATMUL_SUCCESS;
    switch (error) {
    case cudaErrorInsufficientDriver:
    case cudaErrorCallRequiresNewerDriver:
    case cudaErrorSystemDriverMismatch:
    case cudaErrorStubLibrary: /* the toolkit's stub libcuda.so was loaded, not a driver */
        status = GPUMATMUL_ERROR_NO_DRIVER;
        break;
    case cudaErrorNoDevice:
    case cudaErrorInvalidDevice:
    case cudaErrorDevicesUnavailable:
        status = GPUMATMUL_ERROR_NO_DEVICE;
        break;
    case cudaErrorMemoryAllocation:
        status = GPUMATMUL_ERROR_OUT_OF_MEMORY;
        break;
    case cudaErrorNoKernelImageForDevice:
        status = GPUMATMUL_ERROR_NO_KERNEL_IMAGE;
        break;
    default:
        status = cuda_status((int)error);
    }
    cudaGetLastError(); /* clear a non-sticky error so later calls start clean */
    if (status == GPUMATMUL_ERROR_NO_DRIVER) no_driver_help(driver_help, sizeof driver_help);
    return set_error(status, "%s failed: %s: %s%s", what, cudaGetErrorName(error),
                     cudaGetErrorString(error),
                     status == GPUMATMUL_ERROR_NO_DRIVER ? driver_help : help(status));
}

gpumatmul_status check_driver(const struct driver_api *driver, CUresult error, const char *what) {
    const char *name = "unknown CUresult";
    gpumatmul_status status;
    if (error == CUDA_SUCCESS) return GPUMATMUL_SUCCESS;
    status = cuda_status((int)error);
    if (driver->get_error_name) driver->get_error_name(error, &name);
    if (error == CUDA_ERROR_OUT_OF_MEMORY) status = GPUMATMUL_ERROR_OUT_OF_MEMORY;
    if (error == CUDA_ERROR_NO_BINARY_FOR_GPU || error == CUDA_ERROR_INVALID_PTX ||
        error == CUDA_ERROR_UNSUPPORTED_PTX_VERSION)
        status = GPUMATMUL_ERROR_NO_KERNEL_IMAGE;
    return set_error(status, "%s failed: %s (CUresult %d)%s", what, name, (int)error,
                     help(status));
}

gpumatmul_status check_cublas(cublasStatus_t error, const char *what) {
    gpumatmul_status status = GPUMATMUL_ERROR_CUBLAS;
    const char *hint = "";
    if (error == CUBLAS_STATUS_SUCCESS) return GPUMATMUL_SUCCESS;
    if (error == CUBLAS_STATUS_ALLOC_FAILED) status = GPUMATMUL_ERROR_OUT_OF_MEMORY;
    /* Not NO_DEVICE: by the time cuBLAS initialises, the device has worked. */
    if (error == CUBLAS_STATUS_NOT_INITIALIZED)
        hint = ": cuBLAS could not initialise, typically because device memory is exhausted or "
               "the CUDA context was lost";
    return set_error(status, "%s failed: %s (cublasStatus_t %d)%s", what,
                     cublasGetStatusString(error), (int)error, hint);
}
