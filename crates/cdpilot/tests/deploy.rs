//! The Kubernetes manifests in `deploy/` pass a schema check
//! (`kubernetes-validate`, PyPI: the Kubernetes JSON schemas, offline),
//! run with the interpreter scripts/test installs it in
//! (`$CDPILOT_TEST_PYTHON`, else `python3`).

use std::path::Path;
use std::process::Command;

#[test]
fn the_kubernetes_manifests_pass_the_schema_check() {
    let python = std::env::var("CDPILOT_TEST_PYTHON").unwrap_or_else(|_| "python3".into());
    let deploy = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../deploy/cdpilot.yaml");
    let output = Command::new(&python)
        .args([
            "-m",
            "kubernetes_validate",
            "--strict",
            "--kubernetes-version",
            "1.30.0",
        ])
        .arg(&deploy)
        .output()
        .unwrap_or_else(|e| panic!("{python}: {e}"));
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(
        !text.contains("No module named"),
        "kubernetes-validate is not installed for {python}: run scripts/test (it installs it) or pip install kubernetes-validate\n{text}"
    );
    assert!(output.status.success(), "{}: {text}", deploy.display());
    // One line per document checked: the ConfigMap, Deployment, Service, Secret.
    assert_eq!(text.matches(" passed for resource ").count(), 4, "{text}");
}
