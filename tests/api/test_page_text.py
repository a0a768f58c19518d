"""Catalog text on the chat page: bidirectional embeddings, overrides and isolates are removed
before text reaches the DOM (web/src/dom.js), so a title cannot show its letters in another
order than they are stored. Runs the page's own module in Node.js with a stand-in document."""

from __future__ import annotations

import json
import shutil
import subprocess

import pytest

from nara_kg.settings import PROJECT_ROOT

DOM_JS = PROJECT_ROOT / "web" / "src" / "dom.js"
CONTROLS = [chr(c) for c in (*range(0x202A, 0x202F), *range(0x2066, 0x206A))]
#: "Invoice for fdp.exe" shown, "exe.pdf" stored: the RLO makes the page lie.
HOSTILE = "Invoice \u202egnp.exe\u202c \u2067isolated\u2069 \u202aemb\u202b\u202dx\u202c"

SCRIPT = """
const made = [];
globalThis.document = {
  createElement(tag) {
    const node = { tag, attrs: {}, children: [], className: "", textContent: "",
      setAttribute(name, value) { this.attrs[name] = value; },
      append(child) { this.children.push(child); } };
    made.push(node);
    return node;
  },
};
const dom = await import(process.argv[1]);
const text = process.argv[2];
const node = dom.el("span", { text, attrs: { title: text, "data-x": text } });
const link = dom.catalogLink(42, text, "record");
process.stdout.write(JSON.stringify({
  text: node.textContent, title: node.attrs.title, data: node.attrs["data-x"],
  link: link.textContent,
  inert: typeof dom.inertText === "function" ? dom.inertText(text) : null,
  arabic: typeof dom.inertText === "function" ? dom.inertText("\u0633\u062c\u0644 1942") : null,
}));
"""


@pytest.mark.skipif(shutil.which("node") is None, reason="needs Node.js (it builds the page)")
def test_bidirectional_controls_are_inert_on_the_page() -> None:
    result = subprocess.run(
        ["node", "--input-type=module", "-e", SCRIPT, DOM_JS.as_uri(), HOSTILE],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    shown = json.loads(result.stdout)
    expected = "Invoice gnp.exe isolated embx"
    for key in ("text", "title", "data", "link", "inert"):
        assert shown[key] == expected, (key, shown[key])
        assert not any(control in shown[key] for control in CONTROLS)
    # Right-to-left text itself is untouched: only the controls go.
    assert shown["arabic"] == "\u0633\u062c\u0644 1942"
