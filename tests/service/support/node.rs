//! Scripts of `tests/relying-party` and `tests/upstream-provider` run by node (stock OpenID Connect,
//! JOSE and MCP libraries that no one here wrote), spoken to in JSON lines: the test writes a line,
//! the script prints one.

use std::path::PathBuf;
use std::process::Stdio;
use std::time::Duration;

use serde_json::Value;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, Lines};
use tokio::process::{Child, ChildStdin, ChildStdout, Command};

pub struct NodeScript {
    stdin: ChildStdin,
    lines: Lines<BufReader<ChildStdout>>,
    child: Child,
}

impl NodeScript {
    /// Starts `script` of `tests/relying-party` with `args`; `package` is a library it needs,
    /// checked to be installed.
    pub fn start(script: &str, package: &str, args: &[&str]) -> Self {
        Self::start_in("relying-party", script, package, args)
    }

    /// Starts `script` of the node package `tests/{directory}`.
    pub fn start_in(directory: &str, script: &str, package: &str, args: &[&str]) -> Self {
        let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(directory);
        assert!(
            dir.join("node_modules").join(package).is_dir(),
            "{package} is not installed: run `npm ci --prefix tests/{directory}` (scripts/test does)"
        );
        let mut child = Command::new("node")
            .arg(dir.join(script))
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .kill_on_drop(true)
            .spawn()
            .expect("node runs");
        let lines = BufReader::new(child.stdout.take().expect("its output")).lines();
        Self { stdin: child.stdin.take().expect("its input"), lines, child }
    }

    pub async fn send(&mut self, line: &str) {
        self.stdin.write_all(format!("{line}\n").as_bytes()).await.expect("the script reads");
    }

    /// The script's next JSON line; the timeout guards against a hung process, it measures nothing.
    pub async fn next(&mut self) -> Value {
        let line = tokio::time::timeout(Duration::from_secs(60), self.lines.next_line())
            .await
            .expect("the script answers")
            .expect("its output is readable")
            .expect("it printed a line (its errors are on stderr)");
        serde_json::from_str(&line).expect("a JSON line")
    }

    /// Waits for the script to end; whether it succeeded.
    pub async fn finished(mut self) -> bool {
        let status = tokio::time::timeout(Duration::from_secs(30), self.child.wait()).await;
        status.expect("the script ends").expect("its status").success()
    }
}
