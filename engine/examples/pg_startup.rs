//! Benchmark helper (scripts/bench): embedded Postgres start-up and seed time.

use sealmark_engine::targets::{postgres::EmbeddedPg, seed};

#[tokio::main]
async fn main() {
    let runs = std::env::args().nth(1).and_then(|n| n.parse().ok()).unwrap_or(5);
    let mut total = Vec::new();
    for _ in 0..runs {
        let started = std::time::Instant::now();
        let pg = EmbeddedPg::start().expect("the cluster starts");
        let s = seed::create(&pg).await.expect("seeded");
        total.push((pg.startup, s.seeded_in, started.elapsed()));
    }
    total.sort_by_key(|t| t.2);
    let (start, seed, all) = total[total.len() / 2];
    println!(
        "embedded Postgres, {runs} runs (median): start-up {} ms, seed {} ms, together {} ms",
        start.as_millis(),
        seed.as_millis(),
        all.as_millis()
    );
}
