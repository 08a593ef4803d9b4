//! ACP's stdin/stdout: lines in from stdin, lines out through pith's frame writer (queued
//! lines gathered into one write, as RPC mode writes them, instead of a write and a flush per
//! line through a thread hand-off), each counted for the streaming budget ([`Flow`]).

use std::sync::Arc;

use agent_client_protocol::Lines;
use futures_util::{Sink, Stream};
use tokio::io::AsyncBufReadExt;

use super::flow::Flow;
use crate::rpc::writer::{self, WriterHandle};

/// The transport, and the writer to wait for once the connection has ended (so that the last
/// answers are written before the process exits).
pub(super) fn transport(
    flow: Arc<Flow>,
) -> (
    Lines<
        impl Sink<String, Error = std::io::Error> + Send + 'static,
        impl Stream<Item = std::io::Result<String>> + Send + 'static,
    >,
    WriterHandle,
) {
    let (frames, written) = writer::spawn(std::io::stdout());
    let outgoing = futures_util::sink::unfold(frames, move |frames, line: String| {
        let flow = flow.clone();
        async move {
            let mut bytes = line.into_bytes();
            bytes.push(b'\n');
            flow.written(bytes.len());
            frames.send_streaming(bytes).await;
            Ok::<_, std::io::Error>(frames)
        }
    });
    let lines = tokio::io::BufReader::new(tokio::io::stdin()).lines();
    let incoming = futures_util::stream::unfold(lines, |mut lines| async move {
        match lines.next_line().await {
            Ok(Some(line)) => Some((Ok(line), lines)),
            Ok(None) => None,
            Err(err) => Some((Err(err), lines)),
        }
    });
    (Lines::new(Box::pin(outgoing), Box::pin(incoming)), written)
}
