// SPDX-License-Identifier: GPL-2.0
//! A minimal HTTP/1.x server for one endpoint: `GET /metrics`. One
//! connection at a time, closed after its response: Prometheus scrapes a
//! target once per interval, and a scrape takes a millisecond.

use std::io::{self, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::time::Duration;

/// Longest request head read; a scrape's is a few hundred bytes.
const HEAD_MAX: usize = 8192;
/// How long a client may take to send its request or to take the
/// response: one stuck client must not stop the scrapes for long.
const IO_TIMEOUT: Duration = Duration::from_secs(5);

pub const METRICS_TYPE: &str = "text/plain; version=0.0.4; charset=utf-8";

/// A response: status line, content type, body.
#[derive(Debug, PartialEq, Eq)]
pub struct Response {
    pub status: &'static str,
    pub content_type: &'static str,
    pub body: String,
}

impl Response {
    fn text(status: &'static str, body: &str) -> Self {
        Self {
            status,
            content_type: "text/plain; charset=utf-8",
            body: body.into(),
        }
    }
}

/// The response to a request head; `metrics` runs for `GET /metrics`.
pub fn respond(head: &[u8], metrics: &mut dyn FnMut() -> String) -> Response {
    let head = String::from_utf8_lossy(head);
    let mut parts = head.lines().next().unwrap_or("").split_whitespace();
    let (method, target) = (parts.next().unwrap_or(""), parts.next().unwrap_or(""));
    let path = target.split('?').next().unwrap_or("");
    match (method, path) {
        ("GET" | "HEAD", "/metrics") => Response {
            status: "200 OK",
            content_type: METRICS_TYPE,
            body: metrics(),
        },
        ("GET" | "HEAD", "/") => Response::text("200 OK", "mrbond-exporter: see /metrics\n"),
        ("GET" | "HEAD", _) => Response::text("404 Not Found", "not found\n"),
        _ => Response::text("405 Method Not Allowed", "only GET\n"),
    }
}

/// Reads a request head, up to the blank line.
fn read_head(stream: &mut TcpStream) -> io::Result<Vec<u8>> {
    let mut head = Vec::new();
    let mut buf = [0u8; 1024];
    while !head.windows(4).any(|w| w == b"\r\n\r\n") && !head.windows(2).any(|w| w == b"\n\n") {
        if head.len() >= HEAD_MAX {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                "request head too long",
            ));
        }
        let n = stream.read(&mut buf)?;
        if n == 0 {
            break;
        }
        head.extend_from_slice(&buf[..n]);
    }
    Ok(head)
}

fn serve_one(mut stream: TcpStream, metrics: &mut dyn FnMut() -> String) -> io::Result<()> {
    stream.set_read_timeout(Some(IO_TIMEOUT))?;
    stream.set_write_timeout(Some(IO_TIMEOUT))?;
    let head = read_head(&mut stream)?;
    let r = respond(&head, metrics);
    let body = if head.starts_with(b"HEAD ") {
        ""
    } else {
        r.body.as_str()
    };
    write!(
        stream,
        "HTTP/1.1 {}\r\nContent-Type: {}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{}",
        r.status,
        r.content_type,
        r.body.len(),
        body
    )?;
    stream.flush()
}

/// Serves until the listener fails; a failed connection is logged only.
pub fn serve(listener: TcpListener, metrics: &mut dyn FnMut() -> String) -> io::Result<()> {
    for stream in listener.incoming() {
        match stream {
            Ok(s) => {
                if let Err(e) = serve_one(s, metrics) {
                    eprintln!("mrbond-exporter: connection: {e}");
                }
            }
            Err(e) => eprintln!("mrbond-exporter: accept: {e}"),
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn routes() {
        let mut m = || "x 1\n".to_string();
        let r = respond(b"GET /metrics HTTP/1.1\r\nHost: a\r\n\r\n", &mut m);
        assert_eq!(
            (r.status, r.content_type, r.body.as_str()),
            ("200 OK", METRICS_TYPE, "x 1\n")
        );
        assert_eq!(
            respond(b"GET /metrics?x=1 HTTP/1.1\r\n\r\n", &mut m).status,
            "200 OK"
        );
        assert_eq!(
            respond(b"GET /nope HTTP/1.1\r\n\r\n", &mut m).status,
            "404 Not Found"
        );
        assert_eq!(
            respond(b"POST /metrics HTTP/1.1\r\n\r\n", &mut m).status,
            "405 Method Not Allowed"
        );
        assert_eq!(respond(b"", &mut m).status, "405 Method Not Allowed");
    }

    #[test]
    fn serves_over_tcp() {
        let l = TcpListener::bind("127.0.0.1:0").expect("bind");
        let addr = l.local_addr().expect("addr");
        let t = std::thread::spawn(move || {
            let (s, _) = l.accept().expect("accept");
            serve_one(s, &mut || "mrbond_up 1\n".to_string()).expect("serves");
        });
        let mut c = TcpStream::connect(addr).expect("connect");
        c.write_all(b"GET /metrics HTTP/1.0\r\n\r\n")
            .expect("write");
        let mut out = String::new();
        c.read_to_string(&mut out).expect("read");
        t.join().expect("joins");
        assert!(out.starts_with("HTTP/1.1 200 OK\r\n"), "{out}");
        assert!(out.ends_with("\r\n\r\nmrbond_up 1\n"), "{out}");
    }
}
