// The settings page: refresh while cards are being re-scheduled, and draw each fit's forgetting curve.
if (document.querySelector("[data-rescheduling]")) setTimeout(() => window.location.reload(), 4000);

document.querySelectorAll("canvas.curve").forEach((canvas) => {
  const curve = JSON.parse(canvas.dataset.curve);
  const line = (points, label, color) => ({
    label,
    data: points.map((p) => ({ x: p.days, y: p.recall })),
    borderColor: color,
    fill: false,
  });
  new Chart(canvas, {
    type: "line",
    data: { datasets: [line(curve.current, "in use", window.tilewiseTheme.color("--muted")), line(curve.fitted, "fitted", window.tilewiseTheme.color("--chart-1"))] },
    options: {
      maintainAspectRatio: false,
      scales: {
        x: { type: "linear", title: { display: true, text: "days since review" } },
        y: { min: 0, max: 1, title: { display: true, text: "predicted recall" } },
      },
    },
  });
});
