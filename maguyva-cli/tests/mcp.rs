use crate::util::Repo;
use rmcp::model::{CallToolRequestParams, CallToolResult};
use rmcp::transport::{ConfigureCommandExt, TokioChildProcess};
use rmcp::{Peer, RoleClient, ServiceExt};
use serde_json::{Value, json};
use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};

const TOOLS: [&str; 8] = [
    "find_definition",
    "find_references",
    "find_similar",
    "impact",
    "index_status",
    "locate",
    "read",
    "search",
];

fn args(v: Value) -> CallToolRequestParams {
    CallToolRequestParams::new("").with_arguments(v.as_object().cloned().unwrap_or_default())
}

fn call(name: &'static str, v: Value) -> CallToolRequestParams {
    let mut p = args(v);
    p.name = name.into();
    p
}

fn paths(result: &CallToolResult) -> Vec<String> {
    result
        .structured_content
        .as_ref()
        .and_then(|v| v["results"].as_array())
        .map_or_else(Vec::new, |rs| {
            rs.iter().filter_map(|r| r["path"].as_str().map(str::to_string)).collect()
        })
}

fn text(result: &CallToolResult) -> String {
    result.content.iter().filter_map(|c| c.as_text().map(|t| t.text.clone())).collect()
}

/// Calls `tool` until its first result is `path`, as it is once the index
/// is refreshed; fails after 30 s.
async fn until_first(client: &Peer<RoleClient>, tool: &'static str, v: Value, path: &str) {
    let started = std::time::Instant::now();
    loop {
        let r = client.call_tool(call(tool, v.clone())).await.unwrap();
        if paths(&r).first().map(String::as_str) == Some(path) {
            return;
        }
        assert!(started.elapsed().as_secs() < 30, "the edit was never seen: {:?}", paths(&r));
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_lists_and_calls_every_tool_and_sees_edits() {
    let repo = Repo::fixture("python");
    let root = repo.path().to_path_buf();
    let transport = TokioChildProcess::new(
        tokio::process::Command::new(env!("CARGO_BIN_EXE_maguyva")).configure(|cmd| {
            cmd.arg("mcp").current_dir(&root);
        }),
    )
    .unwrap();
    let client = ().serve(transport).await.unwrap();
    let info = client.peer_info().unwrap();
    assert_eq!(info.server_info.as_ref().map(|s| s.name.as_str()), Some("maguyva"));
    assert!(info.instructions.as_deref().unwrap_or("").contains("find_definition"));

    let mut names: Vec<String> =
        client.list_all_tools().await.unwrap().into_iter().map(|t| t.name.to_string()).collect();
    names.sort();
    assert_eq!(names, TOOLS);

    let r = client
        .call_tool(call(
            "search",
            json!({"query": "reduce a price by a percentage discount", "k": 3}),
        ))
        .await
        .unwrap();
    assert_eq!(r.is_error, Some(false));
    assert_eq!(paths(&r).first().map(String::as_str), Some("shop/pricing.py"));
    assert!(text(&r).starts_with("shop/pricing.py:"));
    let first = &r.structured_content.as_ref().unwrap()["results"][0];
    assert!(first["ranks"].is_object() && first["start_line"].is_u64());
    // An answer an agent can afford unless told otherwise.
    assert_eq!(r.structured_content.as_ref().unwrap()["budget"]["max_tokens"], 2000);
    // More than one piece of a file when asked.
    let r = client
        .call_tool(call(
            "search",
            json!({"query": "price discount percentage", "k": 1, "per_file": 3}),
        ))
        .await
        .unwrap();
    assert_eq!(r.is_error, Some(false), "{}", text(&r));
    let shown = paths(&r);
    assert!(!shown.is_empty() && shown.len() <= 3 && shown.iter().all(|p| p == &shown[0]));

    // A bug report, whole, finds the file to change, with what ties it.
    let report = "Restocking with a lower-case product code crashes\n\nWhen a clerk adds units \
        for a product code written in lower case, the screen goes down instead of saying the \
        code is wrong.\n\nTraceback (most recent call last):\n  File \"/srv/app/shop/inventory.py\", \
        line 16, in restock\nKeyError: 'abc'\n";
    let r = client.call_tool(call("locate", json!({"report": report, "k": 3}))).await.unwrap();
    assert_eq!(r.is_error, Some(false), "{}", text(&r));
    assert_eq!(paths(&r).first().map(String::as_str), Some("shop/inventory.py"));
    assert!(
        text(&r).contains("tied by: frame /srv/app/shop/inventory.py (line 16)"),
        "{}",
        text(&r)
    );
    let first = &r.structured_content.as_ref().unwrap()["results"][0];
    assert_eq!(first["ties"][0]["kind"], "frame");
    let r = client.call_tool(call("locate", json!({"report": "x".repeat(70_000)}))).await.unwrap();
    assert_eq!(r.is_error, Some(true));
    assert!(text(&r).contains("the limit is 65536"), "{}", text(&r));

    let r =
        client.call_tool(call("find_definition", json!({"name": "apply_discount"}))).await.unwrap();
    assert_eq!(paths(&r).first().map(String::as_str), Some("shop/pricing.py"));

    let r =
        client.call_tool(call("find_references", json!({"name": "total_with_tax"}))).await.unwrap();
    assert!(paths(&r).contains(&"shop/cart.py".to_string()), "{:?}", paths(&r));

    let r = client
        .call_tool(call("impact", json!({"target": "shop/pricing.py", "depth": 2})))
        .await
        .unwrap();
    assert!(paths(&r).contains(&"shop/cart.py".to_string()), "{:?}", paths(&r));

    let r = client
        .call_tool(call(
            "find_similar",
            json!({"path": "shop/pricing.py", "start_line": 6, "end_line": 9}),
        ))
        .await
        .unwrap();
    assert_eq!(r.is_error, Some(false));
    assert!(!paths(&r).is_empty());

    let r = client
        .call_tool(call("read", json!({"path": "shop/pricing.py", "start_line": 2, "end_line": 3})))
        .await
        .unwrap();
    let read = r.structured_content.unwrap();
    let source = std::fs::read_to_string(root.join("shop/pricing.py")).unwrap();
    let lines: Vec<&str> = source.lines().skip(1).take(2).collect();
    assert_eq!(read["text"], lines.join("\n"));

    let r = client.call_tool(call("index_status", json!({}))).await.unwrap();
    let status = r.structured_content.unwrap();
    assert_eq!(status["current"], true);
    assert!(status["files"].as_u64().unwrap() >= 5);

    // Tool errors are results with a message, and the server carries on.
    let r = client.call_tool(call("read", json!({"path": "../outside.txt"}))).await.unwrap();
    assert_eq!(r.is_error, Some(true));
    assert!(text(&r).contains("outside.txt"));
    let r =
        client.call_tool(call("search", json!({"query": "x", "preset": "turbo"}))).await.unwrap();
    assert_eq!(r.is_error, Some(true));

    // A budget bounds the answer.
    let r = client
        .call_tool(call("search", json!({"query": "how are orders shipped", "max_tokens": 40})))
        .await
        .unwrap();
    let budget = &r.structured_content.as_ref().unwrap()["budget"];
    assert!(budget["used_tokens"].as_u64().unwrap() <= 40);

    // An edit is seen by the next call.
    repo.write(
        "shop/returns.py",
        "def refund_damaged_parcel(order):\n    \"\"\"Refunds a parcel that arrived damaged.\"\"\"\n    return order\n",
    );
    // The watcher refreshes the index after a quiet spell; until then the
    // answer comes from the index before the edit.
    let find = json!({"name": "refund_damaged_parcel"});
    until_first(&client, "find_definition", find, "shop/returns.py").await;

    // An edit that keeps the file's size and time is found when a search
    // reads the file; the file is left out of that answer, and the refresh
    // it starts reads every file, so a later call sees the new text.
    let path = root.join("shop/pricing.py");
    let modified = std::fs::metadata(&path).unwrap().modified().unwrap();
    let text = std::fs::read_to_string(&path).unwrap();
    std::fs::write(&path, text.replace("never below zero", "never below null")).unwrap();
    std::fs::File::options().write(true).open(&path).unwrap().set_modified(modified).unwrap();
    let r =
        client.call_tool(call("search", json!({"query": "\"never below zero\""}))).await.unwrap();
    assert!(!paths(&r).contains(&"shop/pricing.py".to_string()), "{:?}", paths(&r));
    until_first(&client, "search", json!({"query": "\"never below null\""}), "shop/pricing.py")
        .await;
    let r = client.call_tool(call("index_status", json!({}))).await.unwrap();
    assert_eq!(r.structured_content.unwrap()["watching"], true);
    client.cancel().await.unwrap();
}

#[test]
fn malformed_requests_get_errors_and_the_server_carries_on() {
    let repo = Repo::fixture("python");
    let mut child = Command::new(env!("CARGO_BIN_EXE_maguyva"))
        .arg("mcp")
        .current_dir(repo.path())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let mut out = BufReader::new(child.stdout.take().unwrap());
    let mut send = |line: &str| writeln!(stdin, "{line}").unwrap();
    let mut answer = || {
        let mut line = String::new();
        out.read_line(&mut line).unwrap();
        serde_json::from_str::<Value>(&line).unwrap()
    };
    send(
        r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#,
    );
    assert_eq!(answer()["id"], 1);
    send(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#);
    // Every malformed line is answered as JSON-RPC 2.0 says.
    send("this is not JSON");
    let a = answer();
    assert_eq!((a["error"]["code"].as_i64(), &a["id"]), (Some(-32700), &Value::Null), "{a}");
    send(r#"{"jsonrpc":"2.0","id":11}"#);
    let a = answer();
    assert_eq!((a["error"]["code"].as_i64(), &a["id"]), (Some(-32600), &json!(11)), "{a}");
    send(r#"[]"#);
    let a = answer();
    assert_eq!((a["error"]["code"].as_i64(), &a["id"]), (Some(-32600), &Value::Null), "{a}");
    send(r#"{"jsonrpc":"2.0","id":"twelve","method":"tools/call","params":"search"}"#);
    let a = answer();
    assert_eq!((a["error"]["code"].as_i64(), &a["id"]), (Some(-32602), &json!("twelve")), "{a}");
    send(
        r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"no_such_tool","arguments":{}}}"#,
    );
    let a = answer();
    assert_eq!(a["id"], 2);
    assert!(a["error"]["message"].is_string(), "{a}");
    send(
        r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"search","arguments":{"k":"ten"}}}"#,
    );
    let a = answer();
    assert_eq!(a["id"], 3);
    assert!(a["error"].is_object() || a["result"]["isError"] == true, "{a}");
    send(
        r#"{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"search","arguments":{"query":"apply discount"}}}"#,
    );
    let a = answer();
    assert_eq!(a["id"], 4);
    assert_eq!(a["result"]["isError"], false, "{a}");
    let _ = child.kill();
    let _ = child.wait();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_printed_config_starts_a_server_from_anywhere() {
    let repo = Repo::fixture("python");
    let elsewhere = tempfile::tempdir().unwrap();
    let run = crate::util::run_in(
        elsewhere.path(),
        &["mcp", "--print-config", "vscode", "--path", repo.path().to_str().unwrap()],
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(run.stderr.contains(".vscode/mcp.json"), "{}", run.stderr);
    let config: Value = serde_json::from_str(&run.stdout).unwrap();
    let server = &config["servers"]["maguyva"];
    assert_eq!(server["type"], "stdio");
    let args: Vec<String> = server["args"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a.as_str().unwrap().to_string())
        .collect();
    // Started as the agent would, from a folder of its own.
    let transport = TokioChildProcess::new(
        tokio::process::Command::new(server["command"].as_str().unwrap()).configure(|cmd| {
            cmd.args(&args).current_dir(elsewhere.path());
        }),
    )
    .unwrap();
    let client = ().serve(transport).await.unwrap();
    let r = client.call_tool(call("index_status", json!({}))).await.unwrap();
    let status = r.structured_content.unwrap();
    let root = repo.path().canonicalize().unwrap();
    assert_eq!(status["root"], root.display().to_string());
    let r =
        client.call_tool(call("find_definition", json!({"name": "apply_discount"}))).await.unwrap();
    assert_eq!(paths(&r).first().map(String::as_str), Some("shop/pricing.py"));
    client.cancel().await.unwrap();
    let bad = crate::util::run_in(elsewhere.path(), &["mcp", "--print-config", "emacs"]);
    assert_eq!(bad.code, 2);
    assert!(bad.stderr.contains("claude-code"), "{}", bad.stderr);
}

/// A refresh that fails (here: the index folder is replaced by a file, so
/// nothing can be written) is said in every answer (`stale`, with the
/// reason) and by `index_status`, logged whole, and tried again until it
/// succeeds; the server answers from the index as it was meanwhile.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failed_refresh_is_said_in_every_answer_and_retried() {
    let repo = Repo::fixture("python");
    let root = repo.path().to_path_buf();
    let elsewhere = tempfile::tempdir().unwrap();
    let index = elsewhere.path().join("idx");
    let log = elsewhere.path().join("server.log");
    let log_file = std::fs::File::create(&log).unwrap();
    let transport = TokioChildProcess::builder(
        tokio::process::Command::new(env!("CARGO_BIN_EXE_maguyva")).configure(|cmd| {
            cmd.args(["mcp", "--index-dir"]).arg(&index).current_dir(&root);
        }),
    )
    .stderr(Stdio::from(log_file))
    .spawn()
    .unwrap()
    .0;
    let client = ().serve(transport).await.unwrap();
    let search = json!({"query": "reduce a price by a percentage discount", "k": 3});
    let r = client.call_tool(call("search", search.clone())).await.unwrap();
    let answer = r.structured_content.unwrap();
    assert_eq!(answer["stale"], false);
    assert!(answer.get("stale_reason").is_none());

    // The index folder cannot be written any more; an edit asks for a refresh.
    let away = elsewhere.path().join("idx-away");
    std::fs::rename(&index, &away).unwrap();
    std::fs::write(&index, "in the way").unwrap();
    repo.write("shop/returns.py", "def refund_damaged_parcel(order):\n    return order\n");
    let started = std::time::Instant::now();
    let answer = loop {
        let r = client.call_tool(call("search", search.clone())).await.unwrap();
        assert_eq!(r.is_error, Some(false), "{}", text(&r));
        let answer = r.structured_content.clone().unwrap();
        if answer["stale"] == true {
            assert!(text(&r).contains("stale"), "{}", text(&r));
            break answer;
        }
        assert!(started.elapsed().as_secs() < 30, "the failure was never said: {answer}");
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    };
    let reason = answer["stale_reason"].as_str().unwrap().to_string();
    assert!(reason.contains("idx"), "{reason}");
    // The answer comes from the index as it was.
    assert_eq!(answer["results"][0]["path"], "shop/pricing.py");
    let r =
        client.call_tool(call("find_definition", json!({"name": "apply_discount"}))).await.unwrap();
    let content = r.structured_content.as_ref();
    assert_eq!(content.unwrap_or_else(|| panic!("{}", text(&r)))["stale"], true);
    let r = client.call_tool(call("index_status", json!({}))).await.unwrap();
    let status = r.structured_content.clone().unwrap();
    assert_eq!(status["stale"], true);
    assert!(text(&r).contains("the last refresh failed"), "{}", text(&r));
    assert!(!text(&r).contains("being refreshed") || status["refreshing"] == true);
    // The log says it whole: what failed, and why.
    let logged = std::fs::read_to_string(&log).unwrap();
    let line = logged
        .lines()
        .find(|l| l.contains("could not be refreshed"))
        .unwrap_or_else(|| panic!("{logged}"));
    assert!(line.contains(&reason), "{line}");

    // Once the folder can be written again, a retry refreshes the index,
    // with no further edit, and the answers are no longer stale.
    std::fs::remove_file(&index).unwrap();
    std::fs::rename(&away, &index).unwrap();
    let find = json!({"name": "refund_damaged_parcel"});
    until_first(&client, "find_definition", find.clone(), "shop/returns.py").await;
    let r = client.call_tool(call("find_definition", find)).await.unwrap();
    assert_eq!(r.structured_content.unwrap()["stale"], false);
    let r = client.call_tool(call("index_status", json!({}))).await.unwrap();
    assert_eq!(r.structured_content.unwrap()["stale"], false);
    client.cancel().await.unwrap();
}
