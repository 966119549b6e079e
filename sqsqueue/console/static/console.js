// The sqsqueue console: polls the JSON API of /_sqsqueue/ once a second and
// builds the page with DOM calls and textContent only: queue names, bodies
// and attributes are user data and never become HTML.
//
// A queue is known by its "ref", its path under /_sqsqueue/api/queues/: its
// name in the server's default account and region, REGION/ACCOUNT/NAME in any
// other (sqsqueue serve holds every account and region). The page of a queue
// is #/queues/REF, so a link to one can be shared.
"use strict";

(function () {
  const API = "/_sqsqueue/api";
  const POLL_MS = 1000;
  const HISTORY_MS = 5 * 60 * 1000; // the depth plots' window
  const SVG = "http://www.w3.org/2000/svg";

  const state = {
    prefix: "",
    tokens: [null],      // the ListQueues token of each page seen (null: the first)
    page: 0,
    nextToken: null,
    selected: null,      // the selected queue's ref
    scoped: false,       // queues of more than one account or region are listed
    queue: null,         // its last detail document
    after: [null],       // message page cursors
    messagePage: 0,
    nextAfter: null,
    stateFilter: "",
    message: null,       // the selected message's document
    depths: loadDepths(),
    now: Date.now() / 1000, // the broker's clock, from /health
    busy: false,
  };

  function $(id) { return document.getElementById(id); }

  // The API path of a queue's ref, each segment escaped.
  function queuePath(ref) {
    return `${API}/queues/${ref.split("/").map(encodeURIComponent).join("/")}`;
  }

  function el(tag, props, ...children) {
    const node = document.createElement(tag);
    for (const [key, value] of Object.entries(props || {})) {
      if (key === "class") node.className = value;
      else if (key === "onclick") node.addEventListener("click", value);
      else node.setAttribute(key, value);
    }
    for (const child of children) {
      if (child === null || child === undefined) continue;
      node.append(child instanceof Node ? child : document.createTextNode(String(child)));
    }
    return node;
  }

  function svg(tag, attrs) {
    const node = document.createElementNS(SVG, tag);
    for (const [key, value] of Object.entries(attrs)) node.setAttribute(key, String(value));
    return node;
  }

  function setStatus(text, error) {
    const node = $("status");
    node.textContent = text;
    node.classList.toggle("error", Boolean(error));
  }

  async function call(method, path, body) {
    const init = { method, credentials: "same-origin", headers: {} };
    if (method === "POST") {
      init.headers["Content-Type"] = "application/json";
      init.headers["X-Sqsqueue-Console"] = "1";
      init.body = JSON.stringify(body || {});
    }
    const response = await fetch(path, init);
    let doc = {};
    try { doc = await response.json(); } catch (e) { doc = {}; }
    if (!response.ok) {
      const error = new Error(doc.message || response.statusText);
      error.code = doc.error || String(response.status);
      throw error;
    }
    return doc;
  }

  function age(seconds) {
    if (seconds < 120) return seconds + " s";
    if (seconds < 7200) return Math.floor(seconds / 60) + " min";
    if (seconds < 172800) return Math.floor(seconds / 3600) + " h";
    return Math.floor(seconds / 86400) + " d";
  }

  function when(epoch) {
    const d = new Date(epoch * 1000);
    return d.toISOString().replace("T", " ").replace(/\.\d+Z$/, "Z");
  }

  // A moment relative to the broker's clock ("in 35 s", "12 s ago").
  function relative(epoch) {
    const delta = Math.round(epoch - state.now);
    if (delta === 0) return "now";
    const span = age(Math.abs(delta));
    return delta > 0 ? `in ${span}` : `${span} ago`;
  }

  // -- depth history (kept in sessionStorage so a reload keeps the plots) --------

  function loadDepths() {
    try { return JSON.parse(sessionStorage.getItem("sqsqueue-depths") || "{}"); }
    catch (e) { return {}; }
  }

  function recordDepth(ref, visible, inFlight, delayed) {
    const now = Date.now();
    const series = state.depths[ref] || (state.depths[ref] = []);
    series.push([now, visible, inFlight, delayed]);
    while (series.length && series[0][0] < now - HISTORY_MS) series.shift();
  }

  function saveDepths() {
    const now = Date.now();
    for (const name of Object.keys(state.depths)) {
      const series = state.depths[name];
      if (!series.length || series[series.length - 1][0] < now - HISTORY_MS) delete state.depths[name];
    }
    try { sessionStorage.setItem("sqsqueue-depths", JSON.stringify(state.depths)); } catch (e) { /* full */ }
  }

  function plot(node, series, width, height, stacked) {
    node.replaceChildren();
    node.setAttribute("viewBox", `0 0 ${width} ${height}`);
    if (!series || series.length < 1) return;
    const now = Date.now();
    // The window: the last 5 minutes, or less while less has been seen.
    const start = Math.min(now - 10000, Math.max(now - HISTORY_MS, series[0][0]));
    const span = now - start;
    const total = (p) => p[1] + p[2] + p[3];
    const max = Math.max(1, ...series.map(total));
    const x = (t) => ((t - start) / span) * width;
    const top = stacked ? 18 : 2; // room for the legend
    const y = (v) => height - 2 - (v / max) * (height - 2 - top);
    const lines = stacked
      ? [["total", total, "#1d232b"], ["visible", (p) => p[1], "#2f8f46"],
         ["in flight", (p) => p[2], "#c27c0e"], ["delayed", (p) => p[3], "#6f42c1"]]
      : [["total", total, "#1f6feb"]];
    for (const [, value, colour] of lines) {
      const points = series.map((p) => `${x(p[0]).toFixed(1)},${y(value(p)).toFixed(1)}`);
      if (points.length === 1) points.push(`${width},${points[0].split(",")[1]}`);
      node.append(svg("polyline", { points: points.join(" "), fill: "none", stroke: colour, "stroke-width": stacked ? 2 : 1.5 }));
    }
    if (stacked) {
      let lx = 6;
      for (const [label, , colour] of lines) {
        const text = svg("text", { x: lx, y: 12, fill: colour, class: "legend" });
        text.textContent = label;
        node.append(text);
        lx += label.length * 7 + 14;
      }
      const note = svg("text", { x: width - 4, y: 12, fill: "#5d6875", "text-anchor": "end", class: "legend" });
      note.textContent = `max ${max} · last ${age(Math.round(span / 1000))}`;
      node.append(note);
    }
  }

  // -- the queue list ------------------------------------------------------------

  async function refreshQueues() {
    const params = new URLSearchParams({ limit: "50" });
    if (state.prefix) params.set("prefix", state.prefix);
    const token = state.tokens[state.page];
    if (token) params.set("token", token);
    const doc = await call("GET", `${API}/queues?${params}`);
    state.nextToken = doc.next_token;
    // An endpoint of every account and region lists each broker's queues:
    // the account and region columns show once there is more than one.
    const brokers = doc.brokers || [];
    state.scoped = brokers.length > 1 || doc.queues.some((q) => q.ref !== q.name);
    const accounts = new Set(brokers.map((b) => b.account_id)).size;
    const regions = new Set(brokers.map((b) => b.region)).size;
    $("queue-total").textContent = state.scoped
      ? `(${doc.total} in ${accounts} account${accounts === 1 ? "" : "s"}, ${regions} region${regions === 1 ? "" : "s"})`
      : `(${doc.total})`;
    for (const node of document.querySelectorAll("#queues th.scope")) node.hidden = !state.scoped;
    const rows = doc.queues.map((q) => {
      const ref = q.ref || q.name;
      recordDepth(ref, q.visible, q.in_flight, q.delayed);
      const spark = svg("svg", { class: "spark" });
      plot(spark, state.depths[ref], 96, 22, false);
      const account = el("td", { class: "scope" }, q.account_id);
      const region = el("td", { class: "scope" }, q.region);
      account.hidden = region.hidden = !state.scoped;
      const row = el("tr", { "data-queue": ref, onclick: () => select(ref) },
        el("td", { class: "name", title: q.name }, q.name, q.fifo ? " " : null, q.fifo ? el("span", { class: "badge" }, "FIFO") : null),
        account, region,
        el("td", { class: "num" }, q.visible),
        el("td", { class: "num" }, q.in_flight),
        el("td", { class: "num" }, q.delayed),
        el("td", { class: "num" }, q.visible + q.in_flight + q.delayed ? age(q.age) : "–"),
        el("td", {}, q.dead_letter_queue ? `${q.dead_letter_queue} (after ${q.max_receive_count})` : "–"),
        el("td", {}, spark));
      if (ref === state.selected) row.classList.add("selected");
      return row;
    });
    $("queues").tBodies[0].replaceChildren(...rows);
    $("queues-prev").disabled = state.page === 0;
    $("queues-next").disabled = !state.nextToken;
  }

  // -- one queue -----------------------------------------------------------------

  function select(ref) {
    if (state.selected !== ref) {
      state.selected = ref;
      state.after = [null];
      state.messagePage = 0;
      state.message = null;
      $("message-detail").hidden = true;
    }
    $("queue-panel").hidden = false;
    const hash = `#/queues/${ref.split("/").map(encodeURIComponent).join("/")}`;
    if (window.location.hash !== hash) history.replaceState(null, "", hash);
    refresh();
  }

  // The queue a #/queues/REF address names (null for none). A ref is a queue
  // name, or REGION/ACCOUNT/NAME: nothing else (no "..") reaches a request path.
  function fromHash() {
    const match = /^#\/queues\/(.+)$/.exec(window.location.hash);
    if (!match) return null;
    let parts;
    try { parts = match[1].split("/").map(decodeURIComponent); }
    catch (e) { return null; }
    const name = /^(?!\.\.?$)[A-Za-z0-9_.-]{1,80}$/;
    const ok = parts.length === 1
      ? name.test(parts[0])
      : parts.length === 3 && /^[a-z0-9-]{1,32}$/.test(parts[0]) && /^[0-9]{12}$/.test(parts[1]) && name.test(parts[2]);
    return ok ? parts.join("/") : null;
  }

  function deselect() {
    state.selected = null;
    state.queue = null;
    $("queue-panel").hidden = true;
    $("message-detail").hidden = true;
    if (window.location.hash) history.replaceState(null, "", window.location.pathname + window.location.search);
  }

  function fact(label, value) {
    return el("div", {}, el("b", {}, value), label);
  }

  async function refreshQueue() {
    const ref = state.selected;
    if (!ref) return;
    let q;
    try {
      q = await call("GET", queuePath(ref));
    } catch (error) {
      if (error.code === "QueueDoesNotExist") {
        deselect();
        return;
      }
      throw error;
    }
    state.queue = q;
    $("queue-panel").hidden = false;
    $("queue-title").textContent = q.name;
    const scope = $("queue-scope");
    scope.textContent = `${q.region} · account ${q.account_id}`;
    scope.hidden = !state.scoped && (q.ref || q.name) === q.name;
    $("queue-kind").textContent = q.fifo ? "FIFO" : "standard";
    for (const node of document.querySelectorAll(".fifo-only")) node.hidden = !q.fifo;
    for (const node of document.querySelectorAll(".standard-only")) node.hidden = q.fifo;
    $("queue-facts").replaceChildren(
      fact("visible", q.visible), fact("in flight", q.in_flight), fact("delayed", q.delayed),
      fact("oldest", q.visible + q.in_flight + q.delayed ? age(q.age) : "–"), fact("sent", q.sent), fact("received", q.received),
      fact("deleted", q.deleted),
      fact("visibility timeout", `${q.attributes.VisibilityTimeout} s`),
      fact("dead letters to", q.dead_letter_queue || "–"));
    recordDepth(ref, q.visible, q.in_flight, q.delayed);
    plot($("depth-chart"), state.depths[ref], 600, 120, true);
    const redrive = $("redrive");
    redrive.hidden = q.sources.length === 0;
    if (q.sources.length) {
      $("redrive-sources").textContent = q.sources.join(", ");
      const running = q.move_tasks.find((t) => t.Status === "RUNNING");
      $("redrive-start").disabled = Boolean(running);
      $("redrive-tasks").replaceChildren(...q.move_tasks.slice(0, 3).map((t) => el("div", { class: "row" },
        el("span", { class: "badge" }, t.Status),
        `moved ${t.ApproximateNumberOfMessagesMoved} of ${t.ApproximateNumberOfMessagesToMove}`,
        t.Status === "RUNNING"
          ? el("button", { type: "button", class: "danger", onclick: () => act("redrive/cancel", { task_handle: t.TaskHandle }, "redrive cancelled") }, "Cancel redrive")
          : null)));
    }
    await refreshMessages();
  }

  async function refreshMessages() {
    const ref = state.selected;
    const params = new URLSearchParams({ limit: "50" });
    const after = state.after[state.messagePage];
    if (after !== null && after !== undefined) params.set("after", String(after));
    if (state.stateFilter) params.set("state", state.stateFilter);
    const doc = await call("GET", `${queuePath(ref)}/messages?${params}`);
    state.nextAfter = doc.next_after;
    let selected = null;
    const rows = doc.messages.map((m) => {
      const until = m.state === "visible" ? "–" : relative(m.visible_at);
      const row = el("tr", { "data-position": String(m.position), onclick: () => showMessage(m) },
        el("td", { class: "num" }, m.position),
        el("td", {}, el("span", { class: `badge state-${m.state}` }, m.state.replace("_", " "))),
        el("td", { title: when(m.visible_at) }, until),
        el("td", { class: "num" }, m.receive_count),
        el("td", { title: when(m.sent_at) }, relative(m.sent_at)),
        el("td", { class: "body", title: m.body.slice(0, 300) }, m.body));
      if (state.message && state.message.position === m.position) {
        row.classList.add("selected");
        selected = m;
      }
      return row;
    });
    if (!rows.length) rows.push(el("tr", {}, el("td", { colspan: "6", class: "muted" }, "no messages")));
    $("messages").tBodies[0].replaceChildren(...rows);
    $("messages-first").disabled = state.messagePage === 0;
    $("messages-next").disabled = state.nextAfter === null || state.nextAfter === undefined;
    if (selected) await showMessage(selected); // its state and history as they are now
  }

  async function showMessage(m) {
    state.message = m;
    $("message-detail").hidden = false;
    $("detail-id").textContent = m.message_id;
    $("detail-body").textContent = m.body;
    const rows = [];
    const facts = { state: m.state, position: m.position, "size (bytes)": m.size };
    if (m.state !== "visible") facts[m.state === "delayed" ? "delayed until" : "in flight until"] = when(m.visible_at);
    for (const [k, v] of Object.entries({ ...facts, ...m.attributes })) rows.push(el("tr", {}, el("td", {}, k), el("td", {}, v)));
    for (const [k, v] of Object.entries(m.message_attributes)) rows.push(el("tr", {}, el("td", {}, `${k} (${v.type})`), el("td", {}, v.value)));
    $("detail-attributes").tBodies[0].replaceChildren(...rows);
    const list = $("detail-history");
    try {
      const doc = await call("GET", `${queuePath(state.selected)}/history?message_id=${encodeURIComponent(m.message_id)}`);
      list.replaceChildren(...(doc.kept
        ? doc.events.map((e) => el("li", {}, `${when(e.time)} ${e.event}`, Object.keys(e.detail).length ? ` ${JSON.stringify(e.detail)}` : ""))
        : [el("li", { class: "muted" }, "history is not kept for this queue (keep_history)")]));
    } catch (error) {
      list.replaceChildren(el("li", { class: "muted" }, error.message));
    }
    for (const row of $("messages").tBodies[0].rows) row.classList.toggle("selected", row.dataset.position === String(m.position));
  }

  async function act(action, body, done) {
    try {
      await call("POST", `${queuePath(state.selected)}/${action}`, body);
      setStatus(done);
      await refresh();
    } catch (error) {
      setStatus(`${action}: ${error.message}`, true);
    }
  }

  // -- the broker ----------------------------------------------------------------

  async function refreshBroker() {
    const h = await call("GET", "/_sqsqueue/health");
    state.now = h.now;
    const where = `${h.region} · account ${h.account_id}`;
    $("broker").textContent = `${state.scoped ? `default ${where}` : where} · ${h.durable ? "durable" : "in memory"} · ${h.clock} · v${h.version}`;
    const manual = h.clock === "ManualClock";
    $("clock-form").hidden = !manual;
    if (manual) $("clock-now").textContent = `virtual time ${when(h.now)}`;
  }

  async function refresh() {
    if (state.busy) return;
    state.busy = true;
    try {
      await refreshBroker();
      await refreshQueues();
      await refreshQueue();
      saveDepths();
      if ($("status").classList.contains("error") && $("status").dataset.poll === "1") setStatus("");
    } catch (error) {
      setStatus(`update failed: ${error.message}`, true);
      $("status").dataset.poll = "1";
    } finally {
      state.busy = false;
    }
  }

  // -- wiring --------------------------------------------------------------------

  function wire() {
    $("prefix").addEventListener("input", (event) => {
      state.prefix = event.target.value.trim();
      state.tokens = [null];
      state.page = 0;
      refresh();
    });
    $("queues-next").addEventListener("click", () => {
      if (!state.nextToken) return;
      state.tokens[state.page + 1] = state.nextToken;
      state.page += 1;
      refresh();
    });
    $("queues-prev").addEventListener("click", () => {
      if (state.page === 0) return;
      state.page -= 1;
      refresh();
    });
    $("messages-next").addEventListener("click", () => {
      if (state.nextAfter === null || state.nextAfter === undefined) return;
      state.after[state.messagePage + 1] = state.nextAfter;
      state.messagePage += 1;
      refresh();
    });
    $("messages-first").addEventListener("click", () => {
      state.messagePage = 0;
      state.after = [null];
      refresh();
    });
    $("state-filter").addEventListener("change", (event) => {
      state.stateFilter = event.target.value;
      state.messagePage = 0;
      state.after = [null];
      refresh();
    });
    $("send-form").addEventListener("submit", (event) => {
      event.preventDefault();
      const body = { body: $("send-body").value };
      if (state.queue && state.queue.fifo) {
        body.group_id = $("send-group").value;
        body.deduplication_id = $("send-dedup").value;
      } else if ($("send-delay").value) {
        body.delay_seconds = $("send-delay").value;
      }
      act("send", body, "message sent").then(() => { $("send-body").value = ""; });
    });
    $("purge").addEventListener("click", () => {
      const name = state.queue ? state.queue.name : state.selected;
      if (window.confirm(`Purge every message of ${name}?`)) act("purge", {}, "queue purged");
    });
    $("redrive-start").addEventListener("click", () => act("redrive", {}, "redrive started"));
    $("delete").addEventListener("click", () => {
      const m = state.message;
      if (!m) return;
      act("delete", { position: m.position, message_id: m.message_id }, "message deleted").then(() => {
        $("message-detail").hidden = true;
        state.message = null;
      });
    });
    $("clock-form").addEventListener("submit", async (event) => {
      event.preventDefault();
      try {
        const seconds = Number($("clock-seconds").value);
        await call("POST", `${API}/clock/advance`, { seconds });
        setStatus(`clock advanced ${seconds} s`);
        await refresh();
      } catch (error) {
        setStatus(`advance: ${error.message}`, true);
      }
    });
  }

  wire();
  window.addEventListener("hashchange", () => {
    const ref = fromHash();
    if (ref) select(ref);
    else if (state.selected) deselect();
  });
  const linked = fromHash();
  if (linked) select(linked);
  else refresh();
  window.setInterval(refresh, POLL_MS);
})();
