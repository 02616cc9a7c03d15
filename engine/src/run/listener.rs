//! The loopback listener: a TCP port only the harness owns, counting every connection.
//! The net pack will give it a full HTTP recorder; the effects pack needs only to
//! know whether anything connected during a call.

use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

pub struct Listener {
    pub port: u16,
    hits: Arc<AtomicU32>,
    task: tokio::task::JoinHandle<()>,
}

impl Listener {
    pub async fn start() -> std::io::Result<Listener> {
        let socket = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
        let port = socket.local_addr()?.port();
        let hits = Arc::new(AtomicU32::new(0));
        let counter = hits.clone();
        let task = tokio::spawn(async move {
            while let Ok((mut conn, _)) = socket.accept().await {
                counter.fetch_add(1, Ordering::SeqCst);
                tokio::spawn(async move {
                    let mut buf = [0u8; 4096];
                    let _ = tokio::time::timeout(std::time::Duration::from_secs(2), conn.read(&mut buf)).await;
                    let _ =
                        conn.write_all(b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\nconnection: close\r\n\r\nok").await;
                });
            }
        });
        Ok(Listener { port, hits, task })
    }

    /// `{listener}`: the base URL.
    pub fn url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    /// Connections seen so far.
    pub fn hits(&self) -> u32 {
        self.hits.load(Ordering::SeqCst)
    }
}

impl Drop for Listener {
    fn drop(&mut self) {
        self.task.abort();
    }
}
