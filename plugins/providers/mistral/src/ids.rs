//! Tool call ids for Mistral, which takes 9 letters and digits: a call of another model gets
//! pi's id for it (`deriveMistralToolCallId`: the id's own letters and digits when they are 9,
//! else the start of pi's `shortHash` of them), so a session moved to Mistral keeps working.

/// Mistral's id length.
const LENGTH: usize = 9;

/// pi's `shortHash` (a cyrb53 variant over UTF-16 code units, in base 36).
pub fn short_hash(text: &str) -> String {
    let (mut h1, mut h2): (u32, u32) = (0xdeadbeef, 0x41c6ce57);
    for unit in text.encode_utf16() {
        let ch = u32::from(unit);
        h1 = (h1 ^ ch).wrapping_mul(2654435761);
        h2 = (h2 ^ ch).wrapping_mul(1597334677);
    }
    h1 = (h1 ^ (h1 >> 16)).wrapping_mul(2246822507) ^ (h2 ^ (h2 >> 13)).wrapping_mul(3266489909);
    h2 = (h2 ^ (h2 >> 16)).wrapping_mul(2246822507) ^ (h1 ^ (h1 >> 13)).wrapping_mul(3266489909);
    format!("{}{}", base36(h2), base36(h1))
}

fn base36(mut n: u32) -> String {
    let digits = b"0123456789abcdefghijklmnopqrstuvwxyz";
    let mut out = Vec::new();
    loop {
        out.push(digits[(n % 36) as usize]);
        n /= 36;
        if n == 0 {
            break;
        }
    }
    out.reverse();
    String::from_utf8(out).unwrap_or_default()
}

/// pi's `deriveMistralToolCallId` for `id`, attempt `attempt` (a collision tries the next).
pub fn derive(id: &str, attempt: u32) -> String {
    let alnum: String = id.chars().filter(char::is_ascii_alphanumeric).collect();
    if attempt == 0 && alnum.len() == LENGTH {
        return alnum;
    }
    let base = if alnum.is_empty() { id } else { alnum.as_str() };
    let seed = if attempt == 0 {
        base.to_string()
    } else {
        format!("{base}:{attempt}")
    };
    short_hash(&seed)
        .chars()
        .filter(char::is_ascii_alphanumeric)
        .take(LENGTH)
        .collect()
}

/// The ids given to other models' calls in one request (distinct ids never share one).
#[derive(Default)]
pub struct IdMap {
    given: Vec<(String, String)>,
}

impl IdMap {
    /// The Mistral id for `id`.
    pub fn id_for(&mut self, id: &str) -> String {
        if let Some((_, given)) = self.given.iter().find(|(original, _)| original == id) {
            return given.clone();
        }
        let mut attempt = 0;
        loop {
            let candidate = derive(id, attempt);
            if !self.given.iter().any(|(_, given)| *given == candidate) {
                self.given.push((id.to_string(), candidate.clone()));
                return candidate;
            }
            attempt += 1;
        }
    }

    /// The id a result of `id` answers: the one given to its call, else `id` itself.
    pub fn result_id(&self, id: &str) -> String {
        self.given
            .iter()
            .find(|(original, _)| original == id)
            .map_or_else(|| id.to_string(), |(_, given)| given.clone())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pi_s_hashes_and_ids() {
        for (text, hash) in [
            ("", "k4n83c7h0j2b"),
            ("a", "m8735310ae7sx"),
            ("fc_123", "1rdofl04o64wq"),
            ("callabcfc123", "18g6kob34a53k"),
            ("call_abc", "py36n51ekigv6"),
            ("toolcall:0", "1nlso9v7di2pi"),
            ("héllo", "z4q6iv1qt99b0"),
        ] {
            assert_eq!(short_hash(text), hash, "{text:?}");
        }
        assert_eq!(derive("call_abc|fc_123", 0), "18g6kob34");
        assert_eq!(derive("D681PevKs", 0), "D681PevKs");
        assert_eq!(derive("toolcall:0", 0), "toolcall0");
    }
}
