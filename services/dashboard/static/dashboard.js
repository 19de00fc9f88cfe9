// The Onceflow dashboard: the overview of every hop (/api/overview, the facts of
// `onceflow-ops overview`), the alerts with their runbooks, every panel of /api/panels plotted
// from Prometheus (through /api/prom/*) over the picked range, and one order traced.
// Plain JS, no build step; uPlot is served from node_modules by the dashboard itself.
"use strict";

(() => {
  const PALETTE = ["#3b6fd8", "#e0803a", "#2ca58d", "#c2457a", "#8a63d2", "#a0a43a", "#4fa3c7"];
  const HOP_COLOURS = ["#3b6fd8", "#8a63d2", "#e0803a", "#2ca58d", "#c2457a", "#4fa3c7"];
  const FETCH_TIMEOUT_MS = 10000;
  const HEIGHT = 200;

  // What the page shows, readable from outside (the browser test asserts on it).
  const state = {
    refreshes: 0,
    prometheus: "unknown", // "ok" | "unreachable" | "unknown"
    panels: {},            // key -> {points, series, state, legend: {label: latest}, headline}
    overview: null,        // {read_at, tiles: {hop: state}} | {error}
    range: null,           // the picked range's label ("15m", "1h", ...)
    alerts: [],            // [{name, state, since, runbook}]
    journey: null,
  };
  window.onceflowDashboard = state;

  const $ = (sel, root = document) => root.querySelector(sel);
  const el = (tag, attrs = {}, ...children) => {
    const node = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs)) {
      if (k === "class") node.className = v;
      else if (k === "text") node.textContent = v;
      else node.setAttribute(k, v);
    }
    for (const child of children) node.append(child);
    return node;
  };

  // ---- fetching -------------------------------------------------------------------------

  class Unreachable extends Error {}

  async function getJSON(url) {
    const abort = new AbortController();
    const timer = setTimeout(() => abort.abort(), FETCH_TIMEOUT_MS);
    let res;
    try {
      res = await fetch(url, { cache: "no-store", signal: abort.signal });
    } catch (err) {
      throw new Unreachable("the dashboard server did not answer (is it running?)");
    } finally {
      clearTimeout(timer);
    }
    let body = null;
    try { body = await res.json(); } catch (err) { body = null; }
    return { ok: res.ok, status: res.status, body };
  }

  // Prometheus's API through the proxy; throws Unreachable when Prometheus (or we) are down.
  async function prom(endpoint, params = {}) {
    const query = new URLSearchParams(params).toString();
    const { ok, status, body } = await getJSON(`/api/prom/${endpoint}${query ? "?" + query : ""}`);
    if (body && typeof body.type === "string" && body.type.endsWith("prometheus-unreachable")) {
      throw new Unreachable(body.detail || "Prometheus unreachable");
    }
    if (!ok || !body || body.status !== "success") {
      const why = (body && (body.error || body.detail)) || `HTTP ${status}`;
      throw new Error(why);
    }
    return body.data;
  }

  // ---- formatting -----------------------------------------------------------------------

  const trim = (v, digits) => {
    const s = v.toFixed(digits);
    return s.includes(".") ? s.replace(/\.?0+$/, "") : s;
  };
  const compact = (v) => {
    const a = Math.abs(v);
    if (a >= 1e9) return trim(v / 1e9, 1) + "G";
    if (a >= 1e6) return trim(v / 1e6, 1) + "M";
    if (a >= 1e3) return trim(v / 1e3, 1) + "k";
    if (a >= 100 || a === 0) return trim(v, 0);
    if (a >= 10) return trim(v, 1);
    if (a >= 1) return trim(v, 2);
    return String(Number(v.toPrecision(2))); // 0.005, not a "0.01" on three ticks
  };
  const seconds = (v) => {
    const a = Math.abs(v);
    if (a === 0) return "0 s";
    if (a < 1e-3) return trim(v * 1e6, 0) + " µs";
    if (a < 1) return trim(v * 1e3, a < 0.01 ? 1 : 0) + " ms";
    if (a < 600) return trim(v, a < 10 ? 1 : 0) + " s";
    if (a < 7200) return trim(v / 60, 1) + " min";
    return trim(v / 3600, 1) + " h";
  };
  const bytes = (v) => {
    const units = ["B", "KiB", "MiB", "GiB", "TiB"];
    let i = 0;
    while (Math.abs(v) >= 1024 && i < units.length - 1) { v /= 1024; i += 1; }
    return trim(v, v >= 100 || i === 0 ? 0 : 1) + " " + units[i];
  };
  const FORMAT = {
    per_second: (v) => compact(v) + "/s",
    seconds,
    milliseconds: (v) => seconds(v / 1000),
    bytes,
    records: compact,
  };
  const format = (unit, v) => (v == null || Number.isNaN(v) ? "–" : FORMAT[unit](v));
  const clock = (epochS) => new Date(epochS * 1000).toISOString().slice(11, 19);
  // Past a day the x axis needs the date too: "11-25 14:00".
  const dayClock = (epochS) => new Date(epochS * 1000).toISOString().slice(5, 16).replace("T", " ");
  const span = (s) => (s < 90 ? `${Math.round(s)} s` : s < 5400 ? `${Math.round(s / 60)} min`
    : s < 172800 ? `${trim(s / 3600, 1)} h` : `${trim(s / 86400, 1)} d`);
  const since = (date) => span(Math.max(0, (Date.now() - date.getTime()) / 1000));

  // ---- panels ---------------------------------------------------------------------------

  const panels = []; // {spec, root, chartEl, emptyEl, latestEl, plot, labelsKey}
  const HEADLINE_TITLES = {
    first: "the latest value of the first series",
    total: "the sum of the latest values of every series",
    worst: "the largest latest value of any series, and which it is",
  };

  // The panel's big number: what it sums is said next to it (services/dashboard/panels.py).
  function headlineOf(how, labels, latest) {
    const known = labels.map((label, i) => [label, latest[i]]).filter(([, v]) => v !== null);
    if (!known.length) return null;
    if (how === "total") {
      return { label: "total", value: known.reduce((sum, [, v]) => sum + v, 0) };
    }
    if (how === "worst") {
      const [label, value] = known.reduce((a, b) => (b[1] > a[1] ? b : a));
      return { label: `worst: ${label}`, value };
    }
    return latest[0] === null ? null : { label: labels[0], value: latest[0] };
  }

  function buildPanels(config) {
    // One grid in pipeline order; each card names its hop in the hop's colour.
    const grid = $("#charts");
    const hops = [...new Set(config.panels.map((p) => p.hop))];
    for (const spec of config.panels) {
      const colour = HOP_COLOURS[hops.indexOf(spec.hop) % HOP_COLOURS.length];
      const latestEl = el("span", { class: "latest headline", title: HEADLINE_TITLES[spec.headline] });
      const emptyEl = el("div", { class: "empty", text: "loading…" });
      const chartEl = el("div", { class: "chart" }, emptyEl);
      const root = el("article", {
        class: "card panel", "data-panel": spec.key, "data-hop": spec.hop, "data-state": "loading",
        "data-points": "0", style: `--hop: ${colour}`,
      },
      el("div", { class: "panel-head" },
        el("span", { class: "chip", text: spec.hop }), latestEl),
      el("h3", {}, document.createTextNode(spec.title), el("small", { text: spec.unit.label })),
      el("p", { class: "desc", text: spec.description }),
      chartEl);
      grid.append(root);
      const panel = { spec, root, chartEl, emptyEl, latestEl, plot: null, labelsKey: "", hovered: false };
      chartEl.addEventListener("mouseenter", () => { panel.hovered = true; });
      chartEl.addEventListener("mouseleave", () => {
        panel.hovered = false;
        if (panel.plot) panel.plot.setLegend({ idx: panel.plot.data[0].length - 1 });
      });
      new ResizeObserver(() => {
        if (panel.plot) panel.plot.setSize({ width: chartEl.clientWidth, height: HEIGHT });
      }).observe(chartEl);
      panels.push(panel);
    }
  }

  function legendOf(template, metric, several) {
    const named = template.replace(/\{\{\s*(\w+)\s*\}\}/g, (_, name) => metric[name] ?? "");
    if (!several || template.includes("{{")) return named;
    const extra = Object.entries(metric).map(([k, v]) => `${k}=${v}`).join(", ");
    return extra ? `${named} (${extra})` : named;
  }

  function themeColors() {
    const css = getComputedStyle(document.documentElement);
    return { axis: css.getPropertyValue("--muted").trim(), grid: css.getPropertyValue("--grid").trim() };
  }

  // Tick steps: whole records, whole milliseconds, powers of two of bytes (no "0.25 records").
  const decades = (m) => [1, 2, 5].flatMap((k) => Array.from({ length: 12 }, (_, e) => k * 10 ** e))
    .sort((a, b) => a - b).map((v) => v * m);
  const INCRS = {
    records: decades(1),
    milliseconds: decades(1),
    bytes: Array.from({ length: 48 }, (_, e) => 2 ** e),
  };

  function makePlot(panel, labels, data, long) {
    const unit = panel.spec.unit.name;
    const colors = themeColors();
    const axis = {
      stroke: colors.axis,
      grid: { stroke: colors.grid, width: 1 },
      ticks: { stroke: colors.grid, width: 1 },
    };
    const opts = {
      width: panel.chartEl.clientWidth || 400,
      height: HEIGHT,
      cursor: { drag: { x: false, y: false } },
      hooks: { ready: [(u) => u.setLegend({ idx: u.data[0].length - 1 })] },
      legend: { live: true },
      scales: {
        x: { time: true },
        y: { range: (u, min, max) => [Math.min(0, min ?? 0), max > 0 ? max * 1.15 : 1] },
      },
      axes: [
        { ...axis, values: (u, splits) => splits.map((v) => (long ? dayClock(v) : clock(v))),
          space: long ? 90 : 70 },
        {
          ...axis,
          label: panel.spec.unit.label,
          labelSize: 16,
          labelFont: "12px system-ui, sans-serif",
          size: 64,
          values: (u, splits) => splits.map((v) => format(unit, v)),
          ...(INCRS[unit] ? { incrs: INCRS[unit] } : {}),
        },
      ],
      series: [
        { label: "time (UTC)", value: (u, v) => (v == null ? "–" : long ? dayClock(v) : clock(v)) },
        ...labels.map((label, i) => ({
          label,
          stroke: PALETTE[i % PALETTE.length],
          fill: PALETTE[i % PALETTE.length] + "18",
          width: 2,
          points: { show: false },
          value: (u, v) => format(unit, v),
        })),
      ],
    };
    return new uPlot(opts, data, panel.chartEl);
  }

  async function refreshPanel(panel, start, end, step, range, config) {
    const spec = panel.spec;
    // Over a long range the rate window widens to the step (panels.py's WINDOW otherwise).
    const widened = (expr) => expr.split(`[${config.window}]`).join(`[${range.window}]`);
    const results = await Promise.all(spec.series.map((s) =>
      prom("query_range", { query: widened(s.expr), start, end, step })));
    const xs = [];
    for (let t = start; t <= end; t += step) xs.push(t);
    const index = new Map(xs.map((t, i) => [t, i]));
    const labels = [];
    const columns = [];
    results.forEach((data, n) => {
      const several = data.result.length > 1;
      const template = spec.series[n].legend;
      if (!data.result.length && !template.includes("{{")) {
        labels.push(template); // a named series with no samples yet stays in the legend
        columns.push(new Array(xs.length).fill(null));
      }
      for (const series of data.result) {
        labels.push(legendOf(spec.series[n].legend, series.metric, several));
        const column = new Array(xs.length).fill(null);
        for (const [t, raw] of series.values) {
          const i = index.get(Math.round(t));
          const v = parseFloat(raw);
          if (i !== undefined && Number.isFinite(v)) column[i] = v;
        }
        columns.push(column);
      }
    });
    const points = columns.reduce((sum, c) => sum + c.filter((v) => v !== null).length, 0);
    const data = [xs, ...columns];
    const long = range.seconds > 86400;
    const labelsKey = labels.join("\u0000") + (long ? "\u0000long" : "");
    if (!panel.plot || panel.labelsKey !== labelsKey) {
      if (panel.plot) panel.plot.destroy();
      panel.plot = makePlot(panel, labels, data, long);
      panel.labelsKey = labelsKey;
    } else {
      panel.plot.setData(data);
    }
    if (!panel.hovered) panel.plot.setLegend({ idx: xs.length - 1 }); // latest values at rest
    const latest = columns.map((column) => {
      for (let i = column.length - 1; i >= 0; i -= 1) if (column[i] !== null) return column[i];
      return null;
    });
    const headline = headlineOf(spec.headline, labels, latest);
    panel.latestEl.replaceChildren(...(headline ? [
      el("span", { class: "what", text: headline.label }),
      el("b", { text: format(spec.unit.name, headline.value) }),
    ] : []));
    const legend = Object.fromEntries(labels.map((label, i) => [label, latest[i]]));
    setPanelState(panel, points > 0 ? "ok" : "empty", points,
      points > 0 ? "" : `no data in the last ${range.label}`, labels.length,
      { legend, headline });
  }

  function setPanelState(panel, name, points, message, series, shown = {}) {
    panel.root.dataset.state = name;
    panel.root.dataset.points = String(points);
    panel.emptyEl.textContent = message;
    panel.emptyEl.hidden = !message;
    state.panels[panel.spec.key] = { state: name, points, series, legend: {}, headline: null, ...shown };
  }

  // ---- status and alerts ----------------------------------------------------------------

  // The overview: one tile per hop, its state in a word (services/dashboard/tiles.py).
  async function refreshOverview() {
    const list = $("#hop-tiles");
    const { ok, status, body } = await getJSON("/api/overview");
    if (!ok || !body || !Array.isArray(body.tiles)) {
      const why = (body && body.detail) || `HTTP ${status}`;
      list.replaceChildren(el("li", { class: "muted", text: `overview unavailable: ${why}` }));
      state.overview = { error: why };
      return;
    }
    list.replaceChildren(...body.tiles.map((tile) => {
      const node = el("li", { class: "hop-tile", "data-hop": tile.hop, "data-state": tile.state,
        "data-calm": String(tile.calm) },
      el("div", { class: "tile-head" },
        el("h3", { text: tile.title }), el("span", { class: "state", text: tile.state })));
      for (const p of tile.processes) {
        node.append(el("div", { class: "process", "data-healthy": String(p.healthy),
          text: `${p.name} ${p.state} · up ${p.uptime} · ${p.restarts} restarts` }));
        if (p.problem) node.append(el("div", { class: "problem", text: p.problem }));
      }
      for (const line of tile.lines) node.append(el("div", { class: "line", text: line }));
      for (const problem of tile.problems) node.append(el("div", { class: "problem", text: problem }));
      return node;
    }));
    $("#overview-read").textContent = `read ${body.read_at.slice(11, 19)} UTC · ` +
      (body.healthy ? "every hop works" : "something needs a look");
    state.overview = { read_at: body.read_at, healthy: body.healthy,
      tiles: Object.fromEntries(body.tiles.map((tile) => [tile.hop, tile.state])) };
  }

  // A rule's `runbook` annotation is a path in the repository (docs/operations.md#anchor);
  // this dashboard serves docs/ as HTML, so the link opens the section here.
  const runbookHref = (runbook) => (/^https?:\/\//.test(runbook) ? runbook : "/" + runbook.replace(/^\/+/, ""));

  // One alert as the page shows it. Pending: for as long as its condition has held; firing:
  // the condition has held this long (Prometheus's activeAt is when it became true, before the
  // rule's `for:` passed), so no card claims a duration that has not passed.
  function alertView(a) {
    const active = a.activeAt ? since(new Date(a.activeAt)) : "?";
    const annotations = a.annotations || {};
    const link = annotations.runbook || annotations.runbook_url || "";
    return {
      name: a.labels.alertname || "alert",
      state: a.state,
      since: a.state === "pending" ? `pending for ${active}` : `firing, true for ${active}`,
      summary: annotations.summary || annotations.description || "",
      runbook: link ? runbookHref(link) : null,
    };
  }

  function alertCard(a, view) {
    const severity = a.labels.severity ? ` · ${a.labels.severity}` : "";
    const where = Object.entries(a.labels)
      .filter(([k]) => k !== "alertname" && k !== "severity")
      .map(([k, v]) => `${k}=${v}`).join(", ");
    return el("li", { class: "alert", "data-state": a.state, "data-alert": view.name },
      el("span", { class: "since", text: view.since }),
      el("b", { text: view.name }),
      document.createTextNode(severity),
      el("span", { class: "where", text: where ? ` ${where}` : "" }),
      el("span", { class: "summary", text: view.summary }),
      view.runbook
        ? el("a", { class: "runbook", href: view.runbook, target: "_blank", rel: "noopener",
          text: "runbook →" })
        : el("span", { class: "runbook muted", text: "no runbook" }));
  }

  async function refreshAlerts() {
    const data = await prom("alerts");
    const alerts = (data.alerts || []).filter((a) => a.state === "firing" || a.state === "pending")
      .sort((a, b) => (a.state === b.state ? 0 : a.state === "firing" ? -1 : 1));
    const views = alerts.map(alertView);
    const list = $("#alert-list");
    if (!alerts.length) {
      list.replaceChildren(el("li", { class: "none", text: "✓ No alerts firing or pending" }));
    } else {
      list.replaceChildren(...alerts.map((a, i) => alertCard(a, views[i])));
    }
    state.alerts = views.map(({ name, state: s, since: when, runbook }) => ({ name, state: s, since: when, runbook }));
  }

  // ---- the refresh loop -----------------------------------------------------------------

  function showBanner(message, detail) {
    const banner = $("#banner");
    if (!message) { banner.hidden = true; return; }
    banner.replaceChildren(document.createTextNode(message),
      el("span", { class: "detail", text: detail || "" }));
    banner.hidden = false;
  }

  async function refresh(config) {
    const range = picked(config);
    const step = range.step_seconds;
    const end = Math.floor(Date.now() / 1000 / step) * step;
    const start = end - range.seconds;
    const jobs = [
      ...panels.map((panel) => refreshPanel(panel, start, end, step, range, config).catch((err) => {
        if (!(err instanceof Unreachable)) setPanelState(panel, "error", 0, err.message, 0);
        throw err;
      })),
      refreshAlerts(),
    ];

    const outcomes = await Promise.allSettled(jobs);
    const down = outcomes.find((o) => o.status === "rejected" && o.reason instanceof Unreachable);
    const stamp = $("#refreshed");
    if (down) {
      const detail = down.reason.message.replace(/^Prometheus unreachable:?\s*/, "");
      const server = detail.startsWith("the dashboard server");
      showBanner(server ? "Dashboard server unreachable" : "Prometheus unreachable", "— " + detail);
      $("#alert-list").replaceChildren(el("li", { class: "muted", text: "unknown while Prometheus is unreachable" }));
      state.prometheus = server ? "unknown" : "unreachable";
      for (const panel of panels) {
        if (panel.root.dataset.state === "loading") {
          setPanelState(panel, "error", 0, "Prometheus unreachable", 0);
        }
      }
      stamp.dataset.state = "error";
      stamp.textContent = `retrying every ${config.refresh_seconds} s`;
    } else {
      showBanner(null);
      state.prometheus = "ok";
      stamp.dataset.state = "ok";
      stamp.textContent = `updated ${clock(Date.now() / 1000)} UTC · every ${config.refresh_seconds} s`;
    }
    state.refreshes += 1;
  }

  // ---- the order journey ----------------------------------------------------------------
  // services.ops.journey's Journey.as_dict(): {order_id, topic, order: {status, created_at,
  // updated_at} | null, events: [{event_id, event_type, occurred_at, kafka: {partition, offset,
  // timestamp}, batch: {query_id, batch_id, committed_at} | null, notification: {id, produced},
  // seconds_after_commit: {kafka, applied}}], notes: [...]}

  const FOLLOW_MS = 5000; // a journey still under way is read again this often
  let following = null;

  const utc = (iso) => (iso ? iso.replace("T", " ") : "–");
  const short = (id) => (id ? String(id).slice(0, 8) + "…" : "–");
  const after = (s) => (s == null ? null : `+${seconds(s)}`);

  function hop(name, title, done, lines, delta) {
    const node = el("div", { class: "hop-cell", "data-hop": name, "data-state": done },
      el("h4", { text: title }));
    for (const line of lines) node.append(el("div", { class: "line", text: line }));
    if (delta) node.append(el("div", { class: "delta", text: delta }));
    return node;
  }

  function eventRow(event) {
    const k = event.kafka || {};
    const b = event.batch;
    const n = event.notification || {};
    const lag = event.seconds_after_commit || {};
    const inKafka = k.offset != null;
    const produced = n.produced === true ? "done" : n.produced === false ? "pending" : "unknown";
    const cells = [
      hop("api", "API commit", "done", [utc(event.occurred_at)]),
      hop("kafka", "Kafka", inKafka ? "done" : "pending",
        inKafka ? [`partition ${k.partition} · offset ${k.offset}`, utc(k.timestamp)] : ["not read yet"],
        after(lag.kafka)),
      hop("batch", "Micro-batch", b ? "done" : "pending",
        b ? [`batch ${b.batch_id} · query ${short(b.query_id)}`,
          b.committed_at ? `committed ${utc(b.committed_at)}` : "ledger row pruned"]
          : ["not applied yet"],
        b ? after(lag.applied) : null),
      hop("notification", "Notification", produced,
        [produced === "done" ? "produced" : produced === "pending" ? "not produced yet"
          : "unknown (Kafka did not answer)", `id ${short(n.id)}`]),
    ];
    const done = cells.every((c) => c.dataset.state === "done");
    return {
      done,
      node: el("li", { class: "event", "data-event": event.event_id, "data-state": done ? "done" : "pending" },
        el("div", { class: "event-head" },
          el("b", { text: event.event_type || "event" }),
          el("code", { class: "muted", text: event.event_id })),
        el("div", { class: "hops" }, ...cells)),
    };
  }

  function renderJourney(doc) {
    const order = doc.order;
    const head = el("div", { class: "journey-head" },
      el("code", { text: doc.order_id }),
      order ? el("span", { class: "badge", text: order.status }) : el("span", { class: "badge muted", text: "not in orders" }),
      el("span", { class: "muted", text: order ? `created ${utc(order.created_at)} · updated ${utc(order.updated_at)}` : "" }),
      el("span", { class: "muted", text: `topic ${doc.topic}` }));
    const rows = (doc.events || []).map(eventRow);
    const list = el("ol", { class: "events" }, ...rows.map((r) => r.node));
    if (!rows.length) list.append(el("li", { class: "muted", text: "no event applied by the job yet" }));
    const notes = (doc.notes || []).map((note) => el("p", { class: "note", text: note }));
    const complete = !!order && rows.length > 0 && rows.every((r) => r.done);
    return { node: el("div", {}, head, ...notes, list), events: rows.length, complete };
  }

  async function loadJourney(id) {
    clearTimeout(following);
    const out = $("#journey-result");
    if (out.dataset.id !== id) {
      out.dataset.state = "loading";
      out.replaceChildren(el("p", { class: "muted", text: "tracing…" }));
    }
    out.dataset.id = id;
    let answer;
    try {
      answer = await getJSON(`/api/journey/${encodeURIComponent(id)}`);
    } catch (err) {
      answer = { ok: false, status: 0, body: { detail: err.message } };
    }
    if ($("#journey-id").value.trim() !== id) return; // another order was asked for meanwhile
    if (!answer.ok) {
      const detail = (answer.body && answer.body.detail) || `HTTP ${answer.status}`;
      out.dataset.state = "error";
      out.dataset.status = String(answer.status);
      out.replaceChildren(el("p", { class: "journey-error", text: detail }));
      state.journey = { id, status: answer.status, error: detail };
      return;
    }
    const { node, events, complete } = renderJourney(answer.body);
    out.dataset.status = "200";
    out.dataset.state = complete ? "complete" : "partial";
    if (!complete) {
      node.append(el("p", { class: "muted following", text: `still under way: reading it again every ${FOLLOW_MS / 1000} s` }));
      following = setTimeout(() => loadJourney(id), FOLLOW_MS);
    }
    out.replaceChildren(node);
    state.journey = { id, status: 200, events, complete };
  }

  function wireJourney() {
    const input = $("#journey-id");
    $("#journey-form").addEventListener("submit", (event) => {
      event.preventDefault();
      const id = input.value.trim();
      if (!id) return;
      history.replaceState(null, "", `#journey=${encodeURIComponent(id)}`);
      delete $("#journey-result").dataset.id;
      loadJourney(id);
    });
    const match = location.hash.match(/journey=([^&]+)/);
    if (match) {
      input.value = decodeURIComponent(match[1]);
      loadJourney(input.value);
    }
  }

  // ---- the range picker -----------------------------------------------------------------
  // The picked range is kept in the address (?range=6h), so a link or a reload keeps it.

  function picked(config) {
    const wanted = new URLSearchParams(location.search).get("range");
    const fallback = config.ranges.find((r) => r.seconds === config.range_seconds) || config.ranges[0];
    return config.ranges.find((r) => r.label === wanted) || fallback;
  }

  function showRange(config) {
    const range = picked(config);
    for (const button of document.querySelectorAll("#range button")) {
      button.setAttribute("aria-pressed", String(button.dataset.range === range.label));
    }
    $("#window").textContent = `last ${range.label} · UTC · a point every ${seconds(range.step_seconds)}`;
    state.range = range.label;
  }

  function buildRange(config, redraw) {
    const group = $("#range");
    group.replaceChildren(...config.ranges.map((r) => {
      const button = el("button", { type: "button", "data-range": r.label, text: r.label,
        title: `the last ${r.label} (Prometheus keeps ${config.retention})` });
      button.addEventListener("click", () => {
        const url = new URL(location.href);
        url.searchParams.set("range", r.label);
        history.replaceState(null, "", url);
        showRange(config);
        redraw();
      });
      return button;
    }));
    showRange(config);
  }

  // ---- start ----------------------------------------------------------------------------

  async function start() {
    if (typeof uPlot === "undefined") {
      showBanner("Chart library missing", "— uPlot is not installed: run `npm ci` in " +
        "services/dashboard (make up does)");
      return;
    }
    let config;
    try {
      const answer = await getJSON("/api/panels");
      config = answer.body;
    } catch (err) {
      showBanner("Dashboard server unreachable", "— " + err.message);
      setTimeout(start, 5000);
      return;
    }
    buildPanels(config);
    let timer = null;
    const loop = async () => {
      clearTimeout(timer);
      try { await refresh(config); } finally {
        clearTimeout(timer);
        timer = setTimeout(loop, config.refresh_seconds * 1000);
      }
    };
    buildRange(config, loop);
    const overviewLoop = async () => {
      try {
        await refreshOverview();
      } catch (err) {
        $("#hop-tiles").replaceChildren(el("li", { class: "muted", text: `overview unavailable: ${err.message}` }));
        state.overview = { error: err.message };
      } finally {
        setTimeout(overviewLoop, config.overview_seconds * 1000);
      }
    };
    overviewLoop();
    matchMedia("(prefers-color-scheme: dark)").addEventListener("change", () => {
      for (const panel of panels) panel.labelsKey = ""; // redraw in the new theme's colours
    });
    loop();
  }

  wireJourney();
  start();
})();
