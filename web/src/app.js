// The chat page: the conversation, the filters, and the knowledge-network panel.

import { api } from "./api.js";
import { clear, inertText } from "./dom.js";
import { NetworkPanel } from "./graph.js";
import { answerBubble, errorBubble, pendingBubble, userBubble } from "./render.js";

const $ = (id) => document.getElementById(id);

function readFilters() {
  const form = $("filter-form");
  const checked = (name) =>
    [...form.querySelectorAll(`input[name="${name}"]:checked`)].map((box) => box.value);
  const filters = {};
  const levels = checked("levels");
  const authorityTypes = checked("authority_types");
  if (levels.length) filters.levels = levels;
  if (authorityTypes.length) filters.authority_types = authorityTypes;
  if ($("record-type").value) filters.record_type = $("record-type").value;
  if ($("materials").value) filters.materials = [$("materials").value];
  if ($("date-from").value.trim()) filters.date_from = $("date-from").value.trim();
  if ($("date-to").value.trim()) filters.date_to = $("date-to").value.trim();
  if ($("within").value.trim()) filters.within = Number($("within").value.trim());
  return filters;
}

function describeFilters(filters) {
  const count = Object.keys(filters).length;
  return count ? `(${count} active)` : "";
}

function scrollToEnd() {
  const conversation = $("conversation");
  conversation.scrollTop = conversation.scrollHeight;
}

function main() {
  const network = new NetworkPanel({
    container: $("graph"),
    legend: $("legend"),
    details: $("details"),
    caption: $("graph-caption"),
  });
  // For the browser tests and for curious readers: the panel's cytoscape instance.
  window.naraNetwork = network;

  const actions = {
    highlight: (id) => network.highlight(id),
    showNetwork: (response) => network.draw(response),
    searchWithin: (naId, title) => {
      $("within").value = String(naId);
      $("within-title").textContent = title ? `within “${inertText(title)}”` : "";
      $("filters").open = true;
      updateFilterSummary();
      $("question").focus();
    },
  };

  function updateFilterSummary() {
    $("filter-summary").textContent = describeFilters(readFilters());
  }

  async function ask(question) {
    const conversation = $("conversation");
    conversation.append(userBubble(question));
    const pending = pendingBubble();
    conversation.append(pending);
    scrollToEnd();
    const request = { question, mode: $("mode").value, filters: readFilters() };
    const k = Number($("k").value);
    if (k) request.k = k;
    if ($("level").value !== "") request.level = Number($("level").value);
    $("ask-button").disabled = true;
    try {
      const reply = await api.ask(request);
      const bubble = reply.ok
        ? answerBubble(reply.body, actions)
        : errorBubble(reply.body.error || `HTTP ${reply.status}`);
      pending.replaceWith(bubble);
      if (reply.ok && reply.body.provenance.nodes.length) network.draw(reply.body);
    } finally {
      $("ask-button").disabled = false;
      scrollToEnd();
    }
  }

  $("ask-form").addEventListener("submit", (event) => {
    event.preventDefault();
    const question = $("question").value.trim();
    if (!question) return;
    $("question").value = "";
    ask(question);
  });
  $("question").addEventListener("keydown", (event) => {
    if (event.key === "Enter" && !event.shiftKey) {
      event.preventDefault();
      $("ask-form").requestSubmit();
    }
  });
  $("filter-form").addEventListener("change", updateFilterSummary);
  $("filter-form").addEventListener("submit", (event) => event.preventDefault());
  $("within").addEventListener("input", () => { $("within-title").textContent = ""; });
  $("clear-filters").addEventListener("click", () => {
    $("filter-form").reset();
    $("within-title").textContent = "";
    updateFilterSummary();
  });

  api.health().then((reply) => {
    const status = $("status");
    clear(status);
    if (reply.ok) {
      const graph = reply.body.graph;
      status.textContent = `${graph.records} records, ${graph.communities} communities; ` +
        `answers by ${reply.body.llm}`;
    } else {
      status.textContent = reply.body.neo4j || reply.body.error || "the server is not available";
      status.classList.add("unavailable");
    }
  });
}

main();
