//! `maguyva mcp --print-config CLIENT`: the snippet that registers the
//! server with a coding agent, in the form and the file that agent reads.

use serde_json::json;
use std::fmt::Write as _;

/// The agents whose configuration can be printed.
#[derive(Copy, Clone, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Client {
    /// Claude Code: `.mcp.json` at the repository's root.
    ClaudeCode,
    /// Codex CLI: `~/.codex/config.toml`, or `.codex/config.toml` in a
    /// trusted project.
    Codex,
    /// Cursor: `.cursor/mcp.json` in the project, or `~/.cursor/mcp.json`.
    Cursor,
    /// VS Code: `.vscode/mcp.json` in the workspace.
    Vscode,
}

/// The name the server is registered under.
const SERVER_NAME: &str = "maguyva";

/// A server registration for `client`: how to start `program` with `args`.
#[derive(Debug)]
pub struct ClientConfig {
    /// The snippet, as the client's file holds it.
    pub snippet: String,
    /// Where it goes, for a person reading it.
    pub location: String,
}

impl Client {
    /// The registration of the server started as `program args...`.
    pub fn config(self, program: &str, args: &[String]) -> ClientConfig {
        let server = json!({ "command": program, "args": args });
        let pretty = |v: serde_json::Value| {
            let mut s = serde_json::to_string_pretty(&v).unwrap_or_default();
            s.push('\n');
            s
        };
        match self {
            Client::ClaudeCode => {
                let mut command = format!("claude mcp add {SERVER_NAME} --");
                for word in std::iter::once(program).chain(args.iter().map(String::as_str)) {
                    command.push(' ');
                    command.push_str(&shell_word(word));
                }
                ClientConfig {
                    snippet: pretty(json!({ "mcpServers": { SERVER_NAME: server } })),
                    location: format!(
                        "save as .mcp.json at the repository's root, or run: {command}"
                    ),
                }
            }
            Client::Codex => {
                let mut snippet = format!("[mcp_servers.{SERVER_NAME}]\n");
                // A JSON string is a TOML basic string: the same quotes and
                // escapes.
                let quote = |s: &str| serde_json::to_string(s).unwrap_or_default();
                let _ = writeln!(snippet, "command = {}", quote(program));
                let args: Vec<String> = args.iter().map(|a| quote(a)).collect();
                let _ = writeln!(snippet, "args = [{}]", args.join(", "));
                ClientConfig {
                    snippet,
                    location: "add to ~/.codex/config.toml (or .codex/config.toml in a trusted \
                               project)"
                        .into(),
                }
            }
            Client::Cursor => ClientConfig {
                snippet: pretty(json!({ "mcpServers": { SERVER_NAME: server } })),
                location: "save as .cursor/mcp.json in the project (or ~/.cursor/mcp.json for \
                           every project)"
                    .into(),
            },
            Client::Vscode => {
                let server = json!({ "type": "stdio", "command": program, "args": args });
                ClientConfig {
                    snippet: pretty(json!({ "servers": { SERVER_NAME: server } })),
                    location: "save as .vscode/mcp.json in the workspace".into(),
                }
            }
        }
    }
}

/// `word` quoted for a POSIX shell when it needs to be.
fn shell_word(word: &str) -> String {
    let plain = !word.is_empty()
        && word.chars().all(|c| c.is_ascii_alphanumeric() || "-_./:=@%+,".contains(c));
    match plain {
        true => word.to_string(),
        false => format!("'{}'", word.replace('\'', r"'\''")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args() -> Vec<String> {
        vec!["mcp".into(), "--path".into(), "/home/me/my \"repo\"".into()]
    }

    #[test]
    fn json_clients_get_the_command_and_arguments() {
        for (client, servers) in [
            (Client::ClaudeCode, "mcpServers"),
            (Client::Cursor, "mcpServers"),
            (Client::Vscode, "servers"),
        ] {
            let config = client.config("/usr/bin/maguyva", &args());
            let v: serde_json::Value =
                serde_json::from_str(&config.snippet).unwrap_or_else(|e| panic!("{client:?}: {e}"));
            let server = &v[servers][SERVER_NAME];
            assert_eq!(server["command"], "/usr/bin/maguyva");
            assert_eq!(server["args"], json!(args()));
        }
        let vscode = Client::Vscode.config("maguyva", &args());
        assert!(vscode.snippet.contains(r#""type": "stdio""#));
    }

    #[test]
    fn codex_gets_a_toml_table() {
        let config = Client::Codex.config(r"C:\bin\maguyva.exe", &args());
        let doc: toml_edit::DocumentMut =
            config.snippet.parse().unwrap_or_else(|e| panic!("{e}\n{}", config.snippet));
        let server = &doc["mcp_servers"][SERVER_NAME];
        assert_eq!(server["command"].as_str(), Some(r"C:\bin\maguyva.exe"));
        let parsed: Vec<&str> = server["args"]
            .as_array()
            .map(|a| a.iter().filter_map(|v| v.as_str()).collect())
            .unwrap_or_default();
        assert_eq!(parsed, args());
    }

    #[test]
    fn claude_code_is_also_told_the_command_line() {
        let config = Client::ClaudeCode.config("/opt/maguyva", &args());
        assert!(
            config.location.ends_with(
                r#"claude mcp add maguyva -- /opt/maguyva mcp --path '/home/me/my "repo"'"#
            ),
            "{}",
            config.location
        );
        assert_eq!(shell_word("it's"), r"'it'\''s'");
    }
}
