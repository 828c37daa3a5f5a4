// The daily review page: reveal with Space, rate with 1-4, undo with u. Every rating carries an
// idempotency key made when the card is shown, so a retry after a network error records it once.
import { api, ApiError } from "./api.js";

const root = document.getElementById("review");
const urls = root.dataset;
const $ = (id) => document.getElementById(id);

let item = null;        // the card on screen (from the queue API)
let revealed = false;
let shownAt = 0;
let idempotencyKey = "";
let busy = false;

function newKey() {
  return (crypto.randomUUID && crypto.randomUUID()) || `${Date.now()}-${Math.random().toString(16).slice(2)}`;
}

function banner(text, kind = "error") {
  const el = $("banner");
  el.textContent = text;
  el.className = `banner ${kind}`;
  el.hidden = !text;
}

function typedAnswer() {
  const chosen = document.querySelector("input[name=choice]:checked");
  if (chosen) return chosen.value;
  const input = $("answer-input");
  return input ? input.value.trim() : "";
}

function renderAnswerArea() {
  const area = $("answer-area");
  area.innerHTML = "";
  if (!item.answer_expected) return;
  if (item.choices.length) {
    const form = document.createElement("fieldset");
    form.className = "choice-list";
    form.innerHTML = "<legend>Commit your prediction first</legend>";
    item.choices.forEach((choice, i) => {
      const letter = "abcdef"[i];
      const label = document.createElement("label");
      label.innerHTML = `<input type="radio" name="choice"> <kbd>${letter}</kbd> <span></span>`;
      label.querySelector("input").value = choice;
      label.querySelector("span").textContent = choice;
      form.appendChild(label);
    });
    area.appendChild(form);
    return;
  }
  const multiline = item.kind === "interview" || item.kind === "recall";
  const input = document.createElement(multiline ? "textarea" : "input");
  input.id = "answer-input";
  input.className = "answer-input";
  if (!multiline) input.type = "text";
  if (multiline) input.rows = 5;
  input.placeholder = item.kind === "numeric" ? `Your estimate in ${item.unit} (Enter to check)`
    : item.kind === "predict" ? "Your prediction (Enter to reveal)"
    : item.kind === "recall" ? "Your answer, optional: the teacher grades it (Ctrl+Enter to reveal)"
    : "Your answer (Ctrl+Enter to reveal)";
  input.setAttribute("aria-label", "Your answer");
  area.appendChild(input);
  if (item.kind !== "recall") input.focus();  // a recall answer is optional: Space still reveals
}

function render(queue) {
  const p = queue.progress;
  const done = p.reviewed_today;
  const total = Math.max(p.total_today, 1);
  $("progress-bar").style.width = `${Math.round((100 * done) / total)}%`;
  $("progress-text").textContent = `${done} reviewed today · ${p.due} due · ${p.new} new`;
  item = queue.items[0] || null;
  revealed = false;
  $("card-front").hidden = false;
  $("card-back").hidden = true;
  $("grade").hidden = true;
  $("grade").className = "grade";  // no verdict yet: the last card's green or red must not show on this one
  document.querySelectorAll("#ratings button").forEach((b) => b.classList.remove("suggested"));
  $("ratings").hidden = true;
  $("reveal-row").hidden = false;
  if (!item) {
    $("card-area").hidden = true;
    $("done").hidden = false;
    $("done-detail").textContent = `You reviewed ${done} cards today. Tomorrow: ${queue.tomorrow_forecast} cards come due.`;
    return;
  }
  $("done").hidden = true;
  $("card-area").hidden = false;
  $("ask-card").value = item.card;
  $("card-front").innerHTML = item.front;
  $("card-back").innerHTML = item.back;
  document.querySelectorAll("#ratings button").forEach((b) => {
    b.querySelector("small").textContent = item.intervals[b.dataset.rating] || "";
  });
  renderAnswerArea();
  shownAt = performance.now();
  idempotencyKey = newKey();
}

async function load() {
  try {
    render(await api(urls.queueUrl));
  } catch (err) {
    banner(`Could not load your queue: ${err.message}`);
  }
}

async function reveal() {
  if (!item || revealed || busy) return;
  const answer = typedAnswer();
  if (item.choices.length && !answer) {
    banner("Pick a prediction first (keys a–f), then reveal.", "info");
    return;
  }
  banner("");
  revealed = true;
  $("card-front").hidden = true;
  $("card-back").hidden = false;
  $("reveal-row").hidden = true;
  $("ratings").hidden = false;
  const input = $("answer-input");
  if (input) input.disabled = true;
  document.querySelectorAll("input[name=choice]").forEach((r) => (r.disabled = true));
  if (answer) {
    const grade = $("grade");
    grade.hidden = false;
    grade.textContent = `Your answer: ${answer}`;
    const shown = item;
    try {
      let result = await api(urls.gradeUrl, { method: "POST", body: { card: item.card, answer } });
      if (item !== shown) return;  // rated already: the verdict belongs to a card no longer on screen
      if (result.status === "queued") {
        // Graded by the teacher on a worker: poll until the verdict arrives.
        grade.textContent = `Your answer: ${answer} — the teacher is grading it…`;
        let job = result;
        for (let i = 0; i < 240 && job.status === "queued"; i += 1) {
          await new Promise((r) => setTimeout(r, 500));
          job = await api(job.url);
        }
        if (item !== shown) return;  // the learner moved on
        result = job.result || { graded: false };
        if (job.status === "queued") result = { graded: false, detail: "No grade yet: is a worker running?" };
      }
      if (!result.graded && result.detail) grade.textContent = `Your answer: ${answer} — ${result.detail}`;
      if (result.graded) {
        grade.textContent = `Your answer: ${answer} — ${result.detail}`
          + (result.method ? ` (${result.method})` : "") + (result.notice ? ` ${result.notice}` : "");
        grade.className = `grade ${result.correct ? "right" : "wrong"}`;
        document.querySelectorAll("#ratings button").forEach((b) =>
          b.classList.toggle("suggested", Number(b.dataset.rating) === result.suggested_rating));
      }
    } catch (err) {
      if (item !== shown) return;
      grade.textContent = `Your answer: ${answer} — ${err.message}`;
      grade.className = "grade wrong";
      if (err instanceof ApiError && err.status === 400) {
        // Let the learner fix an answer that cannot be graded (e.g. not a number).
        revealed = false;
        $("card-front").hidden = false;
        $("card-back").hidden = true;
        $("ratings").hidden = true;
        $("reveal-row").hidden = false;
        if (input) { input.disabled = false; input.focus(); }
      }
    }
  }
}

async function rate(rating) {
  if (!item || !revealed || busy) return;
  busy = true;
  const body = {
    card: item.card, rating, reverse: item.reverse, idempotency_key: idempotencyKey,
    expected_version: item.version, duration_ms: Math.round(performance.now() - shownAt), answer: typedAnswer(),
  };
  for (let attempt = 0; attempt < 3; attempt += 1) {
    try {
      await api(urls.submitUrl, { method: "POST", body });
      banner("");
      busy = false;
      await load();
      return;
    } catch (err) {
      if (err instanceof ApiError) {
        banner(err.message);
        busy = false;
        if (err.status === 409) await load();
        return;
      }
      // Network error: retry with the same key; the server records the review once.
      banner("Connection problem; retrying…", "info");
      await new Promise((r) => setTimeout(r, 800 * (attempt + 1)));
    }
  }
  busy = false;
  banner("Your rating could not be sent. Press the button again; it will be recorded once.");
}

async function undo() {
  if (busy) return;
  busy = true;
  try {
    await api(urls.undoUrl, { method: "POST", body: {} });
    banner("Last rating undone.", "info");
    await load();
  } catch (err) {
    banner(err.message);
  } finally {
    busy = false;
  }
}

document.addEventListener("keydown", (event) => {
  const typing = event.target.matches("input[type=text], textarea");
  if (typing) {
    const submitKey = event.key === "Enter" && (event.target.tagName !== "TEXTAREA" || event.ctrlKey || event.metaKey);
    if (submitKey) { event.preventDefault(); reveal(); }
    return;
  }
  if (event.ctrlKey || event.metaKey || event.altKey) return;
  if (event.key === " ") { event.preventDefault(); reveal(); }
  else if (revealed && "1234".includes(event.key)) rate(Number(event.key));
  else if (event.key === "u") undo();
  else if (!revealed && item && "abcdef".includes(event.key)) {
    const radios = document.querySelectorAll("input[name=choice]");
    const radio = radios["abcdef".indexOf(event.key)];
    if (radio) radio.checked = true;
  }
});
$("reveal").addEventListener("click", reveal);
document.querySelectorAll("#ratings button").forEach((b) => b.addEventListener("click", () => rate(Number(b.dataset.rating))));
load();
