//! Warm-server latency: starts `maguyva mcp` on a repository (this one by
//! default, or the folder given after `--`), makes two rounds of 1,000
//! `search` calls (default preset, k = 10) from a real MCP client over
//! stdio, and prints each round's client-side p50 and p95 and the server's
//! resident memory after it: in all, and the anonymous part (its heap and
//! stacks; the rest is the mapped index and binary, pages the kernel may
//! drop and read again). The queries cycle through a built-in mix, or
//! through the lines of a file given second; `--rounds=N` makes N rounds.
//!
//! `--edit=REL` then measures freshness: five times, it appends a new word
//! to the file REL, and searches for the word every 10 ms until the file is
//! found, printing how long after the write that was; the file is restored
//! after each trial.
//!
//! ```sh
//! cargo bench -p maguyva-cli --bench mcp_calls -- /path/to/repo [queries.txt] [--rounds=N] [--edit=REL]
//! ```

#![forbid(unsafe_code)]

use rmcp::ServiceExt;
use rmcp::model::{CallToolRequestParams, CallToolResult};
use rmcp::transport::{ConfigureCommandExt, TokioChildProcess};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

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

/// A line of a process's /proc status, in KiB (Linux): `VmRSS` for its
/// resident memory, `RssAnon` for the anonymous part of it.
fn status_kib(pid: u32, field: &str) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line =
        status.lines().find(|l| l.strip_prefix(field).is_some_and(|r| r.starts_with(':')))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).filter(|a| !a.starts_with('-')).collect();
    let option =
        |name: &str| std::env::args().find_map(|a| a.strip_prefix(name).map(str::to_string));
    let rounds: usize = option("--rounds=").map_or(Ok(2), |n| n.parse())?;
    let edit = option("--edit=");
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
    for round in 1..=rounds {
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
        let kib = |field| {
            pid.and_then(|p| status_kib(p, field))
                .map_or("unknown".to_string(), |k| format!("{k} KiB"))
        };
        let (rss, anon) = (kib("VmRSS"), kib("RssAnon"));
        println!(
            "round {round}: {CALLS} calls, p50 {:.2} ms, p95 {:.2} ms, max {:.2} ms; server RSS {rss} (anonymous {anon})",
            percentile(&ms, 0.5),
            percentile(&ms, 0.95),
            ms.last().copied().unwrap_or(f64::NAN),
        );
    }
    if let Some(rel) = edit {
        let path = root.join(&rel);
        let original = std::fs::read(&path)?;
        let outcome = freshness(&client, &path, &rel, &original).await;
        std::fs::write(&path, &original)?;
        outcome?;
    }
    client.cancel().await?;
    Ok(())
}

/// The paths of a search answer.
fn paths(result: &CallToolResult) -> Vec<String> {
    let results = result.structured_content.as_ref().and_then(|v| v["results"].as_array());
    results
        .map(|rs| rs.iter().filter_map(|r| r["path"].as_str().map(str::to_string)).collect())
        .unwrap_or_default()
}

/// Five trials of appending a new word to `path` (`rel` in the index) and
/// searching for it until it is found; the file is restored between trials.
async fn freshness(
    client: &rmcp::service::RunningService<rmcp::RoleClient, ()>,
    path: &Path,
    rel: &str,
    original: &[u8],
) -> Result<(), Box<dyn std::error::Error>> {
    let search = |query: String| {
        let args = serde_json::json!({ "query": query, "k": 10 });
        CallToolRequestParams::new("search")
            .with_arguments(args.as_object().cloned().unwrap_or_default())
    };
    for trial in 1..=5 {
        let word = format!("freshnessprobe{}x{trial}", std::process::id());
        let mut edited = original.to_vec();
        edited.extend_from_slice(format!("\n{word}\n").as_bytes());
        std::fs::write(path, &edited)?;
        let written = Instant::now();
        loop {
            if paths(&client.call_tool(search(word.clone())).await?).iter().any(|p| p == rel) {
                break;
            }
            if written.elapsed() > Duration::from_secs(30) {
                return Err(format!("{word} not found 30 s after the write").into());
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        println!(
            "edit {trial}: found {:.0} ms after the write",
            written.elapsed().as_secs_f64() * 1000.0
        );
        std::fs::write(path, original)?;
        // The next trial starts from the restored file, indexed again.
        let restored = Instant::now();
        while paths(&client.call_tool(search(word.clone())).await?).iter().any(|p| p == rel) {
            if restored.elapsed() > Duration::from_secs(30) {
                return Err(format!("{word} still found 30 s after restoring").into());
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    }
    Ok(())
}
