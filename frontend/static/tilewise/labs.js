// Lab catalog: submit a request (parameters as text, parsed and bounded by the server), then open the run.
import { api } from "./api.js";

const root = document.getElementById("labs");

for (const form of root.querySelectorAll("form.lab-form")) {
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    const error = form.querySelector(".form-error");
    error.textContent = "";
    const params = {};
    for (const input of form.querySelectorAll("details input")) {
      if (input.value.trim() !== "") params[input.name] = input.value.trim();
    }
    const predictInput = form.querySelector("input[name=predicted_speedup]");
    const predicted = predictInput ? predictInput.value : "";
    const deviceKind = form.querySelector("select[name=device_kind]").value;
    try {
      const run = await api(root.dataset.runsUrl, { method: "POST", body: {
        experiment: form.dataset.experiment, params, device_kind: deviceKind,
        predicted_speedup: predicted === "" ? null : Number(predicted) } });
      window.location.href = run.url;
    } catch (err) {
      error.textContent = err.body && err.body.field ? `${err.body.field}: ${err.message}` : err.message;
    }
  });
}
