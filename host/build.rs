//! Builds the components the service ships with (`../plugins`) for `wasm32-wasip2` and places
//! them in `OUT_DIR`, where `src/plugins` embeds them: the binary carries its default components
//! and needs no files beside it. Configuration can name other components at run time.

use std::path::{Path, PathBuf};
use std::process::Command;

/// The crates of `../plugins` the service embeds, by package name.
const COMPONENTS: &[&str] = &["castellan-detector", "castellan-payloads"];

const TARGET: &str = "wasm32-wasip2";

fn main() {
    let manifest_dir = PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").unwrap_or_default());
    let workspace = manifest_dir.parent().unwrap_or(&manifest_dir).to_path_buf();
    let out_dir = PathBuf::from(std::env::var_os("OUT_DIR").unwrap_or_default());
    for path in ["wit", "plugins", "Cargo.lock"] {
        println!("cargo::rerun-if-changed={}", workspace.join(path).display());
    }

    // A target directory of its own: the outer build holds the lock on the workspace's.
    let target_dir = workspace.join("target").join("plugins");
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let mut build = Command::new(cargo);
    build
        .current_dir(&workspace)
        .args(["build", "--release", "--target", TARGET, "--target-dir"])
        .arg(&target_dir)
        .args(COMPONENTS.iter().flat_map(|name| ["-p", name]));
    // The outer build's flags and wrappers (clippy's, for one) are for the host target.
    for variable in
        ["CARGO_ENCODED_RUSTFLAGS", "RUSTFLAGS", "RUSTC_WRAPPER", "RUSTC_WORKSPACE_WRAPPER", "CARGO_TARGET_DIR"]
    {
        build.env_remove(variable);
    }
    let status = build.status().unwrap_or_else(|error| fail(&format!("cannot run cargo: {error}")));
    if !status.success() {
        fail(&format!(
            "building the components for {TARGET} failed (is the target installed? `rustup target add {TARGET}`)"
        ));
    }
    for name in COMPONENTS {
        let file = format!("{}.wasm", name.replace('-', "_"));
        let built = target_dir.join(TARGET).join("release").join(&file);
        copy(&built, &out_dir.join(&file));
    }
}

fn copy(from: &Path, to: &Path) {
    if let Err(error) = std::fs::copy(from, to) {
        fail(&format!("cannot copy {} to {}: {error}", from.display(), to.display()));
    }
}

fn fail(message: &str) -> ! {
    eprintln!("{message}");
    std::process::exit(1)
}
