//! The MCP server on arbitrary messages: one server, started once on a small
//! repository, gets each input as one line of its stdio protocol, then a
//! ping; it must answer the ping, whatever the line was (a malformed or
//! unknown request gets an error, and the server carries on).
#![no_main]

use libfuzzer_sys::fuzz_target;
use maguyva_cli::engine::{EmbedderChoice, IndexSettings};
use maguyva_cli::mcp::McpServer;
use maguyva_core::IndexDir;
use std::sync::{Mutex, OnceLock};
use std::time::Duration;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, DuplexStream, Lines, ReadHalf, WriteHalf};
use tokio::runtime::Runtime;

const FILES: [(&str, &str); 3] = [
    ("src/cart.py", "from .pricing import apply_discount\n\nclass Cart:\n    def total(self, prices):\n        return apply_discount(sum(prices))\n"),
    ("src/pricing.py", "TAX_RATE = 20\n\ndef apply_discount(price):\n    \"\"\"Takes the discount off a price.\"\"\"\n    return price - price / 10\n"),
    ("README.md", "# Shop\n\nA cart and its prices.\n"),
];

struct Client {
    runtime: Runtime,
    to_server: WriteHalf<DuplexStream>,
    from_server: Lines<BufReader<ReadHalf<DuplexStream>>>,
    pings: u64,
    _repo: tempfile::TempDir,
}

impl Client {
    fn start() -> Client {
        let repo = tempfile::tempdir().expect("temp dir");
        for (rel, text) in FILES {
            let path = repo.path().join(rel);
            std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
            std::fs::write(path, text).expect("write");
        }
        let settings = IndexSettings { embedder: EmbedderChoice::builtin(), ..IndexSettings::default() };
        let dir = IndexDir::new(repo.path().join(".maguyva"));
        let server = McpServer::open(repo.path(), dir, settings).expect("server");
        // One thread runs client and server alike: no wake-ups across
        // threads between a message and its answer.
        let runtime =
            tokio::runtime::Builder::new_current_thread().enable_all().build().expect("runtime");
        let (client_side, server_side) = tokio::io::duplex(1 << 20);
        let (server_read, server_write) = tokio::io::split(server_side);
        runtime.spawn(async move {
            let _ = maguyva_cli::mcp::serve_on(server, BufReader::new(server_read), server_write).await;
        });
        let (read, write) = tokio::io::split(client_side);
        let mut client = Client {
            runtime,
            to_server: write,
            from_server: BufReader::new(read).lines(),
            pings: 0,
            _repo: repo,
        };
        client.send(r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"fuzz","version":"0"}}}"#);
        client.wait_for("0");
        client.send(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#);
        client
    }

    fn send(&mut self, line: &str) {
        let to = &mut self.to_server;
        self.runtime.block_on(async {
            to.write_all(line.as_bytes()).await.expect("server gone");
            to.write_all(b"\n").await.expect("server gone");
            to.flush().await.expect("server gone");
        });
    }

    /// Reads the server's lines until the response with this id.
    fn wait_for(&mut self, id: &str) {
        let needle = format!("\"id\":{id}");
        let from = &mut self.from_server;
        self.runtime.block_on(async {
            loop {
                let line = tokio::time::timeout(Duration::from_secs(20), from.next_line())
                    .await
                    .expect("the server stopped answering")
                    .expect("reading from the server");
                let line = line.expect("the server closed the connection");
                if line.contains(&needle) {
                    return;
                }
            }
        });
    }

    fn ping(&mut self) {
        self.pings += 1;
        let id = format!("\"ping-{}\"", self.pings);
        self.send(&format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"ping"}}"#));
        self.wait_for(&id);
    }
}

fn client() -> &'static Mutex<Client> {
    static CLIENT: OnceLock<Mutex<Client>> = OnceLock::new();
    CLIENT.get_or_init(|| Mutex::new(Client::start()))
}

fuzz_target!(|data: &[u8]| {
    // One line of the protocol: newlines would make several messages.
    let line: String = String::from_utf8_lossy(data).replace(['\n', '\r'], " ");
    let mut client = client().lock().unwrap_or_else(|e| e.into_inner());
    client.send(&line);
    client.ping();
});
