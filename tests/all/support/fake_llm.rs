//! A fake LLM server on 127.0.0.1: answers each request with the next scripted turn, in the
//! wire format of the path it was called on, and records every request.
//!
//! Turns use the same fields as the `faux` provider's scripts: `text`, `chunks`, `thinking`,
//! `thinking_chunks`, `signature`, `tool_calls`, `json_chunks`, `usage`, `delay_ms`, `first_delay_ms`,
//! `stop_reason`, `error` (`{"status", "type", "message"}`: an HTTP error), `stream_error`
//! (an error event after the content), `truncate` (close without finishing), `html` (a 200
//! HTML page with this title, as a proxy's login page answers), `hang` (never answer),
//! `stall_after` (send that many SSE events, then go silent).
//!
//! A script object may set `context_limit_bytes`: a request whose body is larger is answered
//! as a real server answers a prompt over its context window (HTTP 400, "prompt is too long"),
//! without using up a turn.
#![allow(dead_code)]

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// Microseconds since the first use of this clock (a shared time base for latency figures).
pub fn clock_micros() -> u64 {
    static START: std::sync::OnceLock<std::time::Instant> = std::sync::OnceLock::new();
    START
        .get_or_init(std::time::Instant::now)
        .elapsed()
        .as_micros() as u64
}

/// A running fake server.
pub struct FakeLlm {
    /// `http://127.0.0.1:<port>`.
    pub url: String,
    /// Every request: `{"path","headers","body"}` (headers lower-cased).
    pub requests: Arc<Mutex<Vec<Value>>>,
    /// How many responses were cut short because the client went away.
    pub disconnects: Arc<AtomicUsize>,
}

fn split(text: &str, n: usize) -> Vec<String> {
    let chars: Vec<char> = text.chars().collect();
    if chars.is_empty() {
        return Vec::new();
    }
    let n = n.clamp(1, chars.len());
    let (size, rem) = (chars.len() / n, chars.len() % n);
    let mut out = Vec::new();
    let mut pos = 0;
    for i in 0..n {
        let step = size + usize::from(i < rem);
        out.push(chars[pos..pos + step].iter().collect());
        pos += step;
    }
    out
}

impl FakeLlm {
    /// Starts a server with these turns (a list, or `{"turns": [...], "defaults": {...}}`).
    pub async fn start(script: Value) -> FakeLlm {
        let (turns, defaults) = match &script {
            Value::Array(_) => (script.clone(), json!({})),
            _ => (script["turns"].clone(), script["defaults"].clone()),
        };
        let context_limit = script
            .get("context_limit_bytes")
            .and_then(Value::as_u64)
            .map_or(usize::MAX, |n| n as usize);
        let turns: Vec<Value> = turns
            .as_array()
            .cloned()
            .unwrap_or_default()
            .into_iter()
            .map(|mut turn| {
                if let (Some(turn), Some(defaults)) = (turn.as_object_mut(), defaults.as_object()) {
                    for (key, value) in defaults {
                        turn.entry(key.clone()).or_insert(value.clone());
                    }
                }
                turn
            })
            .collect();
        let turns = Value::Array(turns);
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        let requests = Arc::new(Mutex::new(Vec::new()));
        let disconnects = Arc::new(AtomicUsize::new(0));
        let turns = Arc::new(turns.as_array().cloned().unwrap_or_default());
        let counter = Arc::new(AtomicUsize::new(0));
        let (recorded, cut) = (requests.clone(), disconnects.clone());
        tokio::spawn(async move {
            while let Ok((socket, _)) = listener.accept().await {
                let (turns, counter, recorded, cut) = (
                    turns.clone(),
                    counter.clone(),
                    recorded.clone(),
                    cut.clone(),
                );
                tokio::spawn(async move {
                    let _ = serve(socket, turns, counter, recorded, cut, context_limit).await;
                });
            }
        });
        FakeLlm {
            url,
            requests,
            disconnects,
        }
    }

    /// The recorded requests.
    pub fn requests(&self) -> Vec<Value> {
        self.requests.lock().unwrap().clone()
    }
}

async fn serve(
    mut socket: TcpStream,
    turns: Arc<Vec<Value>>,
    counter: Arc<AtomicUsize>,
    recorded: Arc<Mutex<Vec<Value>>>,
    cut: Arc<AtomicUsize>,
    context_limit: usize,
) -> std::io::Result<()> {
    let mut buf = Vec::new();
    let mut chunk = [0u8; 8192];
    let head_end = loop {
        let n = socket.read(&mut chunk).await?;
        if n == 0 {
            return Ok(());
        }
        buf.extend_from_slice(&chunk[..n]);
        if let Some(pos) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            break pos;
        }
    };
    let head = String::from_utf8_lossy(&buf[..head_end]).to_string();
    let mut lines = head.lines();
    let path = lines
        .next()
        .unwrap_or("")
        .split_whitespace()
        .nth(1)
        .unwrap_or("")
        .to_string();
    let mut headers = serde_json::Map::new();
    for line in lines {
        if let Some((k, v)) = line.split_once(':') {
            headers.insert(k.trim().to_ascii_lowercase(), json!(v.trim()));
        }
    }
    let length: usize = headers
        .get("content-length")
        .and_then(|v| v.as_str())
        .and_then(|v| v.parse().ok())
        .unwrap_or(0);
    let mut body = buf[head_end + 4..].to_vec();
    while body.len() < length {
        let n = socket.read(&mut chunk).await?;
        if n == 0 {
            break;
        }
        body.extend_from_slice(&chunk[..n]);
    }
    if body.len() > context_limit {
        recorded
            .lock()
            .unwrap()
            .push(json!({"path": path, "headers": headers, "body": null, "tooLong": body.len()}));
        let message = format!(
            "prompt is too long: {} tokens > {} maximum",
            body.len() / 4,
            context_limit / 4
        );
        let body = json!({"type": "error", "error": {"type": "invalid_request_error", "message": message}}).to_string();
        let reply = format!(
            "HTTP/1.1 400 Bad Request\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
            body.len()
        );
        return socket.write_all(reply.as_bytes()).await;
    }
    let body: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
    let slot = {
        let mut recorded = recorded.lock().unwrap();
        recorded.push(json!({"path": path, "headers": headers, "body": body}));
        recorded.len() - 1
    };
    let index = counter.fetch_add(1, Ordering::SeqCst);
    let turn = turns
        .get(index)
        .cloned()
        .unwrap_or_else(|| json!({"text": "(fake-llm: no more scripted turns)"}));
    if turn["hang"].as_bool() == Some(true) {
        // Accepts the request and never answers.
        tokio::time::sleep(Duration::from_secs(60)).await;
        return Ok(());
    }
    if let Some(title) = turn.get("html").and_then(Value::as_str) {
        let body = format!("<html><head><title>{title}</title></head><body>Sign in</body></html>");
        let reply = format!(
            "HTTP/1.1 200 OK\r\ncontent-type: text/html; charset=utf-8\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
            body.len()
        );
        return socket.write_all(reply.as_bytes()).await;
    }
    if let Some(error) = turn.get("error") {
        let status = error["status"].as_u64().unwrap_or(500);
        let body = json!({"type": "error", "error": {"type": error["type"].as_str().unwrap_or("api_error"), "message": error["message"].as_str().unwrap_or("error")}}).to_string();
        let reply = format!(
            "HTTP/1.1 {status} Error\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
            body.len()
        );
        return socket.write_all(reply.as_bytes()).await;
    }
    // `first_delay_ms`: the model thinks before the response headers (the reference fake's).
    if let Some(ms) = turn["first_delay_ms"].as_u64().filter(|ms| *ms > 0) {
        tokio::time::sleep(Duration::from_millis(ms)).await;
    }
    socket.write_all(b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncache-control: no-cache\r\nconnection: close\r\n\r\n").await?;
    let delay = Duration::from_millis(turn["delay_ms"].as_u64().unwrap_or(0));
    // The path without its query (`/responses?api-version=v1`).
    let route = path.split('?').next().unwrap_or("");
    let frames: Vec<String> = if let Some(raw) = turn["raw_sse"].as_array() {
        // Frames written as they are (a provider's own chunks).
        raw.iter()
            .map(|data| {
                format!(
                    "data: {}\n\n",
                    data.as_str()
                        .map_or_else(|| data.to_string(), str::to_string)
                )
            })
            .collect()
    } else if path.contains(":streamGenerateContent") {
        gemini_chunks(&turn, index)
            .into_iter()
            .map(|data| format!("data: {data}\r\n\r\n"))
            .collect()
    } else if route.ends_with("/responses") {
        responses_events(&turn, index)
            .into_iter()
            .map(|data| {
                format!(
                    "event: {}\ndata: {data}\n\n",
                    data["type"].as_str().unwrap_or("")
                )
            })
            .collect()
    } else if route.ends_with("/chat/completions") {
        openai_chunks(&turn, index)
            .into_iter()
            .map(|data| format!("data: {data}\n\n"))
            .collect()
    } else {
        anthropic_events(&turn, index)
            .into_iter()
            .map(|(event, data)| format!("event: {event}\ndata: {data}\n\n"))
            .collect()
    };
    if let Some(kept) = turn["stall_after"].as_u64() {
        // Starts the answer, then goes silent with the connection open.
        for frame in frames.iter().take(kept as usize) {
            socket.write_all(frame.as_bytes()).await?;
        }
        socket.flush().await?;
        tokio::time::sleep(Duration::from_secs(60)).await;
        return Ok(());
    }
    // Written in batches of frames, as a server streaming quickly would.
    let frames: Vec<String> = if delay.is_zero() {
        frames.chunks(64).map(|c| c.concat()).collect()
    } else {
        frames
    };
    recorded.lock().unwrap()[slot]["firstByteMicros"] = json!(clock_micros());
    for frame in frames {
        if socket.write_all(frame.as_bytes()).await.is_err() || socket.flush().await.is_err() {
            cut.fetch_add(1, Ordering::SeqCst);
            return Ok(());
        }
        if !delay.is_zero() {
            tokio::time::sleep(delay).await;
        }
    }
    socket.shutdown().await
}

/// The Anthropic Messages SSE events of a turn.
fn anthropic_events(turn: &Value, index: usize) -> Vec<(String, Value)> {
    let usage = turn
        .get("usage")
        .cloned()
        .unwrap_or(json!({"input": 100, "output": 20}));
    let n = |key: &str| usage[key].as_u64().unwrap_or(0);
    let mut events = vec![(
        "message_start".to_string(),
        json!({"type": "message_start", "message": {"id": format!("msg_fake_{index}"), "type": "message", "role": "assistant", "content": [], "model": "fake",
            "usage": {"input_tokens": n("input"), "output_tokens": 1, "cache_read_input_tokens": n("cache_read"), "cache_creation_input_tokens": n("cache_write")}}}),
    )];
    let mut block = 0;
    if let Some(thinking) = turn["thinking"].as_str() {
        events.push(("content_block_start".into(), json!({"type": "content_block_start", "index": block, "content_block": {"type": "thinking", "thinking": ""}})));
        for piece in split(
            thinking,
            turn["thinking_chunks"].as_u64().unwrap_or(2) as usize,
        ) {
            events.push(("content_block_delta".into(), json!({"type": "content_block_delta", "index": block, "delta": {"type": "thinking_delta", "thinking": piece}})));
        }
        let signature = turn["signature"].as_str().unwrap_or("sig");
        events.push(("content_block_delta".into(), json!({"type": "content_block_delta", "index": block, "delta": {"type": "signature_delta", "signature": signature}})));
        events.push((
            "content_block_stop".into(),
            json!({"type": "content_block_stop", "index": block}),
        ));
        block += 1;
    }
    if let Some(text) = turn["text"].as_str() {
        events.push(("content_block_start".into(), json!({"type": "content_block_start", "index": block, "content_block": {"type": "text", "text": ""}})));
        for piece in split(text, turn["chunks"].as_u64().unwrap_or(4) as usize) {
            events.push(("content_block_delta".into(), json!({"type": "content_block_delta", "index": block, "delta": {"type": "text_delta", "text": piece}})));
        }
        events.push((
            "content_block_stop".into(),
            json!({"type": "content_block_stop", "index": block}),
        ));
        block += 1;
    }
    let calls = turn["tool_calls"].as_array().cloned().unwrap_or_default();
    for (i, call) in calls.iter().enumerate() {
        let id = call["id"]
            .as_str()
            .map(str::to_string)
            .unwrap_or_else(|| format!("toolu_{index}_{i}"));
        events.push(("content_block_start".into(), json!({"type": "content_block_start", "index": block, "content_block": {"type": "tool_use", "id": id, "name": call["name"], "input": {}}})));
        for piece in split(
            &call["arguments"].to_string(),
            turn["json_chunks"].as_u64().unwrap_or(2) as usize,
        ) {
            events.push(("content_block_delta".into(), json!({"type": "content_block_delta", "index": block, "delta": {"type": "input_json_delta", "partial_json": piece}})));
        }
        events.push((
            "content_block_stop".into(),
            json!({"type": "content_block_stop", "index": block}),
        ));
        block += 1;
    }
    if let Some(message) = turn["stream_error"].as_str() {
        events.push((
            "error".into(),
            json!({"type": "error", "error": {"type": "api_error", "message": message}}),
        ));
        return events;
    }
    if turn["truncate"].as_bool() == Some(true) {
        return events;
    }
    let stop = turn["stop_reason"].as_str().unwrap_or(if calls.is_empty() {
        "end_turn"
    } else {
        "tool_use"
    });
    events.push(("message_delta".into(), json!({"type": "message_delta", "delta": {"stop_reason": stop}, "usage": {"output_tokens": n("output")}})));
    events.push(("message_stop".into(), json!({"type": "message_stop"})));
    events
}

/// The OpenAI chat-completions SSE chunks of a turn (`data:` payloads).
fn openai_chunks(turn: &Value, index: usize) -> Vec<String> {
    let id = format!("chatcmpl-fake{index}");
    let chunk = |delta: Value, finish: Option<&str>| {
        json!({"id": id, "object": "chat.completion.chunk", "created": 0, "model": "fake", "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}).to_string()
    };
    let mut out = vec![chunk(json!({"role": "assistant", "content": ""}), None)];
    if let Some(thinking) = turn["thinking"].as_str() {
        for piece in split(
            thinking,
            turn["thinking_chunks"].as_u64().unwrap_or(2) as usize,
        ) {
            out.push(chunk(json!({"reasoning_content": piece}), None));
        }
    }
    if let Some(text) = turn["text"].as_str() {
        for piece in split(text, turn["chunks"].as_u64().unwrap_or(4) as usize) {
            out.push(chunk(json!({"content": piece}), None));
        }
    }
    let calls = turn["tool_calls"].as_array().cloned().unwrap_or_default();
    for (i, call) in calls.iter().enumerate() {
        let call_id = call["id"]
            .as_str()
            .map(str::to_string)
            .unwrap_or_else(|| format!("call_{index}_{i}"));
        out.push(chunk(json!({"tool_calls": [{"index": i, "id": call_id, "type": "function", "function": {"name": call["name"], "arguments": ""}}]}), None));
        for piece in split(
            &call["arguments"].to_string(),
            turn["json_chunks"].as_u64().unwrap_or(2) as usize,
        ) {
            out.push(chunk(
                json!({"tool_calls": [{"index": i, "function": {"arguments": piece}}]}),
                None,
            ));
        }
    }
    if turn["truncate"].as_bool() == Some(true) {
        return out;
    }
    let finish = match turn["stop_reason"].as_str() {
        Some("max_tokens") | Some("length") => "length",
        Some(other) if other != "end_turn" && other != "tool_use" => other,
        _ if calls.is_empty() => "stop",
        _ => "tool_calls",
    };
    out.push(chunk(json!({}), Some(finish)));
    let usage = turn
        .get("usage")
        .cloned()
        .unwrap_or(json!({"input": 100, "output": 20}));
    let (input, output, cached) = (
        usage["input"].as_u64().unwrap_or(0),
        usage["output"].as_u64().unwrap_or(0),
        usage["cache_read"].as_u64().unwrap_or(0),
    );
    out.push(json!({"id": id, "object": "chat.completion.chunk", "created": 0, "model": "fake", "choices": [],
        "usage": {"prompt_tokens": input + cached, "completion_tokens": output, "total_tokens": input + cached + output, "prompt_tokens_details": {"cached_tokens": cached}}}).to_string());
    out.push("[DONE]".to_string());
    out
}

/// The OpenAI Responses SSE events of a turn.
fn responses_events(turn: &Value, index: usize) -> Vec<Value> {
    let mut out = vec![
        json!({"type": "response.created", "response": {"id": format!("resp_fake_{index}"), "status": "in_progress"}}),
    ];
    let mut position = 0;
    if let Some(thinking) = turn["thinking"].as_str() {
        let id = format!("rs_{index}");
        out.push(json!({"type": "response.output_item.added", "output_index": position, "item": {"type": "reasoning", "id": id, "summary": []}}));
        for piece in split(
            thinking,
            turn["thinking_chunks"].as_u64().unwrap_or(2) as usize,
        ) {
            out.push(json!({"type": "response.reasoning_summary_text.delta", "output_index": position, "delta": piece}));
        }
        out.push(json!({"type": "response.reasoning_summary_part.done", "output_index": position}));
        out.push(json!({"type": "response.output_item.done", "output_index": position, "item": {"type": "reasoning", "id": id, "summary": [{"type": "summary_text", "text": thinking}], "encrypted_content": "enc"}}));
        position += 1;
    }
    if let Some(text) = turn["text"].as_str() {
        let id = format!("msg_{index}");
        out.push(json!({"type": "response.output_item.added", "output_index": position, "item": {"type": "message", "id": id, "role": "assistant", "content": []}}));
        for piece in split(text, turn["chunks"].as_u64().unwrap_or(4) as usize) {
            out.push(json!({"type": "response.output_text.delta", "output_index": position, "delta": piece}));
        }
        out.push(json!({"type": "response.output_item.done", "output_index": position, "item": {"type": "message", "id": id, "role": "assistant", "content": [{"type": "output_text", "text": text}]}}));
        position += 1;
    }
    for (i, call) in turn["tool_calls"]
        .as_array()
        .cloned()
        .unwrap_or_default()
        .iter()
        .enumerate()
    {
        let call_id = call["id"]
            .as_str()
            .map(str::to_string)
            .unwrap_or_else(|| format!("call_{index}_{i}"));
        let item_id = format!("fc_{index}_{i}");
        let arguments = call["arguments"].to_string();
        out.push(json!({"type": "response.output_item.added", "output_index": position, "item": {"type": "function_call", "id": item_id, "call_id": call_id, "name": call["name"], "arguments": ""}}));
        for piece in split(
            &arguments,
            turn["json_chunks"].as_u64().unwrap_or(2) as usize,
        ) {
            out.push(json!({"type": "response.function_call_arguments.delta", "output_index": position, "delta": piece}));
        }
        out.push(json!({"type": "response.output_item.done", "output_index": position, "item": {"type": "function_call", "id": item_id, "call_id": call_id, "name": call["name"], "arguments": arguments}}));
        position += 1;
    }
    if turn["truncate"].as_bool() == Some(true) {
        return out;
    }
    let usage = turn
        .get("usage")
        .cloned()
        .unwrap_or(json!({"input": 100, "output": 20}));
    let (input, output, cached) = (
        usage["input"].as_u64().unwrap_or(0),
        usage["output"].as_u64().unwrap_or(0),
        usage["cache_read"].as_u64().unwrap_or(0),
    );
    out.push(json!({"type": "response.completed", "response": {"id": format!("resp_fake_{index}"), "status": "completed",
        "usage": {"input_tokens": input + cached, "output_tokens": output, "input_tokens_details": {"cached_tokens": cached}}}}));
    out
}

/// The Gemini `streamGenerateContent` SSE chunks of a turn.
fn gemini_chunks(turn: &Value, index: usize) -> Vec<Value> {
    let id = format!("gemini_fake_{index}");
    let chunk = |parts: Vec<Value>| json!({"candidates": [{"content": {"role": "model", "parts": parts}, "index": 0}], "responseId": id});
    let mut out = Vec::new();
    if let Some(thinking) = turn["thinking"].as_str() {
        for piece in split(
            thinking,
            turn["thinking_chunks"].as_u64().unwrap_or(2) as usize,
        ) {
            out.push(chunk(vec![json!({"text": piece, "thought": true})]));
        }
    }
    if let Some(text) = turn["text"].as_str() {
        for piece in split(text, turn["chunks"].as_u64().unwrap_or(4) as usize) {
            out.push(chunk(vec![json!({"text": piece})]));
        }
    }
    for call in turn["tool_calls"].as_array().cloned().unwrap_or_default() {
        let mut function_call = json!({"name": call["name"], "args": call["arguments"]});
        if let Some(id) = call["id"].as_str() {
            function_call["id"] = json!(id);
        }
        out.push(chunk(vec![
            json!({"functionCall": function_call, "thoughtSignature": "c2ln"}),
        ]));
    }
    if turn["truncate"].as_bool() == Some(true) {
        return out;
    }
    let usage = turn
        .get("usage")
        .cloned()
        .unwrap_or(json!({"input": 100, "output": 20}));
    let (input, output, cached) = (
        usage["input"].as_u64().unwrap_or(0),
        usage["output"].as_u64().unwrap_or(0),
        usage["cache_read"].as_u64().unwrap_or(0),
    );
    out.push(json!({"candidates": [{"content": {"role": "model", "parts": []}, "finishReason": "STOP", "index": 0}], "responseId": id,
        "usageMetadata": {"promptTokenCount": input + cached, "candidatesTokenCount": output, "cachedContentTokenCount": cached, "totalTokenCount": input + cached + output}}));
    out
}
