//! Warm-server latency: starts `maguyva mcp` on a repository (this one by
//! default, or the folder given after `--`), makes two rounds of 1,000
//! `search` calls (default preset, k = 10) from a real MCP client over
//! stdio, and prints each round's client-side p50 and p95 and the server's
//! resident memory after it. The queries cycle through a built-in mix, or
//! through the lines of a file given second.
//!
//! ```sh
//! cargo bench -p maguyva-cli --bench mcp_calls -- /path/to/repo [queries.txt]
//! ```

use rmcp::ServiceExt;
use rmcp::model::CallToolRequestParams;
use rmcp::transport::{ConfigureCommandExt, TokioChildProcess};
use std::path::PathBuf;
use std::time::Instant;

const CALLS: usize = 1000;

const QUERIES: [&str; 8] = [
    "how are errors reported to the caller",
    "where is the configuration read",
    "parse",
    "who calls open",
    "how does the cache expire entries",
    "write the file atomically",
    "what breaks if I change the index format",
    "retry with backoff",
];

fn percentile(sorted: &[f64], p: f64) -> f64 {
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted.get(i).copied().unwrap_or(f64::NAN)
}

/// The resident memory of a process, in KiB, from /proc (Linux).
fn rss_kib(pid: u32) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = status.lines().find(|l| l.starts_with("VmRSS:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).filter(|a| !a.starts_with('-')).collect();
    let root = args
        .first()
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(".."));
    let queries: Vec<String> = match args.get(1) {
        Some(file) => std::fs::read_to_string(file)?
            .lines()
            .filter(|l| !l.trim().is_empty())
            .map(str::to_string)
            .collect(),
        None => QUERIES.iter().map(|q| q.to_string()).collect(),
    };
    if queries.is_empty() {
        return Err("no queries".into());
    }
    let transport = TokioChildProcess::new(
        tokio::process::Command::new(env!("CARGO_BIN_EXE_maguyva")).configure(|cmd| {
            cmd.arg("mcp").arg("--path").arg(&root);
        }),
    )?;
    let pid = transport.id();
    let client = ().serve(transport).await?;
    println!(
        "mcp search calls on {} (default preset, k = 10, {} queries)",
        root.display(),
        queries.len()
    );
    for round in 1..=2 {
        let mut ms = Vec::with_capacity(CALLS);
        for i in 0..CALLS {
            let args = serde_json::json!({ "query": queries[i % queries.len()], "k": 10 });
            let params = CallToolRequestParams::new("search")
                .with_arguments(args.as_object().cloned().unwrap_or_default());
            let t = Instant::now();
            let result = client.call_tool(params).await?;
            ms.push(t.elapsed().as_secs_f64() * 1000.0);
            if result.is_error == Some(true) {
                return Err(format!("call {i} failed: {:?}", result.content).into());
            }
        }
        ms.sort_by(f64::total_cmp);
        let rss = pid.and_then(rss_kib).map_or("unknown".to_string(), |k| format!("{k} KiB"));
        println!(
            "round {round}: {CALLS} calls, p50 {:.2} ms, p95 {:.2} ms, max {:.2} ms; server RSS {rss}",
            percentile(&ms, 0.5),
            percentile(&ms, 0.95),
            ms.last().copied().unwrap_or(f64::NAN),
        );
    }
    client.cancel().await?;
    Ok(())
}
