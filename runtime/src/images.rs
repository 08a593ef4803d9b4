//! Images fitted for models, as pi's `images.autoResize` does: an image larger than 2000×2000
//! pixels, or whose base64 passes 4.5 MB, is resized (Lanczos3) and sent as the smaller of PNG
//! and JPEG (quality 80, then lower, then smaller sizes) below the byte limit, with pi's note
//! on how its coordinates map to the original. EXIF orientation is applied first.

use std::io::Cursor;

use base64::Engine;
use image::{DynamicImage, ImageDecoder, ImageReader, imageops::FilterType};

use crate::content::Content;

/// pi's limits: the largest width and height, and the largest base64 size.
const MAX_SIDE: u32 = 2000;
const MAX_BASE64_BYTES: usize = 4_718_592; // 4.5 MiB
/// JPEG qualities tried, in order.
const JPEG_QUALITIES: [u8; 5] = [80, 85, 70, 55, 40];

/// What fitting an image did.
#[derive(Debug, Clone, PartialEq)]
pub enum Fitted {
    /// It fits as it is.
    Unchanged,
    /// It was made smaller: its new base64 data, type and pi's note.
    Resized {
        /// The base64 data.
        data: String,
        /// Its MIME type.
        mime_type: String,
        /// pi's `[Image: original WxH, displayed at wxh. …]`.
        note: String,
    },
    /// It could not be read or made small enough: pi's note for it.
    Failed(String),
}

/// pi's note for an image that could not be fitted.
pub const NOT_FITTED: &str =
    "[Image omitted: could not be resized below the inline image size limit.]";

/// Fits the image in `data` (base64) for a model.
pub fn fit(data: &str) -> Fitted {
    let engine = base64::engine::general_purpose::STANDARD;
    let Ok(bytes) = engine.decode(data) else {
        return Fitted::Failed(NOT_FITTED.into());
    };
    let Some(image) = decode(&bytes) else {
        return Fitted::Failed(NOT_FITTED.into());
    };
    let (width, height) = (image.width(), image.height());
    if width <= MAX_SIDE && height <= MAX_SIDE && data.len() < MAX_BASE64_BYTES {
        return Fitted::Unchanged;
    }
    let (mut w, mut h) = (width, height);
    if w > MAX_SIDE {
        h = ((u64::from(h) * u64::from(MAX_SIDE)) as f64 / f64::from(w)).round() as u32;
        w = MAX_SIDE;
    }
    if h > MAX_SIDE {
        w = ((u64::from(w) * u64::from(MAX_SIDE)) as f64 / f64::from(h)).round() as u32;
        h = MAX_SIDE;
    }
    let (mut w, mut h) = (w.max(1), h.max(1));
    loop {
        let resized = image.resize_exact(w, h, FilterType::Lanczos3);
        let png = encode_png(&resized);
        let jpegs: Vec<Option<String>> = JPEG_QUALITIES
            .iter()
            .map(|q| encode_jpeg(&resized, *q))
            .collect();
        let mut candidates: Vec<(String, &str)> = Vec::new();
        match (&png, &jpegs[0]) {
            (Some(png), Some(jpeg)) if jpeg.len() < png.len() => {
                candidates.push((jpeg.clone(), "image/jpeg"));
                candidates.push((png.clone(), "image/png"));
            }
            _ => {
                candidates.extend(png.clone().map(|p| (p, "image/png")));
                candidates.extend(jpegs[0].clone().map(|j| (j, "image/jpeg")));
            }
        }
        candidates.extend(
            jpegs[1..]
                .iter()
                .flatten()
                .map(|j| (j.clone(), "image/jpeg")),
        );
        if let Some((data, mime_type)) = candidates
            .into_iter()
            .find(|(data, _)| data.len() < MAX_BASE64_BYTES)
        {
            let scale = f64::from(width) / f64::from(w);
            return Fitted::Resized {
                data,
                mime_type: mime_type.to_string(),
                note: format!(
                    "[Image: original {width}x{height}, displayed at {w}x{h}. Multiply coordinates by {scale:.2} to map to original image.]"
                ),
            };
        }
        if w == 1 && h == 1 {
            return Fitted::Failed(NOT_FITTED.into());
        }
        let shrink = |side: u32| if side == 1 { 1 } else { (side * 3 / 4).max(1) };
        (w, h) = (shrink(w), shrink(h));
    }
}

/// Fits the images of a tool's result, as pi normalizes them when they enter the
/// conversation: a resized one is followed by a text block with pi's note; one that cannot be
/// read stays as the tool made it.
pub fn fit_tool_images(content: &mut Vec<Content>) {
    if !content.iter().any(|c| matches!(c, Content::Image { .. })) {
        return;
    }
    let mut fitted = Vec::with_capacity(content.len() + 1);
    for block in content.drain(..) {
        match &block {
            Content::Image { data, .. } => match fit(data) {
                Fitted::Resized {
                    data,
                    mime_type,
                    note,
                } => {
                    fitted.push(Content::Image { data, mime_type });
                    fitted.push(Content::text(note));
                }
                Fitted::Unchanged | Fitted::Failed(_) => fitted.push(block),
            },
            Content::Text { .. } => fitted.push(block),
        }
    }
    *content = fitted;
}

/// Fits a prompt's images, as pi does: a resized one replaces the original, one that cannot
/// be read or made small enough is dropped; returns pi's notes for the prompt's text.
pub fn fit_prompt_images(images: &mut Vec<Content>) -> Vec<String> {
    let mut notes = Vec::new();
    images.retain_mut(|block| {
        let Content::Image { data, mime_type } = block else {
            return true;
        };
        match fit(data) {
            Fitted::Unchanged => true,
            Fitted::Resized {
                data: resized,
                mime_type: kind,
                note,
            } => {
                (*data, *mime_type) = (resized, kind);
                notes.push(note);
                true
            }
            Fitted::Failed(note) => {
                notes.push(note);
                false
            }
        }
    });
    notes
}

/// The image in `bytes`, turned as its EXIF orientation says.
fn decode(bytes: &[u8]) -> Option<DynamicImage> {
    let reader = ImageReader::new(Cursor::new(bytes))
        .with_guessed_format()
        .ok()?;
    let mut decoder = reader.into_decoder().ok()?;
    let orientation = decoder.orientation().ok();
    let mut image = DynamicImage::from_decoder(decoder).ok()?;
    if let Some(orientation) = orientation {
        image.apply_orientation(orientation);
    }
    Some(image)
}

fn encode_png(image: &DynamicImage) -> Option<String> {
    let mut out = Vec::new();
    image
        .write_to(&mut Cursor::new(&mut out), image::ImageFormat::Png)
        .ok()?;
    Some(base64::engine::general_purpose::STANDARD.encode(out))
}

fn encode_jpeg(image: &DynamicImage, quality: u8) -> Option<String> {
    let mut out = Vec::new();
    let encoder = image::codecs::jpeg::JpegEncoder::new_with_quality(&mut out, quality);
    DynamicImage::ImageRgb8(image.to_rgb8())
        .write_with_encoder(encoder)
        .ok()?;
    Some(base64::engine::general_purpose::STANDARD.encode(out))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn png(width: u32, height: u32) -> String {
        let image = DynamicImage::ImageRgb8(image::RgbImage::from_fn(width, height, |x, y| {
            image::Rgb([(x % 256) as u8, (y % 256) as u8, 128])
        }));
        encode_png(&image).unwrap()
    }

    #[test]
    fn a_large_image_is_resized_with_pi_s_note() {
        match fit(&png(3000, 1000)) {
            Fitted::Resized { data, note, .. } => {
                assert_eq!(
                    note,
                    "[Image: original 3000x1000, displayed at 2000x667. Multiply coordinates by 1.50 to map to original image.]"
                );
                let bytes = base64::engine::general_purpose::STANDARD
                    .decode(data)
                    .unwrap();
                let image = image::load_from_memory(&bytes).unwrap();
                assert_eq!((image.width(), image.height()), (2000, 667));
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn a_small_image_fits_and_a_broken_one_is_named() {
        assert_eq!(fit(&png(20, 10)), Fitted::Unchanged);
        assert_eq!(fit("aGk="), Fitted::Failed(NOT_FITTED.into()));
    }
}
