//! Links libgpumatmul as `pkg-config --libs gpumatmul` says, rpath included, so the program
//! runs with no LD_LIBRARY_PATH. With pyctk from pip:
//!     PKG_CONFIG_PATH=$(python -m pyctk --pkgconfig-path) cargo run --release
use std::process::Command;

fn main() {
    println!("cargo:rerun-if-env-changed=PKG_CONFIG_PATH");
    let output = Command::new("pkg-config")
        .args(["--libs", "gpumatmul"])
        .output();
    let flags = match output {
        Ok(output) if output.status.success() => String::from_utf8(output.stdout).unwrap(),
        failure => panic!(
            "pkg-config found no gpumatmul ({:?}). With pyctk installed from pip, build with \
             PKG_CONFIG_PATH=$(python -m pyctk --pkgconfig-path); with a standalone install, \
             add its libdir/pkgconfig folder to PKG_CONFIG_PATH.",
            failure.map(|o| String::from_utf8_lossy(&o.stderr).into_owned())
        ),
    };
    for flag in flags.split_whitespace() {
        if let Some(folder) = flag.strip_prefix("-L") {
            println!("cargo:rustc-link-search=native={folder}");
        } else if let Some(library) = flag.strip_prefix("-l") {
            println!("cargo:rustc-link-lib=dylib={library}");
        } else {
            println!("cargo:rustc-link-arg={flag}"); // -Wl,-rpath,<the library's folder>
        }
    }
}
