// Builds components of `plugins/` for `wasm32-wasip2`, for the build scripts of the host (the
// components it embeds) and of the tests (components that misbehave on purpose). Included with
// `include!`, so that both build the same way.

use std::path::{Path, PathBuf};
use std::process::Command;

const TARGET: &str = "wasm32-wasip2";

/// Builds the crates named (package names) in release mode; the folder holding their `.wasm`.
fn build_components(workspace: &Path, names: &[&str]) -> PathBuf {
    for path in ["wit", "plugins", "Cargo.lock"] {
        println!("cargo::rerun-if-changed={}", workspace.join(path).display());
    }
    // A target directory of its own: the outer build holds the lock on the workspace's.
    let target_dir = workspace.join("target").join("plugins");
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let mut build = Command::new(cargo);
    build
        .current_dir(workspace)
        .args(["build", "--release", "--target", TARGET, "--target-dir"])
        .arg(&target_dir)
        .args(names.iter().flat_map(|name| ["-p", name]));
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
    target_dir.join(TARGET).join("release")
}

/// The file a component crate builds to.
fn component_file(name: &str) -> String {
    format!("{}.wasm", name.replace('-', "_"))
}

fn fail(message: &str) -> ! {
    eprintln!("{message}");
    std::process::exit(1)
}
