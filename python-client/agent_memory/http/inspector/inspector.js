// The inspector: one page over the JSON API of `agent-memory serve` on the same origin. Every request sends
// the API key the user typed, kept in sessionStorage (this tab only, gone when it closes). Text from the API
// is only ever set with textContent or as SVG text nodes, never parsed as HTML.

const API_ROOT = new URL("../", document.baseURI); // the page lives at <root>/inspector/, the API at <root>/v1/
const STORED = { key: "agent_memory.key", tenant: "agent_memory.tenant", agent: "agent_memory.agent" };
const VIEWS = ["sessions", "recall", "memories", "entities", "queue"];
const SESSIONS_PAGE = 50;
const MOVES = { active: ["resolve", "retract"], ongoing: ["resolve", "retract"], pending: ["approve", "retract"] };

const state = { whoami: null, view: "sessions", loaded: new Set(), sessionsBefore: null, recallQuery: "" };
const byId = (id) => document.getElementById(id);

class ApiError extends Error {
  constructor(status, detail) {
    super(detail);
    this.status = status;
  }
}

/** One request to the API; an error answer becomes an ApiError carrying the server's detail. */
async function api(path, { method = "GET", params = {}, body } = {}) {
  const url = new URL(path.replace(/^\//, ""), API_ROOT);
  for (const [name, value] of Object.entries(params)) {
    if (value !== undefined && value !== null && value !== "") url.searchParams.set(name, value);
  }
  const headers = { Authorization: `Bearer ${sessionStorage.getItem(STORED.key)}` };
  const tenant = sessionStorage.getItem(STORED.tenant);
  if (tenant) headers["X-Agent-Memory-Tenant"] = tenant;
  if (body !== undefined) headers["Content-Type"] = "application/json";
  let response;
  try {
    response = await fetch(url, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  } catch (error) {
    throw new ApiError(0, `The server did not answer: ${error.message}`);
  }
  const text = await response.text();
  let data = null;
  try {
    data = text ? JSON.parse(text) : null;
  } catch {
    data = { detail: text };
  }
  if (!response.ok) throw new ApiError(response.status, data?.detail ?? `HTTP ${response.status}`);
  return data;
}

/** An element: attributes (on* are listeners, text is textContent) and children (strings become text). */
function h(tag, attributes = {}, ...children) {
  return build(document.createElement(tag), attributes, children);
}

/** The same for SVG elements. */
function svg(tag, attributes = {}, ...children) {
  return build(document.createElementNS("http://www.w3.org/2000/svg", tag), attributes, children);
}

/** The children that are there: a part left out is undefined, null or false (as `condition && part` gives). */
const present = (children) =>
  children.flat().filter((child) => child !== undefined && child !== null && child !== false);

function build(element, attributes, children) {
  for (const [name, value] of Object.entries(attributes)) {
    if (value === undefined || value === null || value === false) continue;
    if (name.startsWith("on")) element.addEventListener(name.slice(2), value);
    else if (name === "text") element.textContent = value;
    else element.setAttribute(name, value === true ? "" : value);
  }
  element.append(...present(children));
  return element;
}

/** A timestamp as the reader's local time, with the exact value in datetime and title. */
function when(iso) {
  if (!iso) return h("span", { class: "muted" }, "–");
  const shown = new Date(iso).toLocaleString(undefined, { dateStyle: "medium", timeStyle: "medium" });
  return h("time", { datetime: iso, title: iso }, shown);
}

const fixed = (number, digits = 3) => (number === null || number === undefined ? "–" : number.toFixed(digits));
const signed = (number) => (number > 0 ? "+" : "") + fixed(number);
const agent = () => byId("agent").value;
const agentParams = (params = {}) => ({ ...params, agent_id: agent() || null });
const mayWrite = () => Boolean(state.whoami?.may_write);
const capital = (text) => text[0].toUpperCase() + text.slice(1);

function announce(text) {
  byId("status").textContent = text;
}

function showError(error) {
  byId("alert").textContent = error.message;
}

function clearError() {
  byId("alert").textContent = "";
}

/** Runs some loading: says so while it runs and what it found, shows the API's refusal in the alert region. */
async function busy(label, work) {
  clearError();
  announce(`Loading ${label}…`);
  try {
    announce((await work()) ?? "");
  } catch (error) {
    announce("");
    if (error.status === 401) {
      forgetKey(); // revoked or expired while the page was open
      showSignIn();
    }
    showError(error);
  }
}

const plural = (count, one, many = `${one}s`) => `${count} ${count === 1 ? one : many}`;

function fill(element, ...children) {
  element.replaceChildren(...present(children));
}

function emptyItem(text) {
  return h("li", { class: "empty" }, text);
}

/** Marks one button of a list as the chosen one. */
function markChosen(list, chosen) {
  for (const button of list.querySelectorAll("[aria-current]")) button.removeAttribute("aria-current");
  chosen?.setAttribute("aria-current", "true");
}

// Signing in and out.

function forgetKey() {
  state.whoami = null;
  sessionStorage.removeItem(STORED.key);
  sessionStorage.removeItem(STORED.tenant);
  sessionStorage.removeItem(STORED.agent);
}

function showSignIn() {
  byId("account").hidden = true;
  byId("views").hidden = true;
  for (const view of VIEWS) byId(`view-${view}`).hidden = true;
  byId("sign-in").hidden = false;
  byId("key").focus();
}

async function signIn(event) {
  event.preventDefault();
  sessionStorage.setItem(STORED.key, byId("key").value.trim());
  sessionStorage.setItem(STORED.tenant, byId("tenant").value.trim());
  byId("key").value = "";
  await start();
}

function signOut() {
  forgetKey();
  location.replace(location.pathname); // a fresh page: nothing read with the key stays on screen
}

/** Asks who the stored key is; shows the views if the API accepts it, the sign-in form otherwise. */
async function start() {
  if (!sessionStorage.getItem(STORED.key)) return showSignIn();
  clearError();
  try {
    state.whoami = await api("/v1/whoami");
  } catch (error) {
    forgetKey();
    showSignIn();
    showError(error);
    return;
  }
  const { tenant_id: tenant, role, may_write: writes } = state.whoami;
  byId("who").textContent = `${tenant ?? "no tenant"} · ${role} · ${writes ? "read and write" : "read only"}`;
  byId("sign-in").hidden = true;
  byId("account").hidden = false;
  byId("views").hidden = false;
  await busy("agents", loadAgents);
  showView(location.hash.slice(1));
  document.querySelector("[data-view][aria-current]")?.focus(); // the sign-in form, focused before, is gone
}

// The agent picker.

async function loadAgents() {
  const agents = await api("/v1/stats");
  const picker = byId("agent");
  const options = agents.map((row) =>
    h("option", { value: row.agent_id }, `${row.agent_id} (${plural(row.sessions, "session")})`));
  picker.replaceChildren(h("option", { value: "" }, "All agents"), ...options);
  const kept = sessionStorage.getItem(STORED.agent);
  if (agents.some((row) => row.agent_id === kept)) picker.value = kept;
  return plural(agents.length, "agent");
}

function chooseAgent() {
  sessionStorage.setItem(STORED.agent, agent());
  state.loaded.clear();
  for (const [id, nodes] of PLACEHOLDERS) byId(id).replaceChildren(...nodes.map((node) => node.cloneNode(true)));
  showView(state.view);
}

// Switching views: each view loads once, and again when the agent changes or its form is sent.

const LOADERS = {
  sessions: () => loadSessions(false),
  recall: () => (state.recallQuery ? loadRecall() : "Type a query to recall."),
  memories: () => loadMemories(),
  entities: () => loadEntities(),
  queue: () => loadQueue(),
};

function showView(name) {
  if (!state.whoami) return;
  state.view = VIEWS.includes(name) ? name : "sessions";
  for (const view of VIEWS) byId(`view-${view}`).hidden = view !== state.view;
  for (const button of document.querySelectorAll("[data-view]")) {
    if (button.dataset.view === state.view) button.setAttribute("aria-current", "page");
    else button.removeAttribute("aria-current");
  }
  if (location.hash !== `#${state.view}`) history.replaceState(null, "", `#${state.view}`);
  announce("");
  if (!state.loaded.has(state.view)) {
    state.loaded.add(state.view);
    busy(state.view, LOADERS[state.view]);
  }
}

// Sessions and their transcripts.

async function loadSessions(older) {
  const search = byId("sessions-search").value.trim();
  const params = agentParams({ search, k: SESSIONS_PAGE, before: older ? state.sessionsBefore : null });
  const sessions = await api("/v1/sessions", { params });
  renderSessions(sessions, older);
  return plural(sessions.length, older ? "older session" : "session");
}

function renderSessions(sessions, append) {
  const list = byId("sessions-list");
  if (!append) list.replaceChildren();
  list.append(...sessions.map(sessionItem));
  if (!list.children.length) list.append(emptyItem("No sessions."));
  state.sessionsBefore = sessions.at(-1)?.updated_at ?? state.sessionsBefore;
  byId("sessions-older").hidden = sessions.length < SESSIONS_PAGE;
}

function sessionItem(session) {
  const open = (event) => {
    markChosen(byId("sessions-list"), event.currentTarget);
    busy("the session", () => loadTranscript(session.session_id, session.agent_id, session.summary));
  };
  return h("li", {},
    h("button", { type: "button", class: "item", onclick: open },
      h("span", { class: "item-title mono" }, session.session_id),
      h("span", { class: "item-meta" },
        `${session.agent_id} · ${plural(session.turns, "turn")} · ${session.tier} · `, when(session.updated_at)),
      session.summary && h("span", { class: "item-text" }, session.summary)));
}

/** A session's turns; summary: the one the session list showed (the export has only a caller's summary). */
async function loadTranscript(sessionId, agentId, summary = null) {
  const found = await api(`/v1/sessions/${encodeURIComponent(sessionId)}`, { params: { agent_id: agentId } });
  const session = Array.isArray(found) ? found[0] : found; // one per agent when no agent was named
  renderTranscript({ ...session, summary: session.summary ?? summary });
  return `Session ${session.session_id}: ${plural(session.messages.length, "turn")}`;
}

function renderTranscript(session) {
  fill(byId("transcript"),
    h("h3", { class: "mono" }, session.session_id),
    h("p", { class: "item-meta" }, `${session.agent_id} · started `, when(session.started_at),
      ` · ${plural(session.messages.length, "turn")}`),
    session.summary && h("p", { class: "summary" }, h("strong", {}, "Summary "), session.summary),
    h("ol", { class: "turns", "aria-label": "Turns, oldest first" }, session.messages.map(turnItem)));
}

function turnItem(message) {
  const role = ["user", "assistant", "system", "tool"].includes(message.role) ? message.role : "other";
  const content = typeof message.content === "string" ? message.content : JSON.stringify(message.content, null, 2);
  return h("li", { class: `turn turn-${role}` },
    h("div", { class: "turn-head" },
      h("span", { class: "role" }, message.name ? `${message.name} (${message.role})` : message.role),
      when(message.created_at)),
    h("p", { class: "turn-content" }, content));
}

// Recall, with each signal's contribution to each hit.

async function loadRecall() {
  const explain = byId("recall-explain").checked;
  const body = { query: state.recallQuery, k: Number(byId("recall-k").value) || 10, explain };
  if (agent()) body.agent_id = agent();
  const answer = await api("/v1/recall", { method: "POST", body });
  const hits = explain ? answer.candidates : answer.hits;
  renderRecall(hits);
  return `${plural(hits.length, "hit")} for “${state.recallQuery}”`;
}

/** The signals that moved a hit, largest first (a zero contribution moved nothing and is left out). */
function signalsOf(hit) {
  return Object.entries(hit.components?.signals ?? {})
    .map(([name, signal]) => ({ name, ...signal }))
    .filter((signal) => signal.contribution)
    .sort((a, b) => Math.abs(b.contribution) - Math.abs(a.contribution));
}

function renderRecall(hits) {
  const sizes = hits.flatMap((hit) => signalsOf(hit).map((signal) => Math.abs(signal.contribution)));
  const scale = Math.max(Number.EPSILON, ...sizes); // one scale for every hit shown, so bars compare across hits
  const list = byId("recall-hits");
  list.replaceChildren(...hits.map((hit, index) => hitItem(hit, index, scale)));
  if (!hits.length) list.append(emptyItem("Nothing recalled."));
}

function hitItem(hit, index, scale) {
  const components = hit.components ?? {};
  return h("li", { class: "hit panel" },
    h("div", { class: "hit-head" },
      h("span", { class: "rank" }, `#${hit.rank ?? index + 1}`),
      h("span", { class: "badge" }, hit.kind),
      h("span", { class: "score" }, `score ${fixed(hit.score)}`),
      h("span", { class: "item-meta" }, "session ",
        h("button", { type: "button", class: "link mono", onclick: () => openSessionOf(hit) }, hit.session_id),
        hit.speaker && ` · ${hit.speaker}`, hit.memory_id && ` · memory #${hit.memory_id}`)),
    h("p", { class: "hit-content" }, hit.content),
    signalBars(signalsOf(hit), scale),
    h("p", { class: "item-meta" }, `route ${components.route ?? "–"} · fusion ${components.fusion ?? "–"}`),
    mayWrite() && feedbackButtons(hit));
}

function signalBars(signals, scale) {
  if (!signals.length) return h("p", { class: "muted" }, "No signal contributed.");
  return h("ul", { class: "signals", "aria-label": "Contribution of each signal to the score" },
    signals.map((signal) => {
      const sign = signal.contribution > 0 ? "positive" : "negative";
      const bar = h("span", { class: "signal-bar" });
      bar.style.width = `${(Math.abs(signal.contribution) / scale) * 50}%`;
      return h("li", { class: `signal ${sign}`, "data-signal": signal.name,
        title: `value ${fixed(signal.value)} × weight ${signal.weight}` },
        h("span", { class: "signal-name" }, signal.name),
        h("span", { class: "signal-track", "aria-hidden": "true" }, bar),
        h("span", { class: "signal-value" }, signed(signal.contribution)));
    }));
}

function feedbackButtons(hit) {
  const target = hit.memory_id ? { memory_id: hit.memory_id } : { turn_id: hit.turn_id };
  const send = (verdict) => () => busy("feedback", async () => {
    const body = { verdict, query: state.recallQuery, ...target };
    const given = await api("/v1/feedback", { method: "POST", body });
    return `Feedback recorded: ${given.verdict} (${given.effect})`;
  });
  return h("div", { class: "actions", role: "group", "aria-label": "Feedback on this hit" },
    h("button", { type: "button", class: "write", onclick: send("helpful") }, "Useful"),
    h("button", { type: "button", class: "write", onclick: send("unhelpful") }, "Not useful"));
}

function openSessionOf(hit) {
  showView("sessions");
  busy("the session", () => loadTranscript(hit.session_id, agent() || null));
}

// Memories and their history.

async function loadMemories() {
  const asOf = byId("memories-as-of").value;
  const params = agentParams({
    search: byId("memories-search").value.trim(), kind: byId("memories-kind").value,
    status: byId("memories-status").value, as_of: asOf ? new Date(asOf).toISOString() : null, k: 100,
  });
  const memories = await api("/v1/memories", { params });
  const list = byId("memories-list");
  list.replaceChildren(...memories.map(memoryItem));
  if (!memories.length) list.append(emptyItem("No memories."));
  return plural(memories.length, "memory", "memories");
}

function memoryItem(memory) {
  const open = (event) => {
    markChosen(byId("memories-list"), event.currentTarget);
    busy("its history", () => loadHistory(memory.memory_id));
  };
  return h("li", {},
    h("button", { type: "button", class: "item", onclick: open },
      h("span", { class: "item-title" }, memory.content),
      h("span", { class: "item-meta" }, h("span", { class: "badge" }, memory.kind), " ", statusBadge(memory.status),
        memory.key && ` · ${memory.key}`, ` · importance ${fixed(memory.importance, 2)} · since `,
        when(memory.valid_from))));
}

function statusBadge(status) {
  return h("span", { class: `badge status status-${status}` }, status);
}

async function loadHistory(memoryId) {
  const versions = await api(`/v1/memories/${memoryId}/history`);
  renderHistory(versions, memoryId);
  return `${plural(versions.length, "version")} of memory #${memoryId}`;
}

function renderHistory(versions, chosenId) {
  const chosen = versions.find((version) => version.memory_id === chosenId) ?? versions.at(-1);
  fill(byId("history"),
    h("h3", {}, chosen?.key ? `History of ${chosen.key}` : `History of memory #${chosenId}`),
    h("p", { class: "item-meta" }, "Every version of the claim, oldest first."),
    h("ol", { class: "versions", "aria-label": "Versions, oldest first" },
      versions.map((version) => versionItem(version, version.memory_id === chosenId))));
}

function versionItem(version, chosen) {
  const open = (id) => () => busy("its history", () => loadHistory(id));
  const link = (label, id) => h("button", { type: "button", class: "link", onclick: open(id) }, `${label} #${id}`);
  const until = version.valid_to ? when(version.valid_to) : "now";
  return h("li", { class: `version status-${version.status}${chosen ? " chosen" : ""}` },
    h("div", { class: "version-head" },
      h("span", { class: "mono" }, `#${version.memory_id}`), statusBadge(version.status),
      h("span", { class: "item-meta" }, when(version.valid_from), " → ", until)),
    h("p", { class: "version-content" }, version.content),
    h("p", { class: "item-meta" }, `${version.kind} · recorded by ${version.recorded_by} · `,
      version.supersedes && link("supersedes", version.supersedes), version.supersedes && " ",
      version.superseded_by && link("superseded by", version.superseded_by)),
    mayWrite() && moveButtons(version));
}

function moveButtons(memory) {
  const moves = MOVES[memory.status] ?? [];
  if (!moves.length) return null;
  return h("div", { class: "actions" }, moves.map((move) =>
    h("button", { type: "button", class: "write", onclick: () => moveMemory(memory, move) }, capital(move))));
}

function moveMemory(memory, move) {
  if (!window.confirm(`${capital(move)} memory #${memory.memory_id}?\n\n${memory.content}`)) return;
  busy(move, async () => {
    await api(`/v1/memories/${memory.memory_id}/${move}`, { method: "POST" });
    await loadMemories();
    await loadHistory(memory.memory_id);
    return `Memory #${memory.memory_id}: ${move} done`;
  });
}

// Entities and the graph around one.

async function loadEntities() {
  const params = agentParams({ search: byId("entities-search").value.trim(), k: 50 });
  const entities = await api("/v1/entities", { params });
  const list = byId("entities-list");
  list.replaceChildren(...entities.map(entityItem));
  if (!entities.length) list.append(emptyItem("No entities."));
  return plural(entities.length, "entity", "entities");
}

function entityItem(entity) {
  const open = (event) => {
    markChosen(byId("entities-list"), event.currentTarget);
    busy("its neighbors", () => loadGraph(entity.name, entity.agent_id));
  };
  return h("li", {},
    h("button", { type: "button", class: "item", onclick: open },
      h("span", { class: "item-title" }, entity.name),
      h("span", { class: "item-meta" }, h("span", { class: "badge" }, entity.type),
        ` · ${plural(entity.mentions, "mention")} · ${plural(entity.sessions, "session")}`,
        !agent() && ` · ${entity.agent_id}`)));
}

async function loadGraph(name, agentId) {
  const where = `/v1/entities/${encodeURIComponent(name)}`;
  const [neighbors, states] = await Promise.all([
    api(`${where}/neighbors`, { params: { depth: 1, k: 20, agent_id: agentId } }),
    api(`${where}/state`, { params: { agent_id: agentId } }),
  ]);
  renderGraph(name, agentId, neighbors, states);
  return `${name}: ${plural(neighbors.length, "neighbor")}`;
}

function renderGraph(name, agentId, neighbors, states) {
  fill(byId("graph"),
    h("h3", {}, name, h("span", { class: "item-meta" }, ` · ${agentId}`)),
    neighbors.length ? drawGraph(name, neighbors) : h("p", { class: "muted" }, "Nothing is mentioned with it yet."),
    neighbors.length && graphLegend(),
    neighbors.length && neighborTable(neighbors),
    states.length && stateTable(states));
}

/** The entity in the middle, its neighbors on a circle; an edge is as thick as the turns that mention both. */
function drawGraph(name, neighbors) {
  const [width, height, radius] = [640, 380, 135];
  const [cx, cy] = [width / 2, height / 2];
  const most = Math.max(...neighbors.map((neighbor) => neighbor.turns));
  const placed = neighbors.map((neighbor, index) => {
    const angle = -Math.PI / 2 + (2 * Math.PI * index) / neighbors.length;
    return { ...neighbor, angle, x: cx + radius * Math.cos(angle), y: cy + radius * Math.sin(angle) };
  });
  return svg("svg", { class: "graph", viewBox: `0 0 ${width} ${height}`, role: "group",
    "aria-label": `${name} and the entities mentioned with it` },
    placed.map((node) => svg("line", { class: "edge", x1: cx, y1: cy, x2: node.x, y2: node.y,
      "stroke-width": (1.5 + (6 * node.turns) / most).toFixed(1) },
      svg("title", {}, `${node.turns} turns mention ${name} and ${node.name}`))),
    centerNode(name, cx, cy),
    placed.map((node) => neighborNode(node, radius + 24, [cx, cy])));
}

/** The entity in the middle: a pill about as wide as its name. */
function centerNode(name, cx, cy) {
  const width = Math.max(72, 9 * name.length + 28);
  return svg("g", { class: "node center" },
    svg("rect", { x: cx - width / 2, y: cy - 20, width, height: 40, rx: 20 }),
    svg("text", { x: cx, y: cy, "dominant-baseline": "central", "text-anchor": "middle" }, name));
}

function neighborNode(node, labelRadius, [cx, cy]) {
  const [cos, sin] = [Math.cos(node.angle), Math.sin(node.angle)];
  const anchor = cos > 0.3 ? "start" : cos < -0.3 ? "end" : "middle";
  const recenter = () => busy("its neighbors", () => loadGraph(node.name, node.agent_id));
  const keys = (event) => {
    if (event.key !== "Enter" && event.key !== " ") return;
    event.preventDefault();
    recenter();
  };
  return svg("g", { class: `node neighbor type-${node.type}`, tabindex: 0, role: "button", "data-entity": node.name,
    "aria-label": `${node.name}, ${node.type}, ${node.turns} turns together: show its neighbors`,
    onclick: recenter, onkeydown: keys },
    svg("circle", { cx: node.x, cy: node.y, r: 14 }),
    svg("text", { x: cx + labelRadius * cos, y: cy + labelRadius * sin + 4 * (1 + sin), "text-anchor": anchor },
      node.name));
}

function graphLegend() {
  const swatch = (type, label) => h("span", { class: `swatch type-${type}` }, label);
  return h("p", { class: "legend item-meta" },
    swatch("person", "person"), swatch("project", "project"), swatch("other", "tool, place, other"),
    "· a line is as thick as the turns that mention both · choose a node to center it");
}

function neighborTable(neighbors) {
  return table("Mentioned with it", [
    ["Entity", (row) => h("button", { type: "button", class: "link",
      onclick: () => busy("its neighbors", () => loadGraph(row.name, row.agent_id)) }, row.name)],
    ["Type", (row) => row.type],
    ["Turns together", (row) => String(row.turns), "number"],
    ["Path", (row) => row.path.join(" → ")],
  ], neighbors);
}

function stateTable(states) {
  return table("What holds about it now", [
    ["Attribute", (row) => row.attribute],
    ["Value", (row) => (typeof row.value === "string" ? row.value : JSON.stringify(row.value))],
    ["Since", (row) => when(row.valid_from)],
  ], states);
}

// Queue and metrics.

async function loadQueue() {
  const [agents, metrics] = await Promise.all([api("/v1/stats", { params: agentParams() }), api("/v1/metrics")]);
  const total = (field) => agents.reduce((sum, row) => sum + row[field], 0);
  const totals = [["Sessions", "sessions"], ["Turns", "turns"], ["Embedded chunks", "embedded_chunks"],
    ["Memories", "remembered"], ["Pending jobs", "pending_jobs"], ["Dead jobs", "dead_jobs"]];
  byId("queue-totals").replaceChildren(...totals.map(([label, field]) =>
    h("div", { class: `total${field === "dead_jobs" && total(field) ? " warn" : ""}` },
      h("span", { class: "total-value" }, String(total(field))), h("span", { class: "total-label" }, label))));
  const count = (field) => [field.replaceAll("_", " "), (row) => String(row[field]), "number"];
  byId("queue-agents").replaceChildren(table("Each agent's data and queue", [
    ["Agent", (row) => row.agent_id], count("sessions"), count("turns"), count("chunks"), count("embedded_chunks"),
    count("summaries"), count("remembered"), count("feedback"), count("pending_jobs"), count("dead_jobs"),
    ["last turn", (row) => when(row.last_turn_at)],
  ], agents));
  byId("queue-metrics").replaceChildren(table("The tenant's counters and gauges", [
    ["Metric", (row) => row.metric], ["Label", (row) => row.label || "–"], ["Kind", (row) => row.kind],
    ["Value", (row) => Number(row.value).toLocaleString(), "number"],
  ], metrics));
  return `${plural(agents.length, "agent")}, ${plural(metrics.length, "metric")}`;
}

/** A table: columns are [heading, cell of a row, class]. */
function table(caption, columns, rows) {
  return h("table", {},
    h("caption", {}, caption),
    h("thead", {}, h("tr", {}, columns.map(([heading, , kind]) => h("th", { scope: "col", class: kind }, heading)))),
    h("tbody", {}, rows.map((row) =>
      h("tr", {}, columns.map(([, cell, kind]) => h("td", { class: kind }, cell(row)))))));
}

// Wiring.

const PLACEHOLDERS = new Map(["transcript", "history", "graph"].map((id) => [id, [...byId(id).childNodes]]));

function onSubmit(id, label, work) {
  byId(id).addEventListener("submit", (event) => {
    event.preventDefault();
    busy(label, work);
  });
}

function wire() {
  byId("sign-in-form").addEventListener("submit", signIn);
  byId("sign-out").addEventListener("click", signOut);
  byId("agent").addEventListener("change", chooseAgent);
  for (const button of document.querySelectorAll("[data-view]")) {
    button.addEventListener("click", () => showView(button.dataset.view));
  }
  window.addEventListener("hashchange", () => showView(location.hash.slice(1)));
  onSubmit("sessions-form", "sessions", () => loadSessions(false));
  byId("sessions-older").addEventListener("click", () => busy("older sessions", () => loadSessions(true)));
  onSubmit("recall-form", "recall", () => {
    state.recallQuery = byId("recall-query").value.trim();
    return loadRecall();
  });
  onSubmit("memories-form", "memories", loadMemories);
  onSubmit("entities-form", "entities", loadEntities);
  byId("queue-refresh").addEventListener("click", () => busy("queue and metrics", loadQueue));
}

wire();
start();
