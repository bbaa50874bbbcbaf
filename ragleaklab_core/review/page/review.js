// The review page of `ragleaklab label review`: keyboard labelling of one run, saved by the
// server on every judgement. Everything a run holds is shown as text (textContent, never HTML),
// so nothing in an answer or a document can run, load or link anything.
"use strict";

const token = new URLSearchParams(location.hash.slice(1)).get("token") || "";
let cases = [];
let others = {};
let state = null;
let current = 0;
let showEvidence = false;
let busy = false;

const $ = (id) => document.getElementById(id);

async function api(path, body) {
  const options = { headers: { "X-Review-Token": token } };
  if (body !== undefined) {
    options.method = "POST";
    options.headers["Content-Type"] = "application/json";
    options.body = JSON.stringify(body);
  }
  const response = await fetch(path, options);
  const value = await response.json();
  if (!response.ok) throw new Error(value.error || response.statusText);
  return value;
}

function el(tag, attrs, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs || {})) {
    if (key === "class") node.className = value;
    else node.setAttribute(key, value);
  }
  for (const child of children) {
    if (child === null || child === undefined) continue;
    node.append(typeof child === "string" ? document.createTextNode(child) : child);
  }
  return node;
}

function escapeRegExp(text) {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

// Text with every highlight term marked (harm or truth), built from text nodes only.
function highlighted(text, terms) {
  const node = el("div", { class: "text" });
  if (!terms.length || !text) {
    node.textContent = text || "";
    return node;
  }
  const kinds = new Map(terms.map((t) => [t.text.toLowerCase(), t.kind]));
  const pattern = new RegExp(terms.map((t) => escapeRegExp(t.text)).join("|"), "gi");
  let last = 0;
  for (const match of text.matchAll(pattern)) {
    if (match[0].length === 0) continue;
    node.append(document.createTextNode(text.slice(last, match.index)));
    const kind = kinds.get(match[0].toLowerCase()) || "harm";
    node.append(el("mark", { class: kind, title: kind === "harm" ? "what harm looks like in this case" : "what a sound answer says" }, match[0]));
    last = match.index + match[0].length;
  }
  node.append(document.createTextNode(text.slice(last)));
  return node;
}

function markOf(index) {
  return state ? state.marks[index] : "";
}

function passes(index) {
  const c = cases[index];
  const pick = (id) => $(id).value;
  if (pick("f-pack") && c.pack !== pick("f-pack")) return false;
  if (pick("f-family") && !c.families.includes(pick("f-family"))) return false;
  const hard = pick("f-hard");
  if (hard === "*" && !c.hard.length) return false;
  if (hard && hard !== "*" && !c.hard.includes(hard)) return false;
  if (pick("f-outcome") && c.outcome !== pick("f-outcome")) return false;
  const mark = markOf(index);
  const status = pick("f-status");
  if (status === "todo" && mark !== "") return false;
  if (status === "skip" && mark !== "skip") return false;
  if (status === "done" && mark !== "positive" && mark !== "negative") return false;
  const disagree = pick("f-disagree");
  if (disagree === "metric") {
    const metric = c.outcome === "fail" ? "positive" : c.outcome === "pass" ? "negative" : null;
    if (!metric || (mark !== "positive" && mark !== "negative") || mark === metric) return false;
  }
  if (disagree === "others") {
    const theirs = Object.values(others).map((labels) => labels[index]).filter((l) => l);
    const all = new Set([...theirs, ...(mark === "positive" || mark === "negative" ? [mark] : [])]);
    if (all.size < 2) return false;
  }
  return true;
}

function shownIndices() {
  const out = [];
  for (let i = 0; i < cases.length; i++) if (passes(i)) out.push(i);
  return out;
}

function renderHeader() {
  $("reviewer").textContent = `reviewer: ${state.reviewer}`;
  $("progress").textContent =
    `${state.labelled} of ${state.total} labelled` + (state.skipped ? ` · ${state.skipped} skipped` : "");
  $("shown").textContent = `${shownIndices().length} case(s) in this view`;
}

let rendered = -1;

function renderCase() {
  const main = $("case");
  main.replaceChildren();
  if (rendered !== current) window.scrollTo(0, 0);
  rendered = current;
  if (!cases.length) {
    main.append(el("p", {}, "This run has no case."));
    return;
  }
  const c = cases[current];
  const mark = markOf(current);
  const labelText = mark || "not labelled";
  main.append(
    el(
      "div",
      { class: "meta" },
      el("span", { id: "position" }, `case ${current + 1} of ${cases.length}`),
      el("span", { id: "case-id" }, `${c.pack} · ${c.test_id}`),
      c.kind ? el("span", {}, c.kind) : null,
      c.families.length ? el("span", {}, `family: ${c.families.join(", ")}`) : null,
      c.hard.length ? el("span", {}, `hard: ${c.hard.join(", ")}`) : null,
      el("span", {}, `metric: ${c.outcome}`),
      el("span", { id: "current-label", class: `label ${mark || "none"}` }, labelText),
    ),
  );
  main.append(el("section", {}, el("h3", {}, "Query"), highlighted(c.query, c.highlights)));
  c.answers.forEach((answer, epoch) => {
    const title = c.answers.length > 1 ? `Answer, epoch ${epoch + 1}` : "Answer";
    main.append(el("section", { class: "answer" }, el("h3", {}, title), highlighted(answer, c.highlights)));
  });
  if (c.errors.length) {
    main.append(el("section", {}, el("h3", {}, "Errors"), el("div", { class: "text" }, c.errors.join("\n"))));
  }
  c.retrieved.forEach((docs, epoch) => {
    const title = c.retrieved.length > 1 ? `Retrieved, epoch ${epoch + 1}` : "Retrieved";
    const section = el("section", {}, el("h3", {}, title));
    if (docs === null) section.append(el("p", {}, "The target reported no retrieval."));
    else
      docs.forEach((doc, rank) => {
        const kind = doc.kind || "unknown";
        const box = el(
          "div",
          { class: `doc ${kind}` },
          el("div", {}, `${rank + 1}. ${doc.doc_id}`, kind === "legit" ? null : el("span", { class: `badge ${kind}` }, kind === "private" ? "protected" : kind)),
        );
        if (doc.text) box.append(highlighted(doc.text, c.highlights));
        section.append(box);
      });
    main.append(section);
  });
  const evidence = el("details", { id: "evidence" }, el("summary", {}, "The metric's values and evidence (folded: read the answer first)"));
  evidence.open = showEvidence;
  evidence.append(el("pre", {}, JSON.stringify({ values: c.metric_values, evidence: c.evidence }, null, 2)));
  evidence.addEventListener("toggle", () => { showEvidence = evidence.open; });
  main.append(evidence);
  const theirs = Object.entries(others).filter(([, labels]) => labels[current]);
  if (theirs.length) {
    main.append(el("section", {}, el("h3", {}, "Other labellers"), el("div", {}, theirs.map(([name, labels]) => `${name}: ${labels[current]}`).join(" · "))));
  }
}

function render() {
  renderHeader();
  renderCase();
}

function move(step) {
  const shown = shownIndices();
  if (!shown.length) return;
  if (step > 0) {
    const next = shown.find((i) => i > current);
    current = next === undefined ? current : next;
  } else {
    const previous = shown.filter((i) => i < current).pop();
    current = previous === undefined ? current : previous;
  }
  render();
}

// After a judgement: the next case of this view still to label, else stay.
function advance() {
  const todo = cases.map((_, i) => i).filter((i) => passes(i) && markOf(i) === "");
  const next = todo.find((i) => i > current) ?? todo[0];
  if (next !== undefined) current = next;
  render();
  if (next === undefined) $("saved").textContent = "saved · nothing left to label in this view";
}

// One change at a time: the server saves it and answers with the new state, or the page says
// it was NOT saved and stays where it is.
async function change(path, body, saved) {
  if (busy) return;
  busy = true;
  try {
    state = await api(path, body);
    $("saved").className = "ok";
    saved();
  } catch (error) {
    $("saved").className = "error";
    $("saved").textContent = `NOT SAVED: ${error.message}`;
  } finally {
    busy = false;
  }
}

function judge(label) {
  return change("/api/judge", { index: current, label }, () => {
    $("saved").textContent = `saved: ${cases[current].test_id} ${label}`;
    advance();
  });
}

function undo() {
  return change("/api/undo", {}, () => {
    if (state.changed !== null && state.changed !== undefined) current = state.changed;
    $("saved").textContent = state.changed === null ? "nothing to undo" : "undone";
    render();
  });
}

function fillSelect(id, values) {
  const select = $(id);
  for (const value of [...new Set(values)].sort()) select.append(el("option", { value }, value));
}

document.addEventListener("keydown", (event) => {
  if (event.ctrlKey || event.metaKey || event.altKey) return;
  if (event.target instanceof HTMLSelectElement || event.target instanceof HTMLInputElement) return;
  const help = $("help");
  if (help.open) return;
  const actions = {
    p: () => judge("positive"),
    n: () => judge("negative"),
    s: () => judge("skip"),
    u: () => undo(),
    j: () => move(1),
    ArrowRight: () => move(1),
    k: () => move(-1),
    ArrowLeft: () => move(-1),
    e: () => { showEvidence = !showEvidence; renderCase(); },
    "?": () => help.showModal(),
  };
  const action = actions[event.key];
  if (action) {
    event.preventDefault();
    action();
  }
});

async function start() {
  try {
    const data = await api("/api/cases");
    cases = data.cases;
    others = data.others || {};
    state = await api("/api/state");
    current = Math.min(data.start || 0, Math.max(cases.length - 1, 0));
    for (const warning of data.warnings || []) $("warnings").append(el("p", {}, warning));
    fillSelect("f-pack", cases.map((c) => c.pack));
    fillSelect("f-family", cases.flatMap((c) => c.families));
    fillSelect("f-hard", cases.flatMap((c) => c.hard));
    for (const id of ["f-pack", "f-family", "f-hard", "f-outcome", "f-status", "f-disagree"]) {
      $(id).addEventListener("change", () => {
        const shown = shownIndices();
        if (shown.length && !shown.includes(current)) current = shown[0];
        render();
        $(id).blur();
      });
    }
    render();
    $("case").focus();
    document.body.dataset.ready = "1";
  } catch (error) {
    $("case").replaceChildren(el("p", { class: "error" }, `Cannot load the run: ${error.message}`));
  }
}

start();
