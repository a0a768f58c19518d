// The conversation's bubbles: the question, and each answer with how it was classified, the
// records it used (seed 000: dates and type, the hierarchy above, related authorities) or the
// communities a global answer cites.

import { catalogLink, el, formatDates } from "./dom.js";

const CONTAINERS = new Set(["recordGroup", "series", "fileUnit", "collection"]);
const LEVEL_NAMES = {
  recordGroup: "record group",
  fileUnit: "file unit",
  geographicPlaceName: "place",
  topicalSubject: "topical subject",
  specificRecordsType: "records type",
};

export function typeName(type) {
  return LEVEL_NAMES[type] || type || "record";
}

export function userBubble(text) {
  return el("div", { className: "bubble user", text });
}

export function pendingBubble() {
  return el("div", { className: "bubble answer pending", text: "Searching the catalog…" });
}

export function errorBubble(message) {
  return el("div", { className: "bubble error", attrs: { role: "alert" } }, [
    el("strong", { text: "Could not answer: " }),
    el("span", { className: "error-text", text: message }),
  ]);
}

function breadcrumb(record, actions) {
  const ancestors = (record.hierarchy || []).slice(0, -1);
  if (!ancestors.length) return null;
  const list = el("ol", { className: "breadcrumb-list" });
  for (const entry of ancestors) {
    const level = entry.levelOfDescription || entry.recordType || "";
    const item = el("li", {
      className: "breadcrumb-item",
      attrs: { "data-na-id": entry.naId, "data-level": level },
    }, [
      catalogLink(entry.naId, entry.title || `Record ${entry.naId}`, "breadcrumb-link"),
      el("span", { className: "breadcrumb-level", text: ` (${typeName(level)})` }),
    ]);
    if (CONTAINERS.has(level)) {
      const within = el("button", {
        className: "within-button",
        text: "search within",
        attrs: { type: "button", title: `Search only under ${entry.title || entry.naId}` },
      });
      within.addEventListener("click", () => actions.searchWithin(entry.naId, entry.title));
      item.append(within);
    }
    list.append(item);
  }
  return el("nav", { className: "breadcrumb", attrs: { "aria-label": "Hierarchy" } }, [
    el("span", { className: "breadcrumb-label", text: "In: " }),
    list,
  ]);
}

function authorityList(authorities) {
  if (!authorities || !authorities.length) return null;
  const list = el("ul", { className: "authorities" });
  for (const authority of authorities) {
    list.append(el("li", {
      className: "authority",
      attrs: { "data-na-id": authority.naId, "data-relationship": authority.relationship },
    }, [
      el("span", { className: "relationship", text: `${authority.relationship}: ` }),
      catalogLink(authority.naId, authority.heading || `Authority ${authority.naId}`,
        "authority-link"),
      el("span", {
        className: "authority-type",
        text: authority.authorityType ? ` (${typeName(authority.authorityType)})` : "",
      }),
    ]));
  }
  return list;
}

function isWebUrl(url) {
  try {
    const parsed = new URL(String(url));
    return parsed.protocol === "https:" || parsed.protocol === "http:";
  } catch {
    return false;
  }
}

// "online: 3 PDF / 1 JPEG", then a link to each object listed.
function onlineLinks(card) {
  const objects = (card.online || []).filter((object) => isWebUrl(object.url));
  if (!card.online_count || !objects.length) return null;
  const formats = Object.entries(card.online_formats || {})
    .map(([format, count]) => `${count} ${format}`).join(" / ");
  const seen = {};
  const links = objects.map((object) => {
    seen[object.format] = (seen[object.format] || 0) + 1;
    return el("a", {
      className: "online-link",
      text: `${object.format} ${seen[object.format]}`,
      attrs: { href: object.url, target: "_blank", rel: "noopener noreferrer" },
    });
  });
  const more = card.online_count > objects.length
    ? el("span", { className: "online-more", text: `+${card.online_count - objects.length} more` })
    : null;
  return el("div", { className: "record-online" }, [
    el("span", { className: "online-summary", text: `online: ${formats || card.online_count}` }),
    ...links,
    more,
  ]);
}

const UNRESTRICTED = "Unrestricted";

function restrictions(card) {
  const parts = [];
  if (card.access_restriction) parts.push(["access", card.access_restriction]);
  if (card.use_restriction) {
    const kinds = (card.use_restrictions || []).length ? ` (${card.use_restrictions.join(", ")})` : "";
    parts.push(["use", card.use_restriction + kinds]);
  }
  if (!parts.length) return null;
  return el("div", { className: "record-restrictions" }, parts.map(([kind, status]) =>
    el("span", {
      className: `restriction ${kind}` +
        (status.startsWith(UNRESTRICTED) ? " unrestricted" : " restricted"),
      text: `${kind === "access" ? "Access" : "Use"}: ${status}`,
      attrs: { "data-kind": kind },
    })));
}

export function recordCard(record, actions) {
  const dates = formatDates(record.date_start, record.date_end);
  const meta = el("div", { className: "record-meta" }, [
    el("span", { className: "record-type", text: typeName(record.type) }),
    dates
      ? el("span", {
        className: record.dates_inherited ? "record-dates inherited" : "record-dates",
        text: record.dates_inherited ? `${dates} (dates of its hierarchy)` : dates,
        attrs: record.dates_inherited
          ? { title: "The record has no dates of its own: these are its nearest dated ancestor's." }
          : {},
      })
      : null,
    record.materials && record.materials.length
      ? el("span", { className: "record-materials", text: record.materials.join(", ") })
      : null,
    el("span", { className: "record-naid", text: `naId ${record.naId}` }),
  ]);
  const title = catalogLink(record.naId, record.title, "record-title");
  const facts = record.card || {};
  const card = el("li", {
    className: "record",
    attrs: {
      "data-na-id": record.naId,
      "data-type": record.type,
      "data-date-start": record.date_start || "",
      "data-date-end": record.date_end || "",
    },
  }, [
    title,
    meta,
    record.excerpt ? el("p", { className: "record-excerpt", text: record.excerpt }) : null,
    onlineLinks(facts),
    restrictions(facts),
    facts.holding_archive
      ? el("div", { className: "record-holding", text: `Held by: ${facts.holding_archive}` })
      : null,
    breadcrumb(record, actions),
    authorityList(record.authorities),
  ]);
  card.addEventListener("mouseenter", () => actions.highlight(`record:${record.naId}`));
  return card;
}

function communityCard(report, actions) {
  const findings = (report.findings || []).slice(0, 5);
  const card = el("li", {
    className: "community",
    attrs: { "data-community-id": report.id },
  }, [
    el("strong", { className: "community-title", text: report.title }),
    el("span", {
      className: "community-meta",
      text: ` — community ${report.id}, level ${report.level}` +
        (report.size ? `, ${report.size} records` : "") + `, rating ${report.rating}`,
    }),
    el("p", { className: "community-summary", text: report.summary }),
    findings.length
      ? el("details", { className: "findings" }, [
        el("summary", { text: `Findings (${report.findings.length})` }),
        el("ul", {}, findings.map((finding) => el("li", {}, [
          el("strong", { text: finding.summary }),
          el("span", { text: finding.explanation ? ` — ${finding.explanation}` : "" }),
        ]))),
      ])
      : null,
  ]);
  card.addEventListener("mouseenter", () => actions.highlight(`community:${report.id}`));
  return card;
}

let bubbles = 0;
const MARKER = /\[(\d{1,3})\]/g;

// The cited card: scrolled to, flashed, and its node highlighted in the network.
function showSource(card, naId, actions) {
  card.scrollIntoView({ block: "nearest", behavior: "smooth" });
  card.classList.remove("flash");
  void card.offsetWidth; // restart the animation
  card.classList.add("flash");
  actions.highlight(`record:${naId}`);
}

function citationLink(citation, cards, actions) {
  const card = cards.get(Number(citation.na_id));
  const label = `[${citation.marker}]`;
  const attrs = {
    "data-marker": citation.marker,
    "data-na-id": citation.na_id,
    title: citation.title ? `Source: ${citation.title}` : `Source: record ${citation.na_id}`,
  };
  if (!card) return catalogLink(citation.na_id, label, "citation");
  const link = el("a", { className: "citation", text: label, attrs: { ...attrs, href: `#${card.id}` } });
  link.addEventListener("click", (event) => {
    event.preventDefault();
    showSource(card, citation.na_id, actions);
  });
  return link;
}

// The answer with each inline marker ("... 1944. [1]") made a link to the card it cites; a
// bracketed number that is no citation stays text.
function answerText(text, citations, cards, actions) {
  const paragraph = el("p", { className: "answer-text" });
  const byMarker = new Map(citations.map((citation) => [Number(citation.marker), citation]));
  let last = 0;
  for (const match of String(text).matchAll(MARKER)) {
    const citation = byMarker.get(Number(match[1]));
    if (!citation) continue;
    paragraph.append(document.createTextNode(text.slice(last, match.index)));
    paragraph.append(citationLink(citation, cards, actions));
    last = match.index + match[0].length;
  }
  paragraph.append(document.createTextNode(text.slice(last)));
  return paragraph;
}

// Mark each cited card as a source, with its markers: "source [1] [3]".
function markSources(citations, cards) {
  const markers = new Map();
  for (const citation of citations) {
    const key = Number(citation.na_id);
    if (!cards.has(key)) continue;
    markers.set(key, [...(markers.get(key) || []), citation.marker]);
  }
  for (const [naId, list] of markers) {
    const card = cards.get(naId);
    card.classList.add("source");
    card.setAttribute("data-source-markers", list.join(" "));
    const badge = el("span", {
      className: "source-badge",
      text: `source ${list.map((marker) => `[${marker}]`).join(" ")}`,
    });
    card.querySelector(".record-title").after(badge);
  }
}

export function answerBubble(response, actions) {
  const showRecords = response.request_type === "show_records";
  const bubble = el("div", {
    className: "bubble answer" + (response.refused ? " refused" : ""),
    attrs: {
      "data-request-type": response.request_type,
      "data-mode": response.mode,
      "data-refused": String(response.refused),
    },
  });
  const badges = el("div", { className: "meta" }, [
    el("span", {
      className: "badge classification",
      text: response.request_type,
      attrs: { title: `classified by ${response.classification_method}` },
    }),
    el("span", { className: "badge mode", text: `${response.mode} search` }),
    response.level !== null && response.level !== undefined
      ? el("span", { className: "badge level", text: `level ${response.level}` })
      : null,
    el("span", { className: "method", text: response.method }),
    el("span", { className: "latency", text: `${Math.round(response.latency_ms)} ms` }),
  ]);
  bubble.append(badges);

  if (response.fallback) {
    bubble.append(el("p", {
      className: "fallback",
      text: `The LLM (${response.fallback.from}) did not answer; answered extractively.`,
    }));
  }
  if (showRecords) {
    const count = (response.records || []).length;
    bubble.append(el("p", {
      className: "answer-text",
      text: count ? `${count} records for your request:` : "No records match your request.",
    }));
  }
  bubbles += 1;
  const cards = new Map();
  for (const record of response.records || []) {
    const card = recordCard(record, actions);
    card.id = `answer-${bubbles}-record-${record.naId}`;
    if (!cards.has(Number(record.naId))) cards.set(Number(record.naId), card);
  }
  const citations = response.refused ? [] : response.answer_citations || [];
  if (!showRecords) {
    if (response.follow_up) {
      bubble.append(el("p", {
        className: "follow-up-note",
        text: `Read as a follow-up: “${response.follow_up.question}”`,
      }));
    }
    const answer = answerText(response.answer || "", citations, cards, actions);
    if (response.refused) answer.classList.add("refusal");
    bubble.append(answer);
    markSources(citations, cards);
  }
  const filters = Object.entries(response.filters || {});
  if (filters.length) {
    bubble.append(el("p", {
      className: "applied-filters",
      text: "Filters: " + filters.map(([k, v]) => `${k} = ${[].concat(v).join(", ")}`).join("; "),
    }));
  }
  if (response.records && response.records.length) {
    bubble.append(el("h3", { text: showRecords ? "Records" : "Records used" }));
    bubble.append(el("ol", { className: "records" }, [...cards.values()]));
  }
  if (response.community_reports && response.community_reports.length) {
    bubble.append(el("h3", { text: "Communities cited" }));
    bubble.append(el("ol", { className: "communities" },
      response.community_reports.map((report) => communityCard(report, actions))));
  }
  const nodes = response.provenance ? response.provenance.nodes.length : 0;
  if (nodes) {
    const show = el("button", {
      className: "show-network",
      text: `Show knowledge network (${nodes} nodes)`,
      attrs: { type: "button" },
    });
    show.addEventListener("click", () => actions.showNetwork(response));
    bubble.append(show);
  }
  return bubble;
}
