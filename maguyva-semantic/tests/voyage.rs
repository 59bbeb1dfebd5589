use maguyva_semantic::{Embedder, Error, Role, Vectors, VoyageClient, VoyageConfig};
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// One request as the server saw it.
#[derive(Debug, Clone)]
struct Seen {
    request_line: String,
    authorization: String,
    body: serde_json::Value,
}

type Responder = dyn Fn(&Seen, usize) -> (u16, String) + Send + Sync;

/// An HTTP server on 127.0.0.1 that records requests and answers with
/// `respond(request, attempt number)`.
struct Server {
    url: String,
    seen: Arc<Mutex<Vec<Seen>>>,
}

impl Server {
    fn start(respond: Box<Responder>) -> Server {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind loopback");
        let url = format!("http://{}", listener.local_addr().expect("address"));
        let seen: Arc<Mutex<Vec<Seen>>> = Arc::default();
        let log = seen.clone();
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(mut stream) = stream else { continue };
                let mut reader = BufReader::new(stream.try_clone().expect("clone"));
                let mut request_line = String::new();
                if reader.read_line(&mut request_line).is_err() {
                    continue;
                }
                let (mut length, mut authorization) = (0usize, String::new());
                loop {
                    let mut line = String::new();
                    if reader.read_line(&mut line).unwrap_or(0) == 0 || line == "\r\n" {
                        break;
                    }
                    let lower = line.to_ascii_lowercase();
                    if let Some(v) = lower.strip_prefix("content-length:") {
                        length = v.trim().parse().unwrap_or(0);
                    }
                    if lower.starts_with("authorization:") {
                        authorization = line["authorization:".len()..].trim().to_string();
                    }
                }
                let mut body = vec![0u8; length];
                reader.read_exact(&mut body).expect("body");
                let seen = Seen {
                    request_line: request_line.trim().to_string(),
                    authorization,
                    body: serde_json::from_slice(&body).unwrap_or(serde_json::Value::Null),
                };
                let attempt = {
                    let mut log = log.lock().expect("lock");
                    log.push(seen.clone());
                    log.len()
                };
                let (status, text) = respond(&seen, attempt);
                let response = format!(
                    "HTTP/1.1 {status} X\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{text}",
                    text.len()
                );
                let _ = stream.write_all(response.as_bytes());
            }
        });
        Server { url, seen }
    }

    fn seen(&self) -> Vec<Seen> {
        self.seen.lock().expect("lock").clone()
    }
}

/// A well-formed answer for a request: input `i` gets bytes `i, i+1, ...`.
fn embeddings_for(seen: &Seen, bytes: usize) -> String {
    let n = seen.body["input"].as_array().map_or(0, Vec::len);
    let data: Vec<serde_json::Value> = (0..n)
        .map(|i| serde_json::json!({"object": "embedding", "index": i, "embedding": (0..bytes).map(|j| (i + j) % 256).collect::<Vec<_>>()}))
        .collect();
    serde_json::json!({"object": "list", "data": data, "model": "voyage-code-3", "usage": {"total_tokens": 10}}).to_string()
}

fn client(url: &str, dimension: usize) -> VoyageClient {
    let mut config = VoyageConfig::new("test-key");
    config.base_url = url.to_string();
    config.dimension = dimension;
    config.backoff = Duration::from_millis(1);
    VoyageClient::new(config).expect("client")
}

#[test]
fn request_shape_and_packed_answer() {
    let server = Server::start(Box::new(|s, _| (200, embeddings_for(s, 32))));
    let c = client(&server.url, 256);
    let v = c.embed(&["fn a() {}", "fn b() {}"], Role::Document).expect("embeds");
    let Vectors::Binary { bits, words } = v else { panic!("binary vectors") };
    assert_eq!(bits, 256);
    assert_eq!(words.len(), 2 * 4);
    // Input 1's first 8 bytes are 1..=8, little-endian in the first word.
    assert_eq!(words[4], u64::from_le_bytes([1, 2, 3, 4, 5, 6, 7, 8]));
    c.embed(&["how is a connection opened"], Role::Query).expect("embeds");
    let seen = server.seen();
    assert_eq!(seen.len(), 2);
    assert_eq!(seen[0].request_line, "POST /v1/embeddings HTTP/1.1");
    assert_eq!(seen[0].authorization, "Bearer test-key");
    let body = &seen[0].body;
    assert_eq!(body["model"], "voyage-code-3");
    assert_eq!(body["input_type"], "document");
    assert_eq!(body["output_dtype"], "ubinary");
    assert_eq!(body["output_dimension"], 256);
    assert_eq!(body["input"], serde_json::json!(["fn a() {}", "fn b() {}"]));
    assert_eq!(seen[1].body["input_type"], "query");
    assert_eq!(c.identity(), "voyage:voyage-code-3:ubinary:256");
}

#[test]
fn batches_by_count_and_by_tokens() {
    let server = Server::start(Box::new(|s, _| (200, embeddings_for(s, 64))));
    let c = client(&server.url, 512);
    let many: Vec<String> = (0..2_500).map(|i| format!("fn f{i}() {{}}")).collect();
    let refs: Vec<&str> = many.iter().map(String::as_str).collect();
    assert_eq!(c.embed(&refs, Role::Document).expect("embeds").len(), 2_500);
    let counts: Vec<usize> =
        server.seen().iter().map(|s| s.body["input"].as_array().map_or(0, Vec::len)).collect();
    assert_eq!(counts, vec![1000, 1000, 500]);

    let server = Server::start(Box::new(|s, _| (200, embeddings_for(s, 64))));
    let c = client(&server.url, 512);
    // About 50,000 estimated tokens each: at most two fit under 120,000.
    let big = "x".repeat(150_000);
    let texts = vec![big.as_str(); 5];
    assert_eq!(c.embed(&texts, Role::Document).expect("embeds").len(), 5);
    let counts: Vec<usize> =
        server.seen().iter().map(|s| s.body["input"].as_array().map_or(0, Vec::len)).collect();
    assert_eq!(counts, vec![2, 2, 1]);
}

#[test]
fn retries_on_429_and_5xx() {
    let server = Server::start(Box::new(|s, attempt| match attempt {
        1 => (429, r#"{"detail":"rate limited"}"#.to_string()),
        2 => (503, r#"{"detail":"busy"}"#.to_string()),
        _ => (200, embeddings_for(s, 32)),
    }));
    let c = client(&server.url, 256);
    assert_eq!(c.embed(&["x"], Role::Document).expect("embeds after retries").len(), 1);
    assert_eq!(server.seen().len(), 3);
}

#[test]
fn unauthorized_is_a_clear_error_without_retry() {
    let server = Server::start(Box::new(|_, _| (401, r#"{"detail":"bad key"}"#.to_string())));
    let c = client(&server.url, 256);
    let err = c.embed(&["x"], Role::Document).expect_err("401 fails");
    assert!(matches!(err, Error::Unauthorized), "{err}");
    assert!(err.to_string().contains("VOYAGE_API_KEY"));
    assert_eq!(server.seen().len(), 1);
}

#[test]
fn malformed_answers_and_bad_dimensions_are_errors() {
    let server = Server::start(Box::new(|_, _| {
        (200, r#"{"data":[{"index":0,"embedding":[1,2,3]}]}"#.to_string())
    }));
    let err = client(&server.url, 256).embed(&["x"], Role::Document).expect_err("wrong size");
    assert!(err.to_string().contains("malformed response"), "{err}");
    let server = Server::start(Box::new(|_, _| (200, "not json".to_string())));
    assert!(client(&server.url, 256).embed(&["x"], Role::Document).is_err());
    let server =
        Server::start(Box::new(|_, _| (400, r#"{"detail":"input too long"}"#.to_string())));
    let err = client(&server.url, 256).embed(&["x"], Role::Document).expect_err("400 fails");
    assert!(err.to_string().contains("HTTP 400"), "{err}");
    let mut config = VoyageConfig::new("k");
    config.dimension = 300;
    assert!(VoyageClient::new(config).is_err());
}
