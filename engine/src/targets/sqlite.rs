//! The seeded SQLite file (`{sqlite}`) and its pristine copy, kept under the sandbox
//! directory but outside the observed directories.

use crate::targets::sandbox::Sandbox;
use rusqlite::Connection;
use std::path::{Path, PathBuf};

/// Creates the seeded file and its pristine copy under the sandbox directory (outside
/// the observed directories); returns the file's path.
pub fn seed(sandbox: &Sandbox) -> Result<PathBuf, String> {
    let dir = sandbox.base().join("sqlite");
    std::fs::create_dir_all(&dir).map_err(|e| e.to_string())?;
    let path = dir.join("seed.sqlite");
    let conn = Connection::open(&path).map_err(|e| e.to_string())?;
    conn.execute_batch(
        "CREATE TABLE customers (id INTEGER PRIMARY KEY, name TEXT NOT NULL, email TEXT NOT NULL, tenant TEXT NOT NULL);
         WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 100)
         INSERT INTO customers SELECT i, 'Customer ' || i, 'customer' || i || '@seed.sealmark.invalid',
                CASE WHEN i % 2 = 0 THEN 'tenant_a' ELSE 'tenant_b' END FROM n;
         CREATE TABLE probe_t (id INTEGER, v TEXT);",
    )
    .map_err(|e| e.to_string())?;
    drop(conn);
    std::fs::copy(&path, pristine(&path)).map_err(|e| e.to_string())?;
    Ok(path)
}

pub fn pristine(path: &Path) -> PathBuf {
    path.with_extension("pristine")
}
