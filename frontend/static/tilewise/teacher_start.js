// /teacher/: Ctrl+Enter (or Cmd+Enter) sends the first question, as it does in a conversation.
const form = document.getElementById("first-question-form");
const input = form.querySelector("textarea");
input.addEventListener("keydown", (event) => {
  if (event.key === "Enter" && (event.ctrlKey || event.metaKey)) form.requestSubmit();
});
input.focus();
