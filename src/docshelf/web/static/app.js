// docshelf's page: search, read, outline and status over the JSON API of docshelf serve --http
// (docs/web-api.md). Every text from the docs or the server is put in the page as text (DOM text
// nodes), never as HTML. The token, when the server has one, lives in this tab's session storage
// and goes out as a bearer header only.
"use strict";

(() => {
  const TOKEN_KEY = "docshelf.token";
  const SEARCH_DELAY_MS = 200; // search as you type, once the typing pauses
  const SHORT_REF = 12;
  const CONTEXT_LINES = 40; // lines shown above a hit when its file is long
  // Words too common to highlight in an excerpt.
  const COMMON = new Set(("a an and are as at be by can do does for from how i if in is it its " +
    "of on or the this that to was what when where which who why with").split(" "));

  const $ = (id) => document.getElementById(id);
  const views = ["token", "search", "read", "outline", "status"];
  let status = null; // /api/status, read once at start
  let hits = [];
  let selected = -1;
  let typingTimer = 0;
  let searching = null; // the AbortController of the search in flight
  let reading = null; // {workspace, path, first, last, hl: [start, end]}
  let afterToken = null;
  let lastSearch = "/"; // where Esc goes back to
  let navigation = 0; // bumped by each route(): an answer for an older one is dropped
  const stale = (mine) => mine !== navigation;

  function el(tag, props, ...children) {
    const node = document.createElement(tag);
    for (const [key, value] of Object.entries(props || {})) {
      if (value === undefined || value === null || value === false) continue;
      if (key === "class") node.className = value;
      else if (key === "text") node.textContent = value;
      else if (key.startsWith("on")) node.addEventListener(key.slice(2), value);
      else node.setAttribute(key, value === true ? "" : String(value));
    }
    for (const child of children.flat(Infinity)) {
      if (child !== undefined && child !== null && child !== false) node.append(child);
    }
    return node;
  }

  // Put `children` (nodes, strings, arrays of them; null and false left out) in `node`.
  function fill(node, ...children) {
    node.replaceChildren(...children.flat(Infinity).filter((c) => c !== undefined && c !== null && c !== false));
    return node;
  }

  // A workspace by its shown name; one stored by its path shows the path's last folder (the
  // whole name is its title).
  const badge = (label) => el("span", { class: "badge", title: label },
    label.includes("/") ? label.split("/").filter(Boolean).pop() || label : label);
  const short = (ref) => (ref ? ref.slice(0, SHORT_REF) : "");
  const commit = (ref) => el("span", { class: "commit", title: ref || "" }, ref ? short(ref) : "not indexed");

  // -- the API ---------------------------------------------------------------------------------

  class Unauthorized extends Error {}

  async function api(name, params, signal) {
    const query = new URLSearchParams();
    for (const [key, value] of Object.entries(params || {})) {
      if (value !== undefined && value !== null && value !== "") query.set(key, String(value));
    }
    const headers = { Accept: "application/json" };
    const token = sessionStorage.getItem(TOKEN_KEY);
    if (token) headers.Authorization = "Bearer " + token;
    const response = await fetch(`/api/${name}?${query}`, { headers, signal, credentials: "omit", cache: "no-store" });
    if (response.status === 401) throw new Unauthorized("this server needs its token");
    let data;
    try {
      data = await response.json();
    } catch (e) {
      throw new Error(`the server answered ${response.status} ${response.statusText}`);
    }
    if (!response.ok) throw new Error(data.error || `the server answered ${response.status}`);
    return data;
  }

  function showError(e) {
    if (e && e.name === "AbortError") return;
    if (e instanceof Unauthorized) {
      askToken(!!sessionStorage.getItem(TOKEN_KEY));
      return;
    }
    const box = $("error");
    box.textContent = e && e.message ? e.message : String(e);
    box.hidden = false;
  }

  function clearError() {
    $("error").hidden = true;
    $("error").textContent = "";
  }

  // -- views and the URL -----------------------------------------------------------------------

  function show(view) {
    for (const name of views) $(`${name}-view`).hidden = name !== view;
    for (const link of document.querySelectorAll("nav a")) {
      if (link.dataset.view === view) link.setAttribute("aria-current", "page");
      else link.removeAttribute("aria-current");
    }
  }

  function here() {
    return new URLSearchParams(location.search);
  }

  function go(params, replace) {
    const query = new URLSearchParams();
    for (const [key, value] of Object.entries(params)) {
      if (value !== undefined && value !== null && value !== "") query.set(key, String(value));
    }
    const url = query.toString() ? `/?${query}` : "/";
    if (replace) history.replaceState(null, "", url);
    else history.pushState(null, "", url);
    route();
  }

  function readLink(workspace, path, start, end) {
    const query = new URLSearchParams({ view: "read", path });
    if (workspace && status && status.several) query.set("workspace", workspace);
    if (start) query.set("lines", end && end !== start ? `${start}-${end}` : String(start));
    return `/?${query}`;
  }

  function outlineLink(workspace, path, page) {
    const query = new URLSearchParams({ view: "outline" });
    if (workspace && status && status.several) query.set("workspace", workspace);
    if (path) query.set("path", path);
    if (page && page > 1) query.set("page", String(page));
    return `/?${query}`;
  }

  // Links inside the page move through history, not a new page load.
  document.addEventListener("click", (event) => {
    const link = event.target.closest("a[href^='/']");
    if (!link || event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey || event.altKey) return;
    event.preventDefault();
    history.pushState(null, "", link.getAttribute("href"));
    route();
  });
  window.addEventListener("popstate", route);

  async function route() {
    clearError();
    const mine = ++navigation;
    if (!status) {
      try {
        status = await api("status");
        setUp();
      } catch (e) {
        afterToken = route;
        showError(e);
        return;
      }
    }
    const params = here();
    const view = params.get("view") || "search";
    if (view !== "search" && searching) {
      searching.abort();
      searching = null;
      $("hits").removeAttribute("aria-busy");
    }
    try {
      if (view === "read") await openFile(params, mine);
      else if (view === "outline") await openOutline(params, mine);
      else if (view === "status") await openStatus(mine);
      else openSearch(params);
    } catch (e) {
      if (stale(mine)) return;
      afterToken = route;
      showError(e);
    }
  }

  function setUp() {
    const k = $("k");
    k.replaceChildren();
    for (let n = status.top_k.min; n <= status.top_k.max; n++) {
      k.append(el("option", { value: n, selected: n === status.top_k.default }, String(n)));
    }
    const workspace = $("workspace");
    fill(workspace, el("option", { value: "" }, "all workspaces"));
    for (const ws of status.workspaces) workspace.append(el("option", { value: ws.workspace }, ws.workspace));
    workspace.hidden = !status.several;
  }

  // -- the token -------------------------------------------------------------------------------

  function askToken(wrong) {
    show("token");
    $("token-error").hidden = !wrong;
    $("token-error").textContent = wrong ? "That token was refused; give the one docshelf serve was started with." : "";
    $("token").focus();
  }

  $("token-form").addEventListener("submit", (event) => {
    event.preventDefault();
    const token = $("token").value.trim();
    if (!token) return;
    if (!/^[\x21-\x7e]+$/.test(token)) {
      $("token-error").textContent = "A token is printable ASCII, without spaces.";
      $("token-error").hidden = false;
      return;
    }
    sessionStorage.setItem(TOKEN_KEY, token);
    $("token").value = "";
    const next = afterToken || route;
    afterToken = null;
    next();
  });

  // -- search ----------------------------------------------------------------------------------

  function openSearch(params) {
    show("search");
    lastSearch = location.pathname + location.search;
    // The boxes keep what is being typed (a trailing space, say) when the URL already says it.
    if ($("q").value.trim() !== (params.get("q") || "")) $("q").value = params.get("q") || "";
    if ($("path").value.trim() !== (params.get("path") || "")) $("path").value = params.get("path") || "";
    $("k").value = params.get("k") || String(status.top_k.default);
    if (status.several) $("workspace").value = params.get("workspace") || "";
    document.title = params.get("q") ? `${params.get("q")} - docshelf` : "docshelf";
    if (params.get("q")) search();
    else {
      if (searching) searching.abort();
      searching = null;
      hits = [];
      selected = -1;
      $("summary").textContent = "";
      $("hits").replaceChildren();
      $("hits").removeAttribute("aria-busy");
      $("help").hidden = false;
    }
  }

  function searchParams() {
    return {
      q: $("q").value.trim(),
      path: $("path").value.trim(),
      k: $("k").value !== String(status.top_k.default) ? $("k").value : "",
      workspace: status.several ? $("workspace").value : "",
    };
  }

  function typed() {
    if (!status) return;
    clearTimeout(typingTimer);
    typingTimer = setTimeout(() => {
      const params = searchParams();
      const url = here();
      const again = (url.get("view") || "search") === "search";
      go(params, again); // one history entry per search view, updated as you type
    }, SEARCH_DELAY_MS);
  }

  for (const id of ["q", "path"]) {
    $(id).addEventListener("input", () => {
      selected = -1;
      typed();
    });
  }
  for (const id of ["k", "workspace"]) $(id).addEventListener("change", typed);
  function searchNow() {
    if (!status) return;
    clearTimeout(typingTimer);
    go(searchParams(), (here().get("view") || "search") === "search");
  }

  $("search-form").addEventListener("submit", (event) => {
    event.preventDefault();
    searchNow();
  });

  async function search() {
    const params = searchParams();
    if (searching) searching.abort();
    searching = new AbortController();
    const mine = searching;
    $("help").hidden = true;
    $("summary").textContent = "Searching…";
    $("hits").setAttribute("aria-busy", "true"); // until this search's answer is shown
    try {
      const answer = await api("search", params, mine.signal);
      if (mine !== searching) return;
      showHits(answer);
    } catch (e) {
      if (mine !== searching) return;
      $("summary").textContent = "";
      $("hits").replaceChildren();
      afterToken = route;
      showError(e);
    } finally {
      if (mine === searching) $("hits").removeAttribute("aria-busy");
    }
  }

  function terms(query) {
    const words = (query.toLowerCase().match(/[\p{L}\p{N}_]+/gu) || []).filter((w) => w.length > 1 && !COMMON.has(w));
    return [...new Set(words)].sort((a, b) => b.length - a.length);
  }

  // The text with each word that starts with one of `words` in a <mark>; text nodes only.
  function highlighted(text, words) {
    if (!words.length) return [text];
    const escaped = words.map((w) => w.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"));
    const pattern = new RegExp(`(?<![\\p{L}\\p{N}_])((?:${escaped.join("|")})[\\p{L}\\p{N}_]*)`, "giu");
    const parts = text.split(pattern);
    return parts.map((part, i) => (i % 2 === 1 ? el("mark", {}, part) : part)).filter((p) => p !== "");
  }

  function showHits(answer) {
    hits = answer.hits;
    selected = -1;
    const list = $("hits");
    list.replaceChildren();
    const words = terms(answer.query);
    const where = answer.ref ? ` at ${short(answer.ref)}` : "";
    const how = { hybrid: "by meaning and words", vector: "by meaning", text: "by words" }[answer.mode] || "";
    $("summary").textContent = `${hits.length} hit${hits.length === 1 ? "" : "s"}${where}, ranked ${how}` + (answer.note ? `. ${answer.note}` : "");
    hits.forEach((hit, i) => {
      const crumbs = hit.heading ? hit.heading.split(" > ") : [];
      const link = el("a", {
        class: "hit", href: readLink(hit.workspace, hit.path, hit.start_line, hit.end_line),
        "data-index": i, onfocus: () => select(i, false),
      },
      el("div", { class: "hit-head" },
        badge(hit.workspace),
        el("span", { class: "where" }, `${hit.path}:${hit.start_line}-${hit.end_line}`),
        hit.more ? el("span", { class: "more" }, `+${hit.more} more in this file`) : null,
        hit.copies && hit.copies.length
          ? el("span", {
            class: "more",
            title: hit.copies.map((c) => `${c.workspace}: ${c.path}:${c.start_line}-${c.end_line}`).join("\n"),
          }, `same text in ${hit.copies.length} more place${hit.copies.length === 1 ? "" : "s"}`)
          : null,
        commit(hit.ref || answer.ref)),
      crumbs.length ? el("div", { class: "crumbs" }, crumbs.join(" › ")) : null,
      hit.cut
        ? el("div", { class: "excerpt muted" }, "Text left out to keep the answer short: open the hit to read it.")
        : el("div", { class: "excerpt" }, highlighted(hit.content, words)));
      list.append(el("li", {}, link));
    });
    if (answer.left_out) list.append(el("li", { class: "muted" }, `${answer.left_out} more hit${answer.left_out === 1 ? "" : "s"} left out to keep the answer short: ask for fewer, or a narrower path.`));
    if (!hits.length && !answer.left_out) list.append(el("li", { class: "muted" }, "Nothing matched. Try other words, or a wider path."));
  }

  function select(i, focus) {
    const links = [...document.querySelectorAll("#hits a.hit")];
    if (!links.length) return;
    selected = Math.max(0, Math.min(i, links.length - 1));
    links.forEach((link, j) => link.classList.toggle("selected", j === selected));
    if (focus) links[selected].focus();
  }

  // -- keyboard --------------------------------------------------------------------------------

  document.addEventListener("keydown", (event) => {
    const typing = event.target.matches("input, select, textarea");
    if (event.key === "/" && !typing) {
      event.preventDefault();
      $("q").focus();
      $("q").select();
      return;
    }
    const view = here().get("view") || "search";
    if (event.key === "Escape") {
      if (view !== "search") {
        event.preventDefault();
        history.pushState(null, "", lastSearch);
        route();
      } else if (typing) event.target.blur();
      return;
    }
    if (view !== "search" || !hits.length) return;
    if (event.key === "ArrowDown" && (!typing || event.target.id === "q")) {
      event.preventDefault();
      select(selected + 1, true);
    } else if (event.key === "ArrowUp" && !typing) {
      event.preventDefault();
      if (selected <= 0) {
        selected = -1;
        $("q").focus();
      } else select(selected - 1, true);
    }
  });

  for (const id of ["q", "path"]) {
    $(id).addEventListener("keydown", (event) => {
      if (event.key !== "Enter") return;
      event.preventDefault();
      const links = document.querySelectorAll("#hits a.hit");
      if (id === "q" && selected >= 0 && links[selected]) links[selected].click();
      else searchNow();
    });
  }

  // -- reading a file --------------------------------------------------------------------------

  function lineRange(text) {
    const found = /^(\d+)(?:-(\d+))?$/.exec(text || "");
    if (!found) return null;
    const start = Number(found[1]);
    return [start, Math.max(start, Number(found[2] || found[1]))];
  }

  // Lines first..last of the file (last: as far as one answer goes), read on where an answer was
  // cut by the server's bound, so that no line between them is left out.
  async function readLines(workspace, path, first, last) {
    const text = await api("read", { path, workspace, start: first, end: last });
    const lines = [text.text];
    let end = text.end_line;
    let next = text.next_start_line;
    while (last && next && end < last) {
      const more = await api("read", { path, workspace, start: next, end: last });
      lines.push(more.text);
      end = more.end_line;
      next = more.next_start_line;
    }
    return { ...text, text: lines.join("\n"), end_line: end, next_start_line: next };
  }

  async function openFile(params, mine) {
    show("read");
    const path = params.get("path") || "";
    const workspace = params.get("workspace") || "";
    const hl = lineRange(params.get("lines"));
    document.title = `${path} - docshelf`;
    const start = hl ? Math.max(1, hl[0] - CONTEXT_LINES) : 1;
    let text = await api("read", { path, workspace, start });
    if (hl && text.next_start_line && hl[1] > text.end_line) {
      // The bound cut the answer before the hit's last line: read from the hit's first line.
      text = await readLines(workspace, path, start, hl[1]);
    }
    if (stale(mine)) return;
    reading = { workspace: text.workspace, path: text.path, first: text.start_line, last: text.end_line, hl, next: text.next_start_line, total: text.total_lines, ref: text.ref };
    const head = $("file-head");
    fill(head,
      badge(text.workspace),
      el("h1", {}, text.path),
      commit(text.ref),
      el("span", { class: "muted" }, `${text.total_lines} lines`),
      hl ? el("span", { class: "muted" }, `lines ${hl[0]}-${hl[1]} highlighted`) : null,
      text.note ? el("span", { class: "muted" }, text.note) : null);
    fill($("lines"), lineNodes(text));
    updateMore();
    fileOutline(text.workspace, text.path, mine);
    scrollToHighlight();
  }

  function lineNodes(text) {
    const lines = text.text === "" && text.total_lines === 0 ? [] : text.text.split("\n");
    return lines.map((line, i) => {
      const n = text.start_line + i;
      const hl = reading.hl && n >= reading.hl[0] && n <= reading.hl[1];
      return el("div", { class: hl ? "line hl" : "line", id: `L${n}` },
        el("span", { class: "ln" }, String(n)), el("span", { class: "lt" }, line === "" ? "\u200b" : line));
    });
  }

  function updateMore() {
    $("earlier").hidden = reading.first <= 1;
    $("later").hidden = !reading.next;
  }

  // One read of more lines at a time: the buttons wait while one is under way.
  async function more(button, load) {
    if (button.disabled) return;
    const mine = navigation;
    button.disabled = true;
    try {
      await load(mine);
    } catch (e) {
      showError(e);
    } finally {
      button.disabled = false;
    }
  }

  $("earlier").addEventListener("click", () => more($("earlier"), async (mine) => {
    const start = Math.max(1, reading.first - 200);
    const text = await readLines(reading.workspace, reading.path, start, reading.first - 1);
    if (stale(mine)) return;
    $("lines").prepend(...lineNodes(text));
    reading.first = text.start_line;
    updateMore();
  }));

  $("later").addEventListener("click", () => more($("later"), async (mine) => {
    const text = await api("read", { path: reading.path, workspace: reading.workspace, start: reading.next });
    if (stale(mine)) return;
    $("lines").append(...lineNodes(text));
    reading.last = text.end_line;
    reading.next = text.next_start_line;
    updateMore();
  }));

  function scrollToHighlight() {
    if (!reading.hl) {
      window.scrollTo(0, 0);
      return;
    }
    const first = $(`L${reading.hl[0]}`);
    const last = $(`L${reading.hl[1]}`) || first;
    if (!first) return;
    // A range taller than most of the window starts at its top (below the bar); a short one is centred.
    const tall = last.getBoundingClientRect().bottom - first.getBoundingClientRect().top > window.innerHeight * 0.6;
    first.scrollIntoView({ block: tall ? "start" : "center" });
  }

  function highlightLines(start, end) {
    reading.hl = [start, end];
    for (const line of document.querySelectorAll("#lines .line")) {
      const n = Number(line.id.slice(1));
      line.classList.toggle("hl", n >= start && n <= end);
    }
    history.replaceState(null, "", readLink(reading.workspace, reading.path, start, end));
    if ($(`L${start}`)) scrollToHighlight();
    else openFile(here(), navigation).catch(showError);
  }

  async function fileOutline(workspace, path, mine) {
    const box = $("file-outline");
    fill(box, el("h2", {}, "Outline"), el("p", { class: "muted" }, "…"));
    let outline;
    try {
      // The path as a glob that matches itself only: [, * and ? escaped as [[], [*] and [?].
      outline = await api("outline", { path: path.replace(/[[*?]/g, (c) => `[${c}]`), workspace });
    } catch (e) {
      if (!stale(mine)) fill(box, el("h2", {}, "Outline"), el("p", { class: "muted" }, `No outline: ${e.message}`));
      return;
    }
    if (stale(mine)) return;
    const file = (outline.files || []).find((f) => f.path === path);
    const headings = file ? file.headings : [];
    fill(box, el("h2", {}, "Outline"),
      headings.length ? toc(workspace, path, headings, true) : el("p", { class: "muted" }, "No headings."),
      el("p", {}, el("a", { href: outlineLink(workspace, folderOf(path)) }, "Files beside this one")));
  }

  function folderOf(path) {
    const cut = path.lastIndexOf("/");
    return cut > 0 ? path.slice(0, cut) : "";
  }

  function toc(workspace, path, headings, here) {
    return el("ul", { class: "toc" }, headings.map((h) => el("li", { style: null },
      el("a", {
        href: readLink(workspace, path, h.start_line, h.end_line),
        class: `depth-${h.depth}`,
        onclick: here ? (event) => { event.preventDefault(); event.stopPropagation(); highlightLines(h.start_line, h.end_line); } : undefined,
      }, "\u00a0\u00a0".repeat(Math.max(0, h.depth - 1)) + h.title),
      el("span", { class: "lines-of" }, `${h.start_line}-${h.end_line}`))));
  }

  // -- the outline of the corpus ---------------------------------------------------------------

  async function openOutline(params, mine) {
    show("outline");
    document.title = "Outline - docshelf";
    const box = $("outline-view");
    const workspace = params.get("workspace") || "";
    const path = params.get("path") || "";
    fill(box, el("p", { class: "muted" }, "Reading the outline…"));
    const page = params.get("page") || "";
    const outline = await api("outline", page ? { path, workspace, page } : { path, workspace });
    if (stale(mine)) return;
    if (outline.overview) {
      const pages = outline.pages > 1 ? el("p", { id: "workspace-pages", class: "muted" },
        `${outline.total_workspaces} workspaces, page ${outline.page} of ${outline.pages} `,
        outline.page > 1 ? el("a", { href: outlineLink("", "", outline.page - 1) }, "previous") : null,
        outline.page > 1 && outline.page < outline.pages ? " · " : null,
        outline.page < outline.pages ? el("a", { href: outlineLink("", "", outline.page + 1) }, "next") : null) : null;
      fill(box, el("h2", {}, "Workspaces"), pages, el("ul", { class: "files" }, outline.workspaces.map((ws) =>
        el("li", {},
          el("a", { class: "path", href: outlineLink(ws.workspace, "") }, ws.workspace), " ", commit(ws.ref),
          el("span", { class: "muted" }, ` ${ws.files} files`),
          el("div", {}, ws.folders.map((f) => [el("a", { href: outlineLink(ws.workspace, f.path) }, `${f.path}/`), el("span", { class: "muted" }, ` ${f.files}  `)]))))));
      return;
    }
    const crumbs = [el("a", { href: outlineLink(outline.workspace, "") }, status.several ? outline.workspace : "all docs")];
    let sofar = "";
    for (const part of (outline.path || "").split("/").filter(Boolean)) {
      sofar = sofar ? `${sofar}/${part}` : part;
      crumbs.push(" / ", el("a", { href: outlineLink(outline.workspace, sofar) }, part));
    }
    fill(box,
      el("h2", {}, crumbs, " ", commit(outline.ref)),
      el("p", { class: "muted" }, `${outline.total_files} file${outline.total_files === 1 ? "" : "s"}` + (outline.cut ? `; ${outline.files.length} shown, narrow it down:` : "") + (outline.note ? `. ${outline.note}` : "")),
      outline.narrower.length ? el("p", {}, outline.narrower.map((n) => [el("a", { href: outlineLink(outline.workspace, n.path) }, n.path), el("span", { class: "muted" }, ` (${n.files})  `)])) : null,
      el("ul", { class: "files" }, outline.files.map((f) => el("li", {},
        el("a", { class: "path", href: readLink(outline.workspace, f.path) }, f.path),
        el("span", { class: "muted" }, ` ${f.lines} lines`),
        f.headings.length ? toc(outline.workspace, f.path, f.headings, false) : null))));
  }

  // -- status ----------------------------------------------------------------------------------

  function when(iso) {
    if (!iso) return "not recorded";
    const date = new Date(iso);
    return Number.isNaN(date.getTime()) ? iso : `${date.toLocaleString()} (${iso})`;
  }

  function lease(expires) {
    const left = Math.round(expires - Date.now() / 1000);
    return left > 0 ? `${left} s left (until ${new Date(expires * 1000).toLocaleTimeString()})` : "expired";
  }

  async function openStatus(mine) {
    show("status");
    document.title = "Status - docshelf";
    const fresh = await api("status");
    if (stale(mine)) return;
    status = fresh;
    const box = $("status-view");
    fill(box,
      el("dl", { class: "facts" },
        el("dt", {}, "store"), el("dd", { class: "mono" }, status.store),
        el("dt", {}, "model"), el("dd", {}, status.text_only ? "none (words only)" : `${status.model} (${status.dim} dimensions)`),
        el("dt", {}, "docshelf"), el("dd", {}, status.version),
        el("dt", {}, "sessions pinned"), el("dd", { class: "mono" }, status.sessions.length ? status.sessions.join(", ") : "none")),
      status.workspaces.map(workspaceCard));
  }

  function workspaceCard(ws) {
    const pinned = new Set(ws.pins.map((p) => p.ref));
    const sync = ws.last_sync;
    return el("section", { class: "card", "data-workspace": ws.workspace },
      el("h2", {}, ws.workspace, ws.name !== ws.workspace ? el("span", { class: "muted mono" }, ` ${ws.name}`) : null),
      el("dl", { class: "facts" },
        el("dt", {}, "current commit"), el("dd", { class: "mono" }, ws.current || "nothing indexed yet"),
        el("dt", {}, "indexed"), el("dd", {}, ws.current ? when(ws.indexed_at) : "-"),
        el("dt", {}, "this server answers"), el("dd", { class: "mono" }, ws.server_pin ? `pinned to ${ws.server_pin}` : "from the current commit"),
        el("dt", {}, "last sync"), el("dd", {}, !ws.syncs ? "this server does not sync it (docshelf index does, or serve SOURCE --sync-interval)"
          : !sync ? "none yet"
          : sync.outcome === "failed" ? el("span", { class: "bad" }, `failed ${when(sync.at)}: ${sync.error}`)
          : el("span", { class: "ok" }, `${sync.outcome} ${short(sync.ref)} ${when(sync.at)}: ${sync.chunks} chunks (${sync.embedded} embedded, ${sync.reused} reused) in ${sync.seconds} s`))),
      el("h3", {}, "Indexed commits"),
      el("table", {}, el("thead", {}, el("tr", {}, el("th", {}, "commit"), el("th", {}, "chunks"), el("th", {}, ""))),
        el("tbody", {}, ws.refs.map((r) => el("tr", {}, el("td", { class: "mono" }, r.ref), el("td", {}, String(r.chunks)),
          el("td", {}, [r.ref === ws.current ? "current" : "", pinned.has(r.ref) ? "pinned" : ""].filter(Boolean).join(", ")))))),
      el("h3", {}, "Pins"),
      ws.pins.length ? el("table", {}, el("thead", {}, el("tr", {}, el("th", {}, "commit"), el("th", {}, "holder"), el("th", {}, "lease"))),
        el("tbody", {}, ws.pins.map((p) => el("tr", {}, el("td", { class: "mono" }, short(p.ref)), el("td", { class: "mono" }, p.holder), el("td", {}, lease(p.expires_at))))))
        : el("p", { class: "muted" }, "No commit is pinned."),
      el("h3", {}, "Skipped files"),
      ws.skipped === null ? el("p", { class: "muted" }, "Not recorded: this commit was indexed before docshelf kept its skipped files. Index it again to see them.")
        : ws.skipped.length ? el("table", { class: "skipped" }, el("thead", {}, el("tr", {}, el("th", {}, "path"), el("th", {}, "reason"))),
          el("tbody", {}, ws.skipped.map((s) => el("tr", {}, el("td", { class: "mono" }, s.path), el("td", {}, s.reason)))))
          : el("p", { class: "muted" }, "None: every documentation file was read."));
  }

  route();
})();
