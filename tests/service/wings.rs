//! The host's wings import only downward. The order is the README's (its design section names it,
//! and this test holds it to the same line); every path into the crate counts, `use` lines and
//! paths written inline alike, `super::` paths that climb out of a wing too, and `lib.rs` is a
//! file like the others (the crate's root, above every wing).

use std::path::{Path, PathBuf};

/// The wings from the top down, as the README names them.
const ORDER: &[&str] =
    &["http", "application", "oauth", "protection", "operations", "directory", "authz", "runtime", "store", "kernel"];

/// Items of the crate's root and the wing that defines them (`lib.rs` re-exports them).
const ROOT_ITEMS: &[(&str, &str)] = &[("Application", "application"), ("Services", "application")];

fn host_src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../host/src")
}

fn rust_files(dir: &Path, found: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            rust_files(&path, found);
        } else if path.extension().is_some_and(|e| e == "rs") {
            found.push(path);
        }
    }
}

/// The file's module path: `oauth/signin/mod.rs` is `oauth::signin`, `oauth/signin/push.rs` is
/// `oauth::signin::push`, `lib.rs` the root.
fn module_of(relative: &Path) -> Vec<String> {
    let mut parts: Vec<String> = relative.iter().map(|p| p.to_string_lossy().into_owned()).collect();
    let file = parts.pop().unwrap();
    match file.as_str() {
        "mod.rs" | "lib.rs" => {}
        other => parts.push(other.trim_end_matches(".rs").to_owned()),
    }
    parts
}

/// The code without comments, string literals and character literals, which can name paths
/// without using them (a brace in a string would also mislead the module nesting).
fn code_of(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut code = String::with_capacity(text.len());
    let mut i = 0;
    while i < bytes.len() {
        let rest = &text[i..];
        if rest.starts_with("//") {
            i += rest.find('\n').unwrap_or(rest.len());
        } else if rest.starts_with("/*") {
            i += rest.find("*/").map_or(rest.len(), |end| end + 2);
        } else if let Some((opening, hashes)) = raw_string_start(rest).filter(|_| !ident_before(bytes, i)) {
            let close = format!("\"{}", "#".repeat(hashes));
            i += rest[opening..].find(&close).map_or(rest.len(), |end| opening + end + close.len());
            code.push_str("\"\"");
        } else if rest.starts_with('"') {
            let mut j = 1;
            while j < rest.len() && rest.as_bytes()[j] != b'"' {
                j += if rest.as_bytes()[j] == b'\\' { 2 } else { 1 };
            }
            i += j + 1;
            code.push_str("\"\"");
        } else if let Some(length) = char_literal(rest) {
            i += length;
            code.push_str("' '");
        } else {
            let c = rest.chars().next().unwrap();
            code.push(c);
            i += c.len_utf8();
        }
    }
    code
}

fn ident_before(bytes: &[u8], i: usize) -> bool {
    i > 0 && (bytes[i - 1].is_ascii_alphanumeric() || bytes[i - 1] == b'_')
}

/// The length of the opening of a raw string literal starting `text` (`r"`, `r#"`, `br"`…) and
/// its number of `#`.
fn raw_string_start(text: &str) -> Option<(usize, usize)> {
    let after = text.strip_prefix("br").or_else(|| text.strip_prefix('r'))?;
    let hashes = after.len() - after.trim_start_matches('#').len();
    after[hashes..].starts_with('"').then_some((text.len() - after.len() + hashes + 1, hashes))
}

/// The length of a character literal starting `text` (`'{'`, `'\n'`, `'\''`), not a lifetime.
fn char_literal(text: &str) -> Option<usize> {
    let body = text.strip_prefix('\'')?;
    let mut chars = body.chars();
    let length = match chars.next()? {
        '\\' => 1 + chars.next()?.len_utf8() + chars.take_while(|c| *c != '\'').map(char::len_utf8).sum::<usize>(),
        first => first.len_utf8(),
    };
    body[length..].starts_with('\'').then_some(length + 2)
}

/// Every path into the crate in `code` of the module `module`: the line and the wing it reaches
/// (`crate::wing`, `crate::Item` re-exported at the root, or `super::…` climbing to the root),
/// with the module nesting of inline `mod name { … }` followed.
fn reaches(module: &[String], code: &str) -> Vec<(usize, String, String)> {
    let mut found = Vec::new();
    let mut inline: Vec<(String, usize)> = Vec::new();
    let mut depth = 0usize;
    let words = |at: usize| -> Vec<&str> {
        let length =
            code[at..].find(|c: char| !(c.is_alphanumeric() || c == '_' || c == ':')).unwrap_or(code.len() - at);
        code[at..at + length].split("::").filter(|w| !w.is_empty()).collect()
    };
    let bytes = code.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        let boundary =
            i == 0 || !(bytes[i - 1].is_ascii_alphanumeric() || bytes[i - 1] == b'_' || bytes[i - 1] == b':');
        let rest = &code[i..];
        if rest.starts_with('{') {
            depth += 1;
        } else if rest.starts_with('}') {
            depth = depth.saturating_sub(1);
            if inline.last().is_some_and(|(_, opened)| *opened == depth) {
                inline.pop();
            }
        } else if boundary && rest.starts_with("mod ") {
            let name: String = rest[4..].chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect();
            if rest[4 + name.len()..].trim_start().starts_with('{') {
                inline.push((name, depth));
            }
        } else if boundary && (rest.starts_with("crate::") || rest.starts_with("super::")) {
            let line = code[..i].matches('\n').count() + 1;
            let segments = words(i);
            let mut path: Vec<String> = module.iter().cloned().chain(inline.iter().map(|(n, _)| n.clone())).collect();
            let climbed = match segments.first() {
                Some(&"crate") => {
                    path.clear();
                    1
                }
                _ => {
                    let supers = segments.iter().take_while(|w| **w == "super").count();
                    path.truncate(path.len().saturating_sub(supers));
                    supers
                }
            };
            let next = segments.get(climbed).copied().unwrap_or("");
            let wing = match path.first() {
                Some(wing) => Some(wing.clone()),
                None => ORDER
                    .iter()
                    .find(|w| **w == next)
                    .map(|w| (*w).to_owned())
                    .or_else(|| ROOT_ITEMS.iter().find(|(item, _)| *item == next).map(|(_, w)| (*w).to_owned())),
            };
            if let Some(wing) = wing {
                found.push((line, wing, segments.join("::")));
            }
            i += segments.iter().map(|s| s.len() + 2).sum::<usize>() - 2;
            continue;
        }
        i += rest.chars().next().unwrap().len_utf8();
    }
    found
}

#[test]
fn every_path_into_the_crate_runs_downward_in_the_order_the_readme_names() {
    let readme = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("../README.md")).unwrap();
    let named = format!("`{}`", ORDER.join("` → `"));
    assert!(readme.contains(&named), "the README's design section names the order as {named}");

    let src = host_src();
    let mut wings: Vec<String> = std::fs::read_dir(&src)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|name| !name.ends_with(".rs"))
        .collect();
    wings.sort();
    let mut ordered: Vec<String> = ORDER.iter().map(|w| (*w).to_owned()).collect();
    ordered.sort();
    assert_eq!(wings, ordered, "every folder of host/src is a wing of the order, and every wing a folder");

    let mut files = Vec::new();
    rust_files(&src, &mut files);
    let (mut upward, mut paths) = (Vec::new(), 0);
    for file in files.iter().filter(|f| !f.ends_with("main.rs")) {
        let relative = file.strip_prefix(&src).unwrap();
        let module = module_of(relative);
        // The crate's root sits above every wing.
        let rank = module.first().map_or(0, |wing| 1 + ORDER.iter().position(|w| w == wing).unwrap());
        for (line, wing, path) in reaches(&module, &code_of(&std::fs::read_to_string(file).unwrap())) {
            paths += 1;
            let reached = 1 + ORDER.iter().position(|w| *w == wing).unwrap();
            if reached < rank {
                upward.push(format!("{}:{line} reaches up to {wing}: {path}", relative.display()));
            }
        }
    }
    assert!(paths > 1000, "the paths into the crate were found ({paths})");
    assert!(upward.is_empty(), "paths running upward:\n{}", upward.join("\n"));
}

#[test]
fn the_check_sees_inline_paths_super_chains_and_inline_modules() {
    let module = vec!["store".to_owned(), "users".to_owned()];
    let code = code_of(
        "use crate::kernel::ids;\n\
         fn f() { let _ = crate::oauth::tokens::issuer(\"crate::http\"); } // crate::http\n\
         mod tests { use super::super::super::runtime::cache; }\n\
         use super::super::protection;\n\
         const C: char = '{'; const Q: char = '\\''; const R: &str = r#\"crate::http\"#;\n\
         use crate::Services;\n",
    );
    let reached: Vec<(usize, String)> = reaches(&module, &code).into_iter().map(|(l, w, _)| (l, w)).collect();
    assert_eq!(
        reached,
        [
            (1, "kernel".to_owned()),
            (2, "oauth".to_owned()),
            (3, "runtime".to_owned()),
            (4, "protection".to_owned()),
            (6, "application".to_owned()),
        ]
    );
}

/// The lines of the Rust files under `dir`.
fn lines_under(dir: &Path) -> usize {
    let mut files = Vec::new();
    rust_files(dir, &mut files);
    files.iter().map(|file| std::fs::read_to_string(file).unwrap().lines().count()).sum()
}

#[test]
fn the_house_keeps_its_measures() {
    let src = host_src();
    let entries = std::fs::read_dir(&src).unwrap().count();
    assert!(entries <= 12, "host/src holds {entries} entries: at most 12, the wings and the crate's root files");
    let root = std::fs::read_to_string(src.join("lib.rs")).unwrap().lines().count();
    assert!(root <= 60, "lib.rs is {root} lines: at most 60");

    // The application's state is the HTTP edge's and start-up's alone: the rest takes the context
    // and the services it needs.
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    let naming: Vec<String> = files
        .iter()
        .map(|file| file.strip_prefix(&src).unwrap().to_owned())
        .filter(|relative| !relative.starts_with("http") && !relative.starts_with("application"))
        .filter(|relative| code_of(&std::fs::read_to_string(src.join(relative)).unwrap()).contains("AppState"))
        .map(|relative| relative.display().to_string())
        .collect();
    assert!(naming.is_empty(), "files outside the HTTP edge and start-up that name AppState: {naming:?}");

    // The HTTP edge reads requests and writes answers; what it asks for is done in the wings below.
    let (edge, all) = (lines_under(&src.join("http")), lines_under(&src));
    assert!(edge * 4 <= all, "host/src/http holds {edge} of the host's {all} lines: at most a quarter");
}
