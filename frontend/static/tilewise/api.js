// Small fetch helpers for the JSON API: session cookie + CSRF header, errors as readable text.

function csrfToken() {
  const match = document.cookie.match(/(?:^|; )csrftoken=([^;]+)/);
  return match ? decodeURIComponent(match[1]) : "";
}

export class ApiError extends Error {
  constructor(status, body) {
    super(ApiError.describe(status, body));
    this.status = status;
    this.body = body;
  }

  static describe(status, body) {
    if (body && typeof body.detail === "string") return body.detail;
    if (body && typeof body === "object") {
      return Object.entries(body).map(([field, msgs]) => `${field}: ${[].concat(msgs).join(" ")}`).join("; ");
    }
    return `The server answered ${status}.`;
  }
}

export async function api(url, { method = "GET", body } = {}) {
  const options = { method, headers: { Accept: "application/json" }, credentials: "same-origin" };
  if (body !== undefined) {
    options.headers["Content-Type"] = "application/json";
    options.headers["X-CSRFToken"] = csrfToken();
    options.body = JSON.stringify(body);
  }
  const response = await fetch(url, options);
  const data = await response.json().catch(() => null);
  if (!response.ok) throw new ApiError(response.status, data);
  return data;
}
