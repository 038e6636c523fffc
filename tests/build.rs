//! Builds the components the tests run the service with besides its own: a detector that never
//! answers (`plugins/failing-detector`). The test binary finds it at `FAILING_DETECTOR_COMPONENT`.

include!("../host/build/components.rs");

const FAILING_DETECTOR: &str = "castellan-failing-detector";

fn main() {
    let manifest_dir = PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").unwrap_or_default());
    let workspace = manifest_dir.parent().unwrap_or(&manifest_dir).to_path_buf();
    let built = build_components(&workspace, &[FAILING_DETECTOR]);
    let path = built.join(component_file(FAILING_DETECTOR));
    println!("cargo::rustc-env=FAILING_DETECTOR_COMPONENT={}", path.display());
}
