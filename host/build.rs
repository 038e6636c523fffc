//! Builds the components the service ships with (`../plugins`) for `wasm32-wasip2` and places
//! them in `OUT_DIR`, where `src/plugins` embeds them: the binary carries its default components
//! and needs no files beside it. Configuration can name other components at run time.

include!("build/components.rs");

/// The crates of `../plugins` the service embeds, by package name.
const COMPONENTS: &[&str] = &["castellan-detector", "castellan-payloads", "castellan-analyst"];

fn main() {
    let manifest_dir = PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").unwrap_or_default());
    let workspace = manifest_dir.parent().unwrap_or(&manifest_dir).to_path_buf();
    let out_dir = PathBuf::from(std::env::var_os("OUT_DIR").unwrap_or_default());
    let built = build_components(&workspace, COMPONENTS);
    for name in COMPONENTS {
        let file = component_file(name);
        if let Err(error) = std::fs::copy(built.join(&file), out_dir.join(&file)) {
            fail(&format!("cannot copy {file} to {}: {error}", out_dir.display()));
        }
    }
}
