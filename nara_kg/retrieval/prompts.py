"""The prompts a model answers with, verbatim from the seeds, and the refusal sentence.

Seed 000's request classification and grounded-answer prompts, and GraphRAG's global search
map/reduce prompts (seed 001's ``GLOBAL_MAP_POINTS``/``GLOBAL_QUERY``, with the procedure of
seeds 002/003). The rule-based (offline) path uses none of them but the refusal.
"""

from __future__ import annotations

from typing import Final

#: Seed 000's refusal sentence, returned verbatim whenever the context lacks the answer.
REFUSAL: Final = "I cannot respond to your request based on the available archival materials."

#: Seed 000's classification prompt, verbatim.
CLASSIFICATION_PROMPT: Final = """
Classify the type of user request. Reply with only one word:
- "question": if this is a question that needs an answer;
- "show_records": if the user is directly asking to display, list, show, etc.
archival materials/documents/full texts/records/sources.

If the request does NOT explicitly ask to display, list, show, etc., classify as
"question".

Examples:

Request: Why is the sky blue?
Output: question

Request: Show me documents about politics.
Output: show_records

Request: List the sources.
Output: show_records

Request: Give me all related documents.
Output: show_records

Request: Who was president in 1952?
Output: question
"""

#: Seed 000's answer prompt, verbatim (less one trailing space after "constituencies.").
ANSWER_PROMPT: Final = """
Answer the question based ONLY on the provided context.
Use ONLY information and wording from the context.
Do NOT add information that is not explicitly stated in the context,
even if it seems logical or obvious.
Do NOT include extra information that is present in the context but is not
directly relevant to the question.
If the context doesn't contain an answer to the question, say "I cannot
respond to your request based on the available archival materials."
Answer in one or maximum two sentences.

Examples:

Context: Title: Discussion with Congressman Y Text: Congressman Y talked
about his role in a particular panel, highlighting that the working groups
operate with significant autonomy. He mentioned that the responsibilities are
extremely intensive, hindering participants from adequately participating in
additional congressional tasks and attending to their constituencies.
Question: What did Congressman Y say about the panel's workload?
Answer: Congressman Y said the responsibilities are extremely intensive,
hindering participants from adequately participating in additional
congressional tasks and attending to their constituencies.

Context: Title: Interview with Legislator B Text: The speaker indicated
a preference for a collaborative dynamic with federal bureaus, involving
mutual idea-sharing. Conversely, he portrayed a fellow lawmaker, Mr. Q, who
often employs aggressive rhetoric and harbors suspicion toward these entities.
Question: How does the Legislator B's method with bureaus contrast with Mr. Q's?
Answer: Legislator B favors collaboration and mutual idea-sharing, whereas Mr.
Q employs aggressive rhetoric and shows suspicion.

Context: Title: Dialogue with Lawmaker C Text: Lawmaker C pointed out that
an individual with intense personal stakes in a specific issue domain ought not
to be placed on the task force overseeing it, since they might lack
impartiality.
Question: According to Lawmaker C, what kind of individual should avoid
placement on a task force?
Answer: An individual with intense personal stakes in a specific issue domain
should not be placed on the task force overseeing it, as they might lack
impartiality.

Context: Title: Study Notes on a Task Force Text: The document describes
assignment to a particular task force as a secondary role due to its divisive
nature. It emphasizes that participants should secure an additional, more
favorable position as well.
Question: Why is assignment to this task force viewed as a secondary role?
Answer: It is viewed as a secondary role due to its divisive nature, and the
document emphasizes that participants should secure an additional, more
favorable position.

Context: Title: Meeting with Senator Z Text: Senator Z discussed the
procedural hurdles in forming a bipartisan committee, noting that scheduling
conflicts among senior members have caused significant delays. He expressed
hope that the committee would be operational by the next fiscal quarter.
Question: What views did Senator Z express about tax reforms?
Answer: I cannot respond to your request based on the available archival
materials.
"""

#: The map step's goal and output format: stated before the reports and again after the query,
#: as GraphRAG's prompt does.
_MAP_GOAL: Final = """---Goal---

Generate a response consisting of a list of key points that responds to the user's question,
summarizing all relevant information in the input community reports.

You should use the data provided in the community reports below as the primary context for
generating the response.
If you don't know the answer or if the input reports do not contain sufficient information to
provide an answer, just say so. Do not make anything up.

Each key point in the response should have the following elements:
- description: A comprehensive description of the point.
- score: An integer score between 0-100 that indicates how important the point is in answering
the user's question. An 'I don't know' type of response should have a score of 0.
- community_id: the id of the community report that supports the point."""

#: Seed 001's GLOBAL_MAP_POINTS (GraphRAG's map prompt), for archival community reports, with
#: JSON output and the supporting report's id on each point. `{context_data}`, `{query}`.
MAP_PROMPT: Final = (
    """
You are a helpful assistant responding to questions about records of the U.S. National Archives,
summarised in the community reports provided.


"""
    + _MAP_GOAL
    + """

The response should be JSON formatted as follows:
{{
"points": [
{{"description": "Description of point 1...", "score": score_value, "community_id": "id"}},
{{"description": "Description of point 2...", "score": score_value, "community_id": "id"}}
]
}}

The response shall preserve the original meaning and use of modal verbs such as "shall", "may"
or "will".
Do not include information where the supporting evidence for it is not provided.


---Community reports---

{context_data}

---User query---

{query}

"""
    + _MAP_GOAL
    + """

The response shall preserve the original meaning and use of modal verbs such as "shall", "may"
or "will".
Do not include information where the supporting evidence for it is not provided.

The response should be JSON formatted as follows:
{{
"points": [
{{"description": "Description of point 1...", "score": score_value, "community_id": "id"}},
{{"description": "Description of point 2...", "score": score_value, "community_id": "id"}}
]
}}
"""
)

#: Seed 001's GLOBAL_QUERY, with GraphRAG's reduce instructions (analysts' points, best first)
#: and seed 000's refusal sentence. `{report_data}`, `{query}`.
REDUCE_PROMPT: Final = (
    """
## Role
You are a helpful assistant responding to questions about records of the U.S. National Archives
by synthesizing the key points of multiple analysts who each read some community reports.

## User Query
{query}

## Context
The analysts' key points, in descending order of importance:

{report_data}

## Task
Based ONLY on the given context, please provide a response to the user query. Use the
analysts' points in order of importance; ignore points that do not help answer the query.
Do not mention the analysts or their scores. Do not make anything up.
If the context does not contain an answer to the query, reply exactly:
"""
    + f'"{REFUSAL}"'
    + """

## Your Response
"""
)


def is_refusal(text: str) -> bool:
    """True when a model's reply is (or contains) the refusal sentence, however spaced."""
    normalized = " ".join(text.split()).lower()
    return " ".join(REFUSAL.split()).lower().rstrip(".") in normalized
