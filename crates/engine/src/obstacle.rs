//! Obstacle detection: is the page a captcha, a login wall, an access-denied
//! or rate-limit page? A pure function over signals the page and the
//! navigation already give, biased to false negatives: `high` only when the
//! evidence is specific (a known captcha provider, an HTTP 401/403/429 with
//! matching words), `low` when it is only suggestive. A leaf: the probe
//! that gathers the signals from a tab is `Tab::obstacle` (`tab/probe.rs`).

use serde::{Deserialize, Serialize};

/// What the page shows, gathered in one evaluate in cdpilot's world.
pub const SIGNALS: &str = r#"(() => {
  // The first 4000 characters of text, without laying out the whole page
  // (innerText would, and a snapshot of a huge page pays for this too).
  let text = '';
  if (document.body) {
    const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT, {
      acceptNode: (n) => /^(SCRIPT|STYLE|NOSCRIPT|TEMPLATE)$/.test(n.parentNode.nodeName) ? NodeFilter.FILTER_REJECT : NodeFilter.FILTER_ACCEPT,
    });
    while (text.length < 4000 && walker.nextNode()) text += walker.currentNode.data + ' ';
  }
  // Only what a person sees counts: a 0×0 field in a hidden pop-up is no wall.
  const shown = (e) => {
    const r = e.getBoundingClientRect();
    return r.width > 1 && r.height > 1 && (!e.checkVisibility || e.checkVisibility({ visibilityProperty: true, opacityProperty: true }));
  };
  const CHROME = 'header, nav, [role=banner], [role=navigation]';
  const password_field = Array.from(document.querySelectorAll('input[type=password]')).some((e) => shown(e) && !e.closest(CHROME));
  // Headings and paragraph text only tell a sign-in wall from an article
  // with a sign-in box: a page without a password field is not read for
  // them (on a page of 20,000 buttons that read cost 14 ms).
  let headings = '';
  let article_chars = 0;
  if (password_field) {
    for (const e of document.querySelectorAll('h1, h2, legend, button, input[type=submit]')) {
      if (headings.length >= 1000) break;
      if (e.closest(CHROME) || !shown(e)) continue;
      headings += (headings ? ' ' : '') + (e.textContent || e.value || '');
    }
    headings = headings.slice(0, 1000);
    // Characters of visible paragraph text: a readable article is no wall.
    for (const p of document.getElementsByTagName('p')) {
      if (article_chars > 5000) break;
      const n = p.textContent.trim().length;
      if (n > 40 && shown(p)) article_chars += n;
    }
  }
  // Class and id lookups, each on Chromium's fast path: one selector list
  // of them walked a 20,000-button page element by element (11 ms).
  const captcha_widget = ['g-recaptcha', 'h-captcha', 'cf-turnstile', 'captcha'].some((c) => document.getElementsByClassName(c)[0])
    || !!document.getElementById('px-captcha') || !!document.getElementById('captcha')
    || !!document.querySelector('[data-sitekey]');
  const frame_urls = [];
  for (const f of document.getElementsByTagName('iframe')) {
    if (frame_urls.length === 50) break;
    if (f.hasAttribute('src')) frame_urls.push(f.src);
  }
  return { title: document.title, url: location.href, text, headings, password_field, article_chars, frame_urls, captcha_widget };
})()"#;

/// What the page shows, as read by the in-page probe.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct Signals {
    /// The document's title.
    pub title: String,
    /// The document's URL.
    pub url: String,
    /// The start of the page's visible text.
    pub text: String,
    /// The page's headings and buttons, joined (read only when a password field shows).
    pub headings: String,
    /// The page shows a password field (visible, outside its header and navigation).
    pub password_field: bool,
    /// Characters of visible paragraph text (counted up to about 5,000; only when a password field shows).
    pub article_chars: u64,
    /// `src` of the page's iframes (at most 50).
    pub frame_urls: Vec<String>,
    /// A known CAPTCHA widget is on the page.
    pub captcha_widget: bool,
    /// HTTP status of the main document, when known.
    #[serde(skip)]
    pub status: Option<u16>,
}

/// Something between the agent and the page: a CAPTCHA, a sign-in wall, an error page.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Obstacle {
    /// What it is (`captcha`, `login`, …).
    #[serde(rename = "type")]
    pub kind: &'static str,
    /// "high": stop and tell the user; "low": advisory.
    pub confidence: &'static str,
    /// What a model reads about it.
    pub message: String,
}

const CAPTCHA_FRAMES: &[&str] = &[
    "google.com/recaptcha",
    "recaptcha.net",
    "hcaptcha.com",
    "challenges.cloudflare.com",
    "arkoselabs.com",
    "funcaptcha.com",
    "captcha-delivery.com",
    "geetest.com",
];

const HUMAN_CHECK: &[&str] = &[
    "verify you are human",
    "verify that you are human",
    "are you a robot",
    "i'm not a robot",
    "i am not a robot",
    "checking your browser",
    "complete the security check",
    "prove you are human",
];

const SIGN_IN: &[&str] = &[
    "sign in",
    "log in",
    "login",
    "signin",
    "anmelden",
    "iniciar sesión",
    "connexion",
];

/// Visible paragraph characters past which a page is read, not walled.
const READABLE_ARTICLE: u64 = 1500;

/// The obstacle these signals show, if any.
pub fn detect(s: &Signals) -> Option<Obstacle> {
    let text = s.text.to_lowercase();
    let title = s.title.to_lowercase();
    let words = format!("{title} {text}");
    let says = |phrases: &[&'static str]| phrases.iter().find(|p| words.contains(**p)).copied();
    let found = |kind, confidence, message: String| {
        Some(Obstacle {
            kind,
            confidence,
            message,
        })
    };

    if let Some(frame) = s
        .frame_urls
        .iter()
        .find(|u| CAPTCHA_FRAMES.iter().any(|p| u.contains(p)))
    {
        let provider = CAPTCHA_FRAMES
            .iter()
            .find(|p| frame.contains(*p))
            .unwrap_or(&"a captcha provider");
        return found(
            "captcha",
            "high",
            format!("The page embeds a captcha from {provider}. Ask the user to solve it."),
        );
    }
    if let Some(phrase) = says(HUMAN_CHECK) {
        let confidence = if s.captcha_widget || matches!(s.status, Some(403 | 429 | 503)) {
            "high"
        } else {
            "low"
        };
        return found(
            "captcha",
            confidence,
            format!("The page asks to \"{phrase}\": a bot check. Ask the user to pass it."),
        );
    }
    if s.captcha_widget && text.contains("captcha") {
        return found("captcha", "low", "The page shows a captcha widget.".into());
    }
    match s.status {
        Some(429) => {
            return found(
                "rate_limited",
                "high",
                "HTTP 429: the site is rate-limiting. Wait before retrying.".into(),
            )
        }
        Some(401) => {
            return found(
                "login_required",
                "high",
                "HTTP 401: the page needs the user to sign in.".into(),
            )
        }
        Some(403) => {
            let confidence =
                if words.contains("denied") || words.contains("forbidden") || words.contains("blocked") {
                    "high"
                } else {
                    "low"
                };
            return found(
                "access_denied",
                confidence,
                "HTTP 403: access to this page is denied.".into(),
            );
        }
        _ => {}
    }
    if words.contains("too many requests") || words.contains("rate limit exceeded") {
        return found(
            "rate_limited",
            "low",
            "The page says too many requests were made.".into(),
        );
    }
    if words.contains("access denied") && words.len() < 2000 {
        return found("access_denied", "low", "The page says access is denied.".into());
    }
    // A sign-in box beside a readable article is not a wall.
    if s.password_field && s.article_chars < READABLE_ARTICLE {
        let headings = s.headings.to_lowercase();
        let url = s.url.to_lowercase();
        let wording = SIGN_IN.iter().any(|w| headings.contains(w) || title.contains(w));
        let login_url = ["/login", "/signin", "/sign-in", "/sign_in", "/auth", "/session"]
            .iter()
            .any(|p| url.contains(p));
        if wording {
            let confidence = if login_url { "high" } else { "low" };
            return found(
                "login_required",
                confidence,
                "The page asks for a password to sign in. Ask the user to sign in, or for credentials."
                    .into(),
            );
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn page(text: &str) -> Signals {
        Signals {
            text: text.into(),
            ..Default::default()
        }
    }

    #[test]
    fn captcha_providers_and_human_checks() {
        let recaptcha = Signals {
            frame_urls: vec!["https://www.google.com/recaptcha/api2/anchor?k=x".into()],
            ..page("Sign up")
        };
        assert_eq!(
            detect(&recaptcha).unwrap(),
            Obstacle {
                kind: "captcha",
                confidence: "high",
                message: detect(&recaptcha).unwrap().message
            }
        );
        let cloudflare = Signals {
            title: "Just a moment...".into(),
            status: Some(403),
            ..page("Checking your browser before accessing the site.")
        };
        let o = detect(&cloudflare).unwrap();
        assert_eq!((o.kind, o.confidence), ("captcha", "high"));
        let mention = page("Please verify you are human by reading on.");
        assert_eq!(detect(&mention).unwrap().confidence, "low");
    }

    #[test]
    fn statuses() {
        let kind = |status, text: &str| {
            detect(&Signals {
                status: Some(status),
                ..page(text)
            })
            .map(|o| (o.kind, o.confidence))
        };
        assert_eq!(kind(429, ""), Some(("rate_limited", "high")));
        assert_eq!(kind(401, ""), Some(("login_required", "high")));
        assert_eq!(kind(403, "Access denied"), Some(("access_denied", "high")));
        assert_eq!(kind(403, "Nothing here"), Some(("access_denied", "low")));
        assert_eq!(kind(404, "Not found"), None);
        assert_eq!(kind(200, "Welcome"), None);
    }

    #[test]
    fn login_walls_need_a_password_field_and_sign_in_words() {
        let wall = Signals {
            password_field: true,
            headings: "Sign in to continue".into(),
            url: "https://x.example/login".into(),
            ..page("")
        };
        assert_eq!(
            detect(&wall).map(|o| (o.kind, o.confidence)),
            Some(("login_required", "high"))
        );
        let elsewhere = Signals {
            url: "https://x.example/account".into(),
            ..wall.clone()
        };
        assert_eq!(detect(&elsewhere).map(|o| o.confidence), Some("low"));
        let settings = Signals {
            password_field: true,
            headings: "Change your password".into(),
            ..page("")
        };
        assert_eq!(
            detect(&settings),
            None,
            "a password field alone is not a login wall"
        );
        let beside_an_article = Signals {
            article_chars: 4000,
            ..wall.clone()
        };
        assert_eq!(
            detect(&beside_an_article),
            None,
            "a sign-in box beside a readable article is not a wall"
        );
        assert_eq!(
            detect(&page("Log in to comment")),
            None,
            "sign-in words alone are not a login wall"
        );
    }
}
