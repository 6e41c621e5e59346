// shardstore console: a single-page app with no build step and no
// dependencies. Every piece of data is put on the page as text
// (textContent, never innerHTML), so keys and metadata cannot inject
// markup. The CSRF token lives in a variable of this script only.
"use strict";

const state = { user: "", csrf: "", ops: false, uploads: [] };
const MULTIPART_THRESHOLD = 16 << 20;

// ---------- small helpers ----------

// fill replaces node's children, skipping the null/undefined/false a
// conditional child gives (replaceChildren would show them as text).
function fill(node, ...children) {
  node.replaceChildren(...children.flat().filter((c) => c !== undefined && c !== null && c !== false));
}

function el(tag, attrs, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k === "class") e.className = v;
    else if (k === "text") e.textContent = v;
    else if (k.startsWith("on")) e.addEventListener(k.slice(2), v);
    else if (v === true) e.setAttribute(k, "");
    else e.setAttribute(k, String(v));
  }
  for (const c of children.flat()) {
    if (c === undefined || c === null || c === false) continue;
    e.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return e;
}

function fmtBytes(n) {
  if (n === null || n === undefined) return "—";
  const units = ["B", "KiB", "MiB", "GiB", "TiB", "PiB"];
  let i = 0;
  let v = Number(n);
  while (v >= 1024 && i < units.length - 1) { v /= 1024; i++; }
  return (i === 0 ? String(v) : v.toFixed(v < 10 ? 2 : 1)) + " " + units[i];
}

function fmtTime(t) {
  if (!t || t.startsWith("0001-")) return "—";
  const d = new Date(t);
  return isNaN(d) ? t : d.toLocaleString();
}

function fmtCount(n) {
  return n === null || n === undefined ? "—" : Number(n).toLocaleString();
}

class APIError extends Error {
  constructor(status, code, message) {
    super(message || code);
    this.status = status;
    this.code = code;
  }
}

// explain turns an error into a sentence that says what to do.
function explain(err) {
  if (!(err instanceof APIError)) return String(err && err.message || err);
  const hints = {
    AccessDenied: "Your identity is not allowed to do this. Ask an administrator for the permission.",
    NoSuchBucket: "The bucket does not exist (any more).",
    NoSuchKey: "The object does not exist (any more).",
    BucketNotEmpty: "The bucket still holds objects: delete them first.",
    BucketAlreadyOwnedByYou: "You already have a bucket of that name.",
    BucketAlreadyExists: "That bucket name is taken.",
    InvalidBucketName: "Bucket names are 3 to 63 characters: lower-case letters, digits, dots and hyphens.",
    NotLoggedIn: "Your session has ended. Log in again.",
    InvalidCSRFToken: "The page is out of date. Reload it.",
    SlowDown: "The server is busy or lacks drives for this right now. Try again shortly.",
    XMinioStorageFull: "The drives are full.",
    ServiceUnavailable: "Too few drives are online to do this. Check the Operations page.",
    InternalError: "The server failed. The Operations page shows its recent errors.",
  };
  const hint = hints[err.code];
  return (err.message && err.message !== err.code ? err.message : err.code) + (hint ? " — " + hint : "");
}

async function api(method, path, { query, json, body, headers } = {}) {
  const url = path + (query ? "?" + new URLSearchParams(query).toString() : "");
  const h = Object.assign({}, headers || {});
  if (method !== "GET" && method !== "HEAD") h["X-CSRF-Token"] = state.csrf;
  let payload = body;
  if (json !== undefined) {
    h["Content-Type"] = "application/json";
    payload = JSON.stringify(json);
  }
  const res = await fetch(url, { method, headers: h, body: payload, credentials: "same-origin", cache: "no-store" });
  if (!res.ok) {
    let code = res.statusText, message = "";
    try { const j = await res.json(); code = j.code || code; message = j.message || j.error || ""; } catch (e) { /* not JSON */ }
    if (res.status === 401 && path !== "/api/login" && path !== "/api/session") {
      state.user = "";
      route();
    }
    throw new APIError(res.status, code, message);
  }
  const ct = res.headers.get("Content-Type") || "";
  return ct.includes("application/json") ? res.json() : res;
}

function toast(message, kind) {
  const box = document.getElementById("toasts");
  if (!box) return;
  const t = el("div", { class: "toast " + (kind || "info"), role: kind === "error" ? "alert" : "status", text: message });
  box.append(t);
  setTimeout(() => t.remove(), kind === "error" ? 9000 : 4000);
}

// ---------- routing ----------

function parseHash() {
  const h = location.hash.replace(/^#/, "") || "/buckets";
  const [path, qs] = h.split("?");
  return { path, params: new URLSearchParams(qs || "") };
}

function go(path, params) {
  const qs = params ? "?" + new URLSearchParams(params).toString() : "";
  location.hash = "#" + path + qs;
}

let stopPage = null;

async function route() {
  if (stopPage) { stopPage(); stopPage = null; }
  const app = document.getElementById("app");
  if (!state.user) {
    try {
      const s = await api("GET", "/api/session");
      Object.assign(state, { user: s.user, csrf: s.csrf, ops: s.ops });
    } catch (e) {
      fill(app, loginPage());
      return;
    }
  }
  const { path, params } = parseHash();
  const main = el("main", { id: "main", tabindex: "-1" });
  fill(app, header(path), main, el("div", { id: "toasts", class: "toasts", "aria-live": "polite" }), uploadPanel());
  if (path === "/browse" && params.get("bucket")) {
    await browsePage(main, params.get("bucket"), params.get("prefix") || "");
  } else if (path === "/ops") {
    stopPage = await opsPage(main);
  } else if (path === "/identities") {
    await identitiesPage(main);
  } else {
    await bucketsPage(main);
  }
}

window.addEventListener("hashchange", route);
window.addEventListener("DOMContentLoaded", route);

// ---------- login and header ----------

function loginPage() {
  const err = el("p", { class: "error", role: "alert", id: "login-error" });
  const ak = el("input", { id: "access-key", name: "accessKey", autocomplete: "username", required: true, autofocus: true });
  const sk = el("input", { id: "secret-key", name: "secretKey", type: "password", autocomplete: "current-password", required: true });
  const btn = el("button", { type: "submit", class: "primary", id: "login-button", text: "Log in" });
  const akLabel = el("label", { for: "access-key", text: "Access key" });
  const skLabel = el("label", { for: "secret-key", text: "Secret key" });
  // A directory (LDAP) login, offered when the server signs directory
  // users in: the same two fields, named as the directory names them.
  const mode = el("select", { id: "login-mode", onchange: () => {
    const ldap = mode.value === "ldap";
    akLabel.textContent = ldap ? "User name" : "Access key";
    skLabel.textContent = ldap ? "Password" : "Secret key";
  } }, el("option", { value: "key", text: "Access key" }), el("option", { value: "ldap", text: "Directory (LDAP) account" }));
  const modeRow = el("div", { id: "login-mode-row", hidden: true }, el("label", { for: "login-mode", text: "Log in with" }), mode);
  // "Sign in with <provider>": the browser goes to the OpenID provider
  // and comes back through /api/oidc/callback with a session.
  // One button per provider (several may be configured).
  const sso = el("div", { id: "sso-logins", hidden: true });
  api("GET", "/api/login-options").then((o) => {
    if (o.ldap) modeRow.hidden = false;
    (o.openidProviders || []).forEach((p, i) => {
      const href = "/api/oidc/login" + (p.id ? "?provider=" + encodeURIComponent(p.id) : "");
      sso.append(el("a", { id: i === 0 ? "sso-login" : "sso-login-" + p.id, class: "button sso-login", href, text: "Sign in with " + p.name }));
      sso.hidden = false;
    });
  }).catch(() => {});
  const ssoError = new URLSearchParams(location.search).get("sso_error");
  const form = el("form", { class: "login-card", onsubmit: async (ev) => {
    ev.preventDefault();
    err.textContent = "";
    btn.disabled = true;
    const ldap = mode.value === "ldap";
    try {
      const json = ldap ? { ldapUsername: ak.value.trim(), ldapPassword: sk.value } : { accessKey: ak.value.trim(), secretKey: sk.value };
      const s = await api("POST", "/api/login", { json });
      Object.assign(state, { user: s.user, csrf: s.csrf, ops: s.ops });
      sk.value = "";
      if (!location.hash) location.hash = "#/buckets";
      route();
    } catch (e) {
      err.textContent = e.code === "InvalidCredentials"
        ? (ldap ? "The user name or password is wrong, or the account may not use this server." : "The access key or secret key is wrong.")
        : explain(e);
    } finally {
      btn.disabled = false;
    }
  } },
    el("h1", {}, el("span", { class: "brand-mark", "aria-hidden": "true" }), "shardstore"),
    el("p", { class: "muted", text: "Log in with an access key and secret key, or a directory account where the server offers it. The console acts as that identity: what it may not do through S3, it may not do here." }),
    sso,
    modeRow,
    akLabel, ak,
    skLabel, sk,
    btn, err);
  if (ssoError) err.textContent = "Signing in with the identity provider failed (" + ssoError + ").";
  return el("div", { class: "login" }, form);
}

function header(path) {
  const link = (href, text, active) => el("a", { href, class: active ? "active" : "", "aria-current": active ? "page" : false, text });
  return el("header", { class: "topbar" },
    el("a", { class: "brand", href: "#/buckets" }, el("span", { class: "brand-mark", "aria-hidden": "true" }), "shardstore"),
    el("nav", { "aria-label": "Main" },
      link("#/buckets", "Buckets", path !== "/ops" && path !== "/identities"),
      state.ops ? link("#/ops", "Operations", path === "/ops") : null,
      state.ops ? link("#/identities", "Identities", path === "/identities") : null),
    el("div", { class: "who" },
      el("span", { class: "user", title: "Logged in as", text: state.user }),
      el("button", { id: "logout", onclick: async () => {
        try { await api("POST", "/api/logout"); } catch (e) { /* ended anyway */ }
        Object.assign(state, { user: "", csrf: "", ops: false });
        location.hash = "";
        route();
      }, text: "Log out" })));
}

// ---------- buckets ----------

async function bucketsPage(main) {
  main.append(el("h2", { text: "Buckets" }));
  const name = el("input", { id: "new-bucket", placeholder: "new-bucket-name", "aria-label": "New bucket name", required: true, pattern: "[a-z0-9][a-z0-9.\\-]{1,61}[a-z0-9]" });
  const ver = el("input", { type: "checkbox", id: "new-bucket-versioning" });
  const lock = el("input", { type: "checkbox", id: "new-bucket-lock" });
  main.append(el("form", { class: "toolbar", onsubmit: async (ev) => {
    ev.preventDefault();
    try {
      await api("POST", "/api/buckets", { json: { name: name.value.trim(), versioning: ver.checked, objectLock: lock.checked } });
      toast("Bucket " + name.value.trim() + " created.");
      name.value = "";
      route();
    } catch (e) { toast(explain(e), "error"); }
  } }, name,
    el("label", { class: "check" }, ver, "Versioning"),
    el("label", { class: "check" }, lock, "Object lock"),
    el("button", { type: "submit", class: "primary", id: "create-bucket", text: "Create bucket" })));
  let data;
  try {
    data = await api("GET", "/api/buckets");
  } catch (e) {
    main.append(el("p", { class: "error", role: "alert", text: explain(e) }));
    return;
  }
  if (data.buckets.length === 0) {
    main.append(el("div", { class: "empty", text: "No buckets yet. Create one above, or with any S3 client." }));
    return;
  }
  const rows = data.buckets.map((b) => el("tr", {},
    el("td", {}, el("a", { href: "#/browse?" + new URLSearchParams({ bucket: b.name }), class: "bucket-link", text: b.name })),
    el("td", { class: "num", text: fmtCount(b.objects) }),
    el("td", { class: "num", text: fmtBytes(b.bytes) }),
    el("td", { class: "hide-narrow", text: fmtTime(b.created) }),
    el("td", { class: "actions" }, el("button", { class: "danger small", "aria-label": "Delete bucket " + b.name, text: "Delete", onclick: async () => {
      if (!confirm("Delete the bucket " + b.name + "? It must be empty.")) return;
      try { await api("DELETE", "/api/buckets", { query: { bucket: b.name } }); toast("Bucket " + b.name + " deleted."); route(); }
      catch (e) { toast(explain(e), "error"); }
    } }))));
  main.append(el("table", { class: "grid", id: "buckets" },
    el("thead", {}, el("tr", {}, el("th", { text: "Name" }), el("th", { class: "num", text: "Objects" }), el("th", { class: "num", text: "Size" }),
      el("th", { class: "hide-narrow", text: "Created" }), el("th", { text: "" }))),
    el("tbody", {}, rows)));
  main.append(el("p", { class: "muted small", text: data.usageAt && !data.usageAt.startsWith("0001-")
    ? "Objects and sizes as the background scanner counted them at " + fmtTime(data.usageAt) + "."
    : "Objects and sizes appear once the background scanner has made its first pass (every few minutes)." }));
}

// ---------- object browser ----------

async function browsePage(main, bucket, prefix) {
  const view = { bucket, prefix, items: [], next: "", sort: "name", desc: false, filter: "" };
  const crumbs = el("nav", { class: "crumbs", "aria-label": "Folder" },
    el("a", { href: "#/buckets", text: "Buckets" }), " / ",
    el("a", { href: "#/browse?" + new URLSearchParams({ bucket }), text: bucket }));
  let acc = "";
  for (const part of prefix.split("/").slice(0, -1)) {
    acc += part + "/";
    crumbs.append(" / ", el("a", { href: "#/browse?" + new URLSearchParams({ bucket, prefix: acc }), text: part === "" ? "(empty)" : part }));
  }
  main.append(crumbs);
  if (!prefix) {
    // The bucket's event notification rules, when it has any.
    const rules = el("p", { class: "notify-rules", id: "notify-rules" });
    main.append(rules);
    api("GET", "/api/bucket/notification", { query: { bucket } }).then((r) => {
      if (!r.rules.length) return;
      rules.textContent = "Event notifications: " + r.rules.map((x) =>
        x.events.join(", ") + (x.prefix || x.suffix ? " on " + (x.prefix || "") + "*" + (x.suffix || "") : "") + " → " + x.arn).join("; ");
    }).catch(() => {});
  }

  const fileInput = el("input", { type: "file", multiple: true, id: "file-input", class: "visually-hidden", onchange: () => {
    startUploads(bucket, prefix, [...fileInput.files].map((f) => ({ file: f, rel: f.name })), refresh);
    fileInput.value = "";
  } });
  const dirInput = el("input", { type: "file", multiple: true, webkitdirectory: true, id: "folder-input", class: "visually-hidden", onchange: () => {
    startUploads(bucket, prefix, [...dirInput.files].map((f) => ({ file: f, rel: f.webkitRelativePath || f.name })), refresh);
    dirInput.value = "";
  } });
  const search = el("input", { type: "search", id: "search", placeholder: "Filter by prefix   ( / )", "aria-label": "Filter by prefix" });
  let searchTimer;
  search.addEventListener("input", () => { clearTimeout(searchTimer); searchTimer = setTimeout(() => { view.filter = search.value; load(true); }, 250); });
  const delSel = el("button", { class: "danger", id: "delete-selected", disabled: true, text: "Delete selected", onclick: () => deleteSelected() });
  main.append(el("div", { class: "toolbar" },
    search,
    el("label", { class: "button", for: "file-input", tabindex: "0", role: "button", text: "Upload files" }), fileInput,
    el("label", { class: "button", for: "folder-input", tabindex: "0", role: "button", text: "Upload folder" }), dirInput,
    el("button", { id: "new-folder", text: "New folder", onclick: async () => {
      const n = prompt("Folder name");
      if (!n) return;
      try {
        await api("PUT", "/api/upload", { query: { bucket, key: prefix + n.replace(/\/+$/, "") + "/" }, body: new Blob([]) });
        refresh();
      } catch (e) { toast(explain(e), "error"); }
    } }),
    delSel,
    el("button", { id: "refresh", text: "Refresh", onclick: () => refresh() })));
  for (const l of main.querySelectorAll("label.button")) {
    l.addEventListener("keydown", (ev) => { if (ev.key === "Enter" || ev.key === " ") { ev.preventDefault(); document.getElementById(l.getAttribute("for")).click(); } });
  }

  const layout = el("div", { class: "browse" });
  const listBox = el("section", { class: "list", "aria-label": "Objects" });
  const details = el("aside", { class: "details", id: "details", hidden: true, "aria-label": "Object details" });
  layout.append(listBox, details);
  main.append(layout);

  const drop = el("div", { class: "dropzone", hidden: true, text: "Drop files or folders to upload to " + bucket + "/" + prefix });
  main.append(drop);
  let dragDepth = 0;
  main.addEventListener("dragenter", (ev) => { ev.preventDefault(); dragDepth++; drop.hidden = false; });
  main.addEventListener("dragover", (ev) => ev.preventDefault());
  main.addEventListener("dragleave", () => { if (--dragDepth <= 0) { drop.hidden = true; dragDepth = 0; } });
  main.addEventListener("drop", async (ev) => {
    ev.preventDefault();
    drop.hidden = true; dragDepth = 0;
    const files = await droppedFiles(ev.dataTransfer);
    startUploads(bucket, prefix, files, refresh);
  });

  const onKey = (ev) => {
    if (ev.key === "/" && document.activeElement.tagName !== "INPUT") { ev.preventDefault(); search.focus(); }
    if (ev.key === "Escape") details.hidden = true;
  };
  document.addEventListener("keydown", onKey);
  stopPage = () => document.removeEventListener("keydown", onKey);

  function selected() {
    return [...listBox.querySelectorAll("input.sel:checked")].map((c) => c.value);
  }

  async function deleteSelected() {
    const keys = selected();
    if (keys.length === 0) return;
    const folders = keys.filter((k) => k.endsWith("/") && view.items.some((i) => i.folder && i.key === k));
    const objects = keys.filter((k) => !folders.includes(k));
    if (!confirm("Delete " + keys.length + " item(s)" + (folders.length ? ", with everything inside the folders" : "") + "?")) return;
    try {
      let deleted = 0, failed = [];
      if (objects.length) {
        const r = await api("POST", "/api/delete", { json: { bucket, keys: objects } });
        deleted += r.deleted.length; failed = failed.concat(r.errors);
      }
      for (const f of folders) {
        const r = await api("POST", "/api/delete", { json: { bucket, prefix: f } });
        deleted += r.deleted.length; failed = failed.concat(r.errors);
      }
      if (failed.length) toast(failed.length + " not deleted: " + failed[0].key + ": " + failed[0].code + " " + failed[0].message, "error");
      else toast(deleted + " object(s) deleted.");
    } catch (e) { toast(explain(e), "error"); }
    refresh();
  }

  function render() {
    const sorted = [...view.items].sort((a, b) => {
      if (a.folder !== b.folder) return a.folder ? -1 : 1;
      let r = 0;
      if (view.sort === "size") r = (a.size || 0) - (b.size || 0);
      else if (view.sort === "modified") r = String(a.lastModified || "").localeCompare(String(b.lastModified || ""));
      else r = a.key < b.key ? -1 : a.key > b.key ? 1 : 0;
      return view.desc ? -r : r;
    });
    const sortBtn = (field, label) => el("button", { class: "sort" + (view.sort === field ? " on" : ""), "aria-sort": view.sort === field ? (view.desc ? "descending" : "ascending") : false,
      text: label + (view.sort === field ? (view.desc ? " ▼" : " ▲") : ""), onclick: () => {
        if (view.sort === field) view.desc = !view.desc; else { view.sort = field; view.desc = false; }
        render();
      } });
    const all = el("input", { type: "checkbox", "aria-label": "Select all", onchange: () => {
      for (const c of listBox.querySelectorAll("input.sel")) c.checked = all.checked;
      delSel.disabled = selected().length === 0;
    } });
    const rows = sorted.map((it) => {
      const name = it.key.slice(prefix.length) || it.key;
      const sel = el("input", { type: "checkbox", class: "sel", value: it.key, "aria-label": "Select " + name, onchange: () => { delSel.disabled = selected().length === 0; } });
      const nameCell = it.folder
        ? el("a", { class: "folder", href: "#/browse?" + new URLSearchParams({ bucket, prefix: it.key }), text: name })
        : el("button", { class: "linklike object", text: name, onclick: () => showDetails(bucket, it.key, details, refresh) });
      return el("tr", { class: it.folder ? "is-folder" : "" },
        el("td", { class: "cb" }, sel),
        el("td", { class: "name" }, el("span", { class: it.folder ? "icon folder-icon" : "icon file-icon", "aria-hidden": "true" }), nameCell),
        el("td", { class: "num", text: it.folder ? "" : fmtBytes(it.size) }),
        el("td", { class: "hide-narrow", text: it.folder ? "" : fmtTime(it.lastModified) }));
    });
    const table = el("table", { class: "grid", id: "objects" },
      el("thead", {}, el("tr", {}, el("th", { class: "cb" }, all), el("th", {}, sortBtn("name", "Name")),
        el("th", { class: "num" }, sortBtn("size", "Size")), el("th", { class: "hide-narrow" }, sortBtn("modified", "Last modified")))),
      el("tbody", {}, rows));
    const parts = [];
    if (view.items.length === 0) {
      parts.push(el("div", { class: "empty", text: view.filter
        ? "Nothing here starts with “" + view.filter + "”."
        : "This folder is empty. Drop files here or use Upload." }));
    } else {
      parts.push(table);
    }
    parts.push(el("div", { class: "pager" },
      el("span", { class: "muted", text: view.items.length.toLocaleString() + " item(s) shown" + (view.next ? ", more in the bucket" : "") }),
      view.next ? el("button", { id: "load-more", text: "Load more", onclick: () => load(false) }) : null));
    fill(listBox, ...parts);
    delSel.disabled = true;
  }

  async function load(reset) {
    if (reset) { view.items = []; view.next = ""; }
    try {
      const r = await api("GET", "/api/objects", { query: { bucket, prefix: prefix + view.filter, token: view.next, max: "500" } });
      for (const p of r.prefixes) view.items.push({ key: p, folder: true });
      for (const o of r.objects) if (o.key !== prefix) view.items.push(Object.assign({ folder: false }, o));
      view.next = r.truncated ? r.next : "";
      render();
    } catch (e) {
      fill(listBox, el("p", { class: "error", role: "alert", text: explain(e) }));
    }
  }
  function refresh() { load(true); }
  await load(true);
}

// droppedFiles walks dropped folders (webkitGetAsEntry) into files
// with their relative paths.
async function droppedFiles(dt) {
  const out = [];
  const entries = [...(dt.items || [])].map((i) => i.webkitGetAsEntry && i.webkitGetAsEntry()).filter(Boolean);
  if (entries.length === 0) return [...dt.files].map((f) => ({ file: f, rel: f.name }));
  async function walk(entry, path) {
    if (entry.isFile) {
      const f = await new Promise((ok, fail) => entry.file(ok, fail));
      out.push({ file: f, rel: path + f.name });
    } else if (entry.isDirectory) {
      const reader = entry.createReader();
      for (;;) {
        const batch = await new Promise((ok, fail) => reader.readEntries(ok, fail));
        if (batch.length === 0) break;
        for (const e of batch) await walk(e, path + entry.name + "/");
      }
    }
  }
  for (const e of entries) await walk(e, "");
  return out;
}

async function showDetails(bucket, key, box, refresh, versionId) {
  box.hidden = false;
  fill(box, el("p", { class: "muted", text: "Loading…" }));
  let d;
  try {
    d = await api("GET", "/api/object", { query: Object.assign({ bucket, key }, versionId ? { versionId } : {}) });
  } catch (e) {
    fill(box, el("p", { class: "error", role: "alert", text: explain(e) }));
    return;
  }
  const kv = (pairs) => el("dl", { class: "kv" }, pairs.filter((p) => p[1] !== undefined && p[1] !== "").flatMap(([k, v]) => [el("dt", { text: k }), el("dd", { text: v })]));
  const close = el("button", { class: "close", "aria-label": "Close details", text: "×", onclick: () => { box.hidden = true; } });
  const dlq = new URLSearchParams(Object.assign({ bucket, key }, versionId ? { versionId } : {}));
  const shareOut = el("div", { class: "share-out" });
  const expiry = el("select", { id: "share-expiry", "aria-label": "Link expires after" },
    el("option", { value: "3600", text: "1 hour" }), el("option", { value: "86400", text: "1 day", selected: true }),
    el("option", { value: "604800", text: "7 days" }));
  const sections = [
    el("div", { class: "details-head" }, el("h3", { class: "key", text: d.key }), close),
    el("div", { class: "row-buttons" },
      el("a", { class: "button primary", id: "download", href: "/api/download?" + dlq.toString(), download: "", text: "Download" }),
      el("button", { class: "danger", id: "delete-object", text: "Delete", onclick: async () => {
        if (!confirm("Delete " + key + "?")) return;
        try {
          const r = await api("POST", "/api/delete", { json: { bucket, keys: [key] } });
          if (r.errors.length) throw new APIError(0, r.errors[0].code, r.errors[0].message);
          toast("Deleted " + key + ".");
          box.hidden = true;
          refresh();
        } catch (e) { toast(explain(e), "error"); }
      } })),
    kv([["Size", fmtBytes(d.size) + " (" + Number(d.size).toLocaleString() + " bytes)"], ["ETag", d.etag], ["Content type", d.contentType],
      ["Last modified", d.lastModified], ["Version", d.versionId], ["Storage class", d.storageClass || "STANDARD"],
      ["Encryption", d.encryption || "none"]]),
    el("h4", { text: "Share" }),
    el("div", { class: "share" }, expiry, el("button", { id: "share-create", text: "Create link", onclick: async () => {
      try {
        const r = await api("POST", "/api/share", { json: { bucket, key, versionId: versionId || "", expiresSeconds: Number(expiry.value) } });
        const input = el("input", { id: "share-url", readonly: true, value: r.url, "aria-label": "Share link" });
        fill(shareOut, input, el("button", { id: "share-copy", text: "Copy", onclick: async () => {
          input.select();
          try { await navigator.clipboard.writeText(r.url); toast("Link copied."); } catch (e) { document.execCommand("copy"); toast("Link copied."); }
        } }), el("p", { class: "muted small", text: "Anyone with the link can download until " + fmtTime(r.expires) + "." }));
      } catch (e) { toast(explain(e), "error"); }
    } })), shareOut,
  ];
  const meta = Object.entries(d.metadata);
  sections.push(el("h4", { text: "Metadata" }), meta.length ? kv(meta) : el("p", { class: "muted small", text: "No user metadata." }));
  const sums = Object.entries(d.checksums);
  if (sums.length) sections.push(el("h4", { text: "Checksums" }), kv(sums));
  const hdrs = Object.entries(d.headers);
  if (hdrs.length) sections.push(el("h4", { text: "Headers" }), kv(hdrs));
  sections.push(el("h4", { text: "Tags" }), d.tags.length ? kv(d.tags.map((t) => [t.key, t.value])) : el("p", { class: "muted small", text: "No tags." }));
  if (d.versions.length > 1 || (d.versions.length === 1 && d.versions[0].versionId !== "null")) {
    sections.push(el("h4", { text: "Versions" }), el("ul", { class: "versions" }, d.versions.map((v) => el("li", {},
      v.deleteMarker ? el("span", { class: "muted", text: "delete marker" })
        : el("button", { class: "linklike", text: v.versionId, onclick: () => showDetails(bucket, key, box, refresh, v.versionId) }),
      " ", el("span", { class: "muted small", text: fmtTime(v.lastModified) + (v.deleteMarker ? "" : " · " + fmtBytes(v.size)) + (v.isLatest ? " · latest" : "") })))));
  }
  for (const n of d.notes || []) sections.push(el("p", { class: "muted small", text: n }));
  fill(box, ...sections);
  close.focus();
}

// ---------- uploads ----------

function uploadPanel() {
  const panel = el("section", { class: "uploads", id: "uploads", hidden: state.uploads.length === 0, "aria-label": "Uploads" });
  renderUploads(panel);
  return panel;
}

function renderUploads(panel) {
  panel = panel || document.getElementById("uploads");
  if (!panel) return;
  panel.hidden = state.uploads.length === 0;
  const total = state.uploads.reduce((s, u) => s + u.size, 0);
  const done = state.uploads.reduce((s, u) => s + Math.min(u.loaded, u.size), 0);
  const pct = total ? Math.floor((done / total) * 100) : 100;
  const active = state.uploads.some((u) => u.status === "uploading" || u.status === "queued");
  fill(panel, 
    el("div", { class: "uploads-head" },
      el("strong", { text: active ? "Uploading" : "Uploads" }),
      el("span", { id: "upload-overall", class: "muted", text: pct + " % of " + fmtBytes(total) }),
      active ? null : el("button", { class: "small", text: "Clear", onclick: () => { state.uploads = []; renderUploads(); } })),
    el("progress", { id: "upload-overall-bar", max: "100", value: String(pct), "aria-label": "Overall upload progress" }),
    el("ul", {}, state.uploads.map((u) => el("li", { class: "upload " + u.status },
      el("span", { class: "upload-name", text: u.key }),
      el("progress", { max: "100", value: String(u.size ? Math.floor((Math.min(u.loaded, u.size) / u.size) * 100) : (u.status === "done" ? 100 : 0)), "aria-label": "Progress of " + u.key }),
      el("span", { class: "upload-status", text: u.status === "failed" ? "failed: " + u.error : u.status === "done" ? "done" : u.status === "uploading" ? Math.floor((u.loaded / Math.max(u.size, 1)) * 100) + " %" : u.status }),
      u.status === "failed" ? el("button", { class: "small", text: u.uploadId ? "Resume" : "Retry", onclick: () => runUpload(u) }) : null,
      u.status === "uploading" || u.status === "queued" ? el("button", { class: "small", text: "Cancel", onclick: () => cancelUpload(u) }) : null))));
}

function startUploads(bucket, prefix, files, onDone) {
  if (!files.length) return;
  for (const f of files) {
    const u = { bucket, key: prefix + f.rel, file: f.file, size: f.file.size, loaded: 0, status: "queued", error: "", parts: {}, xhrs: new Set(), onDone };
    state.uploads.push(u);
  }
  renderUploads();
  pumpUploads();
}

let running = 0;
function pumpUploads() {
  while (running < 2) {
    const next = state.uploads.find((u) => u.status === "queued");
    if (!next) break;
    runUpload(next);
  }
}

function xhrPut(u, url, blob, onProgress) {
  return new Promise((ok, fail) => {
    const x = new XMLHttpRequest();
    u.xhrs.add(x);
    x.open("PUT", url);
    x.setRequestHeader("X-CSRF-Token", state.csrf);
    x.setRequestHeader("Content-Type", u.file.type || "application/octet-stream");
    x.upload.onprogress = (ev) => onProgress(ev.loaded);
    x.onload = () => {
      u.xhrs.delete(x);
      let j = {};
      try { j = JSON.parse(x.responseText); } catch (e) { /* empty */ }
      if (x.status >= 200 && x.status < 300) ok(j);
      else fail(new APIError(x.status, j.code || String(x.status), j.message || x.statusText));
    };
    x.onerror = () => { u.xhrs.delete(x); fail(new APIError(0, "NetworkError", "the connection to the console failed")); };
    x.onabort = () => { u.xhrs.delete(x); fail(new APIError(0, "Cancelled", "cancelled")); };
    x.send(blob);
  });
}

async function runUpload(u) {
  running++;
  u.status = "uploading";
  u.error = "";
  renderUploads();
  try {
    if (u.size <= MULTIPART_THRESHOLD) {
      await xhrPut(u, "/api/upload?" + new URLSearchParams({ bucket: u.bucket, key: u.key }), u.file, (n) => { u.loaded = n; renderUploadsSoon(); });
    } else {
      await multipartUpload(u);
    }
    u.loaded = u.size;
    u.status = "done";
  } catch (e) {
    if (u.status !== "cancelled") {
      u.status = "failed";
      u.error = explain(e);
    }
  } finally {
    running--;
    renderUploads();
    if (!state.uploads.some((x) => x.status === "uploading" || x.status === "queued") && u.onDone) u.onDone();
    pumpUploads();
  }
}

// multipartUpload sends the file in parts, three at a time, retrying a
// failed part; a run that still fails keeps its upload id and the parts
// that arrived, so Resume sends only the missing ones.
async function multipartUpload(u) {
  const partSize = Math.max(8 << 20, Math.ceil(u.size / 9000));
  const count = Math.ceil(u.size / partSize);
  const q = { bucket: u.bucket, key: u.key };
  if (!u.uploadId) {
    const r = await api("POST", "/api/multipart", { query: q, headers: { "Content-Type": u.file.type || "application/octet-stream" } });
    u.uploadId = r.uploadId;
  } else {
    const r = await api("GET", "/api/multipart/parts", { query: Object.assign({ uploadId: u.uploadId }, q) });
    u.parts = {};
    for (const p of r.parts) u.parts[p.partNumber] = { etag: p.etag, loaded: p.size };
  }
  const sumLoaded = () => Object.values(u.parts).reduce((s, p) => s + p.loaded, 0);
  const pending = [];
  for (let n = 1; n <= count; n++) if (!u.parts[n] || !u.parts[n].etag) pending.push(n);
  const worker = async () => {
    while (pending.length) {
      const n = pending.shift();
      const blob = u.file.slice((n - 1) * partSize, Math.min(n * partSize, u.size));
      for (let attempt = 1; ; attempt++) {
        try {
          u.parts[n] = { etag: "", loaded: 0 };
          const r = await xhrPut(u, "/api/multipart/part?" + new URLSearchParams(Object.assign({ uploadId: u.uploadId, partNumber: String(n) }, q)), blob,
            (l) => { u.parts[n].loaded = l; u.loaded = sumLoaded(); renderUploadsSoon(); });
          u.parts[n] = { etag: r.etag, loaded: blob.size };
          u.loaded = sumLoaded();
          break;
        } catch (e) {
          if (e.code === "Cancelled" || attempt >= 3 || (e.status >= 400 && e.status < 500)) throw e;
          await new Promise((ok) => setTimeout(ok, 500 * attempt));
        }
      }
    }
  };
  await Promise.all([worker(), worker(), worker()]);
  const parts = [];
  for (let n = 1; n <= count; n++) parts.push({ partNumber: n, etag: u.parts[n].etag });
  await api("POST", "/api/multipart/complete", { query: Object.assign({ uploadId: u.uploadId }, q), json: { parts } });
}

async function cancelUpload(u) {
  u.status = "cancelled";
  for (const x of u.xhrs) x.abort();
  if (u.uploadId) {
    try { await api("DELETE", "/api/multipart", { query: { bucket: u.bucket, key: u.key, uploadId: u.uploadId } }); } catch (e) { /* best effort */ }
  }
  renderUploads();
}

let renderPending = false;
function renderUploadsSoon() {
  if (renderPending) return;
  renderPending = true;
  requestAnimationFrame(() => { renderPending = false; renderUploads(); });
}

window.addEventListener("beforeunload", (ev) => {
  if (state.uploads.some((u) => u.status === "uploading" || u.status === "queued")) { ev.preventDefault(); ev.returnValue = ""; }
});

// ---------- operations ----------

async function opsPage(main) {
  main.append(el("h2", { text: "Operations" }));
  const summary = el("div", { class: "cards", id: "ops-summary" });
  const drives = el("section", { class: "panel", id: "ops-drives" });
  const heal = el("section", { class: "panel", id: "ops-heal" });
  const charts = el("section", { class: "panel charts", id: "ops-charts" });
  const cpu = el("section", { class: "panel", id: "ops-cpu" });
  const phases = el("section", { class: "panel", id: "ops-phases" });
  const errors = el("section", { class: "panel", id: "ops-errors" });
  const notify = el("section", { class: "panel", id: "ops-notify" });
  main.append(summary, el("div", { class: "ops-grid" }, charts, cpu), drives, el("div", { class: "ops-grid" }, heal, phases), errors, notify);

  const series = { t: [], inMiB: [], outMiB: [], rps: [], lat: [] };
  let last = null;
  const canvases = {
    thr: el("canvas", { width: "600", height: "160", id: "chart-throughput", role: "img", "aria-label": "Throughput chart" }),
    req: el("canvas", { width: "600", height: "160", id: "chart-requests", role: "img", "aria-label": "Requests per second chart" }),
    lat: el("canvas", { width: "600", height: "160", id: "chart-latency", role: "img", "aria-label": "Latency chart" }),
  };
  const legends = { thr: el("p", { class: "legend" }), req: el("p", { class: "legend" }), lat: el("p", { class: "legend" }) };
  charts.append(el("h3", { text: "Load (live)" }),
    el("h4", { text: "Throughput, MiB/s" }), canvases.thr, legends.thr,
    el("h4", { text: "Requests per second" }), canvases.req, legends.req,
    el("h4", { text: "Average latency, ms" }), canvases.lat, legends.lat);

  async function status() {
    let s;
    try { s = await api("GET", "/api/ops/status"); } catch (e) {
      fill(summary, el("p", { class: "error", role: "alert", text: explain(e) }));
      return;
    }
    const L = s.layout, S = s.status, H = s.heal;
    const card = (label, value, bad) => el("div", { class: "card" + (bad ? " bad" : "") }, el("div", { class: "card-label", text: label }), el("div", { class: "card-value", text: value }));
    const used = s.drives.reduce((a, d) => a + (d.used || 0), 0), total = s.drives.reduce((a, d) => a + (d.total || 0), 0);
    fill(summary, 
      card("Drives online", S.drives_online + " / " + S.drives, S.drives_online < S.drives),
      card("Erasure sets", S.sets + " × " + L.set_size + " drives"),
      card("Data + parity", L.data + " + " + L.parity + " (survives " + L.parity + " lost drives per set)"),
      card("Writes", S.write_quorum_ok ? "OK (quorum " + L.write_quorum + ")" : "REFUSED: too few drives", !S.write_quorum_ok),
      card("Reads", S.read_quorum_ok ? "OK (quorum " + L.read_quorum + ")" : "FAILING: too few drives", !S.read_quorum_ok),
      card("Capacity used", total ? fmtBytes(used) + " of " + fmtBytes(total) : "—"));
    const offline = s.drives.filter((d) => d.state !== "online");
    fill(drives, el("h3", { text: "Drives" }),
      offline.length ? el("p", { class: "error", role: "alert", text: offline.length + " drive(s) offline. Reads rebuild around them and writes go on while each set keeps its write quorum; replace or reconnect the drive and the healer refills it." }) : null,
      el("table", { class: "grid", id: "drives" },
        el("thead", {}, el("tr", {}, ["Drive", "Set", "Slot", "State", "Used", "Free", "Errors"].map((h) => el("th", { text: h })))),
        el("tbody", {}, s.drives.map((d) => el("tr", { class: d.state === "online" ? "" : "offline" },
          el("td", { class: "path", text: d.path }), el("td", { text: d.set }), el("td", { text: d.slot }),
          el("td", {}, el("span", { class: "pill " + (d.state !== "online" ? "bad" : d.index ? "warn" : "ok"), text: d.state + (d.state === "online" && d.index ? " (full: " + d.index + ")" : "") })),
          el("td", { class: "num", text: d.total ? fmtBytes(d.used) : "—" }), el("td", { class: "num", text: d.total ? fmtBytes(d.free) : "—" }),
          el("td", { class: "err", text: d.error || (d.faults || d.timeouts ? d.faults + " faults, " + d.timeouts + " timeouts" : "") }))))));
    const scan = H.scan_running
      ? "running: " + H.scan_done.toLocaleString() + " of " + H.scan_total.toLocaleString() + " objects"
      : H.scan_elsewhere ? "runs on the cluster's leader node"
      : H.scan_cycles ? "idle; last pass ended " + fmtTime(H.last_scan_end) + " (" + H.last_scan.objects + " objects, " + H.last_scan.damaged + " repaired)" : "waiting for its first pass";
    const healOut = heal.querySelector(".heal-out") || el("pre", { class: "heal-out", "aria-live": "polite" });
    fill(heal, el("h3", { text: "Healing" }),
      el("dl", { class: "kv" },
        el("dt", { text: "Heal queue" }), el("dd", { id: "heal-queued", text: H.queued + " waiting · " + H.queue_healed + " healed" + (H.queue_dropped ? " · " + H.queue_dropped + " dropped (queue full; the scanner finds them)" : "") }),
        el("dt", { text: "Scanner" }), el("dd", { text: scan }),
        el("dt", { text: "Refills" }), el("dd", { text: (H.refills || []).length ? H.refills.map((r) => r.drive + ": " + r.objects + " objects").join(", ") : "none" })),
      el("button", { class: "primary", id: "heal-now", text: "Heal now", onclick: () => healNow(healOut) }), healOut);
    renderNotify(s.notify || []);
  }

  // Notification and audit targets: health and queue from the status,
  // test / remove per target, and a form adding a target of any kind the
  // server has (its kinds and their fields read once, from notify/kinds;
  // webhook alone where that call is refused).
  let notifyKinds = null, notifyKind = "webhook";
  const notifyOut = el("p", { class: "notify-out", "aria-live": "polite" });
  async function loadNotifyKinds() {
    try { notifyKinds = await api("GET", "/api/ops/notify/kinds"); } catch (e) { notifyKinds = []; }
    if (!notifyKinds.length) notifyKinds = [{ name: "webhook", fields: [{ name: "endpoint", required: true, secret: false, help: "https://hooks.example.com/s3" }, { name: "auth_token", required: false, secret: true, help: "auth token (optional)" }] }];
  }
  async function renderNotify(targets) {
    if (notifyKinds === null) await loadNotifyKinds();
    if (notify.contains(document.activeElement) && notify.querySelector("form")) return; // keep a form being filled in
    const out = notifyOut; // kept across redraws: the answer of an add or remove stays shown
    const q = (t) => ({ arn: t.ARN, audit: t.Audit ? "true" : "" });
    const row = (t) => el("tr", {},
      el("td", { class: "path", text: t.ARN }), el("td", { text: t.Audit ? "audit" : "events" }), el("td", { text: t.Source }),
      el("td", {}, el("span", { class: "pill " + (t.Stats.LastError ? "bad" : "ok"), text: t.Stats.LastError ? "failing" : "online" })),
      el("td", { class: "num", text: t.Stats.Queued }), el("td", { class: "num", text: t.Stats.Sent }), el("td", { class: "num", text: t.Stats.Failed }),
      el("td", { class: "num", text: t.Stats.Refused }), el("td", { class: "err", text: t.Stats.LastError || "" }),
      el("td", {},
        el("button", { text: "Test", onclick: async () => {
          try { const r = await api("POST", "/api/ops/notify/test", { query: q(t) }); out.textContent = t.ARN + (r.ok ? " answers" : " does not answer: " + r.error); }
          catch (e) { out.textContent = explain(e); }
        } }),
        t.Source === "admin" ? el("button", { text: "Remove", onclick: async () => {
          if (!confirm("Remove " + t.ARN + " and the records it has not sent yet?")) return;
          try { await api("DELETE", "/api/ops/notify", { query: q(t) }); out.textContent = "removed " + t.ARN; status(); }
          catch (e) { out.textContent = explain(e); }
        } }) : null));
    const id = el("input", { id: "notify-id", placeholder: "ID", "aria-label": "Target ID", required: true });
    const audit = el("input", { type: "checkbox", id: "notify-audit" });
    // The kinds the server can add, with their fields (notify/kinds): a
    // selector, and the chosen kind's fields as labelled inputs (secrets
    // as password inputs, required ones marked and required).
    const kindSel = el("select", { id: "notify-kind", "aria-label": "Target kind" },
      notifyKinds.map((k) => el("option", { value: k.name, text: k.name, selected: k.name === notifyKind })));
    const fieldset = el("fieldset", { class: "notify-fields", id: "notify-fields" });
    const inputs = {};
    const drawFields = () => {
      const k = notifyKinds.find((x) => x.name === kindSel.value);
      notifyKind = kindSel.value;
      for (const n of Object.keys(inputs)) delete inputs[n];
      fill(fieldset, el("legend", { text: (k ? k.name : "") + " settings" }),
        ...(k ? k.fields : []).map((f) => {
          const fid = "notify-f-" + f.name;
          inputs[f.name] = el("input", { id: fid, name: f.name, type: f.secret ? "password" : "text", required: f.required,
            autocomplete: f.secret ? "new-password" : "off", placeholder: f.help || "", title: f.help || "" });
          return el("label", { for: fid }, el("span", {}, f.name, f.required ? el("span", { class: "req", "aria-hidden": "true", text: " *" }) : null), inputs[f.name]);
        }));
    };
    kindSel.addEventListener("change", drawFields);
    drawFields();
    const form = el("form", { class: "inline notify-add", onsubmit: async (ev) => {
      ev.preventDefault();
      const settings = {};
      for (const f of (notifyKinds.find((x) => x.name === kindSel.value) || { fields: [] }).fields) {
        const v = f.secret ? inputs[f.name].value : inputs[f.name].value.trim();
        if (v) settings[f.name] = v;
      }
      try {
        const r = await api("PUT", "/api/ops/notify", { json: { kind: kindSel.value, id: id.value.trim(), settings, audit: audit.checked } });
        out.textContent = "added " + r.arn; form.reset(); document.activeElement.blur(); status();
      } catch (e) { out.textContent = explain(e); }
    } }, kindSel, id, el("label", {}, audit, " audit records"), fieldset, el("button", { class: "primary", type: "submit", id: "notify-add", text: "Add target" }));
    fill(notify, el("h3", { text: "Event notification targets" }),
      targets.length ? el("table", { class: "grid", id: "notify-targets" },
        el("thead", {}, el("tr", {}, ["ARN", "Receives", "From", "State", "Queued", "Sent", "Failed", "Refused", "Last error", ""].map((h) => el("th", { text: h })))),
        el("tbody", {}, targets.map(row)))
        : el("p", { text: "No targets. Add one here, or with MINIO_NOTIFY_* variables (docs/notifications.md)." }),
      form, out);
  }

  async function healNow(out) {
    const btn = document.getElementById("heal-now");
    btn.disabled = true;
    out.textContent = "Healing…";
    try {
      const res = await fetch("/api/ops/heal", { method: "POST", headers: { "X-CSRF-Token": state.csrf }, credentials: "same-origin" });
      if (!res.ok) {
        const j = await res.json().catch(() => ({}));
        throw new APIError(res.status, j.code || res.status, j.message || j.error || res.statusText);
      }
      const reader = res.body.getReader();
      const dec = new TextDecoder();
      let buf = "";
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        buf += dec.decode(value, { stream: true });
        let i;
        while ((i = buf.indexOf("\n")) >= 0) {
          const line = buf.slice(0, i); buf = buf.slice(i + 1);
          if (!line.trim()) continue;
          const ev = JSON.parse(line);
          if (ev.type === "progress") out.textContent = "Healing: " + ev.done + " of " + ev.total + " objects checked";
          else if (ev.type === "report") out.textContent = "Done: " + ev.report.objects + " objects checked, " + ev.report.damaged + " repaired, " + ev.report.failed + " failed.";
          else if (ev.type === "error") out.textContent = "Heal failed: " + ev.error;
        }
      }
    } catch (e) { out.textContent = explain(e); }
    btn.disabled = false;
  }

  async function metrics() {
    let m;
    try { m = await api("GET", "/api/ops/metrics"); } catch (e) { return; }
    const t = new Date(m.time).getTime() / 1000;
    if (last) {
      const dt = Math.max(t - last.t, 0.001);
      const dn = m.latencyCount - last.m.latencyCount;
      series.t.push(t);
      series.inMiB.push((m.bytesIn - last.m.bytesIn) / dt / 1048576);
      series.outMiB.push((m.bytesOut - last.m.bytesOut) / dt / 1048576);
      series.rps.push((m.requests - last.m.requests) / dt);
      series.lat.push(dn > 0 ? ((m.latencySum - last.m.latencySum) / dn) * 1000 : 0);
      for (const k of Object.keys(series)) if (series[k].length > 90) series[k].shift();
      drawChart(canvases.thr, [{ v: series.inMiB, c: "#2563eb" }, { v: series.outMiB, c: "#16a34a" }]);
      drawChart(canvases.req, [{ v: series.rps, c: "#9333ea" }]);
      drawChart(canvases.lat, [{ v: series.lat, c: "#ea580c" }]);
      const lastOf = (a) => (a.length ? a[a.length - 1] : 0);
      legends.thr.textContent = "in (PUT) " + lastOf(series.inMiB).toFixed(1) + " MiB/s · out (GET) " + lastOf(series.outMiB).toFixed(1) + " MiB/s";
      legends.req.textContent = lastOf(series.rps).toFixed(1) + " requests/s · " + m.inFlight + " in flight · " + m.errors + " answered 5xx since start";
      legends.lat.textContent = lastOf(series.lat).toFixed(1) + " ms average";
    }
    last = { t, m };
    const cores = m.cpu.map((v, i) => ({ i, v })).sort((a, b) => b.v - a.v);
    fill(cpu, el("h3", { text: "CPU per core (most consumed first)" }),
      cores.length ? el("div", { class: "bars", id: "cpu-bars" }, cores.map((c) => {
        const bar = el("div", { class: "bar-fill" });
        bar.style.width = Math.round(c.v * 100) + "%";
        return el("div", { class: "bar-row" }, el("span", { class: "bar-label", text: "cpu" + c.i }), el("div", { class: "bar" }, bar), el("span", { class: "bar-value", text: Math.round(c.v * 100) + " %" }));
      })) : el("p", { class: "muted", id: "cpu-pending", text: "Measuring: the per-core load appears after the server has sampled for a few seconds (Linux only)." }));
    fill(phases, el("h3", { text: "PUT time per phase (average since start)" }),
      m.phases.length && m.phases.some((p) => p.count > 0)
        ? el("table", { class: "grid", id: "phases" }, el("thead", {}, el("tr", {}, el("th", { text: "Phase" }), el("th", { class: "num", text: "PUTs" }), el("th", { class: "num", text: "Average ms" }))),
          el("tbody", {}, m.phases.filter((p) => p.count > 0).map((p) => el("tr", {}, el("td", { text: p.phase }), el("td", { class: "num", text: fmtCount(p.count) }), el("td", { class: "num", text: ((p.sum / p.count) * 1000).toFixed(2) })))))
        : el("p", { class: "muted", text: "No PUT yet." }));
  }

  async function errs() {
    let r;
    try { r = await api("GET", "/api/ops/errors"); } catch (e) { return; }
    fill(errors, el("h3", { text: "Recent warnings and errors" }),
      r.entries.length ? el("ul", { class: "log", id: "error-log" }, r.entries.map((e) => el("li", { class: e.level.toLowerCase() },
        el("span", { class: "log-time", text: fmtTime(e.time) }), el("span", { class: "pill " + (e.level === "ERROR" ? "bad" : "warn"), text: e.level }),
        el("span", { class: "log-msg", text: e.message }), el("span", { class: "log-attrs", text: (e.attrs || []).join(" ") }))))
        : el("p", { class: "muted", text: "Nothing to report: no warnings or errors since the server started." }));
  }

  for (const cv of Object.values(canvases)) drawChart(cv, [{ v: [], c: "#000" }]);
  await Promise.all([status(), metrics(), errs()]);
  const timers = [setInterval(metrics, 2000), setInterval(status, 5000), setInterval(errs, 5000)];
  return () => timers.forEach(clearInterval);
}

function drawChart(canvas, lines) {
  const ctx = canvas.getContext("2d");
  const w = canvas.width, h = canvas.height, pad = 28;
  ctx.clearRect(0, 0, w, h);
  let max = 0;
  for (const l of lines) for (const v of l.v) max = Math.max(max, v);
  max = max > 0 ? max * 1.15 : 1;
  ctx.strokeStyle = "#d4d4d8";
  ctx.fillStyle = "#71717a";
  ctx.font = "11px system-ui, sans-serif";
  ctx.lineWidth = 1;
  for (let i = 0; i <= 4; i++) {
    const y = pad / 2 + ((h - pad) * i) / 4;
    ctx.beginPath(); ctx.moveTo(pad, y); ctx.lineTo(w, y); ctx.stroke();
    ctx.fillText((max * (1 - i / 4)).toFixed(max < 10 ? 1 : 0), 0, y + 4);
  }
  for (const l of lines) {
    ctx.strokeStyle = l.c;
    ctx.lineWidth = 2;
    ctx.beginPath();
    l.v.forEach((v, i) => {
      const x = pad + ((w - pad) * i) / Math.max(89, 1);
      const y = pad / 2 + (h - pad) * (1 - v / max);
      if (i === 0) ctx.moveTo(x, y); else ctx.lineTo(x, y);
    });
    ctx.stroke();
  }
}

// ---------- identities (the identity store, through the admin API) ----------

async function identitiesPage(main) {
  main.append(el("h2", { text: "Identities" }));
  const iam = (method, path, json) => api(method, "/api/iam/" + path, json === undefined ? {} : { json });
  const act = async (fn, done) => {
    try { await fn(); if (done) toast(done); } catch (e) { toast(explain(e), "error"); }
    fill(main);
    await identitiesPage(main);
  };
  let users = [], policies = [], groups = [];
  try {
    [users, policies, groups] = await Promise.all([iam("GET", "users"), iam("GET", "policies"), iam("GET", "groups")]);
  } catch (e) {
    main.append(el("p", { class: "error", role: "alert", text: explain(e) }));
    return;
  }
  const name = el("input", { id: "new-user", placeholder: "user name", "aria-label": "New user name", required: true });
  const created = el("div", { id: "new-user-secret", "aria-live": "polite" });
  main.append(el("form", { class: "toolbar", onsubmit: async (ev) => {
    ev.preventDefault();
    try {
      const r = await iam("POST", "users", { name: name.value.trim() });
      fill(created, el("p", { class: "callout" }, "User " + r.name + " created. Its secret key, shown only now: ",
        el("code", { id: "new-secret", text: r.secretKey })));
      name.value = "";
      const list = await iam("GET", "users");
      fill(usersBox, usersTable(list));
    } catch (e) { toast(explain(e), "error"); }
  } }, name, el("button", { type: "submit", class: "primary", id: "create-user", text: "Create user" })), created);

  const policyNames = policies.map((p) => p.name);
  const usersTable = (list) => list.length === 0
    ? el("div", { class: "empty", text: "No users in the identity store yet. The root user and --users entries are not listed here." })
    : el("table", { class: "grid", id: "users" },
      el("thead", {}, el("tr", {}, ["User", "Status", "Policies", "Groups", "Access keys", ""].map((h) => el("th", { text: h })))),
      el("tbody", {}, list.map((u) => {
        const pick = el("select", { "aria-label": "Policy to attach to " + u.name }, policyNames.filter((n) => !(u.policies || []).includes(n)).map((n) => el("option", { value: n, text: n })));
        return el("tr", {},
          el("td", { text: u.name }),
          el("td", {}, el("span", { class: "pill " + (u.status === "enabled" ? "ok" : "bad"), text: u.status })),
          el("td", {}, (u.policies || []).map((p) => el("span", { class: "chip" }, p, el("button", { class: "chip-x", "aria-label": "Detach " + p + " from " + u.name, text: "×",
            onclick: () => act(() => iam("POST", "policies/detach", { policies: [p], user: u.name }), p + " detached from " + u.name + ".") })))),
          el("td", { text: (u.groups || []).join(", ") }),
          el("td", { class: "num", text: u.accessKeys }),
          el("td", { class: "actions" }, el("div", { class: "row-buttons tight" },
            pick, el("button", { class: "small", text: "Attach", onclick: () => pick.value && act(() => iam("POST", "policies/attach", { policies: [pick.value], user: u.name }), pick.value + " attached to " + u.name + ".") }),
            el("button", { class: "small", text: u.status === "enabled" ? "Disable" : "Enable",
              onclick: () => act(() => iam("POST", "users/" + encodeURIComponent(u.name) + "/" + (u.status === "enabled" ? "disable" : "enable"))) }),
            el("button", { class: "small", text: "Keys", "aria-label": "Access keys of " + u.name, onclick: () => showKeys(u.name) }),
            el("button", { class: "small danger", text: "Delete", onclick: () => confirm("Delete the user " + u.name + " and its access keys?") && act(() => iam("DELETE", "users/" + encodeURIComponent(u.name)), "User " + u.name + " deleted.") }))));
      })));
  const usersBox = el("section", { class: "panel" }, usersTable(users));
  main.append(el("h3", { text: "Users" }), usersBox);

  // Groups: made by adding a first member; members and policies edited in place.
  const userNames = users.map((u) => u.name);
  const options = (names) => names.map((n) => el("option", { value: n, text: n }));
  const groupName = el("input", { id: "new-group", placeholder: "group name", "aria-label": "New group name", required: true });
  const firstMember = el("select", { id: "new-group-member", "aria-label": "First member of the new group", required: true }, options(userNames));
  const groupForm = el("form", { class: "toolbar", onsubmit: (ev) => {
    ev.preventDefault();
    const g = groupName.value.trim();
    act(() => iam("POST", "groups/" + encodeURIComponent(g) + "/members", { add: [firstMember.value] }), "Group " + g + " created.");
  } }, groupName, firstMember, el("button", { type: "submit", class: "primary", id: "create-group", text: "Create group", disabled: userNames.length === 0 }));
  const groupRows = groups.map((g) => {
    const gp = "groups/" + encodeURIComponent(g.name);
    const addMember = el("select", { "aria-label": "User to add to " + g.name }, options(userNames.filter((n) => !(g.members || []).includes(n))));
    const addPolicy = el("select", { "aria-label": "Policy to attach to group " + g.name }, options(policyNames.filter((n) => !(g.policies || []).includes(n))));
    return el("tr", {},
      el("td", { text: g.name }),
      el("td", {}, el("span", { class: "pill " + (g.status === "enabled" ? "ok" : "bad"), text: g.status })),
      el("td", {}, (g.members || []).map((m) => el("span", { class: "chip" }, m, el("button", { class: "chip-x", "aria-label": "Remove " + m + " from " + g.name, text: "×",
        onclick: () => act(() => api("POST", "/api/iam/" + gp + "/members", { query: { remove: "" }, json: { remove: [m] } }), m + " removed from " + g.name + ".") })))),
      el("td", {}, (g.policies || []).map((p) => el("span", { class: "chip" }, p, el("button", { class: "chip-x", "aria-label": "Detach " + p + " from group " + g.name, text: "×",
        onclick: () => act(() => iam("POST", "policies/detach", { policies: [p], group: g.name }), p + " detached from " + g.name + ".") })))),
      el("td", { class: "actions" }, el("div", { class: "row-buttons tight" },
        addMember, el("button", { class: "small", text: "Add", onclick: () => addMember.value && act(() => iam("POST", gp + "/members", { add: [addMember.value] }), addMember.value + " added to " + g.name + ".") }),
        addPolicy, el("button", { class: "small", text: "Attach", onclick: () => addPolicy.value && act(() => iam("POST", "policies/attach", { policies: [addPolicy.value], group: g.name }), addPolicy.value + " attached to " + g.name + ".") }),
        el("button", { class: "small", text: g.status === "enabled" ? "Disable" : "Enable", onclick: () => act(() => iam("POST", gp + "/" + (g.status === "enabled" ? "disable" : "enable"))) }),
        el("button", { class: "small danger", text: "Delete", onclick: () => confirm("Delete the group " + g.name + "? Its members keep their own policies.") && act(() => iam("DELETE", gp), "Group " + g.name + " deleted.") }))));
  });
  main.append(el("h3", { text: "Groups" }), groupForm, el("section", { class: "panel" }, groups.length === 0
    ? el("div", { class: "empty", text: userNames.length === 0 ? "No groups. Create a user first: a group is made with its first member." : "No groups yet." })
    : el("table", { class: "grid", id: "groups" }, el("thead", {}, el("tr", {}, ["Group", "Status", "Members", "Policies", ""].map((h) => el("th", { text: h })))),
      el("tbody", {}, groupRows))));

  // Access keys of one user: listed on demand, created (secret shown once), disabled, deleted.
  const keysBox = el("section", { class: "panel", id: "access-keys", hidden: true });
  const showKeys = async (user, notice) => {
    keysBox.hidden = false;
    let keys = [];
    try { keys = await iam("GET", "accesskeys?user=" + encodeURIComponent(user)); } catch (e) { fill(keysBox, el("p", { class: "error", role: "alert", text: explain(e) })); return; }
    // The users table counts keys: refresh it with the keys panel.
    const recount = async () => { try { fill(usersBox, usersTable(await iam("GET", "users"))); } catch (e) { /* the panel says enough */ } };
    const redo = (fn, done) => async () => { try { await fn(); toast(done); } catch (e) { toast(explain(e), "error"); } showKeys(user); recount(); };
    fill(keysBox, el("h4", { text: "Access keys of " + user }), notice,
      keys.length === 0 ? el("div", { class: "empty", text: user + " has no access keys." })
        : el("table", { class: "grid", id: "keys" }, el("thead", {}, el("tr", {}, ["Access key", "Name", "Status", "Created", ""].map((h) => el("th", { text: h })))),
          el("tbody", {}, keys.map((k) => el("tr", {}, el("td", {}, el("code", { text: k.accessKey })), el("td", { text: k.name || "" }),
            el("td", {}, el("span", { class: "pill " + (k.status === "enabled" && !k.expired ? "ok" : "bad"), text: k.expired ? "expired" : k.status })),
            el("td", { text: new Date(k.created).toLocaleString() }),
            el("td", { class: "actions" }, el("div", { class: "row-buttons tight" },
              el("button", { class: "small", text: k.status === "enabled" ? "Disable" : "Enable",
                onclick: redo(() => iam("POST", "accesskeys/" + encodeURIComponent(k.accessKey) + "/" + (k.status === "enabled" ? "disable" : "enable")), "Key " + k.accessKey + " " + (k.status === "enabled" ? "disabled." : "enabled.")) }),
              el("button", { class: "small danger", text: "Delete",
                onclick: () => confirm("Delete the access key " + k.accessKey + "? Clients using it stop working.") && redo(() => iam("DELETE", "accesskeys/" + encodeURIComponent(k.accessKey)), "Key " + k.accessKey + " deleted.")() }))))))),
      el("div", { class: "toolbar" }, el("button", { class: "primary", id: "create-key", text: "Create access key", onclick: async () => {
        try {
          const cr = await iam("POST", "accesskeys", { parent: user });
          showKeys(user, el("p", { class: "callout", id: "new-key" }, "Access key ", el("code", { text: cr.accessKey }), " created. Its secret key, shown only now: ", el("code", { id: "new-key-secret", text: cr.secretKey })));
          recount();
        } catch (e) { toast(explain(e), "error"); }
      } })));
    keysBox.scrollIntoView();
  };
  main.append(keysBox);

  // Policies: managed documents created, replaced and deleted here; built-in ones viewed.
  const doc = el("pre", { class: "policy-doc", id: "policy-doc", hidden: true });
  const polName = el("input", { id: "policy-name", placeholder: "policy name", "aria-label": "Policy name", required: true });
  const polDoc = el("textarea", { id: "policy-text", rows: 8, spellcheck: "false", "aria-label": "Policy document (JSON)", required: true,
    placeholder: '{"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Action": ["s3:GetObject"], "Resource": ["arn:aws:s3:::bucket/*"]}]}' });
  const polForm = el("form", { class: "policy-form", onsubmit: (ev) => {
    ev.preventDefault();
    const n = polName.value.trim();
    let text = polDoc.value.trim();
    try { JSON.parse(text); } catch (e) { toast("The document is not JSON: " + e.message, "error"); return; }
    act(() => api("PUT", "/api/iam/policies/" + encodeURIComponent(n), { body: text, headers: { "Content-Type": "application/json" } }), "Policy " + n + " saved.");
  } }, el("div", { class: "toolbar" }, polName, el("button", { type: "submit", class: "primary", id: "save-policy", text: "Save policy" })), polDoc);
  main.append(el("h3", { text: "Policies" }), polForm, el("section", { class: "panel" },
    el("table", { class: "grid", id: "policies" }, el("thead", {}, el("tr", {}, ["Policy", "Kind", "Users", "Groups", ""].map((h) => el("th", { text: h })))),
      el("tbody", {}, policies.map((p) => el("tr", {}, el("td", { text: p.name }), el("td", { text: p.builtin ? "built-in" : "managed" }),
        el("td", { text: (p.users || []).join(", ") }), el("td", { text: (p.groups || []).join(", ") }),
        el("td", { class: "actions" }, el("div", { class: "row-buttons tight" },
          el("button", { class: "small", text: "View", onclick: () => { doc.hidden = false; doc.textContent = p.name + "\n" + JSON.stringify(p.document, null, 2); doc.scrollIntoView(); } }),
          !p.builtin && el("button", { class: "small", text: "Edit", "aria-label": "Edit policy " + p.name, onclick: () => { polName.value = p.name; polDoc.value = JSON.stringify(p.document, null, 2); polDoc.focus(); } }),
          !p.builtin && el("button", { class: "small danger", text: "Delete", "aria-label": "Delete policy " + p.name,
            onclick: () => confirm("Delete the policy " + p.name + "?") && act(() => iam("DELETE", "policies/" + encodeURIComponent(p.name)), "Policy " + p.name + " deleted.") }))))))),
    doc));
}
