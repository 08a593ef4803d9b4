//! The `read` tool's images: a BMP is sent as a PNG, as pi converts it (models take no BMP),
//! checked by decoding the PNG here (chunk CRCs, the stored deflate blocks, Adler-32); a BMP
//! the converter does not know is refused saying so.

use crate::tools::Workspace;
use pith::content::Content;
use serde_json::json;

/// A BMP file of `rows` (top row first) of 24-bit pixels, stored bottom-up as BMP files are.
fn bmp(rows: &[&[[u8; 3]]]) -> Vec<u8> {
    let width = rows[0].len();
    let stride = (width * 3).div_ceil(4) * 4;
    let mut pixels = Vec::new();
    for row in rows.iter().rev() {
        let start = pixels.len();
        for [r, g, b] in row.iter() {
            pixels.extend_from_slice(&[*b, *g, *r]);
        }
        pixels.resize(start + stride, 0);
    }
    let mut file = b"BM".to_vec();
    file.extend_from_slice(&((54 + pixels.len()) as u32).to_le_bytes());
    file.extend_from_slice(&[0; 4]);
    file.extend_from_slice(&54u32.to_le_bytes());
    file.extend_from_slice(&40u32.to_le_bytes());
    file.extend_from_slice(&(width as i32).to_le_bytes());
    file.extend_from_slice(&(rows.len() as i32).to_le_bytes());
    file.extend_from_slice(&1u16.to_le_bytes());
    file.extend_from_slice(&24u16.to_le_bytes());
    file.extend_from_slice(&[0; 24]);
    file.extend_from_slice(&pixels);
    file
}

/// The size, color type and scanlines of a PNG made of stored deflate blocks, its chunks'
/// CRCs and the stream's Adler-32 checked.
fn stored_png(png: &[u8]) -> ((u32, u32, u8), Vec<u8>) {
    assert!(png.starts_with(b"\x89PNG\r\n\x1a\n"));
    let (mut at, mut header, mut idat) = (8, None, Vec::new());
    while at < png.len() {
        let len = u32::from_be_bytes(png[at..at + 4].try_into().unwrap()) as usize;
        let body = &png[at + 4..at + 8 + len];
        let crc = u32::from_be_bytes(png[at + 8 + len..at + 12 + len].try_into().unwrap());
        assert_eq!(crc, crc32fast::hash(body), "the CRC of a chunk");
        let data = &body[4..];
        match &body[..4] {
            b"IHDR" => {
                let int = |i: usize| u32::from_be_bytes(data[i..i + 4].try_into().unwrap());
                header = Some((int(0), int(4), data[9]));
            }
            b"IDAT" => idat.extend_from_slice(data),
            _ => {}
        }
        at += 12 + len;
    }
    let (mut raw, mut at) = (Vec::new(), 2);
    loop {
        let last = idat[at] & 1 == 1;
        assert_eq!(idat[at] & 6, 0, "a stored block");
        let len = u16::from_le_bytes([idat[at + 1], idat[at + 2]]) as usize;
        raw.extend_from_slice(&idat[at + 5..at + 5 + len]);
        at += 5 + len;
        if last {
            break;
        }
    }
    let (mut a, mut b) = (1u32, 0u32);
    for byte in &raw {
        a = (a + u32::from(*byte)) % 65521;
        b = (b + a) % 65521;
    }
    assert_eq!(idat[at..], ((b << 16) | a).to_be_bytes());
    (header.unwrap(), raw)
}

/// A BMP is sent as a PNG (models take no BMP), as pi converts it; one the converter does not
/// know is refused saying so.
#[tokio::test(flavor = "multi_thread")]
async fn read_sends_a_bmp_as_a_png() {
    let ws = Workspace::new().await;
    let (red, green, blue, white) = ([255, 0, 0], [0, 255, 0], [0, 0, 255], [255, 255, 255]);
    std::fs::write(
        ws.dir.path().join("flag.bmp"),
        bmp(&[&[red, green, blue], &[white, red, green]]),
    )
    .unwrap();
    let out = ws.call("read", json!({"path": "flag.bmp"})).await;
    assert!(!out.is_error, "{}", out.text());
    assert_eq!(out.content[0], Content::text("Read image file [image/png]"));
    let Content::Image { data, mime_type } = &out.content[1] else {
        panic!("{:?}", out.content)
    };
    assert_eq!(mime_type, "image/png");
    use base64::Engine;
    let png = base64::engine::general_purpose::STANDARD
        .decode(data)
        .unwrap();
    let (header, raw) = stored_png(&png);
    assert_eq!(header, (3, 2, 2), "3x2, RGB");
    assert_eq!(
        raw,
        [
            [&[0][..], &red, &green, &blue].concat(),
            [&[0][..], &white, &red, &green].concat()
        ]
        .concat()
    );
    let mut compressed = bmp(&[&[red]]);
    compressed[30] = 1; // RLE8
    std::fs::write(ws.dir.path().join("rle.bmp"), compressed).unwrap();
    let out = ws.call("read", json!({"path": "rle.bmp"})).await;
    assert!(out.is_error);
    assert!(
        out.text().ends_with(
            "rle.bmp: BMP files with 24 bits per pixel and compression 1 are not supported; convert it to PNG"
        ),
        "{}",
        out.text()
    );
}
