// The chat page: POST the question, read the server-sent events as they stream, show tokens as
// they arrive, then swap in the stored, sanitized HTML of the answer.
const root = document.getElementById("chat");
const turns = document.getElementById("turns");
const form = document.getElementById("ask-form");
const input = document.getElementById("question");

function csrfToken() {
  const m = document.cookie.match(/(?:^|; )csrftoken=([^;]+)/);
  return m ? decodeURIComponent(m[1]) : "";
}

function addTurn(role, text) {
  const div = document.createElement("div");
  div.className = `turn ${role}`;
  const body = document.createElement("div");
  body.className = "md";
  body.textContent = text;
  div.appendChild(body);
  turns.appendChild(div);
  div.scrollIntoView({ block: "end" });
  return div;
}

function parseFrames(buffer, onEvent) {
  let index;
  while ((index = buffer.indexOf("\n\n")) >= 0) {
    const frame = buffer.slice(0, index);
    buffer = buffer.slice(index + 2);
    let name = "message";
    let data = "";
    for (const line of frame.split("\n")) {
      if (line.startsWith("event: ")) name = line.slice(7);
      else if (line.startsWith("data: ")) data += line.slice(6);
    }
    onEvent(name, data ? JSON.parse(data) : {});
  }
  return buffer;
}

async function runLab(offer, button) {
  button.disabled = true;
  const response = await fetch(root.dataset.labsUrl, {
    method: "POST", credentials: "same-origin",
    headers: { "Content-Type": "application/json", "X-CSRFToken": csrfToken(), Accept: "application/json" },
    body: JSON.stringify({ experiment: offer.experiment, params: {}, device_kind: offer.device_kind || "any" }),
  });
  const data = await response.json().catch(() => ({}));
  if (response.ok) window.location.href = data.url;
  else { button.disabled = false; button.textContent = data.detail || `Could not queue it (${response.status}).`; }
}

async function ask(question) {
  addTurn("user", question);
  const answer = addTurn("assistant", "");
  answer.classList.add("streaming");
  const meta = document.createElement("div");
  meta.className = "turn-meta";
  answer.prepend(meta);
  const body = answer.querySelector(".md");
  let response;
  try {
    response = await fetch(root.dataset.askUrl, {
      method: "POST", credentials: "same-origin",
      headers: { "Content-Type": "application/json", "X-CSRFToken": csrfToken(), Accept: "text/event-stream" },
      body: JSON.stringify({ question }),
    });
  } catch (err) {
    body.textContent = "Could not reach the server. Your question was not sent; try again.";
    return;
  }
  if (!response.ok) {
    const data = await response.json().catch(() => ({}));
    body.textContent = data.detail || `The server answered ${response.status}.`;
    return;
  }
  const reader = response.body.getReader();
  const decoder = new TextDecoder();
  let buffer = "";
  let citations = [];
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    buffer = parseFrames(buffer + decoder.decode(value, { stream: true }), (name, data) => {
      if (name === "meta") {
        citations = data.citations;
        meta.textContent = (data.mode === "llm" ? "Language model" : "Course notes (no language model)")
          + (data.hint ? " · hint mode" : "");
      } else if (name === "token") {
        body.textContent += data.text;
      } else if (name === "notice") {
        const n = document.createElement("div");
        n.className = "notice";
        n.textContent = data.text;
        answer.insertBefore(n, body);
      } else if (name === "done") {
        body.innerHTML = data.html;  // server-rendered and sanitized (nh3)
        if (!data.complete) meta.textContent += " · incomplete";
        if (citations.length) {
          const ol = document.createElement("ol");
          ol.className = "citations";
          for (const c of citations) {
            const li = document.createElement("li");
            const a = document.createElement("a");
            a.href = c.url;
            a.textContent = c.title;
            li.appendChild(a);
            ol.appendChild(li);
          }
          answer.appendChild(ol);
        }
        if (data.lab_offer) {
          const offer = document.createElement("button");
          offer.className = "button lab-offer";
          offer.textContent = `See it on a GPU: run “${data.lab_offer.title}”`;
          offer.addEventListener("click", () => runLab(data.lab_offer, offer));
          answer.appendChild(offer);
        }
        answer.classList.remove("streaming");
        answer.dataset.turn = data.turn;
      } else if (name === "error") {
        body.textContent = data.detail;
      }
    });
  }
}

form.addEventListener("submit", async (event) => {
  event.preventDefault();
  const question = input.value.trim();
  if (!question) return;
  input.value = "";
  document.getElementById("send").disabled = true;
  try { await ask(question); } finally { document.getElementById("send").disabled = false; input.focus(); }
});
input.addEventListener("keydown", (event) => {
  if (event.key === "Enter" && (event.ctrlKey || event.metaKey)) form.requestSubmit();
});

// Opened with a question typed on /teacher/, or from a lab run's "explain this result": ask at once.
if (!turns.querySelector(".turn")) {
  if (root.dataset.firstQuestion) ask(root.dataset.firstQuestion);
  else if (new URLSearchParams(window.location.search).get("ask") === "explain") {
    ask("Explain this result: what do these numbers show, and why?");
  }
}
