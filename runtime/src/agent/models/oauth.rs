//! The OAuth credentials pi's `/login` stores in `auth.json`
//! (`{"type": "oauth", "access", "refresh", "expires", …}`), used as pi 1.5.2 uses them: the
//! access token is refreshed against the provider's token endpoint when less than 5 minutes
//! are left (`expires` is in epoch milliseconds), the new tokens are written back under pi's
//! lock (`proper-lockfile`'s `<auth.json>.lock` directory, stale after 30 s) with every other
//! entry kept, and each provider's request gets what its tokens require (see
//! [`request_parts`]). Logging in stays pi's job.

use std::path::Path;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde_json::{Map, Value, json};

use crate::agent::models::errors::KeyError;

/// Refresh when fewer than this many milliseconds are left.
const MINIMUM_VALIDITY_MS: i64 = 5 * 60 * 1000;
/// How long a refresh may take.
const REFRESH_TIMEOUT: Duration = Duration::from_secs(15);
/// A lock older than this is taken over.
const LOCK_STALE: Duration = Duration::from_secs(30);

/// A stored OAuth credential: the whole `auth.json` entry.
#[derive(Debug, Clone, PartialEq)]
pub struct OAuthCredential {
    /// The entry as stored (`access`, `refresh`, `expires` and the provider's own fields).
    pub entry: Map<String, Value>,
}

impl OAuthCredential {
    /// The access token.
    pub fn access(&self) -> &str {
        self.entry
            .get("access")
            .and_then(Value::as_str)
            .unwrap_or("")
    }

    fn refresh_token(&self) -> &str {
        self.entry
            .get("refresh")
            .and_then(Value::as_str)
            .unwrap_or("")
    }

    fn expires(&self) -> i64 {
        self.entry
            .get("expires")
            .and_then(Value::as_f64)
            .map_or(0, |ms| ms as i64)
    }

    /// True when the access token has less than 5 minutes left and the provider can refresh it.
    pub fn needs_refresh(&self, provider: &str) -> bool {
        refresher(provider).is_some() && now_ms() + MINIMUM_VALIDITY_MS >= self.expires()
    }
}

fn now_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as i64)
}

/// How a provider renews its token.
#[derive(Clone, Copy)]
enum Refresher {
    /// `POST` JSON `{grant_type, client_id, refresh_token}` (Anthropic).
    Json {
        url: &'static str,
        client_id: &'static str,
        margin_ms: i64,
    },
    /// `POST` a form `{grant_type, client_id, refresh_token[, resource]}`.
    Form {
        url: &'static str,
        client_id: Option<&'static str>,
        resource: Option<&'static str>,
        margin_ms: i64,
    },
    /// GitHub Copilot: `GET` a Copilot token with the stored GitHub token.
    Copilot,
    /// Meta: mint a new key with the stored identity token.
    Meta,
}

fn refresher(provider: &str) -> Option<Refresher> {
    Some(match provider {
        "anthropic" => Refresher::Json {
            url: "https://platform.claude.com/v1/oauth/token",
            client_id: "9d1c250a-e61b-44d9-88ed-5944d1962f5e",
            margin_ms: 5 * 60 * 1000,
        },
        "openai" => Refresher::Form {
            url: "https://auth.openai.com/api/accounts/oauth/token",
            client_id: None,
            resource: Some("https://api.openai.com/v1"),
            margin_ms: 3 * 60 * 1000,
        },
        "xai" => Refresher::Form {
            url: "https://auth.x.ai/oauth2/token",
            client_id: Some("b1a00492-073a-47ea-816f-4c329264a828"),
            resource: None,
            margin_ms: 5 * 60 * 1000,
        },
        "kimi-coding" => Refresher::Form {
            url: "https://auth.kimi.com/api/oauth/token",
            client_id: Some("17e5f671-d194-4dfb-9706-5516cb48c098"),
            resource: None,
            margin_ms: 0,
        },
        "github-copilot" => Refresher::Copilot,
        "meta" => Refresher::Meta,
        _ => return None,
    })
}

/// The endpoint `default` of `provider`, or `PITH_OAUTH_TOKEN_URL_<PROVIDER>` (for a proxy or
/// a test server; `github-copilot` → `PITH_OAUTH_TOKEN_URL_GITHUB_COPILOT`).
fn endpoint(provider: &str, default: &str) -> String {
    let name = format!(
        "PITH_OAUTH_TOKEN_URL_{}",
        provider.to_ascii_uppercase().replace('-', "_")
    );
    std::env::var(name)
        .ok()
        .filter(|url| !url.is_empty())
        .unwrap_or_else(|| default.to_string())
}

/// The enterprise domain of a Copilot credential (`github.com` by default).
fn copilot_domain(entry: &Map<String, Value>) -> String {
    entry
        .get("enterpriseUrl")
        .and_then(Value::as_str)
        .map(|url| {
            let host = url.split("://").last().unwrap_or(url);
            host.split('/').next().unwrap_or(host).to_string()
        })
        .filter(|host| !host.is_empty())
        .unwrap_or_else(|| "github.com".into())
}

/// The headers Copilot's API expects from its editor client (pi's `COPILOT_HEADERS`).
const COPILOT_HEADERS: [(&str, &str); 4] = [
    ("User-Agent", "GitHubCopilotChat/0.35.0"),
    ("Editor-Version", "vscode/1.107.0"),
    ("Editor-Plugin-Version", "copilot-chat/0.35.0"),
    ("Copilot-Integration-Id", "vscode-chat"),
];

/// Asks the provider for new tokens: the new `auth.json` entry.
async fn renew(provider: &str, credential: &OAuthCredential) -> Result<Map<String, Value>, String> {
    let refresher = refresher(provider).ok_or("this provider's tokens cannot be refreshed")?;
    let client = reqwest::Client::builder()
        .timeout(REFRESH_TIMEOUT)
        .build()
        .map_err(|err| err.to_string())?;
    let refresh = credential.refresh_token();
    let send = |request: reqwest::RequestBuilder| async move {
        let response = request.send().await.map_err(|err| err.to_string())?;
        let status = response.status();
        let text = response.text().await.map_err(|err| err.to_string())?;
        if !status.is_success() {
            return Err(format!("HTTP {}: {}", status.as_u16(), text.trim()));
        }
        serde_json::from_str::<Value>(&text)
            .map_err(|err| format!("the token endpoint's answer is not JSON ({err}): {text}"))
    };
    let mut entry = Map::new();
    entry.insert("type".into(), json!("oauth"));
    match refresher {
        Refresher::Json {
            url,
            client_id,
            margin_ms,
        } => {
            let body = json!({"grant_type": "refresh_token", "client_id": client_id, "refresh_token": refresh});
            let data = send(
                client
                    .post(endpoint(provider, url))
                    .header("content-type", "application/json")
                    .header("accept", "application/json")
                    .body(body.to_string()),
            )
            .await?;
            token_fields(&mut entry, &data, refresh, margin_ms)?;
        }
        Refresher::Form {
            url,
            client_id,
            resource,
            margin_ms,
        } => {
            let client_id = match client_id {
                Some(id) => id.to_string(),
                None => credential
                    .entry
                    .get("clientId")
                    .and_then(Value::as_str)
                    .ok_or("the stored credential has no issued client id; log in again")?
                    .to_string(),
            };
            let mut form = vec![
                ("grant_type", "refresh_token".to_string()),
                ("client_id", client_id.clone()),
                ("refresh_token", refresh.to_string()),
            ];
            if let Some(resource) = resource {
                form.push(("resource", resource.to_string()));
            }
            let data = send(
                client
                    .post(endpoint(provider, url))
                    .header("accept", "application/json")
                    .form(&form),
            )
            .await?;
            token_fields(&mut entry, &data, refresh, margin_ms)?;
            if provider == "openai" {
                entry.insert("clientId".into(), json!(client_id));
                if let Some(scope) = data.get("scope").and_then(Value::as_str) {
                    entry.insert("scopes".into(), json!(scope.split(' ').collect::<Vec<_>>()));
                }
            }
        }
        Refresher::Copilot => {
            let domain = copilot_domain(&credential.entry);
            let url = endpoint(
                provider,
                &format!("https://api.{domain}/copilot_internal/v2/token"),
            );
            let mut request = client
                .get(url)
                .header("accept", "application/json")
                .bearer_auth(refresh);
            for (name, value) in COPILOT_HEADERS {
                request = request.header(name, value);
            }
            let data = send(request).await?;
            let token = data["token"]
                .as_str()
                .ok_or("Invalid Copilot token response")?;
            let expires_at = data["expires_at"]
                .as_f64()
                .ok_or("Invalid Copilot token response fields")?;
            entry.insert("refresh".into(), json!(refresh));
            entry.insert("access".into(), json!(token));
            entry.insert(
                "expires".into(),
                json!(expires_at as i64 * 1000 - 5 * 60 * 1000),
            );
            for kept in ["enterpriseUrl", "availableModelIds"] {
                if let Some(value) = credential.entry.get(kept) {
                    entry.insert(kept.into(), value.clone());
                }
            }
        }
        Refresher::Meta => {
            let url = endpoint(provider, "https://api.meta.ai/muse-code/key");
            let data = send(
                client
                    .post(url)
                    .bearer_auth(refresh)
                    .header("accept", "application/json")
                    .header("x-api-version", "1.0.0")
                    .header("content-type", "application/json")
                    .body("{}"),
            )
            .await?;
            let key = data["api_key"].as_str().ok_or("no api_key in the answer")?;
            entry.insert("refresh".into(), json!(refresh));
            entry.insert("access".into(), json!(key));
            entry.insert("expires".into(), json!(now_ms() + 24 * 60 * 60 * 1000));
        }
    }
    Ok(entry)
}

/// `access`, `refresh` (the old one when none is given) and `expires` from a token answer.
fn token_fields(
    entry: &mut Map<String, Value>,
    data: &Value,
    old_refresh: &str,
    margin_ms: i64,
) -> Result<(), String> {
    let access = data["access_token"]
        .as_str()
        .ok_or("the token endpoint gave no access_token")?;
    let expires_in = data["expires_in"].as_f64().unwrap_or(3600.0);
    entry.insert("access".into(), json!(access));
    entry.insert(
        "refresh".into(),
        json!(data["refresh_token"].as_str().unwrap_or(old_refresh)),
    );
    entry.insert(
        "expires".into(),
        json!(now_ms() + (expires_in * 1000.0) as i64 - margin_ms),
    );
    Ok(())
}

/// Renews `provider`'s credential in `auth_file` when it is about to expire: under the lock,
/// read again (another process may have renewed it), renewed, written back with every other
/// entry. The credential to use; an error that says how to log in again.
pub async fn refreshed(
    auth_file: &Path,
    provider: &str,
    credential: &OAuthCredential,
) -> Result<OAuthCredential, KeyError> {
    let failed = |cause: String| KeyError::OAuthRefresh {
        provider: provider.to_string(),
        cause,
    };
    let _lock = FileLock::acquire(auth_file).await.map_err(failed)?;
    let mut entries: Map<String, Value> = match std::fs::read_to_string(auth_file) {
        Ok(text) if text.trim().is_empty() => Map::new(),
        Ok(text) => serde_json::from_str(text.trim_start_matches('\u{feff}'))
            .map_err(|err| failed(format!("{}: {err}", auth_file.display())))?,
        Err(err) => return Err(failed(format!("{}: {err}", auth_file.display()))),
    };
    let current = match entries.get(provider) {
        Some(Value::Object(entry)) if entry.get("type") == Some(&json!("oauth")) => {
            OAuthCredential {
                entry: entry.clone(),
            }
        }
        _ => credential.clone(),
    };
    if !current.needs_refresh(provider) {
        return Ok(current);
    }
    let renewed = renew(provider, &current).await.map_err(failed)?;
    entries.insert(provider.to_string(), Value::Object(renewed.clone()));
    let text = serde_json::to_string_pretty(&entries).map_err(|err| failed(err.to_string()))?;
    std::fs::write(auth_file, text)
        .map_err(|err| failed(format!("{}: {err}", auth_file.display())))?;
    Ok(OAuthCredential { entry: renewed })
}

/// What a request with `credential` needs: the key, headers instead of or beside it, and a
/// base URL that replaces the model's.
pub fn request_parts(
    provider: &str,
    credential: &OAuthCredential,
) -> (Option<String>, Vec<(String, String)>, Option<String>) {
    let access = credential.access().to_string();
    match provider {
        // Kimi Code takes its token as a header, not as a key.
        "kimi-coding" => (
            None,
            vec![("Authorization".into(), format!("Bearer {access}"))],
            None,
        ),
        "github-copilot" => {
            let base = copilot_base_url(&access, &credential.entry);
            (Some(access), Vec::new(), Some(base))
        }
        _ => (Some(access), Vec::new(), None),
    }
}

/// pi's `getGitHubCopilotBaseUrl`: the token's `proxy-ep` with `proxy.` made `api.`, else the
/// enterprise's `copilot-api.` host, else the individual endpoint.
fn copilot_base_url(token: &str, entry: &Map<String, Value>) -> String {
    if let Some(proxy) = token
        .split(';')
        .find_map(|field| field.strip_prefix("proxy-ep="))
        .filter(|p| !p.is_empty())
    {
        let host = proxy
            .strip_prefix("proxy.")
            .map_or_else(|| proxy.to_string(), |rest| format!("api.{rest}"));
        return format!("https://{host}");
    }
    if entry.get("enterpriseUrl").is_some() {
        return format!("https://copilot-api.{}", copilot_domain(entry));
    }
    "https://api.individual.githubcopilot.com".into()
}

/// pi's lock on `auth.json` (`proper-lockfile`): a directory `<real path>.lock` made with
/// `mkdir`, taken over when older than 30 s, waited for up to 30 s.
struct FileLock {
    path: std::path::PathBuf,
}

impl FileLock {
    async fn acquire(file: &Path) -> Result<FileLock, String> {
        let real = file.canonicalize().unwrap_or_else(|_| file.to_path_buf());
        let mut name = real.into_os_string();
        name.push(".lock");
        let path = std::path::PathBuf::from(name);
        let started = std::time::Instant::now();
        let mut retry = 0u32;
        loop {
            match std::fs::create_dir(&path) {
                Ok(()) => return Ok(FileLock { path }),
                Err(err) if err.kind() == std::io::ErrorKind::AlreadyExists => {
                    let stale = std::fs::metadata(&path)
                        .and_then(|m| m.modified())
                        .ok()
                        .and_then(|at| at.elapsed().ok())
                        .is_some_and(|age| age > LOCK_STALE);
                    if stale {
                        let _ = std::fs::remove_dir(&path);
                        continue;
                    }
                    if started.elapsed() > LOCK_STALE {
                        return Err(format!("{} is locked by another process", file.display()));
                    }
                    let delay = (10u64 << retry.min(7)).min(1000);
                    retry += 1;
                    tokio::time::sleep(Duration::from_millis(delay)).await;
                }
                Err(err) => return Err(format!("cannot lock {}: {err}", file.display())),
            }
        }
    }
}

impl Drop for FileLock {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir(&self.path);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn copilot_endpoints() {
        let entry = Map::new();
        assert_eq!(
            copilot_base_url(
                "tid=1;exp=2;proxy-ep=proxy.individual.githubcopilot.com;x=y",
                &entry
            ),
            "https://api.individual.githubcopilot.com"
        );
        let mut enterprise = Map::new();
        enterprise.insert("enterpriseUrl".into(), json!("https://ghe.example.com/"));
        assert_eq!(
            copilot_base_url("tid=1", &enterprise),
            "https://copilot-api.ghe.example.com"
        );
        assert_eq!(
            copilot_base_url("tid=1", &entry),
            "https://api.individual.githubcopilot.com"
        );
    }
}
