// The knowledge-network panel (seed 004): the provenance subgraph of an answer — records,
// authorities, communities and the relationships between them — drawn with cytoscape (from
// npm, served locally), coloured by type, with details on click.

import { api } from "./api.js";
import { catalogLink, clear, el, formatDates, inertText } from "./dom.js";
import { typeName } from "./render.js";

export const TYPE_COLORS = {
  collection: "#4b2c82",
  recordGroup: "#1f4e79",
  series: "#2e75b6",
  fileUnit: "#5fa2dd",
  item: "#9dc3e6",
  person: "#c55a11",
  organization: "#e69138",
  geographicPlaceName: "#38761d",
  topicalSubject: "#b8860b",
  specificRecordsType: "#7f7f7f",
  community: "#a64d79",
  record: "#999999",
};
const ROLE_NAMES = {
  answer: "used by the answer",
  retrieved: "retrieved",
  hierarchy: "in the hierarchy",
  authority: "related authority",
  "community member": "central member of a cited community",
};

function category(node) {
  if (node.id.startsWith("community:")) return "community";
  return TYPE_COLORS[node.type] ? node.type : "record";
}

function shortLabel(text, limit = 38) {
  const value = inertText(text || "");
  return value.length > limit ? `${value.slice(0, limit - 1)}…` : value;
}

export class NetworkPanel {
  constructor({ container, legend, details, caption }) {
    window.addEventListener("resize", () => {
      if (this.cy) {
        this.cy.resize();
        this.cy.fit(undefined, 24);
      }
    });
    this.container = container;
    this.legend = legend;
    this.details = details;
    this.caption = caption;
    this.cy = null;
    this.nodes = new Map();
    this.detailRequest = 0;
  }

  draw(response) {
    const provenance = response.provenance || { nodes: [], relationships: [] };
    this.nodes = new Map(provenance.nodes.map((node) => [node.id, node]));
    const elements = [];
    for (const node of provenance.nodes) {
      elements.push({
        group: "nodes",
        data: {
          id: node.id,
          label: shortLabel(node.title || node.communityId || node.naId),
          category: category(node),
          role: node.role,
          color: TYPE_COLORS[category(node)],
        },
      });
    }
    provenance.relationships.forEach((edge, index) => {
      if (!this.nodes.has(edge.source) || !this.nodes.has(edge.target)) return;
      elements.push({
        group: "edges",
        data: { id: `e${index}`, source: edge.source, target: edge.target, label: edge.type },
      });
    });
    if (this.cy) this.cy.destroy();
    // cytoscape is the vendored UMD build, loaded by a classic script before this module.
    this.cy = window.cytoscape({
      container: this.container,
      elements,
      style: [
        {
          selector: "node",
          style: {
            "background-color": "data(color)",
            label: "data(label)",
            "font-size": 9,
            "text-wrap": "ellipsis",
            "text-max-width": 120,
            "text-valign": "bottom",
            "text-margin-y": 3,
            color: "#222",
            width: 22,
            height: 22,
            "border-width": 1,
            "border-color": "#ffffff",
          },
        },
        { selector: "node[role = 'answer']", style: { width: 32, height: 32, "border-width": 4,
          "border-color": "#111111" } },
        { selector: "node[role = 'hierarchy']", style: { shape: "round-rectangle" } },
        { selector: "node[category = 'community']", style: { shape: "hexagon", width: 36,
          height: 36 } },
        { selector: "node[role = 'authority']", style: { shape: "diamond" } },
        { selector: "node:selected, node.highlighted", style: { "border-color": "#d4001a",
          "border-width": 5 } },
        {
          selector: "edge",
          style: {
            width: 1.5,
            "line-color": "#b0b0b0",
            "target-arrow-color": "#b0b0b0",
            "target-arrow-shape": "triangle",
            "curve-style": "bezier",
            label: "data(label)",
            "font-size": 7,
            color: "#555",
            "text-rotation": "autorotate",
          },
        },
      ],
      layout: { name: "cose", animate: false, padding: 24, nodeDimensionsIncludeLabels: true },
    });
    this.cy.on("tap", "node", (event) => this.showDetails(event.target.id()));
    // The panel may have been laid out after the graph: fit once it has its final size.
    this.cy.resize();
    this.cy.fit(undefined, 24);
    this.container.dataset.nodes = String(this.cy.nodes().length);
    this.container.dataset.edges = String(this.cy.edges().length);
    const question = response.question.length > 80
      ? `${response.question.slice(0, 79)}…` : response.question;
    this.caption.textContent =
      `${this.cy.nodes().length} nodes, ${this.cy.edges().length} relationships behind ` +
      `“${question}”. Click a node for details.`;
    this.drawLegend();
    clear(this.details);
  }

  drawLegend() {
    clear(this.legend);
    const present = new Set(this.cy.nodes().map((node) => node.data("category")));
    for (const [name, color] of Object.entries(TYPE_COLORS)) {
      if (!present.has(name)) continue;
      const swatch = el("span", { className: "swatch" });
      swatch.style.backgroundColor = color;
      this.legend.append(el("li", { attrs: { "data-category": name } },
        [swatch, el("span", { text: typeName(name) })]));
    }
  }

  highlight(id) {
    if (!this.cy) return;
    this.cy.nodes().removeClass("highlighted");
    const node = this.cy.getElementById(id);
    if (node && node.length) node.addClass("highlighted");
  }

  async showDetails(id) {
    const node = this.nodes.get(id);
    if (!node) return;
    this.highlight(id);
    const request = ++this.detailRequest;
    clear(this.details);
    const heading = node.naId !== undefined && node.naId !== null
      ? catalogLink(node.naId, node.title, "detail-title")
      : el("span", { className: "detail-title", text: node.title || id });
    this.details.append(el("h3", {}, [heading]));
    const facts = el("dl", { className: "detail-facts" });
    const fact = (term, value) => {
      if (value === undefined || value === null || value === "") return;
      facts.append(el("dt", { text: term }), el("dd", { text: value }));
    };
    fact("Type", typeName(category(node) === "record" ? node.type : category(node)));
    fact("Role", ROLE_NAMES[node.role] || node.role);
    fact("naId", node.naId);
    fact("Community", node.communityId);
    fact("Level", node.level);
    fact("Size", node.size);
    this.details.append(facts);
    if (node.summary) this.details.append(el("p", { className: "detail-summary",
      text: node.summary }));
    if (node.naId === undefined || node.naId === null) return;
    const reply = await api.record(node.naId);
    if (request !== this.detailRequest) return; // another node was clicked meanwhile
    if (!reply.ok) {
      this.details.append(el("p", { className: "detail-error", text: reply.body.error }));
      return;
    }
    const record = reply.body;
    const more = el("dl", { className: "detail-facts" });
    const add = (term, value) => {
      if (value) more.append(el("dt", { text: term }), el("dd", { text: value }));
    };
    add("Dates", formatDates(record.date_start, record.date_end));
    add("Hierarchy", record.hierarchy.slice(0, -1).map((h) => h.title || h.naId).join(" › "));
    add("Children", record.child_count ? String(record.child_count) : "");
    add("Authorities", record.authorities.map((a) => `${a.relationship}: ${a.heading}`)
      .join("; "));
    add("Describes", record.described_count ? `${record.described_count} records` : "");
    this.details.append(more);
    if (record.text) {
      const text = record.text.length > 600 ? `${record.text.slice(0, 599)}…` : record.text;
      this.details.append(el("p", { className: "detail-text", text }));
    }
  }
}
