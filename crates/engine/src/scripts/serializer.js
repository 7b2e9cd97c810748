// cdpilot's in-page snapshot serializer. Runs in cdpilot's isolated world
// (Page.createIsolatedWorld), so the page's own scripts can neither see nor
// tamper with it. Evaluating this file returns the world's `__cdpilot`
// object, installing it on first use: refs live in it, so within one
// document the same element keeps the same ref across snapshots.
(() => {
  if (globalThis.__cdpilot) return globalThis.__cdpilot;

  const refOf = new WeakMap();   // element -> "e12" (or "f2e12" in frame 2)
  const byRef = new Map();       // "e12" -> WeakRef(element)
  // The role and name each ref was last shown with ("button\nReply to
  // Alice"): an acting tool's target is checked against it (`target`).
  const shownAs = new Map();
  let nextRef = 1;
  let snapshots = 0;
  let prefix = '';               // this frame's ref prefix, set by each snapshot

  // A text line is cut past this many characters, saying how much was cut.
  const TEXT_MAX = 4000;
  // Elements whose text flows on one line with the text around them; any
  // other element starts a new text line.
  const INLINE = new Set(['SPAN', 'B', 'STRONG', 'I', 'EM', 'CODE', 'TIME', 'LABEL', 'SMALL', 'SUB', 'SUP',
    'ABBR', 'MARK', 'Q', 'S', 'U', 'CITE', 'DFN', 'KBD', 'SAMP', 'VAR', 'BDI', 'BDO', 'FONT', 'DEL', 'INS', 'A']);
  const NON_SPACE = /\S/;
  const SPACE_START = /^\s/;
  const SPACE_END = /\s$/;
  const INDENT = [''];
  const indent = (depth) => INDENT[depth] ??= '  '.repeat(depth);

  // (SVG's own elements have lowercase tag names: its `<title>` is a name,
  // not text.)
  const SKIP = new Set(['SCRIPT', 'STYLE', 'NOSCRIPT', 'TEMPLATE', 'HEAD', 'META', 'LINK', 'TITLE', 'BASE',
    'title', 'desc', 'style', 'script', 'defs']);
  const INTERACTIVE = new Set(['button', 'link', 'textbox', 'searchbox', 'checkbox', 'radio', 'combobox',
    'listbox', 'option', 'slider', 'spinbutton', 'switch', 'tab', 'menuitem', 'menuitemcheckbox',
    'menuitemradio', 'treeitem']);
  // Roles whose name is their text: the text is not repeated below them.
  const LEAF = new Set(['button', 'link', 'heading', 'option', 'tab', 'menuitem', 'menuitemcheckbox',
    'menuitemradio', 'treeitem', 'img', 'textbox', 'searchbox', 'spinbutton', 'slider', 'checkbox',
    'radio', 'switch', 'progressbar', 'columnheader', 'rowheader', 'canvas', 'video']);
  const NAME_FROM_CONTENT = new Set(['button', 'link', 'heading', 'option', 'tab', 'menuitem',
    'menuitemcheckbox', 'menuitemradio', 'treeitem', 'checkbox', 'radio', 'switch', 'columnheader',
    'rowheader', 'cell', 'gridcell', 'tooltip']);
  // Containers that add nothing a model needs: their children are hoisted.
  const TRANSPARENT = new Set(['generic', 'none', 'presentation', 'paragraph', 'cell', 'gridcell',
    'listitem', 'group', 'form', 'region', 'article', 'section', 'term', 'definition', 'strong',
    'emphasis', 'code', 'time', 'label', 'blockquote', 'figure', 'caption']);

  // Elements that can host a shadow root (attachShadow's list, and custom
  // elements, whose names have a hyphen): only these are asked for one.
  const SHADOW_HOSTS = new Set(['ARTICLE', 'ASIDE', 'BLOCKQUOTE', 'BODY', 'DIV', 'FOOTER', 'H1', 'H2', 'H3',
    'H4', 'H5', 'H6', 'HEADER', 'MAIN', 'NAV', 'P', 'SECTION', 'SPAN']);
  // Attributes that say an element has a handler of its own: inline
  // handlers, and the markers delegating libraries put on what they listen
  // for (jQuery UI's `data-handler`, Google's `jsaction`, AngularJS's
  // `ng-click`, Bootstrap's toggles). The markers count only on elements
  // with no role of their own (a `<td data-handler>` holds a link already).
  // (Every input event's: the listener scan leaves inline handlers to this
  // check, see snapshot/listeners.rs.)
  const HANDLERS = ['onclick', 'ondblclick', 'onauxclick', 'oncontextmenu', 'onmousedown', 'onmouseup',
    'onpointerdown', 'onpointerup', 'ontouchstart', 'ontouchend', 'onkeydown', 'onkeyup', 'onkeypress'];
  const MARKERS = ['data-handler', 'data-action', 'jsaction', 'ng-click', 'data-toggle', 'data-bs-toggle'];
  // Cursors that say "act on me": a pointer, and what sortables and drag
  // handles show.
  const POINTERS = new Set(['pointer', 'grab', 'move']);
  // Items of a list, tree, grid or menu: each gets a ref when it shows a
  // pointer, even one inherited from a clickable item above it (a tree's
  // nested items all inherit the first item's cursor).
  const ITEMS = new Set(['listitem', 'treeitem', 'row', 'option', 'menuitem', 'gridcell']);
  const SVG = 'http://www.w3.org/2000/svg';
  // Containers not printed for themselves whose lone text line says their
  // role instead of `text:` (`listitem: Alpha`, as the contract says: a
  // nested item's boundary shows; `cell: 42`).
  const SAYS_ROLE = new Set(['cell', 'gridcell', 'listitem']);
  // A tree's branch in the class words a library puts on its items
  // (`open`, `jstree-closed`, jQuery File Tree's `directory collapsed`).
  const OPEN_WORDS = /(?:^|[\s_-])(?:open|opened|expanded)(?:$|[\s_-])/i;
  const CLOSED_WORDS = /(?:^|[\s_-])(?:closed|collapsed)(?:$|[\s_-])/i;
  // Elements with a `disabled` property of their own.
  const DISABLABLE = new Set(['BUTTON', 'INPUT', 'SELECT', 'TEXTAREA', 'OPTION', 'OPTGROUP', 'FIELDSET']);
  // Options objects made once, not per call.
  const VISIBLE = { visibilityProperty: true };

  // Each DOM call costs more than the JavaScript around it (in an isolated
  // world most of all), so an element's attribute names are read once and
  // an attribute is only asked for when it is there. Most elements of a
  // big page have none.
  const NO_ATTRIBUTES = [];
  const attributesOf = (el) => el.hasAttributes() ? el.getAttributeNames() : NO_ATTRIBUTES;
  const attribute = (el, names, name) => names.length !== 0 && names.includes(name) ? el.getAttribute(name) : null;

  // Whitespace to collapse: anything but a single space between words
  // (most names and texts have none, and are not copied).
  const MESSY = /[^\S ]|  |^ | $/;
  const collapse = (s) => MESSY.test(s) ? s.replace(/\s+/g, ' ').trim() : s;
  const clean = (s, max) => {
    s = s ? collapse(s) : '';
    return s.length > max ? s.slice(0, max - 1) + '…' : s;
  };

  function implicitRole(el, tag, names) {
    switch (tag) {
      case 'A': case 'AREA': return names.includes('href') ? 'link' : 'generic';
      case 'BUTTON': case 'SUMMARY': return 'button';
      case 'INPUT': {
        const t = (attribute(el, names, 'type') || 'text').toLowerCase();
        if (t === 'hidden') return null;
        if (t === 'button' || t === 'submit' || t === 'reset' || t === 'image' || t === 'file') return 'button';
        if (t === 'checkbox') return 'checkbox';
        if (t === 'radio') return 'radio';
        if (t === 'range') return 'slider';
        if (t === 'number') return 'spinbutton';
        if (t === 'search') return 'searchbox';
        return 'textbox';
      }
      case 'SELECT': return (el.multiple || el.size > 1) ? 'listbox' : 'combobox';
      case 'TEXTAREA': return 'textbox';
      case 'OPTION': return 'option';
      case 'IMG': return attribute(el, names, 'alt') === '' ? 'presentation' : 'img';
      case 'H1': case 'H2': case 'H3': case 'H4': case 'H5': case 'H6': return 'heading';
      case 'NAV': return 'navigation';
      case 'MAIN': return 'main';
      case 'HEADER': return 'banner';
      case 'FOOTER': return 'contentinfo';
      case 'ASIDE': return 'complementary';
      case 'UL': case 'OL': case 'MENU': return 'list';
      case 'LI': return 'listitem';
      case 'TABLE': return 'table';
      case 'TR': return 'row';
      case 'TH': return 'columnheader';
      case 'TD': return 'cell';
      case 'DIALOG': return 'dialog';
      case 'PROGRESS': return 'progressbar';
      case 'IFRAME': case 'FRAME': return 'iframe';
      case 'P': return 'paragraph';
      case 'CANVAS': return 'canvas';
      case 'VIDEO': return 'video';
      case 'FIGURE': return 'figure';
      default: return 'generic';
    }
  }

  function roleOf(el, tag, names) {
    const explicit = attribute(el, names, 'role');
    if (explicit) return explicit.trim().split(/\s+/)[0].toLowerCase();
    const role = implicitRole(el, tag, names);
    if (role === 'generic' && names.length !== 0) {
      if (names.includes('contenteditable') && el.isContentEditable) return 'textbox';
      if (HANDLERS.some((h) => names.includes(h))) return 'button';
      // An `<a>` without `href` that something listens to is a button (a
      // date picker's Prev/Next).
      if (tag === 'A' && (MARKERS.some((m) => names.includes(m)) || focusable(el, names))) return 'button';
    }
    return role;
  }

  // The role an element to act on is printed with (an `<a>` without
  // `href` that acts is a button).
  const actingRole = (role, tag) => role === 'generic' && tag === 'A' ? 'button' : role;

  function focusable(el, names) {
    const tabindex = attribute(el, names, 'tabindex');
    return tabindex !== null && tabindex.trim() !== '' && Number(tabindex) >= 0;
  }

  function textOfIds(ids) {
    return ids.split(/\s+/).map((id) => document.getElementById(id)).filter(Boolean)
      .map((n) => n.textContent).join(' ');
  }

  function nameOf(el, role, tag, names) {
    const labelledBy = attribute(el, names, 'aria-labelledby');
    if (labelledBy) {
      const n = clean(textOfIds(labelledBy), 100);
      if (n) return n;
    }
    const aria = attribute(el, names, 'aria-label');
    if (aria && aria.trim()) return clean(aria, 100);
    if (tag === 'INPUT' || tag === 'SELECT' || tag === 'TEXTAREA') {
      const t = (el.type || '').toLowerCase();
      if (t === 'button' || t === 'submit' || t === 'reset') return clean(el.value || (t === 'submit' ? 'Submit' : t === 'reset' ? 'Reset' : ''), 100);
      if (t === 'image') return clean(el.getAttribute('alt') || 'Submit', 100);
      const labels = labelsOf(el);
      if (labels) {
        const n = clean(labels.map(labelText).join(' '), 100);
        if (n) return n;
      }
    }
    if (tag === 'IMG' || tag === 'AREA') {
      const alt = attribute(el, names, 'alt');
      if (alt) return clean(alt, 100);
    }
    // A date picker's day cell whose full date the page gives only in
    // parts (jQuery UI's `<td data-year data-month><a data-date>`, the
    // month counted from 0): named by that date, so "20" in a grid of
    // months reads as `2024-03-20`.
    if (tag === 'A' && names.includes('data-date')) {
      const cell = el.parentElement;
      const day = Number(el.getAttribute('data-date'));
      if (cell && cell.hasAttribute('data-year') && cell.hasAttribute('data-month') && day >= 1 && day <= 31) {
        const month = Number(cell.getAttribute('data-month')) + 1;
        const pad = (n) => String(n).padStart(2, '0');
        return cell.getAttribute('data-year') + '-' + pad(month) + '-' + pad(day);
      }
    }
    if (NAME_FROM_CONTENT.has(role)) {
      // A tree item is named by its own text, not its child items'.
      const group = role === 'treeitem' ? groupOf(el) : null;
      const n = clean(group ? textOutside(el, group) : el.textContent, 100);
      if (n) return n;
      const img = el.querySelector('img[alt]');
      if (img) return clean(img.getAttribute('alt'), 100);
    }
    const title = attribute(el, names, 'title');
    if (title) return clean(title, 100);
    if (el.namespaceURI === SVG) {
      for (const c of el.children) {
        if (c.tagName === 'title') return clean(c.textContent, 100);
      }
    }
    if (role === 'textbox' || role === 'searchbox' || role === 'combobox') {
      const ph = attribute(el, names, 'placeholder');
      if (ph) return clean(ph, 100);
    }
    if (tag === 'FIELDSET') {
      const legend = el.querySelector('legend');
      if (legend) return clean(legend.textContent, 100);
    }
    return '';
  }

  // Each control's labels, gathered once per snapshot and document or
  // shadow root: a control's own `labels` walks the whole document each
  // time it is read (a form of 5,000 unlabelled fields took seconds).
  // `null` while one element is described outside a snapshot (`target`):
  // its labels are then the one that holds it and those that name its id
  // (what `labels` finds, without walking the whole document).
  let labelsByRoot = new Map();
  function labelsOf(el) {
    if (labelsByRoot === null) {
      const found = [];
      const holder = el.parentElement && el.parentElement.closest('label');
      if (holder && holder.control === el) found.push(holder);
      const root = el.getRootNode();
      if (el.id && root.querySelectorAll) {
        for (const label of root.querySelectorAll('label[for="' + CSS.escape(el.id) + '"]')) {
          if (label !== holder && label.control === el) found.push(label);
        }
      }
      found.sort((a, b) => a.compareDocumentPosition(b) & Node.DOCUMENT_POSITION_FOLLOWING ? -1 : 1);
      return found.length !== 0 ? found : undefined;
    }
    const root = el.getRootNode();
    let byControl = labelsByRoot.get(root);
    if (!byControl) {
      byControl = new Map();
      for (const label of root.querySelectorAll?.('label') ?? []) {
        const control = label.control;
        if (!control) continue;
        const list = byControl.get(control);
        if (list) list.push(label); else byControl.set(control, [label]);
      }
      labelsByRoot.set(root, byControl);
    }
    return byControl.get(el);
  }

  // A label's text without the text of the control it wraps.
  function labelText(label) {
    let s = '';
    for (const n of label.childNodes) {
      if (n.nodeType === 3) s += n.data;
      else if (n.nodeType === 1 && !['INPUT', 'SELECT', 'TEXTAREA', 'BUTTON'].includes(n.tagName)) s += n.textContent;
    }
    return s;
  }

  // How an element shows. SHOWN: printed, children walked. INVISIBLE
  // (`visibility: hidden` or `collapse`, its own or inherited): not printed,
  // but visibility is inherited and a descendant that sets
  // `visibility: visible` shows (menus, tooltips, carousels do this), so its
  // children are still walked. PRUNED: nothing below can show (`hidden`,
  // `aria-hidden`, `display: none`, inside `content-visibility: hidden`).
  const SHOWN = 0, INVISIBLE = 1, PRUNED = 2;

  function shows(el, names) {
    if (names.length !== 0 && (names.includes('hidden') || attribute(el, names, 'aria-hidden') === 'true')) return PRUNED;
    // The common case costs one call; the second tells visibility apart
    // from having no box at all. (An `<input type=hidden>` has no role and
    // is never asked.)
    if (el.checkVisibility(VISIBLE)) return SHOWN;
    if (el.checkVisibility()) return INVISIBLE;
    // display:contents (slots, some wrappers) has no box of its own, but its
    // children are rendered: they are judged one by one.
    const style = getComputedStyle(el);
    if (style.display !== 'contents') return PRUNED;
    // It shows if what holds it does (containers are not all asked: see
    // `visit`).
    const holder = el.assignedSlot || el.parentElement || el.parentNode?.host;
    if (holder && shows(holder, holder.nodeType === 1 ? attributesOf(holder) : NO_ATTRIBUTES) === PRUNED) return PRUNED;
    return style.visibility === 'visible' ? SHOWN : INVISIBLE;
  }

  // Whether an element's own text is rendered: the element shows (SHOWN
  // says its `visibility` is visible, which its text inherits; `shown`
  // when the caller knows it already) and is not `content-visibility:
  // hidden` (the element shows, its content is skipped). Asked only of
  // elements that have text to print. An ancestor's `content-visibility`
  // already made the element itself not show; its own is read only when
  // it has attributes (a class, a style, an id: what such rules hang on).
  // A bare `<td>` or `<p>` is not asked:
  // computed style costs a style object per element (on a table of 20,000
  // controls, a tenth of the snapshot).
  function textShows(node, names, shown) {
    if (!shown && shows(node, names) !== SHOWN) return false;
    return names.length === 0 || getComputedStyle(node).contentVisibility !== 'hidden';
  }

  // Elements the browser's own record says listen for input (clicks,
  // presses, touches, keys), which their markup and cursor may not say:
  // marked by cdpilot before a snapshot from `DOMDebugger.getEventListeners`
  // (snapshot/listeners.rs), since the page's listeners cannot be seen
  // from this world. `marked`: the nodes' backend ids, each resolved once
  // per document; `stale`: an element was added since the last scan (a
  // MutationObserver, disconnected at the first such change until the next
  // scan; text changing, a counter or a status line, adds no element that
  // could carry a listener, so it costs a callback and no scan).
  const listened = new WeakSet();
  const marked = new Set();
  let stale = true;
  let watcher = null;
  function listenersStale() {
    if (!stale) return null;
    stale = false;
    watcher ??= new MutationObserver((records) => {
      for (const record of records) {
        for (const node of record.addedNodes) {
          if (node.nodeType !== 1) continue;
          stale = true;
          watcher.disconnect();
          return;
        }
      }
    });
    watcher.observe(document, { childList: true, subtree: true });
    return [...marked];
  }
  // How many elements of the document (not its shadow roots or frames)
  // carry each inline input handler attribute (`{click: 1667}`): the
  // listener scan tells these from script listeners by count
  // (snapshot/listeners.rs).
  function inlineHandlers() {
    const counts = {};
    for (const el of document.querySelectorAll(HANDLERS.map((name) => `[${name}]`).join())) {
      for (const name of el.getAttributeNames()) {
        if (HANDLERS.includes(name)) counts[name.slice(2)] = (counts[name.slice(2)] || 0) + 1;
      }
    }
    return counts;
  }
  function listen(ids, elements, delegated) {
    quiet = false;
    for (const id of ids) marked.add(id);
    for (const el of elements) listened.add(el);
    for (const [at, selectors] of delegated || []) {
      if (elements[at]) delegations.push([new WeakRef(elements[at]), selectors]);
    }
  }
  // Delegated handlers (jQuery's `$(list).on('click', '.item', fn)`): the
  // container listens, its matching descendants are what an agent acts
  // on. Matched again at each snapshot (items come and go); a selector
  // that matches more than DELEGATED_MAX elements (`*`, `div`) says
  // nothing and is skipped, as is one this world cannot parse (jQuery's
  // own `:visible`).
  const delegations = [];
  const DELEGATED_MAX = 2000;
  function delegate() {
    for (const [held, selectors] of delegations) {
      const container = held.deref();
      if (!container || !container.isConnected) continue;
      for (const selector of selectors) {
        let found;
        try { found = container.querySelectorAll(selector); } catch (e) { continue; }
        if (found.length > DELEGATED_MAX) continue;
        for (const el of found) listened.add(el);
      }
    }
  }
  // Whether `el` listens for input itself (`<html>` and `<body>` hold a
  // page's delegated listeners, not a control; a label's click is its
  // control's, which has a ref): BY_LISTENER, else false. Such an element
  // gets its ref only if nothing inside it got one: a list or a slider
  // that delegates to its items or handle has theirs (see `place`).
  const BY_LISTENER = 2;
  const listens = (el, tag) => tag !== 'BODY' && tag !== 'HTML' && listened.has(el)
    && !(tag === 'LABEL' && el.control) && BY_LISTENER;

  // What an agent screenshots, hovers or drags: each keeps a ref, named or
  // not (an unnamed one gets a hint).
  const MEDIA = new Set(['img', 'canvas', 'video', 'figure']);

  function refFor(el) {
    let ref = refOf.get(el);
    if (!ref) {
      ref = prefix + 'e' + nextRef++;
      refOf.set(el, ref);
      byRef.set(ref, new WeakRef(el));
    }
    return ref;
  }

  // Whether the element's own markup says an agent may act on it (a
  // pointer cursor, the other signal, is read from its style in `visit`).
  function interactive(el, role, tag, names) {
    if (INTERACTIVE.has(role) || MEDIA.has(role)) return true;
    if (names.length === 0) return false;
    if (HANDLERS.some((h) => names.includes(h))) return true;
    // Something to drag (browser_drag) needs a ref as much as a button does.
    if (attribute(el, names, 'draggable') === 'true') return true;
    if (names.includes('contenteditable') && el.isContentEditable) return true;
    // Anything in the tab order: a slider's handle `<span tabindex=0>`, a
    // scrolling region, a custom control.
    if (focusable(el, names)) return true;
    // What a sortable marks as the handle to drag by (jQuery UI puts
    // `ui-sortable-handle` on every item and listens on the list).
    if (names.includes('class') && /(?:^|[\s_-])(?:sortable|drag)-handle(?:$|\s)/.test(el.getAttribute('class'))) return true;
    return (role === 'generic' || tag === 'A') && MARKERS.some((m) => names.includes(m));
  }

  // What the page gives to tell an unnamed element apart: an SVG
  // `<title>` or an image's `alt` inside it, then its id and class words,
  // or the words of the icon inside it (`<i class="fa fa-reply">`,
  // `<use href="#icon-trash">`). Utility classes say nothing and are left
  // out.
  const NOISE = /^(?:ui-(?:corner|state|widget|helper|priority|front)|is-|has-|js-|ng-|css-|sc-|jsx-|svelte-|active$|hover|focus|selected|disabled|clearfix|pull-|float-|text-|bg-|d-|[mp][trblxy]?-|col-|row$|flex|fa[srbl]?$|fa-(?:solid|regular|light|fw|lg|sm|xs|\dx)$|icons?$|btn$|button$|clickable|pointer|cursor|small$|large$|left$|right$|lazy|img|image|thumb|border|link|track|wrap|container|inner|outer|.*sprite)/i;
  const ICON_PREFIX = /^(?:fa|fas|far|bi|icon|icons|ico|glyphicon|mdi|ion|ti|feather|lucide|octicon|action|actions|btn|button|js)-/i;
  function words(el, out) {
    const id = el.getAttribute('id');
    if (id && id.length <= 30 && !/\d/.test(id)) out.push(id.replace(ICON_PREFIX, ''));
    for (const c of el.classList) {
      if (out.length !== 0) break;
      if (c.length <= 30 && !NOISE.test(c) && !/\d/.test(c)) out.push(c.replace(ICON_PREFIX, ''));
    }
    const use = el.tagName === 'use' && (el.getAttribute('href') || el.getAttribute('xlink:href'));
    if (use && out.length === 0) out.push(use.replace(/^.*#/, '').replace(ICON_PREFIX, ''));
    return out;
  }
  function hintOf(el) {
    const inner = el.querySelector('title, img[alt], [aria-label]');
    if (inner) {
      const text = clean(inner.tagName === 'title' ? inner.textContent
        : inner.getAttribute('aria-label') || inner.getAttribute('alt'), 40);
      if (text) return text;
    }
    const out = words(el, []);
    if (out.length === 0) {
      for (const icon of el.querySelectorAll('i, svg, use, [class*="icon"]')) {
        if (words(icon, out).length !== 0) break;
      }
    }
    if (out.length === 0) {
      const file = iconFile(el);
      if (file) out.push(file);
    }
    return out.length !== 0 ? clean(out[0], 40) : "";
  }
  // The file name of the image an element shows, when it is a word
  // (`/icons/reply.png`, `content: url(retweet.svg)`): an `<img>`'s
  // source, else what CSS paints as its content. Hashed names, numbers
  // and inline `data:` images say nothing.
  function iconFile(el) {
    let url = el.tagName === 'IMG' ? el.getAttribute('src') || '' : '';
    if (!url) {
      const m = /url\(["']?([^"')]*)/.exec(getComputedStyle(el).content);
      if (!m) return '';
      url = m[1];
    }
    if (url.startsWith('data:')) return '';
    const file = url.split(/[?#]/)[0].split('/').pop().replace(/\.[a-z0-9]+$/i, '').replace(ICON_PREFIX, '');
    return /^[a-z][a-z_-]{1,29}$/i.test(file) ? file : '';
  }

  // A tree item's list of child items: a `<ul>`, `<ol>` or `role=group`
  // among its children, or null (a leaf, or a branch not loaded yet).
  function groupOf(el) {
    for (let c = el.firstElementChild; c; c = c.nextElementSibling) {
      const t = c.tagName;
      if (t === 'UL' || t === 'OL' || c.getAttribute('role') === 'group') return c;
    }
    return null;
  }

  // An element's text without that of `group`, one of its children.
  function textOutside(el, group) {
    let s = '';
    for (const n of el.childNodes) {
      if (n !== group && (n.nodeType === 3 || n.nodeType === 1)) s += n.textContent + ' ';
    }
    return s;
  }

  // Whether a tree item that ARIA says nothing about (no aria-expanded)
  // is an open or a closed branch, from its structure: a child list that
  // shows is open (said when the item is one to act on, or a treeitem: an
  // article's nested bullets say nothing), a hidden one closed; with no
  // child list (a folder loaded on click), the library's class words.
  function branch(el, role, names, acts) {
    const group = groupOf(el);
    if (group) {
      if (!group.checkVisibility()) return ' [collapsed]';
      if (acts || role === 'treeitem') return ' [expanded]';
    }
    const cls = names.length !== 0 && names.includes('class') ? el.getAttribute('class') : null;
    if (cls && cls.length < 200) {
      if (CLOSED_WORDS.test(cls)) return ' [collapsed]';
      if (OPEN_WORDS.test(cls)) return ' [expanded]';
    }
    return '';
  }

  // The element's states, as ` [checked] [disabled]…`.
  // `acts`: the element is one to act on.
  function states(el, role, tag, names, acts) {
    let out = '';
    // A field that takes more than one line (a `<textarea>`, an editor).
    if (role === 'textbox' && (tag === 'TEXTAREA' || attribute(el, names, 'aria-multiline') === 'true'
      || tag !== 'INPUT' && attribute(el, names, 'aria-multiline') !== 'false' && el.isContentEditable)) {
      out += ' [multiline]';
    }
    if (role === 'heading') {
      const level = attribute(el, names, 'aria-level') || (/^H[1-6]$/.test(tag) ? tag[1] : '');
      if (level) out += ' [level=' + level + ']';
    }
    if (role === 'checkbox' || role === 'radio' || role === 'switch' || role === 'menuitemcheckbox' || role === 'menuitemradio') {
      const aria = attribute(el, names, 'aria-checked');
      if (aria === 'mixed') out += ' [mixed]';
      else if (tag === 'INPUT' && el.checked === true || aria === 'true') out += ' [checked]';
    }
    // A form control's `disabled` reflects its attribute; a custom
    // element's is its own.
    const disabled = DISABLABLE.has(tag) ? names.includes('disabled') : tag.includes('-') && el.disabled === true;
    if (disabled || attribute(el, names, 'aria-disabled') === 'true') out += ' [disabled]';
    const expanded = attribute(el, names, 'aria-expanded');
    if (expanded === 'true') out += ' [expanded]';
    else if (expanded === 'false') out += ' [collapsed]';
    else if (role === 'treeitem' || role === 'listitem') out += branch(el, role, names, acts);
    if (attribute(el, names, 'aria-selected') === 'true' || (role === 'option' && el.selected)) out += ' [selected]';
    if (attribute(el, names, 'aria-pressed') === 'true') out += ' [pressed]';
    return out;
  }

  // A field's value, whole (the caller cuts it at the text limit, saying
  // so). ARIA ranges (a slider `<div>`) give `aria-valuetext` or
  // `aria-valuenow`.
  function valueOf(el, role, tag, names) {
    if (role === 'textbox' || role === 'searchbox' || role === 'spinbutton' || role === 'slider'
      || role === 'combobox' && tag === 'INPUT') {
      if (tag === 'INPUT' || tag === 'TEXTAREA') {
        const value = el.value;
        if (!value) return '';
        return tag === 'INPUT' && secretLike(el, names) ? '••••' : collapse(value);
      }
      if (RANGES.has(role)) {
        const aria = attribute(el, names, 'aria-valuetext') || attribute(el, names, 'aria-valuenow');
        if (aria) return collapse(aria);
      }
      if ('value' in el) return collapse(String(el.value ?? ''));
      if (el.isContentEditable) return collapse(el.textContent);
    }
    if (role === 'combobox' && tag === 'SELECT') {
      const o = el.selectedOptions[0];
      return o ? clean(o.label || o.textContent, 100) : '';
    }
    if (RANGES.has(role)) {
      const aria = attribute(el, names, 'aria-valuetext') || attribute(el, names, 'aria-valuenow');
      if (aria) return collapse(aria);
    }
    return '';
  }

  // Fields whose value is never shown: passwords, one-time codes, card
  // numbers and security codes (`browser_evaluate` on their ref masks them
  // too, with the same test: see actions/evaluate.rs).
  const SECRET_AUTOCOMPLETE = /(?:^|\s)(?:current-password|new-password|one-time-code|cc-number|cc-csc)(?:\s|$)/i;
  function secretLike(el, names) {
    if (el.type === 'password') return true;
    const autocomplete = attribute(el, names, 'autocomplete');
    return autocomplete !== null && SECRET_AUTOCOMPLETE.test(autocomplete);
  }

  const RANGES = new Set(['slider', 'spinbutton', 'progressbar', 'scrollbar', 'meter']);
  // A slider's or spinbutton's bounds, as ` min="0" max="10"`: what an
  // agent needs to move it (an `<input type=range>` has 0 and 100 unless
  // it says otherwise).
  function bounds(el, role, tag, names) {
    if (role !== 'slider' && role !== 'spinbutton') return '';
    let min, max;
    if (tag === 'INPUT') {
      min = attribute(el, names, 'min') ?? (el.type === 'range' ? '0' : null);
      max = attribute(el, names, 'max') ?? (el.type === 'range' ? '100' : null);
    } else {
      min = attribute(el, names, 'aria-valuemin');
      max = attribute(el, names, 'aria-valuemax');
    }
    return (min !== null && min !== '' ? ' min=' + q(min) : '') + (max !== null && max !== '' ? ' max=' + q(max) : '');
  }

  // A name or value in quotes; JSON's escaping (quotes, backslashes, control characters).
  const q = JSON.stringify;

  // The last snapshot, answered again while the page is provably quiet
  // (issue 46): a full snapshot of a 5,000-control page costs ~60 ms in
  // the page, and an agent that asks twice of a page that did not move
  // pays it twice. `quiet` holds from the end of a serialization until
  // anything that could change what it printed: a mutation (of the
  // document and of every open shadow root the walk entered), an event
  // of input, focus, scrolling, resizing, toggling, media or a
  // transition or animation, new listener marks (`listen`). At reuse it
  // also takes: the same options (the engine's count of acting calls in
  // the tab among them, so `browser_evaluate`, `browser_emulate` and any
  // other tool that may change the page without an event end it), no
  // animation running, every printed field's value, checked and selected
  // state as printed (a script sets those without a mutation), and at most
  // REUSE_MS since it was made (what no signal shows, a style rule a
  // script inserts, is then seen within that).
  const REUSE_MS = 2000;
  let last = null;
  let quiet = false;
  const CHANGES = { childList: true, subtree: true, attributes: true, characterData: true };
  const changes = new MutationObserver(() => { quiet = false; changes.disconnect(); });
  const loud = () => { quiet = false; };
  for (const type of ['input', 'change', 'toggle', 'focusin', 'focusout', 'pointerover', 'pointerout',
    'pointerdown', 'pointerup', 'mouseover', 'mouseout', 'mousedown', 'mouseup', 'keydown', 'keyup',
    'wheel', 'scroll', 'resize', 'load', 'error', 'play', 'pause', 'transitionrun', 'transitionend',
    'transitioncancel', 'animationstart', 'animationend', 'animationcancel', 'fullscreenchange',
    'visibilitychange', 'contentvisibilityautostatechange', 'hashchange', 'popstate']) {
    addEventListener(type, loud, { capture: true, passive: true });
  }
  // What a field showed when printed: its value, checked and selected
  // state (none of them is an attribute a mutation would report).
  const fieldState = (el) => el.value + '\u0001' + el.checked + '\u0001' + el.selectedIndex + '\u0001'
    + (el.selectedOptions ? el.selectedOptions.length : '');
  function reusable(key) {
    if (!last || !quiet || last.key !== key || performance.now() - last.at > REUSE_MS) return false;
    if (changes.takeRecords().length !== 0 || document.getAnimations().length !== 0) return false;
    for (const [el, state] of last.fields) if (fieldState(el) !== state) return false;
    return true;
  }

  // One frame's snapshot. Elements are counted in document order; those
  // before `opts.start` are walked but not printed (a later page of a
  // capped snapshot), and the walk stops after `opts.maxElements` printed.
  // A text line belongs to the element before it.
  function snapshot(opts) {
    const began = performance.now();
    // The engine asks for the listener scan first when the tree changed
    // since the last one (snapshot/listeners.rs): one round trip, not two.
    if (opts.listeners && stale) return { listenersStale: listenersStale(), inline: inlineHandlers() };
    // Asked after a navigate, ahead of the first snapshot (snapshot/prime.rs):
    // the scan alone, no tree.
    if (opts.prime) return { primed: true };
    // (Not in the key: whether the scan was asked, and the ref numbers'
    // base, which only new refs take.)
    const key = JSON.stringify(opts, (k, v) => k === 'listeners' || k === 'refBase' ? undefined : v);
    if (reusable(key)) {
      nextRef = Math.max(nextRef, opts.refBase || 1);
      snapshots++;
      return { ...last.result, next: nextRef, url: location.href, title: document.title,
        ms: performance.now() - began, reused: true };
    }
    quiet = false;
    changes.disconnect();
    const fields = [];
    const shadows = [];
    const max = opts.maxElements > 0 ? opts.maxElements : Infinity;
    const start = opts.start > 0 ? opts.start : 0;
    prefix = opts.prefix || '';
    labelsByRoot = new Map();
    if (delegations.length !== 0) delegate();
    nextRef = Math.max(nextRef, opts.refBase || 1);
    const frames = [];
    const earlierFrames = [];
    let root = document.body || document.documentElement;
    if (opts.selector) {
      try {
        root = document.querySelector(opts.selector);
      } catch (e) {
        return { error: 'invalid_selector', message: String(e.message || e) };
      }
      if (!root) return { error: 'no_match' };
    }
    const lines = [];
    let seen = 0;          // elements counted, printed or not
    let elements = 0;      // elements printed
    let refs = 0;
    let truncated = false;
    let cut = 0;           // text lines cut at TEXT_MAX
    let valuesCut = 0;     // field values cut at TEXT_MAX
    // The cursor of the element whose children are visited: an element
    // whose own cursor is a pointer and its parent's is not has a handler
    // of its own (the parent's pointer is inherited by everything inside).
    // Inside a control it is taken as a pointer without asking.
    let cursorAbove = 'auto';
    if (opts.selector && root.parentElement) cursorAbove = getComputedStyle(root.parentElement).cursor;
    // The text line that the next words join, while no element or block
    // boundary came between: its index in `lines`, or -1.
    let textLine = -1;
    let textDepth = -1;
    // Whether a text line printed now is on this page.
    const textOnPage = () => start === 0 ? true : seen > start;

    // Words joined as the page shows them: a space only where the page's
    // text had one (`<b>bold</b>ly` stays one word), a whitespace-only
    // node between two inline elements included (`<span>December</span>
    // &nbsp;<span>2016</span>`), or where a box of its own (a block, an
    // inline-block, a flex item) comes between the two texts.
    let spaceAfter = false;
    let textParent = null;   // the element the last words on `textLine` came from
    function pushText(data, text, depth, parent) {
      const spaced = spaceAfter || SPACE_START.test(data);
      spaceAfter = SPACE_END.test(data);
      const previous = textParent;
      textParent = parent;
      if (textLine >= 0 && textDepth === depth) {
        lines[textLine] += spaced || previous !== parent && boxBetween(previous, parent) ? ' ' + text : text;
      } else {
        textLine = lines.length;
        textDepth = depth;
        lines.push(indent(depth) + 'text: ' + text);
      }
    }

    // `shown`: the node is known to show (a listed element).
    // (A whitespace-only node records that a space was rendered.)
    function walk(node, tag, names, depth, nameAbove, shown) {
      // A label's words are already the name of the control it labels.
      const labelText = tag === 'LABEL' && node.control;
      let textShown;  // asked once, at the first text to print
      let list = null;
      let i = 0;
      let child;
      const shadow = (SHADOW_HOSTS.has(tag) || tag.includes('-')) && node.shadowRoot;
      if (shadow) {
        child = shadow.firstChild;
        shadows.push(shadow);
      }
      else if (tag === 'SLOT') {
        list = node.assignedNodes({ flatten: true });
        child = list[0];
      } else child = node.firstChild;
      for (; child; child = list ? list[++i] : child.nextSibling) {
        if (truncated) return;
        const type = child.nodeType;
        if (type === 3) {
          if (labelText) continue;
          const data = child.data;
          if (!NON_SPACE.test(data)) {
            if (data.length !== 0) spaceAfter = true;
            continue;
          }
          if (!textOnPage()) continue;
          const text = collapse(data);
          if (text === nameAbove) continue;
          if (textShown ??= textShows(node, names, shown)) pushText(data, text, depth, node);
          continue;
        }
        if (type !== 1) continue;
        const childTag = child.tagName;
        if (!SKIP.has(childTag)) visit(child, childTag, depth, nameAbove);
      }
    }

    // Elements printed under the element that controls or owns them
    // (`aria-controls`, `aria-owns`: a combobox's listbox in a portal at
    // the end of <body>), and so skipped at their own place.
    const adopted = new Set();

    // `adopting`: `el` is printed under its owner, not at its own place.
    function visit(el, tag, depth, nameAbove, adopting) {
      if (adopted.size !== 0 && !adopting && adopted.has(el)) return;
      const names = attributesOf(el);
      let role = roleOf(el, tag, names);
      if (role === null) return;
      let acts = interactive(el, role, tag, names);
      const above = cursorAbove;
      // (A picture's ref says nothing of a handler: what it holds keeps
      // the cursor from above.)
      let cursor = MEDIA.has(role) ? above : 'pointer';
      if (!acts) {
        // One style read per element that is not a control and has
        // attributes (a class, an id, a style: what cursor rules hang on),
        // or is a list item: a bare `<td>` or `<div>` inherits its parent's
        // cursor. Reading every element's cost the 5,000-control page 11–40%
        // of its in-page time; this, within noise (README, Measuring).
        if (names.length !== 0 || tag === 'LI') {
          cursor = getComputedStyle(el).cursor;
          acts = POINTERS.has(cursor) && (!POINTERS.has(above) || ITEMS.has(role));
        } else {
          cursor = above;
        }
        if (!acts) acts = listens(el, tag);
      }
      if (acts) role = actingRole(role, tag);
      cursorAbove = cursor;
      place(el, tag, names, role, acts, depth, nameAbove);
      cursorAbove = above;
    }

    function place(el, tag, names, role, acts, depth, nameAbove) {
      // A list item that is a tree's branch is printed, to say so.
      if (TRANSPARENT.has(role) && !acts && !(role === 'listitem'
        && attribute(el, names, 'aria-expanded') === null && branch(el, role, names, false))) {
        // A container that is not printed is not asked how it shows (most
        // elements of a page are such): what it holds is asked instead,
        // each element by itself, its text at the first words to print.
        if (names.length !== 0 && (names.includes('hidden') || attribute(el, names, 'aria-hidden') === 'true')) return;
        if (INLINE.has(tag)) {
          walk(el, tag, names, depth, nameAbove);
        } else {
          textLine = -1;
          const at = lines.length;
          walk(el, tag, names, depth, nameAbove);
          textLine = -1;
          // A list item or a cell whose only content is text says what it
          // is, on one line: `listitem: Alpha`, `cell: 42`.
          if (lines.length === at + 1 && SAYS_ROLE.has(role)) {
            const text = indent(depth) + 'text: ';
            if (lines[at].startsWith(text)) lines[at] = indent(depth) + role + ': ' + lines[at].slice(text.length);
          }
        }
        return;
      }
      const how = shows(el, names);
      if (how === PRUNED) return;
      const frame = tag === 'IFRAME' || tag === 'FRAME';
      if (how === INVISIBLE) {
        // A frame's document and a select's options are not its children
        // in the page's layout: nothing there can show.
        if (frame || tag === 'SELECT') return;
        walk(el, tag, names, depth, nameAbove);
        return;
      }
      textLine = -1;
      if (seen < start) {
        // An earlier page's element: counted, its subtree walked.
        seen++;
        if (frame) {
          earlierFrames.push(refFor(el));
          return;
        }
          if (tag !== 'SELECT' && !LEAF.has(role)) walk(el, tag, names, depth + 1, nameOf(el, role, tag, names), true);
        textLine = -1;
        adopt(el, names, depth);
        return;
      }
      if (elements >= max) {
        truncated = true;
        return;
      }
      seen++;
      elements++;
      const name = nameOf(el, role, tag, names);
      const head = indent(depth) + role + (name ? ' ' + q(name) : '');
      let line = '';
      // Refs go to what an agent may act on, and nothing else (issue 21):
      // a heading or a landmark has a name but nothing to do; an image, a
      // canvas, a video or a figure keeps its ref (browser_screenshot and
      // browser_drag take it: `interactive`), a frame its own (its content
      // is stitched in at it).
      let ref = acts && acts !== BY_LISTENER || frame;
      if (ref) {
        const r = refFor(el);
        line += ' [ref=' + r + ']';
        shownAs.set(r, role + '\n' + name);
        refs++;
      }
      const refsBefore = refs;
      if (tag === 'INPUT' || tag === 'TEXTAREA' || tag === 'SELECT') fields.push([el, fieldState(el)]);
      line += states(el, role, tag, names, acts);
      const value = valueOf(el, role, tag, names);
      if (value.length > TEXT_MAX) {
        line += ' value=' + q(value.slice(0, TEXT_MAX)) + ' [value cut: ' + (value.length - TEXT_MAX) + ' more characters]';
        valuesCut++;
      } else if (value) line += ' value=' + q(value);
      line += bounds(el, role, tag, names);
      const at = lines.length;
      lines.push(head + line);
      if (frame) {
        // The frame's content is serialized in its own world and stitched
        // in here by cdpilot, at this marker.
        frames.push(refFor(el));
        lines.push(indent(depth + 1) + '\u0001' + refFor(el));
        return;
      }
      if (tag === 'SELECT') {
        for (const o of el.options) {
          lines.push(indent(depth + 1) + 'option ' + q(clean(o.label || o.textContent, 100)) + (o.selected ? ' [selected]' : ''));
        }
        return;
      }
      if (!LEAF.has(role) || role === 'treeitem' && groupOf(el)) walk(el, tag, names, depth + 1, name, true);
      textLine = -1;
      if (acts === BY_LISTENER && refs === refsBefore) {
        ref = true;
        const r = refFor(el);
        line = ' [ref=' + r + ']' + line;
        shownAs.set(r, role + '\n' + name);
        lines[at] = head + line;
        refs++;
      } else if (acts === BY_LISTENER && TRANSPARENT.has(role) && !name) {
        // A wrapper that only delegates to what it holds is not printed,
        // as if it had no listener: its lines move up.
        lines.splice(at, 1);
        for (let k = at; k < lines.length; k++) lines[k] = lines[k].slice(2);
        adopt(el, names, depth);
        return;
      }
      // An unnamed element to act on with nothing inside to tell it by.
      if (ref && !name && !value && lines.length === at + 1) {
        const hint = hintOf(el);
        if (hint) lines[at] = head + ' hint=' + q(hint) + line;
      }
      // An element whose only content is text carries it on its own line.
      if (lines.length === at + 2) {
        const text = indent(depth + 1) + 'text: ';
        if (lines[at + 1].startsWith(text)) lines[at] += ': ' + lines.pop().slice(text.length);
      }
      adopt(el, names, depth);
    }

    // What `el` controls or owns elsewhere in the page (a combobox's
    // listbox in a portal) is printed right under it, once: only elements
    // that come later in the document (an earlier one was printed at its
    // place already), outside `el` and not holding it.
    function adopt(el, names, depth) {
      if (names.length === 0 || !(names.includes('aria-controls') || names.includes('aria-owns'))) return;
      const ids = (attribute(el, names, 'aria-controls') || '') + ' ' + (attribute(el, names, 'aria-owns') || '');
      const root = el.getRootNode();
      for (const id of ids.split(/\s+/)) {
        if (!id || truncated) continue;
        const target = root.getElementById ? root.getElementById(id) : null;
        if (!target || target === el || adopted.has(target) || el.contains(target) || target.contains(el)) continue;
        if (!(el.compareDocumentPosition(target) & Node.DOCUMENT_POSITION_FOLLOWING)) continue;
        adopted.add(target);
        textLine = -1;
        if (!SKIP.has(target.tagName)) visit(target, target.tagName, depth + 1, '', true);
        textLine = -1;
      }
    }

    // Whether a box of its own separates the text in `a` from the text in
    // `b` that follows it: an element between them (up to their common
    // ancestor) that is not laid out inline. Asked only where two texts
    // would join without a space, which is rare.
    function boxBetween(a, b) {
      if (!a || !b) return false;
      const up = new Set();
      for (let n = a; n; n = n.parentNode || n.host) up.add(n);
      let n = b;
      for (; n && !up.has(n); n = n.parentNode || n.host) {
        if (n.nodeType === 1 && !inline(n)) return true;
      }
      for (let m = a; m && m !== n; m = m.parentNode || m.host) {
        if (m.nodeType === 1 && !inline(m)) return true;
      }
      return false;
    }
    function inline(el) {
      const style = getComputedStyle(el);
      const display = style.display;
      if (display === 'contents') return true;
      return display === 'inline' && parseFloat(style.marginLeft) <= 0 && parseFloat(style.marginRight) <= 0
        && parseFloat(style.paddingLeft) <= 0 && parseFloat(style.paddingRight) <= 0;
    }

    if (opts.selector) visit(root, root.tagName, 0, '');
    else walk(root, root.tagName, attributesOf(root), 0, '');
    for (let k = 0; k < lines.length; k++) {
      const line = lines[k];
      if (line.length > TEXT_MAX && !line.endsWith(' more characters]')) {
        lines[k] = line.slice(0, TEXT_MAX) + '… [text cut: ' + (line.length - TEXT_MAX) + ' more characters]';
        cut++;
      }
    }
    snapshots++;
    const text = lines.join('\n');
    const result = {
      text, elements, seen, refs, truncated, frames, earlierFrames, cut, valuesCut, next: nextRef,
      url: location.href, title: document.title, ms: performance.now() - began,
    };
    changes.observe(document, CHANGES);
    for (const root of shadows) changes.observe(root, CHANGES);
    last = { key, result, fields, at: performance.now() };
    quiet = true;
    return result;
  }

  function lookup(ref) {
    const el = byRef.get(ref)?.deref();
    return el && el.isConnected ? el : null;
  }

  // What an element with a ref is now, as a snapshot would print it:
  // `role\nname` (a value is not part of it: a textbox's name never
  // includes its text).
  function identity(el) {
    const tag = el.tagName;
    const names = attributesOf(el);
    const role = actingRole(roleOf(el, tag, names), tag);
    return role + '\n' + (role === null ? '' : nameOf(el, role, tag, names));
  }

  // An acting tool's target: the element `ref` names, if it still has the
  // role and name the snapshot that showed it printed; null if it left.
  // Otherwise, as JSON text, what it was and is (`was`, `now`: `[role,
  // name]`), the ref of the one element that now has the role and name it
  // was shown with (`fresh`, when exactly one does), how many do
  // (`matches`), and this frame's next ref number (`next`: a fresh ref may
  // be new). The refusal shows the element as it is now, so the ref stands
  // for that from then on.
  function target(ref) {
    const el = lookup(ref);
    if (!el) return null;
    const was = shownAs.get(ref);
    if (was === undefined) return el;
    labelsByRoot = null;
    const now = identity(el);
    if (now === was) return el;
    // (A refusal may give an element a fresh ref: the next snapshot is
    // made anew.)
    quiet = false;
    shownAs.set(ref, now);
    // Only on a refusal: every element of its document (or shadow root)
    // is asked, the labels gathered once.
    labelsByRoot = new Map();
    const found = [];
    const root = el.getRootNode();
    const [role, name] = was.split('\n');
    for (const other of (root.querySelectorAll ? root : document).querySelectorAll('*')) {
      if (other === el) continue;
      const tag = other.tagName;
      const names = attributesOf(other);
      if (actingRole(roleOf(other, tag, names), tag) !== role || nameOf(other, role, tag, names) !== name) continue;
      if (!other.checkVisibility()) continue;
      found.push(other);
      if (found.length > 1) break;
    }
    let fresh = null;
    if (found.length === 1) {
      fresh = refFor(found[0]);
      shownAs.set(fresh, was);
    }
    return JSON.stringify({ was: [role, name], now: now.split('\n'), fresh, matches: found.length, next: nextRef });
  }

  // Whether this world has taken a snapshot (refs can only be looked up
  // in one that did: a world made for a later document has none).
  const issued = () => snapshots > 0;

  // What is at a point instead of an acting tool's element (issue 42):
  // the nearest element up from `el` that a snapshot would print with a
  // role other than generic, a name or a ref, as `role "name" [ref=eN]`,
  // then the element itself as markup (`<div id="x" class="y">`).
  function describe(el) {
    labelsByRoot = null;
    let shown = '';
    for (let c = el, n = 0; c && c.nodeType === 1 && n < 6 && !shown; c = c.parentElement || c.getRootNode().host, n++) {
      const [role, name] = identity(c).split('\n');
      const ref = refOf.get(c);
      if ((role && role !== 'generic' && role !== 'none' && role !== 'presentation') || name || ref) {
        shown = (role || 'generic') + (name ? ' ' + JSON.stringify(name) : '') + (ref ? ' [ref=' + ref + ']' : '');
      }
    }
    let markup = '<' + el.tagName.toLowerCase();
    if (el.id) markup += ' id="' + el.id.slice(0, 40) + '"';
    if (typeof el.className === 'string' && el.className) markup += ' class="' + el.className.slice(0, 40) + '"';
    markup += '>';
    if (!shown) {
      const text = (el.textContent || '').trim().replace(/\s+/g, ' ').slice(0, 40);
      return text ? markup + ' ' + JSON.stringify(text) : markup;
    }
    return shown + ' ' + markup;
  }

  return (globalThis.__cdpilot = { snapshot, lookup, target, refFor, issued, listenersStale, listen, describe });
})()
