//! Where `--listen` listens: a unix socket path (created `0600` inside a `0700` directory,
//! never reachable by anyone else, not even between bind and chmod) or `tcp:HOST:PORT` (with
//! the token of `--rpc-token-file`, required). Windows has TCP only.

use std::net::SocketAddr;
#[cfg(unix)]
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use tokio::io::{AsyncRead, AsyncWrite};

/// A listening address.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Endpoint {
    /// A unix socket at this path.
    Unix(PathBuf),
    /// A TCP address.
    Tcp(SocketAddr),
}

impl Endpoint {
    /// Reads `tcp:HOST:PORT` or a path.
    pub fn parse(text: &str) -> Result<Endpoint, String> {
        match text.strip_prefix("tcp:") {
            Some(address) => address.parse().map(Endpoint::Tcp).map_err(|err| {
                format!("--listen {text}: {err} (expected tcp:HOST:PORT, e.g. tcp:127.0.0.1:7777)")
            }),
            None if text.is_empty() => Err("--listen needs a socket path or tcp:HOST:PORT".into()),
            None => Ok(Endpoint::Unix(PathBuf::from(text))),
        }
    }
}

/// A bound listener and the token its clients must present (TCP).
pub struct Listener {
    inner: Inner,
    /// The token a TCP client sends in its `hello`.
    pub token: Option<String>,
    /// The socket file, removed when the listener is dropped.
    socket_file: Option<PathBuf>,
}

enum Inner {
    #[cfg(unix)]
    Unix(tokio::net::UnixListener),
    Tcp(tokio::net::TcpListener),
}

/// A connected client's two halves.
pub type Halves = (
    Box<dyn AsyncRead + Unpin + Send>,
    Box<dyn AsyncWrite + Unpin + Send>,
);

impl Listener {
    /// Binds `endpoint`; a TCP endpoint needs `token_file` (its first line is the token).
    pub fn bind(endpoint: &Endpoint, token_file: Option<&Path>) -> Result<Listener, String> {
        match endpoint {
            #[cfg(not(unix))]
            Endpoint::Unix(path) => Err(format!(
                "--listen {}: this system has no unix sockets pith can listen on; use tcp:127.0.0.1:PORT with --rpc-token-file",
                path.display()
            )),
            #[cfg(unix)]
            Endpoint::Unix(path) => {
                let token = token_file.map(read_token).transpose()?;
                let listener = bind_private(path)?;
                Ok(Listener {
                    inner: Inner::Unix(listener),
                    token,
                    socket_file: Some(path.clone()),
                })
            }
            Endpoint::Tcp(address) => {
                let Some(file) = token_file else {
                    return Err(format!(
                        "--listen tcp:{address} needs --rpc-token-file <file> (anyone who can reach the port could drive the agent)"
                    ));
                };
                let token = read_token(file)?;
                let std = std::net::TcpListener::bind(address)
                    .map_err(|err| format!("--listen tcp:{address}: {err}"))?;
                std.set_nonblocking(true)
                    .map_err(|err| format!("--listen tcp:{address}: {err}"))?;
                let listener = tokio::net::TcpListener::from_std(std)
                    .map_err(|err| format!("--listen tcp:{address}: {err}"))?;
                Ok(Listener {
                    inner: Inner::Tcp(listener),
                    token: Some(token),
                    socket_file: None,
                })
            }
        }
    }

    /// Where it listens, for the start-up line.
    pub fn describe(&self) -> String {
        match &self.inner {
            #[cfg(unix)]
            Inner::Unix(_) => self
                .socket_file
                .as_ref()
                .map_or_else(String::new, |p| p.display().to_string()),
            Inner::Tcp(listener) => listener
                .local_addr()
                .map_or_else(|_| "tcp".into(), |a| format!("tcp:{a}")),
        }
    }

    /// The next client.
    pub async fn accept(&self) -> std::io::Result<Halves> {
        match &self.inner {
            #[cfg(unix)]
            Inner::Unix(listener) => {
                let (stream, _) = listener.accept().await?;
                let (read, write) = stream.into_split();
                Ok((Box::new(read), Box::new(write)))
            }
            Inner::Tcp(listener) => {
                let (stream, _) = listener.accept().await?;
                let _ = stream.set_nodelay(true);
                let (read, write) = stream.into_split();
                Ok((Box::new(read), Box::new(write)))
            }
        }
    }
}

impl Drop for Listener {
    fn drop(&mut self) {
        if let Some(path) = &self.socket_file {
            let _ = std::fs::remove_file(path);
        }
    }
}

/// The token in `file`: its first line, trimmed; an empty one is refused.
fn read_token(file: &Path) -> Result<String, String> {
    #[cfg(unix)]
    if let Ok(meta) = std::fs::metadata(file)
        && meta.permissions().mode() & 0o077 != 0
    {
        eprintln!(
            "pith: warning: --rpc-token-file {} can be read by other users (chmod 600 it)",
            file.display()
        );
    }
    let text = std::fs::read_to_string(file)
        .map_err(|err| format!("--rpc-token-file {}: {err}", file.display()))?;
    let token = text.lines().next().unwrap_or("").trim().to_string();
    if token.is_empty() {
        return Err(format!(
            "--rpc-token-file {}: the file is empty (put a long random token on its first line)",
            file.display()
        ));
    }
    Ok(token)
}

/// Binds a unix socket at `path` that only this user can connect to: its directory is created
/// `0700` when missing (and must not be writable by others when it exists), the socket is
/// bound in a fresh `0700` directory beside it, made `0600`, then renamed into place. A stale
/// socket left by a process that ended is replaced; a live one is an error.
#[cfg(unix)]
fn bind_private(path: &Path) -> Result<tokio::net::UnixListener, String> {
    let fail = |err: std::io::Error| format!("--listen {}: {err}", path.display());
    let dir = path
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    if !dir.exists() {
        std::fs::create_dir_all(dir).map_err(fail)?;
        std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700)).map_err(fail)?;
    }
    let mode = std::fs::metadata(dir).map_err(fail)?.permissions().mode();
    if mode & 0o022 != 0 && mode & 0o1000 == 0 {
        return Err(format!(
            "--listen {}: {} is writable by others (mode {:o}); use a directory only you can write, e.g. $XDG_RUNTIME_DIR",
            path.display(),
            dir.display(),
            mode & 0o7777
        ));
    }
    if let Ok(existing) = std::fs::symlink_metadata(path) {
        use std::os::unix::fs::FileTypeExt;
        if !existing.file_type().is_socket() {
            return Err(format!(
                "--listen {}: a file that is not a socket is there (pith replaces only a socket left by a process that ended)",
                path.display()
            ));
        }
        if std::os::unix::net::UnixStream::connect(path).is_ok() {
            return Err(format!(
                "--listen {}: another process is listening there",
                path.display()
            ));
        }
        std::fs::remove_file(path).map_err(fail)?;
    }
    let staging = dir.join(format!(".pith-listen-{}", uuid::Uuid::new_v4().simple()));
    std::fs::create_dir(&staging).map_err(fail)?;
    let result = (|| {
        std::fs::set_permissions(&staging, std::fs::Permissions::from_mode(0o700))?;
        let staged = staging.join("socket");
        let listener = std::os::unix::net::UnixListener::bind(&staged)?;
        std::fs::set_permissions(&staged, std::fs::Permissions::from_mode(0o600))?;
        std::fs::rename(&staged, path)?;
        listener.set_nonblocking(true)?;
        tokio::net::UnixListener::from_std(listener)
    })();
    let _ = std::fs::remove_dir_all(&staging);
    result.map_err(fail)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn endpoints_parse_and_say_what_is_wrong() {
        assert_eq!(
            Endpoint::parse("tcp:127.0.0.1:7777"),
            Ok(Endpoint::Tcp("127.0.0.1:7777".parse().unwrap()))
        );
        assert_eq!(
            Endpoint::parse("/run/pith.sock"),
            Ok(Endpoint::Unix("/run/pith.sock".into()))
        );
        assert!(
            Endpoint::parse("tcp:localhost")
                .unwrap_err()
                .contains("tcp:HOST:PORT")
        );
        assert!(Endpoint::parse("").is_err());
    }
}
