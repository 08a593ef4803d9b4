//! The stdin framing: any bytes, read in any chunking, split into lines that hold no LF and
//! stay within the limit; nothing panics and nothing is lost (the lines' lengths add up).
#![no_main]

use libfuzzer_sys::fuzz_target;

#[path = "../../runtime/src/rpc/framing.rs"]
#[allow(dead_code, missing_docs)]
mod framing;

use framing::{Line, LineReader};

const LIMIT: usize = 64;

fuzz_target!(|data: &[u8]| {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .build()
        .expect("a runtime");
    runtime.block_on(async {
        let mut reader = LineReader::with_limit(data, LIMIT);
        let mut seen = 0usize;
        while let Some(line) = reader
            .next_line()
            .await
            .expect("reading a slice cannot fail")
        {
            match line {
                Line::Text(text) => {
                    assert!(!text.contains('\n'));
                    assert!(text.len() <= LIMIT);
                    seen += text.len();
                }
                Line::TooLong(len, head) => {
                    assert!(len > LIMIT);
                    assert!(head.len() <= len);
                    seen += len;
                }
                Line::InvalidUtf8 => {}
            }
        }
        assert!(seen <= data.len());
    });
});
