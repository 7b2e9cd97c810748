// The pairing link's page: `pair.html#server=ws://127.0.0.1:PORT&code=CODE`.
// Hands the server and the one-time code to the service worker, which
// exchanges the code for a long-lived token and stays connected.
const status = document.getElementById("status");
const params = new URLSearchParams(location.hash.slice(1));
const server = params.get("server") || "";
const code = params.get("code") || "";
document.getElementById("server").textContent = server ? `Server: ${server}` : "";
if (!server || !code) {
  status.textContent = "This link has no server or no code: run `cdpilot pair` again and open the link it prints.";
  status.className = "error";
} else {
  chrome.runtime.sendMessage({ type: "pair", server, code }).then((answer) => {
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
