// DOM helpers. Record text is untrusted catalog data: it only ever reaches the page through
// textContent and attribute setters, never as markup, links are built from naIds alone, and
// its bidirectional controls are removed (inertText).

// Embeddings, overrides and isolates (U+202A-U+202E, U+2066-U+2069): in catalog text they would
// reorder what follows them on the page, so a title could show its letters in another order
// than they are stored ("Trojan Source"). Catalog text never needs them: the browser's own
// bidirectional algorithm still lays out Arabic or Hebrew text.
const BIDI_CONTROLS = /[\u202A-\u202E\u2066-\u2069]/g;

export function inertText(value) {
  return String(value).replace(BIDI_CONTROLS, "");
}

export function el(tag, options = {}, children = []) {
  const node = document.createElement(tag);
  if (options.className) node.className = options.className;
  if (options.text !== undefined && options.text !== null) node.textContent = inertText(options.text);
  for (const [name, value] of Object.entries(options.attrs || {})) {
    if (value !== undefined && value !== null) node.setAttribute(name, inertText(value));
  }
  for (const child of children) {
    if (child !== null && child !== undefined) node.append(child);
  }
  return node;
}

const CATALOG = "https://catalog.archives.gov/id/";

export function catalogUrl(naId) {
  const id = String(naId);
  return /^\d+$/.test(id) ? CATALOG + id : null;
}

export function catalogLink(naId, text, className) {
  const href = catalogUrl(naId);
  const label = text || `Record ${naId}`;
  if (!href) return el("span", { className, text: label });
  return el("a", {
    className,
    text: label,
    attrs: { href, target: "_blank", rel: "noopener noreferrer", "data-na-id": naId },
  });
}

export function formatDates(start, end) {
  if (!start && !end) return "";
  // Whole years are stored as their first and last days: show them as years.
  const first = start ? String(start).replace(/-01-01$/, "") : "?";
  const last = end ? String(end).replace(/-12-31$/, "") : "?";
  if (!end || start === end) return start ? String(start) : last;
  return first === last ? first : `${first} – ${last}`;
}

export function clear(node) {
  while (node.firstChild) node.removeChild(node.firstChild);
}
