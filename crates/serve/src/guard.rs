//! What every request meets before a view: the names the server answers to, cross-site
//! requests that would change or cost something, the request target's length, and the
//! security headers of every answer.
//!
//! Loopback is the server's only access control, and a browser is the way around it: a page
//! whose DNS name is re-pointed to 127.0.0.1 (DNS rebinding) is same-origin with the server
//! and reads every answer, and any page can send a `POST` to it. So, as kubectl proxy, Vite and
//! webpack-dev-server do:
//!
//! - **Host**: a request is answered only when its `Host` names the server as it is
//!   reachable: an IP address (a rebinding page has a DNS name, never an address), `localhost`
//!   and `*.localhost` (which browsers resolve to loopback themselves), and the names given
//!   with [`Options::allowed_hosts`](crate::Options::allowed_hosts) (`--allow-host`: a
//!   reverse proxy's public name, a leading dot for a domain and its subdomains). Any other
//!   name is 403; several `Host` headers, or one that is not a host, are 400. A request with
//!   no `Host` at all (HTTP/1.0, a test's in-process request) comes from no browser and is
//!   answered.
//! - **Cross-site requests**: a request other than `GET`/`HEAD` is refused (403) when a
//!   browser says it comes from another site (`Sec-Fetch-Site: cross-site`/`same-site`, or an
//!   `Origin` that is neither this server's `Host` nor an allowed name, `Origin: null`
//!   included), and its body must not be one a page can send without asking first
//!   (`text/plain` or `multipart/form-data`: 415). `application/x-www-form-urlencoded`, what
//!   `curl -d` sends, stays accepted: a form cannot write a facts document in it (its `:`,
//!   `{` and spaces are percent-encoded), and browsers send an `Origin` with every form.

use axum::http::{header, HeaderMap, HeaderValue, Method, Request, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use std::sync::Arc;

/// The longest request target (path and query), in bytes.
pub const MAX_URI_BYTES: usize = 16 << 10;

/// The Content-Security-Policy of every answer: nothing but this server's own stylesheet and
/// script, no inline script or style, no frames, forms only to this server.
pub const CSP: &str = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; \
connect-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'";

/// Every request: see the [module](self). Every answer gets the security headers.
pub(crate) async fn guard(
    axum::extract::State(state): axum::extract::State<Arc<crate::State>>,
    request: Request<axum::body::Body>,
    next: Next,
) -> Response {
    let allowed = &state.options().allowed_hosts;
    let mut response = match refusal(&request, allowed) {
        Some((status, why)) => (status, why).into_response(),
        None => next.run(request).await,
    };
    let h = response.headers_mut();
    h.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(CSP),
    );
    h.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    h.insert(
        header::REFERRER_POLICY,
        HeaderValue::from_static("no-referrer"),
    );
    h.insert(header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
    response
}

/// Why `request` is not answered (a status and one line), if it is not.
fn refusal<B>(request: &Request<B>, allowed: &[String]) -> Option<(StatusCode, String)> {
    let too_long = request
        .uri()
        .path_and_query()
        .is_some_and(|pq| pq.as_str().len() > MAX_URI_BYTES);
    if too_long {
        return Some((StatusCode::URI_TOO_LONG, "request target too long\n".into()));
    }
    let headers = request.headers();
    let mut hosts = headers.get_all(header::HOST).iter();
    let host = match (hosts.next(), hosts.next()) {
        (Some(_), Some(_)) => {
            return Some((
                StatusCode::BAD_REQUEST,
                "more than one Host header\n".into(),
            ))
        }
        (Some(v), None) => match v.to_str().ok().and_then(host_of) {
            Some(h) => Some((h, v.to_str().unwrap_or_default())),
            None => {
                return Some((
                    StatusCode::BAD_REQUEST,
                    "the Host header is not a host\n".into(),
                ))
            }
        },
        (None, _) => None,
    };
    // An absolute-form target (`GET http://name/ HTTP/1.1`) names a host too.
    let target = request
        .uri()
        .host()
        .map(|h| h.trim_start_matches('[').trim_end_matches(']'));
    for name in host
        .as_ref()
        .map(|(h, _)| h.as_str())
        .into_iter()
        .chain(target)
    {
        if !is_allowed(name, allowed) {
            return Some((
                StatusCode::FORBIDDEN,
                format!(
                    "hiera-lookup serve answers only to the names it is reachable as (an IP address, localhost, or a name given with --allow-host): not to '{}'. Behind a reverse proxy that sends its own name, start the server with --allow-host {}\n",
                    hiera_value::escape::printable(name),
                    hiera_value::escape::printable(name)
                ),
            ));
        }
    }
    if matches!(
        *request.method(),
        Method::GET | Method::HEAD | Method::OPTIONS
    ) {
        return None;
    }
    let cross_site = || {
        Some((
            StatusCode::FORBIDDEN,
            format!(
                "a {} from another site is refused: a web page must not send requests to this server\n",
                request.method()
            ),
        ))
    };
    let fetch_site = headers.get("sec-fetch-site").and_then(|v| v.to_str().ok());
    if matches!(fetch_site, Some("cross-site" | "same-site")) {
        return cross_site();
    }
    if let Some(origin) = headers.get(header::ORIGIN) {
        let same = origin.to_str().ok().is_some_and(|o| {
            let authority = o.split_once("://").map(|(_, a)| a).unwrap_or("");
            let own = host
                .as_ref()
                .is_some_and(|(_, raw)| authority.eq_ignore_ascii_case(raw));
            own || host_of(authority).is_some_and(|h| listed(&h, allowed))
        });
        if !same {
            return cross_site();
        }
    }
    let kind = content_type(headers);
    if matches!(kind.as_str(), "text/plain" | "multipart/form-data") {
        return Some((
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            format!(
                "a {kind} body is refused (any web page can send one): send the document as application/json (curl -H 'Content-Type: application/json')\n"
            ),
        ));
    }
    None
}

/// The media type of the body, lower case, without parameters ("" when none is given).
fn content_type(headers: &HeaderMap) -> String {
    headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .map(|v| {
            v.split(';')
                .next()
                .unwrap_or("")
                .trim()
                .to_ascii_lowercase()
        })
        .unwrap_or_default()
}

/// The host of a `Host` value or an origin's authority (`name[:port]`, `[v6]:port`), lower
/// case, without a final dot; `None` when it is not one.
pub fn host_of(authority: &str) -> Option<String> {
    let authority = authority.trim();
    let host = if let Some(rest) = authority.strip_prefix('[') {
        let (v6, after) = rest.split_once(']')?;
        if !(after.is_empty() || after.starts_with(':')) {
            return None;
        }
        v6.parse::<std::net::Ipv6Addr>().ok()?;
        v6
    } else {
        match authority.rsplit_once(':') {
            Some((h, port)) if port.bytes().all(|b| b.is_ascii_digit()) => h,
            Some(_) => return None,
            None => authority,
        }
    };
    let host = host.strip_suffix('.').unwrap_or(host).to_ascii_lowercase();
    let name_char = |b: u8| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b':');
    (!host.is_empty() && host.bytes().all(name_char)).then_some(host)
}

/// Whether the server answers to `host` (see the [module](self)).
pub fn is_allowed(host: &str, allowed: &[String]) -> bool {
    let host = host.strip_suffix('.').unwrap_or(host).to_ascii_lowercase();
    host.parse::<std::net::IpAddr>().is_ok()
        || host == "localhost"
        || host.ends_with(".localhost")
        || listed(&host, allowed)
}

/// Whether `host` is one of the names given (a leading dot: that domain and its subdomains).
fn listed(host: &str, allowed: &[String]) -> bool {
    allowed.iter().any(|a| {
        let a = a.trim_end_matches('.').to_ascii_lowercase();
        match a.strip_prefix('.') {
            Some(domain) => host == domain || host.ends_with(&format!(".{domain}")),
            None => host == a,
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hosts_and_authorities() {
        assert_eq!(host_of("LocalHost:8080").as_deref(), Some("localhost"));
        assert_eq!(host_of("[::1]:8080").as_deref(), Some("::1"));
        assert_eq!(host_of("[::1]").as_deref(), Some("::1"));
        assert_eq!(host_of("example.com.").as_deref(), Some("example.com"));
        for bad in ["", "a b", "[::1", "[nope]:1", "host:port", "a/b", "ünï"] {
            assert_eq!(host_of(bad), None, "{bad}");
        }
        let allowed = vec!["hiera.example.com".to_string(), ".corp.example".to_string()];
        for ok in [
            "127.0.0.1",
            "10.1.2.3",
            "::1",
            "localhost",
            "app.localhost",
            "hiera.example.com",
            "corp.example",
            "a.b.corp.example",
        ] {
            assert!(is_allowed(ok, &allowed), "{ok}");
        }
        for refused in [
            "rebind.attacker.example",
            "example.com",
            "localhost.attacker.example",
            "xcorp.example",
            "127.0.0.1.nip.io",
        ] {
            assert!(!is_allowed(refused, &allowed), "{refused}");
        }
    }
}
