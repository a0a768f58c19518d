// The chat page: the conversation, the filters, and the knowledge-network panel.

import { api } from "./api.js";
import { clear, el, inertText } from "./dom.js";
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

// The conversation the API reads follow-ups against: the last few turns, each with the
// records its answer cited, then those it found first (the API is stateless).
const MAX_TURNS = 6;
const MAX_TURN_RECORDS = 20;
const MAX_ANSWER_CHARS = 4000;

export function turnOf(response) {
  const cited = (response.answer_citations || []).map((citation) => Number(citation.na_id));
  const found = (response.records || []).map((record) => Number(record.naId));
  const naIds = [...new Set([...cited, ...found])].filter((id) => id > 0)
    .slice(0, MAX_TURN_RECORDS);
  return {
    // A follow-up is remembered as the standalone question it was read as, so the next
    // follow-up builds on that.
    question: (response.follow_up && response.follow_up.question) || response.question,
    answer: response.answer ? String(response.answer).slice(0, MAX_ANSWER_CHARS) : null,
    na_ids: naIds,
    filters: response.filters || {},
  };
}

// How the status line names who writes the answers.
export function answeredBy(llm) {
  const [backend, model] = String(llm || "").split(":");
  if (!backend || backend === "extractive") {
    return "answers quoted from the records themselves (no language model)";
  }
  return `answers written by the language model ${model || backend}, from the records`;
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

  let history = [];

  async function ask(question) {
    const conversation = $("conversation");
    conversation.append(userBubble(question));
    const pending = pendingBubble();
    conversation.append(pending);
    scrollToEnd();
    const request = { question, mode: $("mode").value, filters: readFilters() };
    if (history.length) request.history = history.slice(-MAX_TURNS);
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
      if (reply.ok) {
        history = [...history, turnOf(reply.body)].slice(-MAX_TURNS);
        $("new-conversation").disabled = false;
      }
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
  $("new-conversation").disabled = true;
  $("new-conversation").addEventListener("click", () => {
    history = [];
    $("new-conversation").disabled = true;
    $("conversation").append(el("div", {
      className: "bubble system new-topic",
      text: "New conversation: the next question starts afresh.",
    }));
    scrollToEnd();
    $("question").focus();
  });
  $("filter-form").addEventListener("change", updateFilterSummary);
  $("filter-form").addEventListener("submit", (event) => event.preventDefault());
  $("within").addEventListener("input", () => { $("within-title").textContent = ""; });
  $("clear-filters").addEventListener("click", () => {
    $("filter-form").reset();
    $("within-title").textContent = "";
    updateFilterSummary();
  });

  showExamples(ask);
  api.health().then((reply) => {
    const status = $("status");
    clear(status);
    if (reply.ok) {
      const graph = reply.body.graph;
      status.textContent = `${graph.records.toLocaleString("en-US")} records` +
        (graph.communities ? `, grouped into ${graph.communities.toLocaleString("en-US")} themes` : "") +
        `; ${answeredBy(reply.body.llm)}`;
    } else {
      status.textContent = reply.body.neo4j || reply.body.error || "the server is not available";
      status.classList.add("unavailable");
    }
  });
}

function showExamples(ask) {
  api.examples().then((reply) => {
    const box = $("examples");
    clear(box);
    if (!reply.ok || !reply.body.questions.length) return;
    box.append(el("span", { className: "examples-label", text: "Try, from these records: " }));
    for (const question of reply.body.questions) {
      const button = el("button", {
        className: "example",
        text: question,
        attrs: { type: "button" },
      });
      button.addEventListener("click", () => ask(question));
      box.append(button);
    }
  });
}

main();
