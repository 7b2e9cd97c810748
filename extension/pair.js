// The pairing link's page: `pair.html#server=ws://127.0.0.1:PORT&code=CODE`.
// Hands the server and the one-time code to the service worker, which
// exchanges the code for a long-lived token and stays connected. When the
// extension is already paired with another server, the person is asked
// first: a link another program printed does not take the pairing over
// silently.
const status = document.getElementById("status");
const ask = document.getElementById("ask");
const params = new URLSearchParams(location.hash.slice(1));
const server = params.get("server") || "";
const code = params.get("code") || "";
document.getElementById("server").textContent = server ? `Server: ${server}` : "";

function pair(replace) {
  ask.hidden = true;
  status.textContent = "Pairing…";
  status.className = "";
  chrome.runtime.sendMessage({ type: "pair", server, code, replace }).then((answer) => {
    if (answer && answer.error) {
      status.textContent = `Not paired: ${answer.error}`;
      status.className = "error";
    } else {
      status.textContent = "Paired. cdpilot can now open tabs in a window of its own; stop it any time from the extension's button.";
      status.className = "ok";
    }
    // The code is spent either way: keep it out of the history.
    history.replaceState(null, "", location.pathname);
  });
}

if (!server || !code) {
  status.textContent = "This link has no server or no code: run `cdpilot pair` again and open the link it prints.";
  status.className = "error";
} else {
  chrome.storage.local.get(["server", "token"]).then((stored) => {
    if (stored.server && stored.token && stored.server !== server) {
      status.textContent = `The extension is paired with ${stored.server}. This link would replace that pairing with ${server}. Pair only if you just ran \`cdpilot pair\` for ${server}.`;
      status.className = "error";
      ask.hidden = false;
      document.getElementById("replace").onclick = () => pair(true);
      document.getElementById("keep").onclick = () => {
        ask.hidden = true;
        status.textContent = `Kept the pairing with ${stored.server}; this link was not used.`;
        status.className = "ok";
        history.replaceState(null, "", location.pathname);
      };
    } else {
      pair(false);
    }
  });
}
