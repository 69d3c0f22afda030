// Two products on the GPU through libgpumatmul's C API from Node.js (koffi, a C FFI from
// npm), each checked against the CPU: a float32 product, and a batch of three float64
// products in one call.
//
//   npm ci && PKG_CONFIG_PATH=$(python -m pyctk --pkgconfig-path) node matmul.js
//
// Exit status (the same in every example of examples/): 0 when every product matches the
// CPU's, 1 when one does not or a call fails, 77 when there is no GPU to run on (no NVIDIA
// driver, or no GPU): then it prints the status and the library's message.
'use strict';

const { execFileSync } = require('node:child_process');
const path = require('node:path');
const koffi = require('koffi');

// Where libgpumatmul is: pkg-config knows (gpumatmul.pc, relocatable, wherever installed).
const libdir = execFileSync('pkg-config', ['--variable=libdir', 'gpumatmul'], { encoding: 'utf8' }).trim();
const lib = koffi.load(path.join(libdir, 'libgpumatmul.so'));

// ---- The part of gpumatmul.h this program uses. Enum values are part of the ABI and never
// change (libgpu/abi/released.txt); a C enum is an int.
const SUCCESS = 0, ERROR_NO_DRIVER = 3, ERROR_NO_DEVICE = 4;
const BACKEND_AUTO = 0, PRECISION_HIGHEST = 0;
koffi.opaque('gpumatmul_context');
const gpumatmul = {
    version: lib.func('int gpumatmul_version(void)'),
    cudaMajor: lib.func('int gpumatmul_cuda_major(void)'),
    statusName: lib.func('const char *gpumatmul_status_name(int status)'),
    lastErrorMessage: lib.func('const char *gpumatmul_last_error_message(void)'),
    create: lib.func('int gpumatmul_create(_Out_ gpumatmul_context **context, int device)'),
    destroy: lib.func('int gpumatmul_destroy(gpumatmul_context *context)'),
    // Typed arrays pass as pointers to their contents, written in place.
    matmulStridedBatchedHost: lib.func(
        'int gpumatmul_matmul_strided_batched_host(gpumatmul_context *context, int backend, ' +
        'int dtype, int precision, int trans_a, int trans_b, int64_t m, int64_t n, int64_t k, ' +
        'int64_t batch_count, const void *a, int64_t lda, int64_t stride_a, ' +
        'const void *b, int64_t ldb, int64_t stride_b, void *c, int64_t ldc, int64_t stride_c)'),
};

// A failed call: its status, and what it was.
class GpumatmulError extends Error {
    constructor(what, status) {
        super(`${what}: ${gpumatmul.statusName(status)}: ${gpumatmul.lastErrorMessage()}`);
        this.status = status;
    }
}

function check(status, what) {
    if (status !== SUCCESS) throw new GpumatmulError(what, status);
}

// The element types multiplied here: their gpumatmul_dtype, array type, and how exact a
// product must be.
const DTYPES = {
    float32: { code: 0, TypedArray: Float32Array, tolerance: 1e-5 },
    float64: { code: 1, TypedArray: Float64Array, tolerance: 1e-12 },
};

// C[i] = A[i] @ B[i] for i < batch (A[i] m x k, B[i] k x n, row-major, packed) on the GPU,
// checked against the CPU: whether it matches.
function run(context, name, batch, m, n, k) {
    const { code, TypedArray, tolerance } = DTYPES[name];
    const a = TypedArray.from({ length: batch * m * k }, (_, i) => (i * 37 % 101) / 101 - 0.5);
    const b = TypedArray.from({ length: batch * k * n }, (_, i) => (i * 53 % 97) / 97 - 0.5);
    const c = new TypedArray(batch * m * n);
    check(gpumatmul.matmulStridedBatchedHost(context, BACKEND_AUTO, code, PRECISION_HIGHEST, 0, 0,
                                              m, n, k, batch, a, k, m * k, b, n, k * n, c, n, m * n), name);
    let error = 0, scale = 0;
    for (let z = 0; z < batch; z++) {
        for (let i = 0; i < m; i++) {
            for (let j = 0; j < n; j++) {
                let expected = 0;
                for (let l = 0; l < k; l++) expected += a[(z * m + i) * k + l] * b[(z * k + l) * n + j];
                error = Math.max(error, Math.abs(c[(z * m + i) * n + j] - expected));
                scale = Math.max(scale, Math.abs(expected));
            }
        }
    }
    error /= scale;
    const matches = error <= tolerance;
    console.log(`${name}: ${batch} x (${m} x ${k}) @ (${k} x ${n}): ${matches ? 'ok' : 'WRONG'}, ` +
                `max relative error ${error.toExponential(1)}`);
    return matches;
}

function main() {
    const version = gpumatmul.version();
    console.log(`libgpumatmul ${Math.floor(version / 10000)}.${Math.floor(version / 100) % 100}.` +
                `${version % 100} for CUDA ${gpumatmul.cudaMajor()}`);
    const out = [null];
    try {
        check(gpumatmul.create(out, 0), 'gpumatmul_create');
        const single = run(out[0], 'float32', 1, 64, 32, 48);
        const batched = run(out[0], 'float64', 3, 33, 9, 17);
        return single && batched ? 0 : 1;
    } catch (error) {
        if (!(error instanceof GpumatmulError)) throw error;
        const noGpu = error.status === ERROR_NO_DRIVER || error.status === ERROR_NO_DEVICE;
        console.error(`${noGpu ? 'no GPU' : 'failed'}: ${error.message}`);
        return noGpu ? 77 : 1;
    } finally {
        gpumatmul.destroy(out[0]);  // NULL (no context) does nothing
    }
}

process.exitCode = main();
