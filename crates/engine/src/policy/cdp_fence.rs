//! What `browser_cdp` may send (`[tools] cdp`, issue 20 finding 9): a raw
//! CDP command on the tab's session can turn the URL gate off
//! (`Fetch.disable`), hand the page any file (`DOM.setFileInputFiles`),
//! write anywhere (`*.setDownloadBehavior`), reach every other session's
//! targets and cookies (`Target.*`, `Storage.*`) or end the browser
//! (`Browser.crash`). Fenced (`cdp = true`), only the methods listed here
//! pass: reads of the tab's own document, script in its own page (what
//! `browser_evaluate` does), emulation of its own viewport, input to it.
//! Everything else, and every method of a domain that reaches outside the
//! tab, is `permission_denied` naming the method and the setting.
//!
//! Pure: owns no state. Checked by the session before anything is sent.

use crate::config::CdpAccess;
use crate::{ActionError, ErrorCode};

/// Methods a fenced `browser_cdp` passes, by domain. A domain listed as
/// `"*"` passes all its methods. `enable`/`disable` are left out on
/// purpose except where they only add events (disabling `Runtime`, `Page`
/// or `Fetch` would blind or disarm cdpilot's own supervisor and gate).
pub const ALLOWED: &[(&str, &[&str])] = &[
    (
        "Accessibility",
        &[
            "enable",
            "getFullAXTree",
            "getPartialAXTree",
            "queryAXTree",
            "getChildAXNodes",
            "getRootAXNode",
            "getAXNodeAndAncestors",
        ],
    ),
    (
        "CSS",
        &[
            "enable",
            "getComputedStyleForNode",
            "getMatchedStylesForNode",
            "getInlineStylesForNode",
            "getStyleSheetText",
            "getPlatformFontsForNode",
            "getBackgroundColors",
            "getMediaQueries",
        ],
    ),
    (
        "DOM",
        &[
            "enable",
            "getDocument",
            "getFlattenedDocument",
            "querySelector",
            "querySelectorAll",
            "getOuterHTML",
            "describeNode",
            "getAttributes",
            "getBoxModel",
            "getContentQuads",
            "getNodeForLocation",
            "resolveNode",
            "requestNode",
            "requestChildNodes",
            "pushNodesByBackendIdsToFrontend",
            "performSearch",
            "getSearchResults",
            "discardSearchResults",
            "getFrameOwner",
            "scrollIntoViewIfNeeded",
            "focus",
        ],
    ),
    ("DOMSnapshot", &["captureSnapshot"]),
    ("Emulation", &["*"]),
    (
        "Input",
        &[
            "dispatchMouseEvent",
            "dispatchKeyEvent",
            "insertText",
            "dispatchTouchEvent",
        ],
    ),
    (
        "Network",
        &["getResponseBody", "getRequestPostData", "searchInResponseBody"],
    ),
    (
        "Page",
        &[
            "getFrameTree",
            "getLayoutMetrics",
            "getNavigationHistory",
            "getResourceTree",
            "getResourceContent",
            "captureScreenshot",
            "navigate",
            "reload",
            "stopLoading",
        ],
    ),
    (
        "Runtime",
        &[
            "evaluate",
            "callFunctionOn",
            "getProperties",
            "releaseObject",
            "releaseObjectGroup",
            "awaitPromise",
            "globalLexicalScopeNames",
        ],
    ),
];

/// Whether `method` (`Domain.method`) may be sent under `access`; the
/// error names the method, the setting and what to do instead.
pub fn admit(method: &str, access: CdpAccess) -> Result<(), ActionError> {
    match access {
        CdpAccess::Unrestricted => Ok(()),
        CdpAccess::Off => Err(ActionError::new(
            ErrorCode::PermissionDenied,
            format!("browser_cdp is off ([tools] cdp = false), so {method} was not sent"),
            "Use cdpilot's own tools; raw CDP needs [tools] cdp = true in the server's configuration.",
        )),
        CdpAccess::Fenced if fenced_allows(method) => Ok(()),
        CdpAccess::Fenced => Err(ActionError::new(
            ErrorCode::PermissionDenied,
            format!(
                "{method} is not allowed: [tools] cdp = true passes only methods that stay inside the caller's tab (DOM, CSS and Accessibility reads, Runtime.evaluate/callFunctionOn, Page.getFrameTree, Network.getResponseBody, Emulation.*, Input.dispatch*)"
            ),
            "Use cdpilot's own tools for this (browser_storage, browser_upload, browser_tabs…); do not retry the method.",
        )),
    }
}

fn fenced_allows(method: &str) -> bool {
    let Some((domain, name)) = method.split_once('.') else {
        return false;
    };
    ALLOWED
        .iter()
        .find(|(d, _)| *d == domain)
        .is_some_and(|(_, names)| names.iter().any(|n| *n == "*" || *n == name))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_fenced_cdp_passes_reads_of_the_tab_and_refuses_what_crosses_it() {
        for method in [
            "DOM.getDocument",
            "Runtime.evaluate",
            "Runtime.callFunctionOn",
            "Page.getFrameTree",
            "Network.getResponseBody",
            "Emulation.setDeviceMetricsOverride",
            "Accessibility.getFullAXTree",
        ] {
            assert!(admit(method, CdpAccess::Fenced).is_ok(), "{method}");
        }
        for method in [
            "Fetch.disable",
            "Fetch.enable",
            "DOM.setFileInputFiles",
            "Page.setDownloadBehavior",
            "Browser.setDownloadBehavior",
            "Browser.crash",
            "Target.getTargets",
            "Target.attachToTarget",
            "Target.sendMessageToTarget",
            "Target.createTarget",
            "Storage.getCookies",
            "SystemInfo.getProcessInfo",
            "Security.setIgnoreCertificateErrors",
            "Network.setBypassServiceWorker",
            "Network.getAllCookies",
            "Network.getCookies",
            "Page.setBypassCSP",
            "Runtime.disable",
            "Page.disable",
            "DOM.setAttributeValue",
            "Tracing.start",
            "Evaluate",
            "DOM.getDocumentX",
        ] {
            let e = admit(method, CdpAccess::Fenced).unwrap_err();
            assert_eq!(e.code, ErrorCode::PermissionDenied, "{method}");
            assert!(
                e.message.contains(method) && e.message.contains("[tools] cdp"),
                "{e}"
            );
        }
        assert!(admit("Browser.crash", CdpAccess::Unrestricted).is_ok());
        assert!(admit("DOM.getDocument", CdpAccess::Off).is_err());
    }
}
