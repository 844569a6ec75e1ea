// ringsmb's Cockpit page. Every action runs a program through the Cockpit
// bridge: `ringsmbctl ... --json` for lists, `ringsmbctl ...` for changes,
// systemctl and journalctl for the service. superuser: "try" asks for the
// logged-in admin's administrative access when they have it; the page
// itself has no rights of its own. An error is ringsmbctl's own message,
// shown as it printed it.
"use strict";

// ringsmbctl by its absolute path (an ordinary user's PATH lacks /usr/sbin):
// the manifest's "config", which /etc/cockpit/ringsmb.override.json can
// change for an installation elsewhere (loadConfig).
let ctlPath = "/usr/sbin/ringsmbctl";
const REFRESH_MS = 5000;
const SERVICE = "ringsmb";

const $ = id => document.getElementById(id);

// --- running programs ------------------------------------------------------

// Resolves with stdout; rejects with an Error whose message is the
// program's stderr as printed (or cockpit's reason when it could not run).
function run(argv, input) {
    const proc = cockpit.spawn(argv, { superuser: "try", err: "message" });
    if (input !== undefined)
        proc.input(input);
    // A native promise: cockpit's own does not pass on an error thrown
    // in its handlers.
    return new Promise((resolve, reject) => proc.then(resolve, ex => {
        reject(new Error((ex.message || ex.problem || String(ex)).replace(/\s+$/, "")));
    }));
}

const ctl = (args, input) => run([ctlPath, ...args], input);
const ctlJson = args => ctl([...args, "--json"]).then(out => JSON.parse(out));

// --- messages ----------------------------------------------------------------

function showError(area, error) {
    const box = $(area + "-error");
    box.textContent = error ? error.message : "";
    box.hidden = !error;
    if (error)
        $(area + "-message").hidden = true;
}

function showMessage(area, text) {
    const box = $(area + "-message");
    box.textContent = text.replace(/\s+$/, "");
    box.hidden = !text;
    showError(area, null);
}

// Runs a change; shows its output or its error in AREA, then RELOAD.
function change(area, args, input, reload) {
    return ctl(args, input)
            .then(out => { showMessage(area, out); return reload() })
            .catch(error => showError(area, error));
}

// --- tables ------------------------------------------------------------------

function cell(row, text) {
    const td = document.createElement("td");
    td.textContent = text;
    row.appendChild(td);
    return td;
}

function button(parent, label, onclick) {
    const b = document.createElement("button");
    b.type = "button";
    b.textContent = label;
    b.addEventListener("click", onclick);
    parent.appendChild(b);
    return b;
}

function fillTable(tableId, items, columns, actions) {
    const body = $(tableId).querySelector("tbody");
    body.replaceChildren();
    for (const item of items) {
        const row = document.createElement("tr");
        for (const column of columns)
            cell(row, typeof column === "function" ? column(item) : String(item[column]));
        if (actions)
            actions(cell(row, ""), item, row);
        body.appendChild(row);
    }
}

// Buttons that ask once more before they act, by what they act on (KEY):
// a table refreshed between the two clicks keeps the question.
const armed = new Set();

function confirmButton(parent, label, key, action) {
    const question = "Really " + label.toLowerCase() + "?";
    const b = button(parent, armed.has(key) ? question : label, () => {
        if (armed.delete(key)) {
            action();
        } else {
            armed.add(key);
            b.textContent = question;
        }
    });
    return b;
}

// --- shares ------------------------------------------------------------------

// Values the documentation lists for keys that take one of a few words.
const CHOICES = { "smb3 encryption": ["off", "desired", "required"] };

let editedShare = null;

function loadShares() {
    return ctlJson(["share", "list"]).then(doc => {
        showError("shares", null);
        fillTable("shares-table", doc.shares,
                  ["name", "path", s => s.read_only ? "read only" : "writable",
                      s => s.guest_ok ? "yes" : "no", "comment"],
                  (td, share, row) => {
                      row.dataset.name = share.name;
                      button(td, "Edit", () => editShare(share));
                      confirmButton(td, "Delete", "share:" + share.name, () =>
                          change("shares", ["share", "del", share.name], undefined, loadShares));
                  });
    }).catch(error => showError("shares", error));
}

function addShare(event) {
    event.preventDefault();
    const f = event.target.elements;
    const args = ["share", "add", f.name.value, "--path", f.path.value];
    if (f.comment.value)
        args.push("--comment", f.comment.value);
    if (f.valid_users.value)
        args.push("--valid-users", f.valid_users.value);
    if (f.read_only.checked)
        args.push("--read-only");
    if (f.guest_ok.checked)
        args.push("--guest-ok");
    if (f.hidden.checked)
        args.push("--hidden");
    ctl(args).then(out => {
        showMessage("shares", out);
        event.target.reset();
        return loadShares();
    }).catch(error => showError("shares", error));
}

function settingInput(key, value) {
    const words = CHOICES[key] || ((value === "yes" || value === "no") ? ["yes", "no"] : null);
    let input;
    if (words) {
        input = document.createElement("select");
        for (const w of words)
            input.add(new Option(w, w, false, w === value));
    } else {
        input = document.createElement("input");
        input.value = value;
    }
    input.name = key;
    return input;
}

// One field per setting the share has (every key `config show` lists).
function editShare(share) {
    editedShare = share;
    $("share-edit-name").textContent = share.name;
    const fields = $("share-edit-fields");
    fields.replaceChildren();
    for (const [key, value] of Object.entries(share.settings)) {
        const label = document.createElement("label");
        const name = document.createElement("span");
        name.textContent = key;
        label.append(name, settingInput(key, value));
        fields.appendChild(label);
    }
    $("share-edit").hidden = false;
    $("share-edit").scrollIntoView();
}

// Only what was changed goes to `share set`; an emptied value is unset.
function saveShare(event) {
    event.preventDefault();
    const args = ["share", "set", editedShare.name];
    for (const [key, old] of Object.entries(editedShare.settings)) {
        const value = event.target.elements.namedItem(key).value;
        if (value === old)
            continue;
        if (key === "path")
            args.push("--path", value);
        else if (key === "comment")
            args.push("--comment", value);
        else if (value === "")
            args.push("--unset", key);
        else
            args.push("--option", key + " = " + value);
    }
    ctl(args).then(out => {
        showMessage("shares", out);
        $("share-edit").hidden = true;
        return loadShares();
    }).catch(error => showError("shares", error));
}

// --- users -------------------------------------------------------------------

let passwdUser = null;

function loadUsers() {
    return ctlJson(["user", "list"]).then(doc => {
        showError("users", null);
        fillTable("users-table", doc.users, ["name", "unix_user", u => u.disabled ? "disabled" : "enabled"],
                  (td, user, row) => {
                      row.dataset.name = user.name;
                      row.dataset.disabled = user.disabled ? "yes" : "no";
                      // smbpasswd -d / -e: new logins refused or allowed again, the password kept.
                      const verb = user.disabled ? "enable" : "disable";
                      button(td, user.disabled ? "Enable" : "Disable", () =>
                          change("users", ["user", verb, user.name], undefined, loadUsers));
                      button(td, "Set password", () => {
                          passwdUser = user.name;
                          $("user-passwd-name").textContent = user.name;
                          $("user-passwd").hidden = false;
                      });
                      confirmButton(td, "Delete", "user:" + user.name, () =>
                          change("users", ["user", "del", user.name], undefined, loadUsers));
                  });
    }).catch(error => showError("users", error));
}

function addUser(event) {
    event.preventDefault();
    const f = event.target.elements;
    const args = ["user", "add", f.name.value, "--password-stdin"];
    if (f.unix_user.value)
        args.push("--unix-user", f.unix_user.value);
    ctl(args, f.password.value + "\n").then(out => {
        showMessage("users", out);
        event.target.reset();
        return loadUsers();
    }).catch(error => showError("users", error));
}

function setPassword(event) {
    event.preventDefault();
    const f = event.target.elements;
    ctl(["user", "passwd", passwdUser, "--password-stdin"], f.password.value + "\n").then(out => {
        showMessage("users", out);
        event.target.reset();
        $("user-passwd").hidden = true;
    }).catch(error => showError("users", error));
}

// --- live status -------------------------------------------------------------

function loadStatus() {
    return ctlJson(["status"]).then(s => {
        showError("status", null);
        fillTable("connections-table", s.connections, ["id", "client", "dialect"]);
        const yesNo = key => x => x[key] ? "yes" : "no";
        const user = x => x.anonymous ? "(anonymous)" : x.guest ? x.user + " (guest)" : x.user;
        fillTable("sessions-table", s.sessions,
                  ["session_id", user, "client", "dialect", yesNo("signing"), yesNo("encryption"), channels],
                  (td, session, row) => {
                      row.dataset.sessionId = session.session_id;
                      confirmButton(td, "Close", "session:" + session.session_id, () =>
                          change("status", ["session", "close", session.session_id], undefined, loadStatus));
                  });
        fillTable("trees-table", s.tree_connects, ["session_id", "share", "user", "client"]);
        fillTable("files-table", s.open_files,
                  ["file_id", "session_id", "share", f => f.path || ".", "user", "client", caching,
                      f => String(f.lock_count), openState],
                  (td, file, row) => {
                      row.dataset.fileId = file.file_id;
                      confirmButton(td, "Close", "file:" + file.file_id, () =>
                          change("status", ["file", "close", file.file_id], undefined, loadStatus));
                  });
        const locks = s.open_files.flatMap(f => f.locks.map(l => ({ ...l, file_id: f.file_id, path: f.path || "." })));
        fillTable("locks-table", locks, ["file_id", "path", l => l.exclusive ? "exclusive" : "shared", "offset", "length"]);
    }).catch(error => showError("status", error));
}

// A session's connections (multichannel: several), each as the client's
// address:port; a server that does not list them has one.
function channels(session) {
    const list = session.channels || [];
    return list.length ? list.length + ": " + list.map(c => c.client).join(", ") : "1";
}

// "lease RWH", "oplock batch", "-"; "(breaking)" while a break awaits the client.
function caching(f) {
    const held = f.oplock === "lease" ? "lease " + f.lease_state : f.oplock === "none" ? "-" : "oplock " + f.oplock;
    return held + (f.breaking ? " (breaking)" : "");
}

// A durable open whose client went away is kept for its reconnect until
// its timeout; what it holds stays held meanwhile.
function openState(f) {
    if (f.disconnected)
        return "disconnected, closed in " + Math.ceil(f.kept_for_ms / 1000) + " s";
    return f.durable ? "open (durable)" : "open";
}

// --- service -----------------------------------------------------------------

const SERVICE_PROPERTIES = ["LoadState", "ActiveState", "SubState", "MainPID", "ActiveEnterTimestamp"];

function loadService() {
    const state = run(["systemctl", "show", SERVICE, "--property=" + SERVICE_PROPERTIES.join(",")]).then(out => {
        const list = $("service-state");
        list.replaceChildren();
        for (const line of out.split("\n").filter(l => l.includes("="))) {
            const at = line.indexOf("=");
            const dt = document.createElement("dt");
            const dd = document.createElement("dd");
            dt.textContent = line.slice(0, at);
            dd.textContent = line.slice(at + 1);
            list.append(dt, dd);
        }
        showError("service", null);
    }).catch(error => showError("service", error));
    const log = run(["journalctl", "-u", SERVICE, "-n", "100", "--no-pager", "-o", "short-iso"])
            .then(out => { $("service-log").textContent = out })
            .catch(error => { $("service-log").textContent = error.message });
    return Promise.all([state, log]);
}

function serviceAction(argv) {
    return run(argv).then(out => { showMessage("service", out || argv.join(" ") + ": done"); return loadService() })
            .catch(error => showError("service", error));
}

// --- counters ----------------------------------------------------------------

const HISTORY = 60;
const samples = [];

// Prometheus text: "name{labels} value" lines; sums over the labels.
function parseMetrics(text) {
    const sums = {};
    for (const line of text.split("\n")) {
        const m = line.match(/^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{.*\})?\s+(\S+)/);
        if (!m || m[1].endsWith("_bucket"))
            continue;
        sums[m[1]] = (sums[m[1]] || 0) + Number(m[3]);
    }
    return sums;
}

function rates(name) {
    const out = [];
    for (let i = 1; i < samples.length; i++) {
        const dt = (samples[i].t - samples[i - 1].t) / 1000;
        const dv = (samples[i].v[name] || 0) - (samples[i - 1].v[name] || 0);
        out.push(dt > 0 && dv >= 0 ? dv / dt : 0);
    }
    return out;
}

function drawChart(canvasId, series) {
    const canvas = $(canvasId);
    const g = canvas.getContext("2d");
    g.clearRect(0, 0, canvas.width, canvas.height);
    const max = Math.max(1, ...series.flatMap(s => s.values));
    const step = canvas.width / (HISTORY - 1);
    for (const s of series) {
        g.strokeStyle = s.color;
        g.beginPath();
        s.values.forEach((v, i) => {
            const x = i * step;
            const y = canvas.height - 14 - (v / max) * (canvas.height - 20);
            if (i === 0) g.moveTo(x, y); else g.lineTo(x, y);
        });
        g.stroke();
    }
    g.fillStyle = "#6a6e73";
    g.fillText("max " + max.toFixed(max < 10 ? 1 : 0) + "/s", 4, canvas.height - 2);
}

function loadCounters() {
    return ctl(["status", "--prometheus"]).then(text => {
        showError("counters", null);
        const v = parseMetrics(text);
        samples.push({ t: Date.now(), v });
        if (samples.length > HISTORY)
            samples.shift();
        drawChart("chart-requests", [{ color: "#06c", values: rates("ringsmb_requests_total") }]);
        drawChart("chart-bytes", [
            { color: "#3e8635", values: rates("ringsmb_received_bytes_total") },
            { color: "#f0ab00", values: rates("ringsmb_sent_bytes_total") },
        ]);
        const rows = Object.entries(v).filter(([name]) => !name.startsWith("ringsmb_request_duration"))
                .map(([name, value]) => ({ name, value }));
        fillTable("counters-table", rows, ["name", "value"]);
    }).catch(error => showError("counters", error));
}

// --- tabs --------------------------------------------------------------------

const LOADERS = { service: loadService, shares: loadShares, users: loadUsers, status: loadStatus, counters: loadCounters };
const REFRESHED = new Set(["status", "counters"]);
let timer = null;

function showTab(name) {
    for (const b of document.querySelectorAll("#tabs button"))
        b.classList.toggle("active", b.dataset.tab === name);
    for (const s of document.querySelectorAll("section.tab"))
        s.hidden = s.id !== name;
    clearInterval(timer);
    timer = REFRESHED.has(name) ? setInterval(LOADERS[name], REFRESH_MS) : null;
    return LOADERS[name]();
}

function init() {
    for (const b of document.querySelectorAll("#tabs button"))
        b.addEventListener("click", () => showTab(b.dataset.tab));
    $("share-add").addEventListener("submit", addShare);
    $("share-edit").addEventListener("submit", saveShare);
    $("share-edit-cancel").addEventListener("click", () => { $("share-edit").hidden = true });
    $("user-add").addEventListener("submit", addUser);
    $("user-passwd").addEventListener("submit", setPassword);
    $("user-passwd-cancel").addEventListener("click", () => { $("user-passwd").hidden = true });
    $("service-start").addEventListener("click", () => serviceAction(["systemctl", "start", SERVICE]));
    $("service-stop").addEventListener("click", () => serviceAction(["systemctl", "stop", SERVICE]));
    $("service-restart").addEventListener("click", () => serviceAction(["systemctl", "restart", SERVICE]));
    $("service-reload").addEventListener("click", () =>
        ctl(["reload"]).then(out => showMessage("service", out)).catch(error => showError("service", error)));
    showTab("service");
    document.body.dataset.ready = "yes";
}

// The manifests as the bridge merged them with their overrides.
function loadConfig() {
    return fetch("../manifests.json")
            .then(response => response.json())
            .then(manifests => {
                const config = (manifests.ringsmb || {}).config || {};
                if (config.ringsmbctl)
                    ctlPath = config.ringsmbctl;
            })
            .catch(() => {});
}

loadConfig().then(init);
