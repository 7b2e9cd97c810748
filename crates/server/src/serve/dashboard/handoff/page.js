// The hand-off page: shows the handed tab live and sends the person's
// mouse, wheel, keys and pastes to it. Points are sent in the tab's
// viewport CSS pixels: the live image's box maps linearly onto the
// viewport the frames report (width, height), scaled to fit the stage
// (what is left of the window). When the person resizes the window, the
// tab's viewport takes the stage's size.
(() => {
  const id = location.pathname.split('/')[2];
  const token = location.hash.slice(1) || new URLSearchParams(location.search).get('t') || '';
  const live = document.getElementById('live');
  const stage = document.getElementById('stage');
  const status = document.getElementById('status');
  const state = { width: 0, height: 0, frames: 0, lastFrameAt: 0, ended: false };
  window.cdpilotHandoff = state;
  const scheme = location.protocol === 'https:' ? 'wss' : 'ws';
  const socket = new WebSocket(`${scheme}://${location.host}/handoff/${encodeURIComponent(id)}/live?t=${encodeURIComponent(token)}`);

  const end = () => {
    if (state.ended) return;
    state.ended = true;
    document.title = 'Hand-off ended';
    document.body.innerHTML = '<main><h1>This hand-off has ended</h1><p>The agent has the browser again. You can close this page.</p></main>';
  };
  const send = (event) => { if (socket.readyState === WebSocket.OPEN) socket.send(JSON.stringify(event)); };

  socket.onmessage = (message) => {
    const data = JSON.parse(message.data);
    if (data.ended) return end();
    if (data.error) { status.textContent = `Not sent: ${data.error}`; return; }
    if (data.dropped) { status.textContent = 'Outside the page: not sent.'; return; }
    if (data.frame) {
      state.lastMessageAt = performance.now();
      // The box maps onto the viewport once the image is shown (decoding
      // is asynchronous): the size is taken then.
      shown = { width: data.width, height: data.height };
      live.src = `data:image/jpeg;base64,${data.frame}`;
    }
    if (data.view) {
      document.getElementById('reason').textContent = data.view.reason;
      document.getElementById('url').textContent = data.view.url;
      document.getElementById('refused').textContent = data.view.refused.length
        ? `Refused by the URL rules: ${data.view.refused.map((r) => r.url).join(', ')}` : '';
    }
  };
  socket.onclose = end;
  let shown = null;
  // The image keeps the viewport's proportions, as large as the stage allows.
  const fit = () => {
    if (!state.width) return;
    const scale = Math.min(stage.clientWidth / state.width, stage.clientHeight / state.height);
    live.style.width = `${state.width * scale}px`;
    live.style.height = `${state.height * scale}px`;
  };
  new ResizeObserver(fit).observe(stage);
  live.addEventListener('load', () => {
    if (!shown) return;
    const sized = state.width !== shown.width || state.height !== shown.height;
    state.width = shown.width; state.height = shown.height;
    if (sized) fit();
    state.frames += 1; state.lastFrameAt = performance.now();
    status.textContent = 'Click into the page and type as usual. Press Done when finished.';
  });
  // A window resize (not the first layout): the tab takes the stage's size.
  let resizing = null;
  window.addEventListener('resize', () => {
    clearTimeout(resizing);
    resizing = setTimeout(() => {
      const width = stage.clientWidth, height = stage.clientHeight;
      state.sent = { width, height };
      send({ type: 'resize', width, height });
    }, 100);
  });

  const point = (e) => {
    const box = live.getBoundingClientRect();
    return { x: (e.clientX - box.left) * state.width / box.width, y: (e.clientY - box.top) * state.height / box.height };
  };
  const modifiers = (e) => (e.altKey ? 1 : 0) | (e.ctrlKey ? 2 : 0) | (e.metaKey ? 4 : 0) | (e.shiftKey ? 8 : 0);
  const buttonName = (b) => ['left', 'middle', 'right'][b] || 'none';
  let moving = null;
  live.addEventListener('mousemove', (e) => {
    // One move per animation frame is enough.
    if (moving) { moving = e; return; }
    moving = e;
    requestAnimationFrame(() => {
      const last = moving; moving = null;
      if (!last) return;
      send({ type: 'mouse', action: 'move', ...point(last), buttons: last.buttons, modifiers: modifiers(last) });
    });
  });
  live.addEventListener('mousedown', (e) => {
    e.preventDefault();
    const at = point(e);
    // Focus for the keys, without scrolling this page under the pointer.
    live.focus({ preventScroll: true });
    // The pointer gets there before it presses (a move still waiting for
    // its animation frame would come after the press).
    moving = null;
    send({ type: 'mouse', action: 'move', ...at, buttons: 0, modifiers: modifiers(e) });
    send({ type: 'mouse', action: 'down', ...at, button: buttonName(e.button), buttons: e.buttons, modifiers: modifiers(e), clicks: e.detail || 1 });
  });
  live.addEventListener('mouseup', (e) => {
    send({ type: 'mouse', action: 'up', ...point(e), button: buttonName(e.button), buttons: e.buttons, modifiers: modifiers(e), clicks: e.detail || 1 });
  });
  live.addEventListener('contextmenu', (e) => e.preventDefault());
  live.addEventListener('wheel', (e) => {
    e.preventDefault();
    send({ type: 'wheel', ...point(e), dx: e.deltaX, dy: e.deltaY });
  }, { passive: false });
  const key = (action) => (e) => {
    // Let the person's own paste shortcut reach the paste event.
    if (action === 'down' && (e.ctrlKey || e.metaKey) && e.key.toLowerCase() === 'v') return;
    e.preventDefault();
    const printable = e.key.length === 1 && !e.ctrlKey && !e.metaKey && !e.altKey;
    const text = printable ? e.key : e.key === 'Enter' ? '\r' : undefined;
    send({ type: 'key', action, key: e.key, code: e.code, text, key_code: e.keyCode, modifiers: modifiers(e) });
  };
  live.addEventListener('keydown', key('down'));
  live.addEventListener('keyup', key('up'));
  live.addEventListener('paste', (e) => {
    e.preventDefault();
    const text = e.clipboardData.getData('text/plain');
    if (text) send({ type: 'paste', text });
  });
  document.getElementById('back').addEventListener('click', () => send({ type: 'back' }));
  document.getElementById('done').addEventListener('click', () => send({ type: 'done' }));
  document.getElementById('giveup').addEventListener('click', () => send({ type: 'give_up' }));
})();
