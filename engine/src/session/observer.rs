//! The sandbox observer: snapshots of the observed directories (paths, sizes, content
//! hashes, link targets), so a check can say what a call changed.

use crate::judge::fs::{Entry, Snapshot};
use sha2::{Digest, Sha256};
use std::collections::HashMap;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

/// At most this many entries are recorded per snapshot.
const MAX_ENTRIES: usize = 20_000;
/// Files larger than this are compared by size and modification time only.
const MAX_HASHED: u64 = 64 * 1024 * 1024;

pub struct Observer {
    dirs: Vec<(&'static str, PathBuf)>,
    /// Content hashes by (device, inode, size, mtime), so unchanged files are not re-read.
    cache: HashMap<(u64, u64, u64, i64, i64), String>,
}

impl Observer {
    pub fn new(dirs: Vec<(&'static str, PathBuf)>) -> Observer {
        Observer { dirs, cache: HashMap::new() }
    }

    pub fn snapshot(&mut self) -> Snapshot {
        let mut snap = Snapshot::new();
        let dirs = self.dirs.clone();
        for (name, dir) in &dirs {
            self.walk(name, dir, dir, &mut snap);
        }
        snap
    }

    fn walk(&mut self, name: &str, base: &Path, dir: &Path, snap: &mut Snapshot) {
        let Ok(entries) = std::fs::read_dir(dir) else { return };
        let mut entries: Vec<_> = entries.flatten().collect();
        entries.sort_by_key(|e| e.file_name());
        for e in entries {
            if snap.len() >= MAX_ENTRIES {
                return;
            }
            let path = e.path();
            let rel = path.strip_prefix(base).unwrap_or(&path).to_string_lossy().into_owned();
            let key = format!("{name}/{rel}");
            let Ok(meta) = std::fs::symlink_metadata(&path) else { continue };
            if meta.file_type().is_symlink() {
                let target = std::fs::read_link(&path).map(|t| t.to_string_lossy().into_owned()).unwrap_or_default();
                snap.insert(key, Entry::Link { target });
            } else if meta.is_dir() {
                snap.insert(key, Entry::Dir);
                self.walk(name, base, &path, snap);
            } else {
                let hash = self.hash(&path, &meta);
                snap.insert(key, Entry::File { size: meta.len(), hash });
            }
        }
    }

    fn hash(&mut self, path: &Path, meta: &std::fs::Metadata) -> String {
        let id = (meta.dev(), meta.ino(), meta.len(), meta.mtime(), meta.mtime_nsec());
        if let Some(h) = self.cache.get(&id) {
            return h.clone();
        }
        // A FIFO or device would block a read (a hostile server can plant one).
        let h = if !meta.is_file() {
            "special file".to_string()
        } else if meta.len() > MAX_HASHED {
            format!("unhashed:{}:{}", meta.mtime(), meta.mtime_nsec())
        } else {
            match crate::targets::sandbox::read_regular(path, MAX_HASHED) {
                Some(bytes) => format!("{:x}", Sha256::digest(&bytes)),
                None => "unreadable".to_string(),
            }
        };
        self.cache.insert(id, h.clone());
        h
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A FIFO a server planted is recorded, not read: reading it would block the run.
    #[test]
    fn a_fifo_in_an_observed_directory_is_not_read() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("pipe");
        let made = std::process::Command::new("mkfifo").arg(&fifo).status().unwrap();
        assert!(made.success());
        let snap = Observer::new(vec![("{sandbox}", dir.path().to_path_buf())]).snapshot();
        assert_eq!(snap.get("{sandbox}/pipe"), Some(&Entry::File { size: 0, hash: "special file".into() }));
    }
}
