//! BMP images as PNG (models take PNG, not BMP, as pi converts them): uncompressed 8-bit
//! (palette), 24-bit and 32-bit bitmaps, bottom-up or top-down, with `BI_BITFIELDS` masks.
//! The PNG is stored without compression (deflate's stored blocks): what the model is sent
//! is base64 anyway, and the converter stays small. Tested through the tool
//! (`tests/all/tools.rs`).

/// The largest image converted (pixels): 64 megapixels.
const MAX_PIXELS: u64 = 64 * 1024 * 1024;

/// True when `bytes` start as a BMP file does (`BM`, then a known header size).
pub fn is_bmp(bytes: &[u8]) -> bool {
    bytes.len() >= 26
        && bytes.starts_with(b"BM")
        && matches!(u32_at(bytes, 14), Some(12 | 40 | 52 | 56 | 64 | 108 | 124))
}

fn u16_at(bytes: &[u8], at: usize) -> Option<u16> {
    Some(u16::from_le_bytes(bytes.get(at..at + 2)?.try_into().ok()?))
}

fn u32_at(bytes: &[u8], at: usize) -> Option<u32> {
    Some(u32::from_le_bytes(bytes.get(at..at + 4)?.try_into().ok()?))
}

/// The BMP in `bytes` as a PNG file, or why it cannot be converted.
pub fn to_png(bytes: &[u8]) -> Result<Vec<u8>, String> {
    let broken = || "the BMP file is cut short or malformed".to_string();
    let data_at = u32_at(bytes, 10).ok_or_else(broken)? as usize;
    let header = u32_at(bytes, 14).ok_or_else(broken)? as usize;
    if header < 40 {
        return Err("OS/2 BMP files are not supported; convert it to PNG".into());
    }
    let width = u32_at(bytes, 18).ok_or_else(broken)? as i32;
    let height = u32_at(bytes, 22).ok_or_else(broken)? as i32;
    let bits = u16_at(bytes, 28).ok_or_else(broken)?;
    let compression = u32_at(bytes, 30).ok_or_else(broken)?;
    let (width, top_down, height) = (
        width.unsigned_abs() as usize,
        height < 0,
        height.unsigned_abs() as usize,
    );
    if width == 0 || height == 0 || (width as u64) * (height as u64) > MAX_PIXELS {
        return Err(format!("a {width}x{height} BMP is not converted"));
    }
    let masks = match (compression, bits) {
        (0, 24 | 8) => None,
        (0, 32) => Some([0x00ff_0000, 0x0000_ff00, 0x0000_00ff, 0]),
        (3 | 6, 32) => {
            // The masks follow a 40-byte header; later headers hold them in place.
            let mask = |i: usize| u32_at(bytes, 14 + 40 + 4 * i).ok_or_else(broken);
            let alpha = if header >= 56 || compression == 6 {
                mask(3)?
            } else {
                0
            };
            Some([mask(0)?, mask(1)?, mask(2)?, alpha])
        }
        _ => {
            return Err(format!(
                "BMP files with {bits} bits per pixel and compression {compression} are not supported; convert it to PNG"
            ));
        }
    };
    let palette: Vec<[u8; 3]> = if bits == 8 {
        let colors = match u32_at(bytes, 46).ok_or_else(broken)? {
            0 => 256,
            n => n.min(256) as usize,
        };
        (0..colors)
            .map(|i| {
                let at = 14 + header + 4 * i;
                let c = bytes.get(at..at + 3).ok_or_else(broken)?;
                Ok([c[2], c[1], c[0]])
            })
            .collect::<Result<_, String>>()?
    } else {
        Vec::new()
    };
    let alpha = masks.is_some_and(|m| m[3] != 0);
    let channels = if alpha { 4 } else { 3 };
    let stride = (width * bits as usize).div_ceil(32) * 4;
    let mut raw = Vec::with_capacity(height * (1 + width * channels));
    for row in 0..height {
        let source = if top_down { row } else { height - 1 - row };
        let start = data_at + source * stride;
        let line = bytes
            .get(start..start + (width * bits as usize).div_ceil(8))
            .ok_or_else(broken)?;
        raw.push(0); // PNG filter: none
        for x in 0..width {
            match (bits, masks) {
                (8, _) => {
                    let color = palette.get(line[x] as usize).ok_or_else(broken)?;
                    raw.extend_from_slice(color);
                }
                (24, _) => raw.extend_from_slice(&[line[3 * x + 2], line[3 * x + 1], line[3 * x]]),
                (_, Some(masks)) => {
                    let pixel = u32::from_le_bytes([
                        line[4 * x],
                        line[4 * x + 1],
                        line[4 * x + 2],
                        line[4 * x + 3],
                    ]);
                    for mask in &masks[..channels] {
                        raw.push(channel(pixel, *mask));
                    }
                }
                _ => return Err(broken()),
            }
        }
    }
    Ok(png(width as u32, height as u32, alpha, &raw))
}

/// The value of the channel `mask` selects in `pixel`, scaled to 8 bits.
fn channel(pixel: u32, mask: u32) -> u8 {
    if mask == 0 {
        return 0;
    }
    let value = (pixel & mask) >> mask.trailing_zeros();
    let max = mask >> mask.trailing_zeros();
    ((u64::from(value) * 255 + u64::from(max) / 2) / u64::from(max)) as u8
}

/// A PNG file of `raw` (filtered scanlines, RGB or RGBA at 8 bits).
fn png(width: u32, height: u32, alpha: bool, raw: &[u8]) -> Vec<u8> {
    let mut out = b"\x89PNG\r\n\x1a\n".to_vec();
    let mut header = Vec::with_capacity(13);
    header.extend_from_slice(&width.to_be_bytes());
    header.extend_from_slice(&height.to_be_bytes());
    header.extend_from_slice(&[8, if alpha { 6 } else { 2 }, 0, 0, 0]);
    chunk(&mut out, b"IHDR", &header);
    chunk(&mut out, b"IDAT", &zlib_stored(raw));
    chunk(&mut out, b"IEND", &[]);
    out
}

fn chunk(out: &mut Vec<u8>, kind: &[u8; 4], data: &[u8]) {
    out.extend_from_slice(&(data.len() as u32).to_be_bytes());
    let start = out.len();
    out.extend_from_slice(kind);
    out.extend_from_slice(data);
    let crc = crc32(&out[start..]);
    out.extend_from_slice(&crc.to_be_bytes());
}

/// `data` as a zlib stream of stored (uncompressed) deflate blocks.
fn zlib_stored(data: &[u8]) -> Vec<u8> {
    let mut out = vec![0x78, 0x01];
    let mut blocks = data.chunks(0xffff).peekable();
    if blocks.peek().is_none() {
        out.extend_from_slice(&[1, 0, 0, 0xff, 0xff]);
    }
    while let Some(block) = blocks.next() {
        out.push(u8::from(blocks.peek().is_none()));
        let len = block.len() as u16;
        out.extend_from_slice(&len.to_le_bytes());
        out.extend_from_slice(&(!len).to_le_bytes());
        out.extend_from_slice(block);
    }
    let (mut a, mut b) = (1u32, 0u32);
    for byte in data {
        a = (a + u32::from(*byte)) % 65521;
        b = (b + a) % 65521;
    }
    out.extend_from_slice(&((b << 16) | a).to_be_bytes());
    out
}

fn crc32(data: &[u8]) -> u32 {
    let mut crc = 0xffff_ffffu32;
    for byte in data {
        crc ^= u32::from(*byte);
        for _ in 0..8 {
            crc = if crc & 1 == 1 {
                (crc >> 1) ^ 0xedb8_8320
            } else {
                crc >> 1
            };
        }
    }
    !crc
}
