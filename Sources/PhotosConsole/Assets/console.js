// photosd console: confirmations, live updates (server-sent events) and the verify's progress.
// No framework; text is set with textContent only, never parsed as HTML.
"use strict";

document.addEventListener("submit", (event) => {
  const question = event.target.dataset.confirm;
  if (question && !window.confirm(question)) event.preventDefault();
});

function cell(text) {
  const td = document.createElement("td");
  td.textContent = text == null ? "" : String(text);
  return td;
}

// Sessions: a new or changed session appears at the top without a reload (when it matches
// the filters shown).
function followSessions(table) {
  const body = table.tBodies[0];
  const filter = { user: table.dataset.filterUser, top: table.dataset.filterScreen, layout: table.dataset.filterLayout };
  const source = new EventSource(table.dataset.live);
  source.addEventListener("session", (message) => {
    const s = JSON.parse(message.data);
    if ((filter.user && s.username !== filter.user) || (filter.top && s.top !== filter.top) || (filter.layout && s.layout !== filter.layout)) return;
    const old = body.querySelector(`tr[data-session-id="${CSS.escape(s.id)}"]`);
    if (old) old.remove();
    const row = document.createElement("tr");
    row.dataset.sessionId = s.id;
    row.className = "fresh";
    const link = document.createElement("a");
    link.href = "/console/sessions/" + encodeURIComponent(s.id);
    link.textContent = s.short;
    const first = document.createElement("td");
    first.appendChild(link);
    row.append(first, cell(s.username), cell(s.top), cell(s.layout), cell(s.version), cell(s.createdAt), cell(s.updatedAt));
    body.prepend(row);
  });
}

// A session's timeline: each new step is added to the last group (or a new one for an action).
function followTrail(list) {
  const source = new EventSource(list.dataset.live);
  source.addEventListener("step", (message) => {
    const r = JSON.parse(message.data);
    let group = list.lastElementChild;
    if (!group || r.startsGroup) {
      group = document.createElement("li");
      group.className = "group";
      const head = document.createElement("div");
      head.className = "group-head";
      head.textContent = r.title + " ";
      const actor = document.createElement("span");
      actor.className = "actor";
      actor.textContent = r.actor;
      head.appendChild(actor);
      const steps = document.createElement("ol");
      steps.className = "steps";
      group.append(head, steps);
      list.appendChild(group);
    }
    const item = document.createElement("li");
    item.className = "step";
    item.dataset.seq = r.seq;
    const link = document.createElement("a");
    link.href = "?at=" + r.seq;
    link.textContent = "#" + r.seq;
    const name = document.createElement("span");
    name.className = "name";
    name.textContent = r.step;
    const detail = document.createElement("span");
    detail.className = "detail";
    detail.textContent = [r.coordinator, r.screen, r.detail].filter(Boolean).join(" ");
    const time = document.createElement("time");
    time.textContent = r.at;
    item.append(link, " ", name, " ", detail, " ", time);
    group.querySelector(".steps").appendChild(item);
  });
}

// Audit: the background verify's progress, until it ends.
function followVerify(section) {
  const state = section.querySelector(".verify-state");
  async function poll() {
    try {
      const response = await fetch(section.dataset.status, { credentials: "same-origin" });
      if (!response.ok) return;
      const status = await response.json();
      state.textContent = status.text;
      if (status.outcome) state.dataset.verify = status.outcome;
      else delete state.dataset.verify;
      if (status.running) window.setTimeout(poll, 500);
    } catch (error) {
      window.setTimeout(poll, 2000);
    }
  }
  poll();
}

document.addEventListener("DOMContentLoaded", () => {
  const sessions = document.querySelector("table.sessions[data-live]");
  if (sessions) followSessions(sessions);
  const trail = document.querySelector("ol.groups[data-live]");
  if (trail && trail.dataset.live) followTrail(trail);
  const verify = document.querySelector("section.verify[data-status]");
  if (verify) followVerify(verify);
});
