//! Two products on the GPU through libgpumatmul's C API from Rust, each checked against the
//! CPU: a float32 product, and a batch of three float64 products in one call.
//!
//!     PKG_CONFIG_PATH=$(python -m pyctk --pkgconfig-path) cargo run --release
//!
//! Exit status (the same in every example of examples/): 0 when every product matches the
//! CPU's, 1 when one does not or a call fails, 77 when there is no GPU to run on (no NVIDIA
//! driver, or no GPU): then it prints the status and the library's message.
use std::ffi::CStr;
use std::os::raw::{c_char, c_int, c_void};
use std::process::ExitCode;

// ---- The part of gpumatmul.h this program uses. Enum values are part of the ABI and never
// change (libgpu/abi/released.txt); a C enum is an int.

#[repr(C)]
struct Context {
    _opaque: [u8; 0],
}

type Status = c_int;
const SUCCESS: Status = 0;
const ERROR_NO_DRIVER: Status = 3;
const ERROR_NO_DEVICE: Status = 4;
const BACKEND_AUTO: c_int = 0;
const FLOAT32: c_int = 0;
const FLOAT64: c_int = 1;
const PRECISION_HIGHEST: c_int = 0;

extern "C" {
    fn gpumatmul_version() -> c_int;
    fn gpumatmul_cuda_major() -> c_int;
    fn gpumatmul_status_name(status: Status) -> *const c_char;
    fn gpumatmul_last_error_message() -> *const c_char;
    fn gpumatmul_create(context: *mut *mut Context, device: c_int) -> Status;
    fn gpumatmul_destroy(context: *mut Context) -> Status;
    fn gpumatmul_matmul_strided_batched_host(
        context: *mut Context,
        backend: c_int,
        dtype: c_int,
        precision: c_int,
        trans_a: c_int,
        trans_b: c_int,
        m: i64,
        n: i64,
        k: i64,
        batch_count: i64,
        a: *const c_void,
        lda: i64,
        stride_a: i64,
        b: *const c_void,
        ldb: i64,
        stride_b: i64,
        c: *mut c_void,
        ldc: i64,
        stride_c: i64,
    ) -> Status;
}

// ---- A safe layer over it.

/// A failed call: what was called, its status's name and the library's message.
struct Failure {
    status: Status,
    text: String,
}

fn check(status: Status, what: &str) -> Result<(), Failure> {
    if status == SUCCESS {
        return Ok(());
    }
    // Both strings are the library's, valid until this thread's next failing call.
    let (name, message) = unsafe {
        (
            CStr::from_ptr(gpumatmul_status_name(status)),
            CStr::from_ptr(gpumatmul_last_error_message()),
        )
    };
    Err(Failure {
        status,
        text: format!(
            "{what}: {}: {}",
            name.to_string_lossy(),
            message.to_string_lossy()
        ),
    })
}

/// A context, destroyed when dropped.
struct Gpu(*mut Context);

impl Gpu {
    fn new(device: c_int) -> Result<Gpu, Failure> {
        let mut context = std::ptr::null_mut();
        check(
            unsafe { gpumatmul_create(&mut context, device) },
            "gpumatmul_create",
        )?;
        Ok(Gpu(context))
    }
}

impl Drop for Gpu {
    fn drop(&mut self) {
        unsafe { gpumatmul_destroy(self.0) };
    }
}

/// The element types multiplied here: their gpumatmul_dtype, and how exact a product must be.
trait Element: Copy {
    const DTYPE: c_int;
    const NAME: &'static str;
    const TOLERANCE: f64;
    fn from_f64(value: f64) -> Self;
    fn to_f64(self) -> f64;
}

impl Element for f32 {
    const DTYPE: c_int = FLOAT32;
    const NAME: &'static str = "float32";
    const TOLERANCE: f64 = 1e-5;
    fn from_f64(value: f64) -> Self {
        value as f32
    }
    fn to_f64(self) -> f64 {
        self as f64
    }
}

impl Element for f64 {
    const DTYPE: c_int = FLOAT64;
    const NAME: &'static str = "float64";
    const TOLERANCE: f64 = 1e-12;
    fn from_f64(value: f64) -> Self {
        value
    }
    fn to_f64(self) -> f64 {
        self
    }
}

/// C[i] = A[i] @ B[i] for i < batch (A[i] m x k, B[i] k x n, row-major, packed) on the GPU,
/// checked against the CPU: whether it matches.
fn run<T: Element>(gpu: &Gpu, batch: i64, m: i64, n: i64, k: i64) -> Result<bool, Failure> {
    let a: Vec<T> = (0..batch * m * k)
        .map(|i| T::from_f64((i * 37 % 101) as f64 / 101.0 - 0.5))
        .collect();
    let b: Vec<T> = (0..batch * k * n)
        .map(|i| T::from_f64((i * 53 % 97) as f64 / 97.0 - 0.5))
        .collect();
    let mut c = vec![T::from_f64(0.0); (batch * m * n) as usize];
    // The vectors hold exactly the elements the sizes and strides describe.
    check(
        unsafe {
            gpumatmul_matmul_strided_batched_host(
                gpu.0,
                BACKEND_AUTO,
                T::DTYPE,
                PRECISION_HIGHEST,
                0,
                0,
                m,
                n,
                k,
                batch,
                a.as_ptr().cast(),
                k,
                m * k,
                b.as_ptr().cast(),
                n,
                k * n,
                c.as_mut_ptr().cast(),
                n,
                m * n,
            )
        },
        T::NAME,
    )?;
    let (mut error, mut scale) = (0.0f64, 0.0f64);
    for z in 0..batch {
        for i in 0..m {
            for j in 0..n {
                let expected: f64 = (0..k)
                    .map(|l| {
                        a[((z * m + i) * k + l) as usize].to_f64()
                            * b[((z * k + l) * n + j) as usize].to_f64()
                    })
                    .sum();
                error = error.max((c[((z * m + i) * n + j) as usize].to_f64() - expected).abs());
                scale = scale.max(expected.abs());
            }
        }
    }
    error /= scale;
    let matches = error <= T::TOLERANCE;
    println!(
        "{}: {batch} x ({m} x {k}) @ ({k} x {n}): {}, max relative error {error:.1e}",
        T::NAME,
        if matches { "ok" } else { "WRONG" }
    );
    Ok(matches)
}

fn main() -> ExitCode {
    let version = unsafe { gpumatmul_version() };
    println!(
        "libgpumatmul {}.{}.{} for CUDA {}",
        version / 10000,
        version / 100 % 100,
        version % 100,
        unsafe { gpumatmul_cuda_major() }
    );
    let result = Gpu::new(0)
        .and_then(|gpu| Ok(run::<f32>(&gpu, 1, 64, 32, 48)? & run::<f64>(&gpu, 3, 33, 9, 17)?));
    match result {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::from(1),
        Err(failure) => {
            let no_gpu = failure.status == ERROR_NO_DRIVER || failure.status == ERROR_NO_DEVICE;
            eprintln!(
                "{}: {}",
                if no_gpu { "no GPU" } else { "failed" },
                failure.text
            );
            ExitCode::from(if no_gpu { 77 } else { 1 })
        }
    }
}
