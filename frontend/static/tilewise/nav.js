// The phone layout's menu: the navigation collapses behind a button that Enter, Space and a click open;
// Escape closes it and gives focus back to the button. Loaded in <head>: the `js` class lets the CSS
// collapse the navigation only where this script runs, so without it the links stay visible.
document.documentElement.classList.add("js");
document.addEventListener("DOMContentLoaded", () => {
  const button = document.getElementById("menu-toggle");
  const nav = document.getElementById("site-nav");
  if (!button || !nav) return;
  const setOpen = (open) => {
    nav.classList.toggle("open", open);
    button.setAttribute("aria-expanded", String(open));
  };
  button.addEventListener("click", () => setOpen(button.getAttribute("aria-expanded") !== "true"));
  nav.addEventListener("keydown", (event) => {
    if (event.key === "Escape" && nav.classList.contains("open")) {
      setOpen(false);
      button.focus();
    }
  });
});
