//! The fuzz corpora's replay as ordinary tests, shared by the two crates that replay them:
//! tests/fuzz_corpus.rs (`wire_decode`, `store`) and server/tests/fuzz_corpus.rs
//! (`server_respond`). Each includes this file as `mod corpus` and defines `fuzz_dir()`, the path
//! of fuzz/.

use std::fs;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::PathBuf;

use super::fuzz_dir;

/// The files of `fuzz/<kind>/<target>/` (dotfiles skipped), sorted.
pub fn files(kind: &str, target: &str) -> Vec<PathBuf> {
    let Ok(entries) = fs::read_dir(fuzz_dir().join(kind).join(target)) else {
        return Vec::new();
    };
    let mut out: Vec<PathBuf> = entries
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.is_file())
        .filter(|p| {
            !p.file_name()
                .is_some_and(|n| n.to_string_lossy().starts_with('.'))
        })
        .collect();
    out.sort();
    out
}

/// Runs every corpus and regression file of `target`; fails listing every file that panicked.
pub fn replay(target: &str, run: fn(&[u8])) {
    let corpus = files("corpus", target);
    assert!(!corpus.is_empty(), "fuzz/corpus/{target}/ is empty");
    let all: Vec<PathBuf> = corpus
        .into_iter()
        .chain(files("regressions", target))
        .collect();
    let failures: Vec<String> = all
        .iter()
        .filter_map(|path| {
            let data = fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            catch_unwind(AssertUnwindSafe(|| run(&data)))
                .err()
                .map(|panic| {
                    let why = panic
                        .downcast_ref::<String>()
                        .cloned()
                        .or_else(|| panic.downcast_ref::<&str>().map(|s| (*s).to_owned()))
                        .unwrap_or_default();
                    format!("{}: {why}", path.display())
                })
        })
        .collect();
    println!(
        "fuzz corpus {target}: {} inputs, {} failed",
        all.len(),
        failures.len()
    );
    assert!(
        failures.is_empty(),
        "{} of {} inputs failed:\n{}",
        failures.len(),
        all.len(),
        failures.join("\n")
    );
}

/// Replaces the seeds of `fuzz/corpus/<target>/` with `seeds` (name, bytes).
pub fn write_seeds(target: &str, seeds: &[(String, Vec<u8>)]) {
    let dir = fuzz_dir().join("corpus").join(target);
    fs::create_dir_all(&dir).expect("corpus dir");
    for old in files("corpus", target) {
        fs::remove_file(old).expect("remove an old seed");
    }
    for (name, bytes) in seeds {
        fs::write(dir.join(name), bytes).expect("write a seed");
    }
    let total: usize = seeds.iter().map(|(_, b)| b.len()).sum();
    println!("fuzz/corpus/{target}: {} seeds, {total} bytes", seeds.len());
}
