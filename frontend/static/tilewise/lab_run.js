// A lab run's page: poll its state (queued → running with progress → done/failed), then show the result.
import { api } from "./api.js";

const root = document.getElementById("run");
const $ = (id) => document.getElementById(id);
const fmt = (v) => (typeof v === "number" ? (Math.abs(v) >= 100 ? v.toFixed(0) : Math.abs(v) >= 1 ? v.toFixed(2) : v.toPrecision(3)) : v ?? "–");
let chart = null;

function renderResult(run) {
  const r = run.result;
  $("run-result").hidden = false;
  const m = run.measured_speedup;
  $("measured").textContent = m ? `${m.value.toFixed(2)}×` : "–";
  $("measured-label").textContent = m ? `best measured speedup vs ${m.baseline}` : "no speedup measured";
  $("predicted").textContent = run.predicted_speedup ? `${run.predicted_speedup}×` : "none";
  $("device").textContent = `Device: ${r.device.description || r.device.name} · versions: ` +
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
  const plot = (r.artifacts || {}).plot;
  if (plot && !chart) {
    const colors = ["#2f6fed", "#c62828", "#1a7f37", "#b26a00", "#6f42c1", "#667085"];
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
  poll();
});
poll();
