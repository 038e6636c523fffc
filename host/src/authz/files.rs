//! The policy files: the schema, the `*.cedar` policies and the `fixtures/*.json` cases, read from
//! a folder or taken from those built into the binary (the repository's `policies/` folder as it
//! was when the binary was built), and written out for an audit or a change.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use super::PolicyError;

/// The policies the service ships, built in: each file's path under the folder, and its text.
const SHIPPED: &[(&str, &str)] = &[
    ("schema.cedarschema", include_str!("../../../policies/schema.cedarschema")),
    ("boundaries.cedar", include_str!("../../../policies/boundaries.cedar")),
    ("delegation.cedar", include_str!("../../../policies/delegation.cedar")),
    ("metadata_documents.cedar", include_str!("../../../policies/metadata_documents.cedar")),
    ("roles.cedar", include_str!("../../../policies/roles.cedar")),
    ("fixtures/boundaries.json", include_str!("../../../policies/fixtures/boundaries.json")),
    ("fixtures/custom_roles.json", include_str!("../../../policies/fixtures/custom_roles.json")),
    ("fixtures/delegation.json", include_str!("../../../policies/fixtures/delegation.json")),
    ("fixtures/metadata_documents.json", include_str!("../../../policies/fixtures/metadata_documents.json")),
    ("fixtures/roles.json", include_str!("../../../policies/fixtures/roles.json")),
];

/// The schema's file name.
pub const SCHEMA: &str = "schema.cedarschema";

/// A set of policy files, each with its path under the folder they come from.
#[derive(Debug, Clone)]
pub struct PolicyFiles {
    /// Where they come from, as the check's report and errors name it.
    pub origin: String,
    /// The folder they were read from; none for the built-in ones.
    folder: Option<PathBuf>,
    /// Sorted by path.
    files: Vec<(PathBuf, String)>,
}

impl PolicyFiles {
    /// The policies built into this binary.
    pub fn shipped() -> Self {
        let mut files: Vec<_> = SHIPPED.iter().map(|(path, text)| (PathBuf::from(path), (*text).to_owned())).collect();
        files.sort();
        Self { origin: format!("the policies built into castellan {}", env!("CARGO_PKG_VERSION")), folder: None, files }
    }

    /// The schema, the `*.cedar` files and the `fixtures/*.json` files of `dir`.
    pub fn read(dir: &Path) -> Result<Self, PolicyError> {
        let mut files = Vec::new();
        for (folder, extensions) in
            [(PathBuf::new(), ["cedar", "cedarschema"]), (PathBuf::from("fixtures"), ["json", "json"])]
        {
            let full = dir.join(&folder);
            let entries = match std::fs::read_dir(&full) {
                Ok(entries) => entries,
                // Fixtures are optional; the folder itself is not.
                Err(_) if !folder.as_os_str().is_empty() => continue,
                Err(cause) => return Err(PolicyError::Folder { path: dir.to_owned(), cause }),
            };
            for entry in entries.filter_map(Result::ok) {
                let path = entry.path();
                let wanted = path.extension().is_some_and(|ext| extensions.iter().any(|e| ext == *e));
                if wanted && path.is_file() {
                    let text = std::fs::read_to_string(&path)
                        .map_err(|cause| PolicyError::Read { path: path.clone(), cause })?;
                    files.push((folder.join(entry.file_name()), text));
                }
            }
        }
        files.sort();
        Ok(Self { origin: format!("the policies in {}", dir.display()), folder: Some(dir.to_owned()), files })
    }

    /// How an error names the file at `path`: in its folder, or as one of the built-in files.
    pub fn name_of(&self, path: &Path) -> PathBuf {
        match &self.folder {
            Some(folder) => folder.join(path),
            None => Path::new("(built in)").join(path),
        }
    }

    /// The path of every file under the folder, in order.
    pub fn paths(&self) -> Vec<String> {
        self.files.iter().map(|(path, _)| path.display().to_string()).collect()
    }

    /// The file at `path` under the folder.
    pub fn get(&self, path: &str) -> Option<&str> {
        self.files.iter().find(|(p, _)| p == Path::new(path)).map(|(_, text)| text.as_str())
    }

    /// The files whose path is in `folder` (`""`: the top) and ends with `.{extension}`.
    pub fn of(&self, folder: &str, extension: &str) -> impl Iterator<Item = (&Path, &str)> {
        self.files
            .iter()
            .filter(move |(path, _)| {
                path.parent() == Some(Path::new(folder)) && path.extension().is_some_and(|ext| ext == extension)
            })
            .map(|(path, text)| (path.as_path(), text.as_str()))
    }

    /// Writes every file under `dir`, which must not exist yet or be empty.
    pub fn export(&self, dir: &Path) -> anyhow::Result<String> {
        use anyhow::Context as _;
        if dir.exists() && std::fs::read_dir(dir)?.next().is_some() {
            anyhow::bail!("{} is not empty: export the policies into a new folder", dir.display());
        }
        let mut report = String::new();
        for (path, text) in &self.files {
            let target = dir.join(path);
            if let Some(parent) = target.parent() {
                std::fs::create_dir_all(parent).with_context(|| format!("cannot create {}", parent.display()))?;
            }
            std::fs::write(&target, text).with_context(|| format!("cannot write {}", target.display()))?;
            let _ = writeln!(report, "{}", target.display());
        }
        Ok(report)
    }
}

/// "line L, column C" of byte `offset` in `text`, both counted from 1.
pub fn position(text: &str, offset: usize) -> String {
    let before = &text[..offset.min(text.len())];
    let line = before.matches('\n').count() + 1;
    let column = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
    format!("line {line}, column {column}")
}
