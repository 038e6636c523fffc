//! Builds the components the tests run the service with besides its own: a detector and an
//! analyst that never answer (`plugins/failing-detector`, `plugins/failing-analyst`). The test
//! binary finds them at `FAILING_DETECTOR_COMPONENT` and `FAILING_ANALYST_COMPONENT`.

include!("../host/build/components.rs");

const FAILING_DETECTOR: &str = "castellan-failing-detector";
const FAILING_ANALYST: &str = "castellan-failing-analyst";

fn main() {
    let manifest_dir = PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").unwrap_or_default());
    let workspace = manifest_dir.parent().unwrap_or(&manifest_dir).to_path_buf();
    let built = build_components(&workspace, &[FAILING_DETECTOR, FAILING_ANALYST]);
    let path = built.join(component_file(FAILING_DETECTOR));
    println!("cargo::rustc-env=FAILING_DETECTOR_COMPONENT={}", path.display());
    let path = built.join(component_file(FAILING_ANALYST));
    println!("cargo::rustc-env=FAILING_ANALYST_COMPONENT={}", path.display());
}
