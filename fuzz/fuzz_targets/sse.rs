//! The providers' SSE parser: any body, split anywhere, gives the same events as the body fed
//! at once; nothing panics.
#![no_main]

use libfuzzer_sys::fuzz_target;

#[path = "../../sdk/src/sse.rs"]
#[allow(dead_code, missing_docs)]
mod sse;

fuzz_target!(|data: &[u8]| {
    if data.is_empty() {
        return;
    }
    let split = data[0] as usize % data.len();
    let body = &data[1..];
    let split = split.min(body.len());

    let mut whole = sse::SseParser::default();
    let mut expected = whole.feed(body);
    expected.extend(whole.finish());

    let mut parts = sse::SseParser::default();
    let mut got = parts.feed(&body[..split]);
    got.extend(parts.feed(&body[split..]));
    got.extend(parts.finish());
    assert_eq!(got, expected);
});
