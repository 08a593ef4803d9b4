//! `pith --mode rpc`: serves the RPC protocol on stdin/stdout.

use std::process::ExitCode;

use crate::plugin_host::PluginHost;

/// Serves until stdin closes.
pub async fn serve(host: PluginHost) -> ExitCode {
    crate::rpc::serve(host).await
}
