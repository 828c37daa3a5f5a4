// A lab run's page: poll its state (queued → running with progress → done/failed), then show the result.
import { api } from "./api.js";

const root = document.getElementById("run");
const theme = window.tilewiseTheme;
const $ = (id) => document.getElementById(id);
const fmt = (v) => (typeof v === "number" ? (Math.abs(v) >= 100 ? v.toFixed(0) : Math.abs(v) >= 1 ? v.toFixed(2) : v.toPrecision(3)) : v ?? "–");
let chart = null;

// FlashAttention tiling trace: the score matrix as a grid of tiles, the current tile lit.
function renderTrace(artifacts) {
  const trace = artifacts.trace;
  if (!trace || !trace.steps || !trace.steps.length) return;
  $("trace").hidden = false;
  const steps = trace.steps;
  const naiveTotal = artifacts.naive ? artifacts.naive.total_bytes : null;
  const canvas = $("trace-grid");
  const ctx = canvas.getContext("2d");
  let index = 0;
  let timer = null;
  const rowsStat = (name, values) => {
    const v = values.filter((x) => x !== null && Number.isFinite(x));
    if (!v.length) return `<tr><th>${name}</th><td>–</td></tr>`;
    const lo = Math.min(...v), hi = Math.max(...v);
    return `<tr><th>${name}</th><td>row 0: ${fmt(values[0])}</td><td>rows: ${fmt(lo)} … ${fmt(hi)}</td></tr>`;
  };
  function draw() {
    const step = steps[index];
    const cell = canvas.width / Math.max(trace.q_blocks, trace.kv_blocks);
    ctx.clearRect(0, 0, canvas.width, canvas.height);
    for (let qi = 0; qi < trace.q_blocks; qi += 1) {
      for (let ki = 0; ki < trace.kv_blocks; ki += 1) {
        const visited = steps.slice(0, index + 1).some((s) => s.q_block === qi && s.kv_block === ki);
        const skipped = trace.causal && ki * trace.block_n > (qi + 1) * trace.block_m - 1;
        ctx.fillStyle = qi === step.q_block && ki === step.kv_block ? theme.color("--trace-current")
          : skipped ? theme.color("--trace-skipped") : visited ? theme.color("--trace-visited") : theme.color("--trace-pending");
        ctx.fillRect(ki * cell + 1, qi * cell + 1, cell - 2, cell - 2);
      }
    }
    $("trace-pos").textContent = `step ${index + 1} of ${steps.length}${trace.truncated ? ` (first ${steps.length} of ${trace.steps_total} stored)` : ""}`;
    $("trace-tile").textContent = `On chip: Q rows ${step.q_rows[0]}–${step.q_rows[1] - 1} (block ${step.q_block}), `
      + `K/V rows ${step.kv_rows[0]}–${step.kv_rows[1] - 1} (block ${step.kv_block}). Loaded from HBM: ${step.loads.join(", ") || "nothing"}; `
      + `stored: ${step.stores.join(", ") || "nothing"}${step.mask !== "none" ? `; mask: ${step.mask}` : ""}. Tile max ${fmt(step.tile_max)}.`;
    $("trace-stats").innerHTML = rowsStat("block max", step.block_max) + rowsStat("running max before", step.m_before)
      + rowsStat("running max after", step.m_after) + rowsStat("running sum before", step.l_before)
      + rowsStat("running sum after", step.l_after) + rowsStat("rescale exp(m_old − m_new)", step.rescale);
    $("trace-bytes").textContent = `HBM traffic so far: ${step.hbm_bytes.toLocaleString()} bytes `
      + `(read ${step.hbm_read_bytes.toLocaleString()}, written ${step.hbm_written_bytes.toLocaleString()})`
      + (naiveTotal ? `; naive attention moves ${naiveTotal.toLocaleString()} bytes in all.` : ".");
  }
  const go = (delta) => { index = Math.min(steps.length - 1, Math.max(0, index + delta)); draw(); };
  $("trace-prev").addEventListener("click", () => go(-1));
  $("trace-next").addEventListener("click", () => go(1));
  $("trace-play").addEventListener("click", () => {
    if (timer) { clearInterval(timer); timer = null; $("trace-play").textContent = "▶ Play"; return; }
    $("trace-play").textContent = "❚❚ Pause";
    timer = setInterval(() => { if (index >= steps.length - 1) { $("trace-play").click(); return; } go(1); }, 600);
  });
  document.addEventListener("keydown", (e) => { if (e.key === "ArrowRight") go(1); if (e.key === "ArrowLeft") go(-1); });
  $("trace-model").textContent = artifacts.bytes_model ? `Byte model: ${artifacts.bytes_model.tiled} ${artifacts.bytes_model.naive}` : "";
  draw();
}

function renderResult(run) {
  const r = run.result;
  $("run-result").hidden = false;
  const m = run.measured_speedup;
  $("measured").textContent = m ? `${m.value.toFixed(2)}×` : "–";
  $("measured-label").textContent = m ? `best measured speedup vs ${m.baseline}` : "no speedup measured";
  $("predicted").textContent = run.predicted_speedup ? `${run.predicted_speedup}×` : "none";
  $("figures").hidden = !m && !run.predicted_speedup;  // e.g. a trace: nothing to compare
  const ran = run.device && run.device.worker ? ` · worker ${run.device.worker} on ${run.device.host}` : "";
  $("device").textContent = `Device: ${r.device.description || r.device.name}${ran} · versions: ` +
    Object.entries(r.versions).filter(([, v]) => v).map(([k, v]) => `${k} ${v}`).join(", ");
  $("method").textContent = `Method: ${r.method}`;
  $("notes").replaceChildren(...(r.notes || []).map((n) => Object.assign(document.createElement("li"), { textContent: n })));
  $("checks").textContent = r.checks ? `Correctness: ${r.checks.passed ? "passed" : "FAILED"} (max error ${fmt(r.checks.max_abs_error)} vs a higher-precision reference)` : "";
  const rows = r.rows || [];
  if (rows.length) {
    const cols = Object.keys(rows[0]).filter((c) => !["q25_ms", "q75_ms", "reps"].includes(c));
    const head = `<tr>${cols.map((c) => `<th>${c}</th>`).join("")}</tr>`;
    const body = rows.map((row) => `<tr>${cols.map((c) => `<td>${fmt(row[c])}</td>`).join("")}</tr>`).join("");
    $("rows").innerHTML = head + body;  // values are numbers and names produced by the experiment code
  }
  renderTrace(r.artifacts || {});
  const plot = (r.artifacts || {}).plot;
  if (plot && !chart) {
    const colors = theme.palette();
    chart = new Chart($("plot"), {
      type: "line",
      data: { datasets: plot.series.map((s, i) => ({ label: s.name, data: s.x.map((x, j) => ({ x, y: s.y[j] })),
        borderColor: colors[i % colors.length], backgroundColor: colors[i % colors.length] })) },
      options: { maintainAspectRatio: false, plugins: { title: { display: true, text: plot.title } },
        scales: { x: { type: plot.x_log ? "logarithmic" : "linear", title: { display: true, text: plot.x_label } },
          y: { type: plot.y_log ? "logarithmic" : "linear", title: { display: true, text: plot.y_label } } } },
    });
  }
  $("artifacts").replaceChildren(...run.artifacts.map((a) => {
    const link = Object.assign(document.createElement("a"), { href: a.url, textContent: a.name });
    return Object.assign(document.createElement("span"), { className: "artifact" }).appendChild(link).parentNode;
  }));
}

async function showRoofline() {
  const data = await api(root.dataset.rooflineUrl);
  const msg = $("roofline-msg");
  if (!data.available) {
    msg.textContent = data.reason;
    if (data.needs_calibration) {
      const button = Object.assign(document.createElement("button"), { className: "button", textContent: "Calibrate this device now" });
      button.addEventListener("click", async () => {
        const run = await api(root.dataset.runsUrl, { method: "POST", body: { experiment: "roofline", params: {} } });
        window.location.href = run.url;
      });
      msg.appendChild(document.createElement("br"));
      msg.appendChild(button);
    }
    return;
  }
  const r = data.roofs;
  msg.textContent = `Roofs of ${data.device}, measured ${data.calibrated_at.slice(0, 10)}: bandwidth ${fmt(r.bandwidth_gbps)} GB/s, `
    + `compute ${fmt(r.compute_tflops)} TFLOP/s (${r.compute_dtype}); ridge point ${fmt(r.ridge_flop_per_byte)} FLOP/byte.`;
  $("roofline-chart-box").hidden = false;
  const plot = data.plot;
  const roofColor = theme.color("--muted");
  const colors = [roofColor, roofColor, ...theme.palette()];
  new Chart($("roofline-chart"), {
    type: "line",
    data: { datasets: plot.series.map((s, i) => ({ label: s.name, data: s.x.map((x, j) => ({ x, y: s.y[j] })),
      borderColor: colors[i % colors.length], backgroundColor: colors[i % colors.length],
      showLine: s.x.length > 1 && i < 2, pointRadius: i < 2 ? 0 : 5 })) },
    options: { maintainAspectRatio: false, animation: false, plugins: { title: { display: true, text: plot.title } },
      scales: { x: { type: "logarithmic", title: { display: true, text: plot.x_label } },
        y: { type: "logarithmic", title: { display: true, text: plot.y_label } } } },
  });
  const head = "<tr><th>kernel</th><th>FLOP/byte</th><th>achieved</th><th>% of its roof</th><th>which roof bounds it</th></tr>";
  $("roofline-table").innerHTML = head;
  for (const p of data.points) {
    const tr = document.createElement("tr");
    for (const text of [p.name, fmt(p.arithmetic_intensity), `${fmt(p.achieved_gbps)} GB/s · ${fmt(p.achieved_tflops)} TFLOP/s`,
      `${fmt(p.pct_of_roof)}%`, p.verdict]) tr.appendChild(Object.assign(document.createElement("td"), { textContent: text }));
    $("roofline-table").appendChild(tr);
  }
  root.dataset.roofline = "shown";
}

async function poll() {
  let run;
  try {
    run = await api(root.dataset.url);
  } catch (err) {
    $("run-status").textContent = `Could not load the run: ${err.message}`;
    setTimeout(poll, 3000);
    return;
  }
  root.dataset.status = run.status;
  $("run-progress").style.width = `${run.progress}%`;
  $("run-status").textContent = `${run.status}${run.status === "running" ? ` · ${run.progress}%` : ""}`;
  $("run-phase").textContent = run.phase;
  $("cancel").hidden = run.status !== "queued";
  if (run.status === "failed" || run.status === "cancelled") {
    $("run-error").hidden = !run.error;
    $("run-error").textContent = run.error;
    return;
  }
  if (run.status === "done") {
    renderResult(run);
    return;
  }
  setTimeout(poll, 1000);
}

$("cancel").addEventListener("click", async () => {
  try {
    await api(root.dataset.cancelUrl, { method: "POST", body: {} });
  } catch (err) {
    $("run-error").hidden = false;
    $("run-error").textContent = err.message;
  }
  $("roofline-show").addEventListener("click", () => showRoofline().catch((err) => { $("roofline-msg").textContent = err.message; }));
poll();
});
$("roofline-show").addEventListener("click", () => showRoofline().catch((err) => { $("roofline-msg").textContent = err.message; }));
poll();
