//! Reading a command's fields with errors that name the field.

use serde_json::{Map, Value};

use crate::content::Content;

/// A command object.
pub struct Fields<'a>(pub &'a Map<String, Value>);

impl<'a> Fields<'a> {
    /// A required string.
    pub fn string(&self, name: &str) -> Result<&'a str, String> {
        match self.0.get(name) {
            Some(Value::String(s)) => Ok(s),
            None | Some(Value::Null) => Err(format!("Missing required field \"{name}\"")),
            Some(other) => Err(format!(
                "Field \"{name}\" must be a string, got {}",
                kind(other)
            )),
        }
    }

    /// An optional string.
    pub fn opt_string(&self, name: &str) -> Result<Option<&'a str>, String> {
        match self.0.get(name) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(s)) => Ok(Some(s)),
            Some(other) => Err(format!(
                "Field \"{name}\" must be a string, got {}",
                kind(other)
            )),
        }
    }

    /// An optional non-negative integer.
    pub fn opt_u64(&self, name: &str) -> Result<Option<u64>, String> {
        match self.0.get(name) {
            None | Some(Value::Null) => Ok(None),
            Some(value) => value.as_u64().map(Some).ok_or_else(|| {
                format!(
                    "Field \"{name}\" must be a non-negative integer, got {}",
                    kind(value)
                )
            }),
        }
    }

    /// A required boolean.
    pub fn boolean(&self, name: &str) -> Result<bool, String> {
        self.opt_boolean(name)?
            .ok_or_else(|| format!("Missing required field \"{name}\""))
    }

    /// An optional boolean.
    pub fn opt_boolean(&self, name: &str) -> Result<Option<bool>, String> {
        match self.0.get(name) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::Bool(b)) => Ok(Some(*b)),
            Some(other) => Err(format!(
                "Field \"{name}\" must be a boolean, got {}",
                kind(other)
            )),
        }
    }

    /// A string that must be one of `allowed`.
    pub fn one_of(&self, name: &str, allowed: &[&str]) -> Result<&'a str, String> {
        let value = self.string(name)?;
        if allowed.contains(&value) {
            Ok(value)
        } else {
            Err(format!(
                "Field \"{name}\" must be one of {}, got \"{value}\"",
                allowed
                    .iter()
                    .map(|a| format!("\"{a}\""))
                    .collect::<Vec<_>>()
                    .join(", ")
            ))
        }
    }

    /// Optional `images` (`[{"type":"image","data","mimeType"}]`) and pi 0.16's `attachments`.
    pub fn images(&self) -> Result<Vec<Content>, String> {
        let mut content = self.image_list()?;
        content.extend(self.attachments()?);
        Ok(content)
    }

    /// pi 0.16's `attachments` (`{type: "image" | "document", fileName, mimeType, content,
    /// extractedText?}`): images become image blocks, documents a text block with their text.
    fn attachments(&self) -> Result<Vec<Content>, String> {
        let items = match self.0.get("attachments") {
            None | Some(Value::Null) => return Ok(Vec::new()),
            Some(Value::Array(items)) => items,
            Some(other) => {
                return Err(format!(
                    "Field \"attachments\" must be an array, got {}",
                    kind(other)
                ));
            }
        };
        items
            .iter()
            .enumerate()
            .map(|(i, item)| {
                let field = |key: &str| item.get(key).and_then(Value::as_str);
                let name = field("fileName").unwrap_or("attachment");
                match (field("type"), field("content"), field("mimeType")) {
                    (Some("image"), Some(data), Some(mime)) => Ok(Content::Image {
                        data: data.to_string(),
                        mime_type: mime.to_string(),
                    }),
                    (Some("document"), _, _) => {
                        let text = field("extractedText").unwrap_or("(no text extracted)");
                        Ok(Content::text(format!("<document name=\"{name}\">\n{text}\n</document>")))
                    }
                    _ => Err(format!(
                        "Field \"attachments[{i}]\" must be {{\"type\":\"image\"|\"document\",\"fileName\",\"mimeType\",\"content\":<base64>,\"extractedText\"?}}"
                    )),
                }
            })
            .collect()
    }

    fn image_list(&self) -> Result<Vec<Content>, String> {
        match self.0.get("images") {
            None | Some(Value::Null) => Ok(Vec::new()),
            Some(Value::Array(items)) => items
                .iter()
                .enumerate()
                .map(|(i, item)| {
                    let data = item.get("data").and_then(Value::as_str);
                    let mime = item.get("mimeType").and_then(Value::as_str);
                    match (data, mime) {
                        (Some(data), Some(mime)) => Ok(Content::Image { data: data.to_string(), mime_type: mime.to_string() }),
                        _ => Err(format!("Field \"images[{i}]\" must be {{\"type\":\"image\",\"data\":<base64>,\"mimeType\":<string>}}")),
                    }
                })
                .collect(),
            Some(other) => Err(format!("Field \"images\" must be an array, got {}", kind(other))),
        }
    }

    /// A required value of any JSON type, deserialized.
    pub fn parse<T: serde::de::DeserializeOwned>(&self, name: &str) -> Result<T, String> {
        let value = self
            .0
            .get(name)
            .filter(|v| !v.is_null())
            .ok_or_else(|| format!("Missing required field \"{name}\""))?;
        serde_json::from_value(value.clone())
            .map_err(|err| format!("Field \"{name}\" is invalid: {err}"))
    }
}

/// The JSON type of a value, for messages.
pub fn kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}
