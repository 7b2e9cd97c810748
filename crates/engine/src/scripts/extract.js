// browser_extract's page reader, run in cdpilot's isolated world.
// (selector, cap, links, known, whole) => {html, truncated, key, fallback} | {unchanged, key} | {error}
//
// `whole` (no selector): the whole document, cleaned as below but with no
// content chosen: Readability (dom_smoothie, in Rust) chooses it from this
// rendered-and-cleaned copy. Otherwise, without a selector, the content is
// chosen here by scoring, as Readability does:
// each visible paragraph scores its parent and grandparents by its length
// and commas; a candidate's score is weighed by its class/id hints and cut
// by its link density; the best candidate (climbing while a parent holds
// most of the score) is the root, with its headline and byline when they
// sit just outside it. The copy then loses what no one sees (the rendered
// page says: display, visibility, fixed overlays), boilerplate (nav,
// footers, asides, comment sections, link farms, share and "related"
// blocks), empty links and data: URIs; tracking parameters are cut from
// link targets, and `links: false` drops the targets entirely.
//
// `known` are the cache keys of the Markdown Rust already holds: while no
// node of the document was added, removed or changed since, the answer is
// only {unchanged}.
(selector, cap, links, known, whole) => {
  const state = globalThis.__cdpilotReader || (globalThis.__cdpilotReader = (() => {
    const s = { id: Math.random().toString(36).slice(2), generation: 0 };
    new MutationObserver(() => { s.generation++; })
      .observe(document, { childList: true, characterData: true, subtree: true });
    return s;
  })());
  const key = `${state.id}:${state.generation}:${selector || ''}:${links}`;
  if (known.includes(key)) return { unchanged: true, key };

  const BOILERPLATE = 'nav, footer, aside, dialog, button, [role=navigation], [role=banner], [role=contentinfo], [role=complementary], [role=dialog], [role=alertdialog], [aria-modal=true], script, style, noscript, template, svg, iframe, object, embed, canvas, select, input, textarea';
  const UNLIKELY = /(^|[\s_-])(comments?|comment-?list|commentary|disqus|respond|replies|discussion|related|recommend\w*|read-?more|more-?stories|outbrain|taboola|share|sharing|social|newsletter|subscribe|promo\w*|sponsor\w*|advert\w*|ads?|ad-?slot|banner|breadcrumbs?|menu|sidebar|widget|popup|modal|cookie\w*|consent|masthead|footer|pagination|pager|tags?|toolbar|jump-?link)([\s_-]|$)/i;
  const LIKELY = /(^|[\s_-])(article|body|content|entry|main|page|post|text|blog|story|prose|hentry)([\s_-]|$)/i;
  const hints = (el) => `${typeof el.className === 'string' ? el.className : ''} ${el.id || ''}`;
  const weight = (el) => {
    const h = hints(el);
    if (!h.trim()) return 0;
    return (LIKELY.test(h) ? 25 : 0) - (UNLIKELY.test(h) ? 25 : 0);
  };
  const textLen = (el) => (el.textContent || '').replace(/\s+/g, ' ').trim().length;
  const linkDensity = (el) => {
    const all = textLen(el);
    if (!all) return 0;
    let linked = 0;
    for (const a of el.querySelectorAll('a')) linked += textLen(a);
    return Math.min(1, linked / all);
  };
  const visible = (el) => el.checkVisibility
    ? el.checkVisibility({ visibilityProperty: true })
    : el.getClientRects().length > 0;

  // The root: a selector's element, else the best-scored candidate.
  let root;
  try {
    root = selector ? document.querySelector(selector) : null;
  } catch (e) { return { error: 'invalid_selector' }; }
  if (selector && !root) return { error: 'no_match' };
  if (!document.body) return { error: 'empty' };
  if (!root && whole) root = document.documentElement;
  if (!root) root = choose() || document.querySelector('main, [role=main]') || document.querySelector('article') || document.body;

  function choose() {
    const scores = new Map();
    const base = (el) => {
      if (scores.has(el)) return;
      let s = 0;
      switch (el.localName) {
        case 'article': case 'main': s = 8; break;
        case 'div': case 'section': s = 5; break;
        case 'pre': case 'td': case 'blockquote': s = 3; break;
        case 'ol': case 'ul': case 'dl': case 'dd': case 'dt': case 'li': case 'form': case 'address': s = -3; break;
        case 'h1': case 'h2': case 'h3': case 'h4': case 'h5': case 'h6': case 'th': s = -5; break;
      }
      scores.set(el, s + weight(el));
    };
    const paragraphs = document.body.querySelectorAll('p, pre, td, blockquote, div, section, article, li, dd, font');
    let seen = 0;
    for (const p of paragraphs) {
      if (++seen > 20000) break;
      if (p.localName === 'div' || p.localName === 'section' || p.localName === 'article' || p.localName === 'li' || p.localName === 'dd' || p.localName === 'font') {
        // Only a container whose text is its own (no block children) is a paragraph.
        if (p.querySelector('p, div, section, article, pre, blockquote, table, ul, ol, li, h1, h2, h3, h4, h5, h6')) continue;
      }
      const text = (p.textContent || '').replace(/\s+/g, ' ').trim();
      if (text.length < 25) continue;
      if (!visible(p)) continue;
      if (p.closest('nav, footer, aside, [role=navigation], [role=contentinfo], [role=complementary]')) continue;
      const score = 1 + (text.match(/[,，、،]/g) || []).length + Math.min(Math.floor(text.length / 100), 3);
      let el = p.parentElement;
      for (let level = 0; el && el !== document.documentElement && level < 4; level++, el = el.parentElement) {
        base(el);
        scores.set(el, scores.get(el) + score / (level === 0 ? 1 : level === 1 ? 2 : level * 3));
      }
    }
    let best = null, bestScore = 0;
    const final = new Map();
    for (const [el, s] of scores) {
      const f = s * (1 - linkDensity(el));
      final.set(el, f);
      if (f > bestScore) { best = el; bestScore = f; }
    }
    if (!best) return null;
    // Climb while the parent scores nearly as well: the article's body is
    // often split into sibling blocks the parent holds together.
    let node = best;
    while (node.parentElement && node.parentElement !== document.body && node.parentElement !== document.documentElement) {
      const up = final.get(node.parentElement);
      if (up === undefined || up < bestScore * 0.75) break;
      node = node.parentElement;
    }
    return node;
  }

  // Walk the original and its copy in step, dropping from the copy what the
  // original shows no one or what is boilerplate around the content.
  const build = (useStyles) => {
    const clone = root.cloneNode(true);
    const a = document.createTreeWalker(root, NodeFilter.SHOW_ELEMENT);
    const b = document.createTreeWalker(clone, NodeFilter.SHOW_ELEMENT);
    const rootLen = textLen(root) || 1;
    const doomed = [];
    for (let x = a.currentNode, y = b.currentNode; x && y; x = a.nextNode(), y = b.nextNode()) {
      if (x === root) continue;
      if (root === document.documentElement && x.closest('head')) {
        // The head has no boxes, but its title and metadata help Readability.
        if (x.matches('script, style, noscript, template, link')) doomed.push(y);
        continue;
      }
      let drop = x.hidden || x.getAttribute('aria-hidden') === 'true';
      if (!drop && x.matches(BOILERPLATE)) drop = true;
      if (!drop && x.localName === 'header') drop = !x.querySelector('h1, h2');
      if (!drop && useStyles) {
        const style = getComputedStyle(x);
        drop = style.display === 'none' || style.visibility === 'hidden' ||
          (style.position === 'fixed' && x.getBoundingClientRect().width * x.getBoundingClientRect().height > 0.25 * innerWidth * innerHeight);
      }
      if (!drop && !selector && !whole && x.localName !== 'a' && !/^(p|h[1-6]|li|td|th|tr|tbody|thead|table|pre|code|blockquote|figure|figcaption|img|picture)$/.test(x.localName)) {
        const len = textLen(x);
        const h = hints(x);
        // Comment threads, teaser feeds and "related" blocks: a negative
        // hint and not most of the content; link farms: mostly link text.
        if (h.trim() && UNLIKELY.test(h) && !LIKELY.test(h) && len < 0.5 * rootLen) drop = true;
        else if (len > 0 && len < 0.5 * rootLen && linkDensity(x) > 0.55 && !x.querySelector('p')) drop = true;
      }
      if (drop) {
        doomed.push(y);
        // Skip the dropped subtree in both walks.
        let nx = x, ny = y;
        while (nx.lastElementChild) { nx = nx.lastElementChild; ny = ny.lastElementChild; }
        a.currentNode = nx; b.currentNode = ny;
      }
    }
    for (const y of doomed) y.remove();
    return clone;
  };

  const bodyText = (c) => {
    const b = whole ? c.querySelector('body') : c;
    return b ? b.textContent.trim() : '';
  };
  let clone = build(true);
  let fallback = null;
  if (!bodyText(clone) && (document.body || root).textContent.trim()) {
    // The rendered page shows nothing (a hidden body, a script that never
    // revealed it): read the DOM's text instead.
    clone = build(false);
    if (bodyText(clone)) fallback = 'dom_text';
  }

  // The headline and byline, when the chosen root sits below them.
  if (!selector && !whole && !clone.querySelector('h1')) {
    const h1 = Array.from(document.querySelectorAll('h1')).find((h) => visible(h) && !root.contains(h) && textLen(h) > 0);
    if (h1 && (h1.compareDocumentPosition(root) & Node.DOCUMENT_POSITION_FOLLOWING)) {
      const byline = Array.from(document.querySelectorAll('[rel=author], [itemprop=author], .byline, .author, [class*=byline]'))
        .find((e) => visible(e) && !root.contains(e) && !e.contains(root) && textLen(e) > 0 && textLen(e) < 120 &&
          (h1.compareDocumentPosition(e) & Node.DOCUMENT_POSITION_FOLLOWING) && (e.compareDocumentPosition(root) & Node.DOCUMENT_POSITION_FOLLOWING));
      if (byline) {
        const p = document.createElement('p');
        p.textContent = byline.textContent.replace(/\s+/g, ' ').trim();
        clone.prepend(p);
      }
      const h = document.createElement('h1');
      h.textContent = h1.textContent.replace(/\s+/g, ' ').trim();
      clone.prepend(h);
    }
  }

  // Tables: a row's header cells are cells of that row (a header row stays
  // the header), so the cells after them do not shift.
  for (const tr of clone.querySelectorAll('tr')) {
    if (!tr.querySelector(':scope > td')) continue;
    for (const th of tr.querySelectorAll(':scope > th')) {
      const td = document.createElement('td');
      const strong = document.createElement('strong');
      strong.append(...th.childNodes);
      td.append(strong);
      for (const attr of ['colspan', 'rowspan']) if (th.hasAttribute(attr)) td.setAttribute(attr, th.getAttribute(attr));
      th.replaceWith(td);
    }
  }

  // Link and image targets.
  const TRACKING = /^(utm_\w+|fbclid|gclid|dclid|gbraid|wbraid|msclkid|mc_cid|mc_eid|_hsenc|_hsmi|yclid|igshid|ncid|cmpid|ocid|ref_src|ref_url|spm|smid|smtyp|cid|__twitter_impression|trk|trkCampaign)$/i;
  const shorten = (href) => {
    let url;
    try { url = new URL(href, document.baseURI); } catch (e) { return href; }
    // Redirect wrappers carry the destination in a parameter.
    for (const name of ['url', 'u', 'q', 'dest', 'destination', 'target']) {
      const inner = url.searchParams.get(name);
      if (inner && /^https?:\/\//.test(inner) && /(^|\.)(google\.[a-z.]+|facebook\.com|t\.co|lnkd\.in|out\.reddit\.com|youtube\.com)$/.test(url.hostname) && /\/(url|l\.php|redirect|out)/.test(url.pathname)) {
        return shorten(inner);
      }
    }
    let changed = false;
    for (const name of Array.from(url.searchParams.keys())) {
      if (TRACKING.test(name)) { url.searchParams.delete(name); changed = true; }
    }
    if (!changed) return href;
    return url.href.replace(/\?$/, '');
  };
  const unwrap = (el) => el.replaceWith(...el.childNodes);
  for (const el of clone.querySelectorAll('a')) {
    const href = el.getAttribute('href') || '';
    const hasText = el.textContent.trim().length > 0;
    const media = el.querySelector('img');
    if (!hasText && !media) { el.remove(); continue; }
    if (!links || !href || /^(data|javascript):/i.test(href) || href.startsWith('#')) { unwrap(el); continue; }
    const short = shorten(href);
    if (short !== href) el.setAttribute('href', short);
  }
  for (const img of clone.querySelectorAll('img')) {
    const src = img.getAttribute('src') || '';
    const alt = (img.getAttribute('alt') || '').trim();
    if (!links || !src || /^data:/i.test(src)) {
      if (alt) img.replaceWith(document.createTextNode(alt)); else img.remove();
    }
  }

  let html = clone.outerHTML;
  const truncated = html.length > cap;
  if (truncated) html = html.slice(0, cap);
  return { html, truncated, key, fallback, chosen: selector ? null : (root.localName + (root.id ? '#' + root.id : '')) };
}
