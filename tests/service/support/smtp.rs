//! A real SMTP server on loopback that accepts every message and keeps it, for the tests of what
//! the service e-mails. It speaks the part of RFC 5321 a submitting client uses (EHLO, MAIL, RCPT,
//! DATA with dot-stuffing, RSET, NOOP, QUIT), without TLS or authentication.

use std::sync::{Arc, Mutex};

use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::net::TcpListener;

use crate::support::TestApp;

/// One accepted message.
#[derive(Debug, Clone)]
pub struct Message {
    pub from: String,
    pub to: Vec<String>,
    /// Headers and body as sent, with the dot-stuffing undone.
    pub data: String,
}

pub struct MailServer {
    /// `smtp://127.0.0.1:<port>`, for the service's `smtp_url`.
    pub url: String,
    messages: Arc<Mutex<Vec<Message>>>,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for MailServer {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl MailServer {
    pub async fn start() -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("smtp://{}", listener.local_addr().unwrap());
        let messages = Arc::new(Mutex::new(Vec::new()));
        let kept = messages.clone();
        let task = tokio::spawn(async move {
            while let Ok((stream, _)) = listener.accept().await {
                let kept = kept.clone();
                tokio::spawn(async move {
                    let _ = session(stream, kept).await;
                });
            }
        });
        Self { url, messages, task }
    }

    pub fn messages(&self) -> Vec<Message> {
        self.messages.lock().unwrap().clone()
    }

    /// The first message to `to`, once the service has sent what was due.
    pub async fn letter(&self, app: &TestApp, to: &str) -> Message {
        self.letters(app, to, 1).await.remove(0)
    }

    /// The messages to `to`, oldest first, once the service has sent what was due; at least
    /// `count` of them.
    pub async fn letters(&self, app: &TestApp, to: &str, count: usize) -> Vec<Message> {
        app.settle().await;
        let found: Vec<Message> = self.messages().into_iter().filter(|m| m.to.iter().any(|r| r == to)).collect();
        assert!(found.len() >= count, "fewer than {count} messages to {to}; got {:?}", self.messages());
        found
    }
}

/// The address inside `MAIL FROM:<…>` or `RCPT TO:<…>`.
fn address(argument: &str) -> String {
    let start = argument.find('<').map_or(0, |i| i + 1);
    let end = argument[start..].find('>').map_or(argument.len(), |i| start + i);
    argument[start..end].to_owned()
}

async fn session(stream: tokio::net::TcpStream, kept: Arc<Mutex<Vec<Message>>>) -> std::io::Result<()> {
    let (read, mut write) = stream.into_split();
    let mut lines = BufReader::new(read);
    write.write_all(b"220 localhost test mail server\r\n").await?;
    let (mut from, mut to) = (String::new(), Vec::new());
    let mut line = String::new();
    loop {
        line.clear();
        if lines.read_line(&mut line).await? == 0 {
            return Ok(());
        }
        let command = line.trim_end().to_owned();
        let verb = command.split(' ').next().unwrap_or("").to_ascii_uppercase();
        let reply: &[u8] = match verb.as_str() {
            "EHLO" => b"250-localhost\r\n250 8BITMIME\r\n",
            "HELO" | "NOOP" => b"250 OK\r\n",
            "MAIL" => {
                from = address(&command);
                to.clear();
                b"250 OK\r\n"
            }
            "RCPT" => {
                to.push(address(&command));
                b"250 OK\r\n"
            }
            "RSET" => {
                (from, to) = (String::new(), Vec::new());
                b"250 OK\r\n"
            }
            "DATA" => {
                write.write_all(b"354 end with <CRLF>.<CRLF>\r\n").await?;
                let mut data = String::new();
                loop {
                    line.clear();
                    if lines.read_line(&mut line).await? == 0 {
                        return Ok(());
                    }
                    if line == ".\r\n" || line == ".\n" {
                        break;
                    }
                    data.push_str(line.strip_prefix('.').unwrap_or(&line));
                }
                kept.lock().unwrap().push(Message { from: from.clone(), to: to.clone(), data });
                b"250 OK queued\r\n"
            }
            "QUIT" => {
                write.write_all(b"221 bye\r\n").await?;
                return Ok(());
            }
            _ => b"502 command not implemented\r\n",
        };
        write.write_all(reply).await?;
    }
}
