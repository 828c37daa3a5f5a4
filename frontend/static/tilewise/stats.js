// Stats page: numbers from /api/review/stats/, drawn with Chart.js.
import { api } from "./api.js";

const root = document.getElementById("stats");
const theme = window.tilewiseTheme;
const $ = (id) => document.getElementById(id);
const pct = (x) => (x === null || x === undefined ? "–" : `${(100 * x).toFixed(1)}%`);

function heatmap(days) {
  // A year of days as week columns × weekday rows: a scatter of square points, colour by count.
  const first = new Date(days[0].date + "T00:00:00Z");
  const offset = first.getUTCDay();
  const max = Math.max(1, ...days.map((d) => d.count));
  const data = days.map((d, i) => ({ x: Math.floor((i + offset) / 7), y: (i + offset) % 7, v: d.count, date: d.date }));
  const side = (ctx) => Math.max(2, ((ctx.chart.chartArea || {}).width || 600) / 53 / 2 - 1);
  new Chart($("heatmap"), {
    type: "scatter",
    data: { datasets: [{
      data,
      pointStyle: "rect",
      radius: side,
      hoverRadius: side,
      backgroundColor: (c) => {
        const v = c.raw ? c.raw.v : 0;
        return v ? `rgba(${theme.color("--heat-rgb")},${0.25 + 0.75 * (v / max)})` : theme.color("--heat-empty");
      },
      borderWidth: 0,
    }] },
    options: {
      maintainAspectRatio: false,
      animation: false,
      plugins: { legend: { display: false }, tooltip: { callbacks: {
        label: (item) => `${item.raw.date}: ${item.raw.v} reviews` } } },
      scales: {
        x: { type: "linear", min: -0.7, max: 52.7, display: false },
        y: { type: "linear", min: -0.7, max: 6.7, reverse: true, display: false },
      },
    },
  });
}

function bars(canvas, labels, values, { horizontal = false, max, label }) {
  new Chart(canvas, {
    type: "bar",
    data: { labels, datasets: [{ label, data: values, backgroundColor: theme.color("--chart-1") }] },
    options: {
      indexAxis: horizontal ? "y" : "x",
      maintainAspectRatio: false,
      plugins: { legend: { display: false } },
      scales: horizontal ? { x: { min: 0, max } } : { y: { beginAtZero: true, ticks: { precision: 0 } } },
    },
  });
}

async function main() {
  const s = await api(root.dataset.url);
  $("streak").textContent = s.streak_days;
  $("today").textContent = s.reviews_today;
  $("retention").textContent = pct(s.true_retention);
  $("desired").textContent = pct(s.desired_retention);
  $("total").textContent = s.total_reviews;
  $("retention-method").textContent = `${s.methods.retention} (${s.retention_reviews} such reviews.)`;
  for (const key of ["heatmap", "forecast", "mastery"]) $(`${key}-method`).textContent = s.methods[key];
  heatmap(s.heatmap);
  bars($("forecast"), s.forecast.map((d) => d.date.slice(5)), s.forecast.map((d) => d.count), { label: "cards due" });
  bars($("mastery-topics"), s.mastery.topics.map((t) => t.title), s.mastery.topics.map((t) => t.mastery),
    { horizontal: true, max: 1, label: "mastery" });
  bars($("mastery-lessons"), s.mastery.lessons.map((t) => t.title), s.mastery.lessons.map((t) => t.mastery),
    { horizontal: true, max: 1, label: "mastery" });
  root.dataset.ready = "1";
}

main().catch((err) => { root.insertAdjacentHTML("afterbegin", `<p class="banner error"></p>`);
  root.querySelector(".banner").textContent = `Could not load stats: ${err.message}`; });
