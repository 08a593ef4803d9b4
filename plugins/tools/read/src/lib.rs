//! The `read` tool, as pi's: a text file's lines (from `offset`, at most `limit`), cut at 2,000
//! lines or 50 KB with pi's continuation notices; images (PNG, JPEG, GIF, WebP) as image content,
//! and BMP converted to PNG (see [`bmp`]).

mod bmp;

use pith_sdk::host::resolve_model_path;
use pith_sdk::text::{
    DEFAULT_MAX_BYTES, DEFAULT_MAX_LINES, TruncatedBy, format_size, truncate_head,
};
use pith_sdk::tool::*;

#[derive(serde::Deserialize)]
struct Args {
    path: String,
    offset: Option<f64>,
    limit: Option<f64>,
}

struct Read;

fn image_type(bytes: &[u8]) -> Option<&'static str> {
    match bytes {
        [0x89, b'P', b'N', b'G', ..] => Some("image/png"),
        [0xff, 0xd8, 0xff, ..] => Some("image/jpeg"),
        [b'G', b'I', b'F', b'8', ..] => Some("image/gif"),
        [
            b'R',
            b'I',
            b'F',
            b'F',
            _,
            _,
            _,
            _,
            b'W',
            b'E',
            b'B',
            b'P',
            ..,
        ] => Some("image/webp"),
        _ => None,
    }
}

fn base64(bytes: &[u8]) -> String {
    const TABLE: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let n = (u32::from(chunk[0]) << 16)
            | (u32::from(*chunk.get(1).unwrap_or(&0)) << 8)
            | u32::from(*chunk.get(2).unwrap_or(&0));
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(TABLE[((n >> (18 - 6 * i)) & 63) as usize] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}

fn error(message: String) -> ToolError {
    ToolError::new(message).with_details(json!({}))
}

impl Tool for Read {
    const NAME: &'static str = "read";
    const DESCRIPTION: &'static str = "Read the contents of a file. Supports text files and images (jpg, png, gif, webp, bmp). Images are sent as attachments. For text files, output is truncated to 2000 lines or 50KB (whichever is hit first). Use offset/limit for large files. When you need the full file, continue with offset until complete.";

    fn parameters() -> Value {
        json!({
            "type": "object",
            "required": ["path"],
            "properties": {
                "path": {"type": "string", "description": "Path to the file to read (relative or absolute)"},
                "offset": {"type": "number", "description": "Line number to start reading from (1-indexed)"},
                "limit": {"type": "number", "description": "Maximum number of lines to read"}
            }
        })
    }

    fn prompt_snippet() -> Option<String> {
        Some("Read file contents".into())
    }

    fn prompt_guidelines() -> Vec<String> {
        vec!["Use read to examine files instead of cat or sed.".into()]
    }

    fn execute(call: ToolCall) -> Result<ToolResult, ToolError> {
        let args: Args = call.parse()?;
        let path = resolve_model_path(&args.path);
        let shown = path.display().to_string();
        let bytes = std::fs::read(&path).map_err(|err| {
            if let Some(reason) = pith_sdk::sandbox::explain_read_error(&path, &err) {
                return error(reason);
            }
            match err.kind() {
                std::io::ErrorKind::NotFound => error(format!(
                    "ENOENT: no such file or directory, access '{shown}'"
                )),
                std::io::ErrorKind::PermissionDenied => {
                    error(format!("EACCES: permission denied, access '{shown}'"))
                }
                _ if path.is_dir() => {
                    error("EISDIR: illegal operation on a directory, read".into())
                }
                _ => error(pith_sdk::host::node_error(&err, "open", &shown)),
            }
        })?;
        if bmp::is_bmp(&bytes) {
            let png = bmp::to_png(&bytes)
                .map_err(|why| error(format!("Cannot read image {shown}: {why}")))?;
            return Ok(ToolResult {
                content: vec![
                    Content::text("Read image file [image/png]"),
                    Content::image(base64(&png), "image/png"),
                ],
                details: None,
            });
        }
        if let Some(mime) = image_type(&bytes) {
            return Ok(ToolResult {
                content: vec![
                    Content::text(format!("Read image file [{mime}]")),
                    Content::image(base64(&bytes), mime),
                ],
                details: None,
            });
        }
        let text = String::from_utf8_lossy(&bytes);
        let lines: Vec<&str> = text.split('\n').collect();
        let total = lines.len();
        let start = args.offset.map_or(0, |o| (o.max(1.0) as usize) - 1);
        if start >= total {
            return Err(error(format!(
                "Offset {} is beyond end of file ({total} lines total)",
                start + 1
            )));
        }
        let end = match args.limit {
            Some(limit) => (start + limit.max(0.0) as usize).min(total),
            None => total,
        };
        let selected = lines[start..end].join("\n");
        let truncation = truncate_head(&selected, DEFAULT_MAX_LINES, DEFAULT_MAX_BYTES);
        let first = start + 1;
        if truncation.first_line_exceeds_limit {
            let size = format_size(lines[start].len());
            let notice = format!(
                "[Line {first} is {size}, exceeds {} limit. Use bash: sed -n '{first}p' {} | head -c {DEFAULT_MAX_BYTES}]",
                format_size(DEFAULT_MAX_BYTES),
                args.path
            );
            return Ok(ToolResult::text(notice).with_details(json!({"truncation": truncation})));
        }
        if truncation.truncated {
            let last = start + truncation.output_lines;
            let limit_note = if truncation.truncated_by == Some(TruncatedBy::Bytes) {
                format!(" ({} limit)", format_size(DEFAULT_MAX_BYTES))
            } else {
                String::new()
            };
            let body = format!(
                "{}\n\n[Showing lines {first}-{last} of {total}{limit_note}. Use offset={} to continue.]",
                truncation.content,
                last + 1
            );
            return Ok(ToolResult::text(body).with_details(json!({"truncation": truncation})));
        }
        if end < total && args.limit.is_some() {
            return Ok(ToolResult::text(format!(
                "{selected}\n\n[{} more lines in file. Use offset={} to continue.]",
                total - end,
                end + 1
            )));
        }
        Ok(ToolResult::text(selected))
    }
}

pith_sdk::export_tools!(Read);
