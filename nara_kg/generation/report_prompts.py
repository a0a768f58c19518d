"""The prompt a model writes a community report from (seed 001's, GraphRAG's, adapted to
archival records)."""

from __future__ import annotations

from typing import Final

from nara_kg.generation.report_context import ReportContext

#: What the report holds and its JSON format: stated before the example and again after the
#: real data, as GraphRAG's prompt does.
_REPORT_STRUCTURE: Final = """The report should include the following sections:

- TITLE: community's name that represents its key records - title should be short but specific.
When possible, include representative named records, persons or organizations in the title.
- SUMMARY: An executive summary of the community's overall structure, how its records are related
to each other, and significant information associated with them.
- IMPACT RATING: a float score between 0-10 that represents the research significance of the
records in the community (0: marginal, 10: central to understanding their subject).
- RATING EXPLANATION: Give a single sentence explanation of the IMPACT RATING.
- DETAILED FINDINGS: A list of 5-10 key insights about the community. Each insight should have a
short summary followed by multiple paragraphs of explanatory text grounded according to the
grounding rules below. Be comprehensive.

Return output as a well-formed JSON-formatted string with the following format:
{{
"title": <report_title>,
"summary": <executive_summary>,
"rating": <impact_rating>,
"rating_explanation": <rating_explanation>,
"findings": [
{{
"summary":<insight_1_summary>,
"explanation": <insight_1_explanation>
}},
{{
"summary":<insight_2_summary>,
"explanation": <insight_2_explanation>
}}
...
]
}}

## Grounding Rules
Do not include information where the supporting evidence for it is not provided."""

#: Seed 001's community-report prompt (GraphRAG's), adapted from extracted entities to archival
#: records and authorities; `{input_text}` is the context. Doubled braces are literal braces.
REPORT_PROMPT: Final = (
    """
## Role
You are an AI assistant that helps an archivist or a researcher to perform information discovery
over records of the U.S. National Archives and Records Administration (NARA).
Information discovery is the process of identifying and assessing relevant information associated
with certain archival descriptions (record groups, collections, series, file units, items) and
authority records (persons, organizations, geographic places, topical subjects, specific record
types) within a network.

## Goal
Write a comprehensive report of a community of archival records, given a list of records that
belong to the community, their relationships (hierarchy: Includes; authority links such as
creator, subject, contributor, donor, personalReference) and, optionally, reports already written
for its sub-communities. The report tells researchers what this group of records documents and
why it matters.
The content of this report includes an overview of the community's key records and authorities,
who created them, which subjects, people, organizations, places and periods they cover, and how
they relate to each other.

## Report Structure

"""
    + _REPORT_STRUCTURE
    + """
Refer to records by their id where it helps, e.g. "[Records: 7001, 7002]".

## Example Input
-----------
Text:

-----Records-----
```csv
id,title,type,degree,excerpt
7001,Records of the Harbor Survey Commission,recordGroup,3,"Surveys, charts and letters."
7002,Harbor Soundings,series,2,Depth soundings of the northern harbor.
7003,Harbor Survey Commission,organization,2,A commission that surveyed harbors.
```
-----Relationships-----
```csv
id,source,target,type,degree
1,Records of the Harbor Survey Commission (7001),Harbor Soundings (7002),Includes,5
2,Harbor Survey Commission (7003),Harbor Soundings (7002),creator,4
```

Output:
{{
"title": "Harbor Survey Commission and its Harbor Soundings",
"summary": "The commission's record group includes its soundings [Records: 7001, 7002, 7003].",
"rating": 4.0,
"rating_explanation": "A small, coherent group of survey records with one creator.",
"findings": [
{{
"summary": "The record group holds the commission's surveys",
"explanation": "It holds surveys, charts and letters [Records: 7001, 7002]."
}},
{{
"summary": "The commission created the soundings",
"explanation": "It created the northern harbor depth soundings [Records: 7002, 7003]."
}}
]
}}

## Real Data
Use the following text for your answer. Do not make anything up in your answer.

Text:

{input_text}

"""
    + _REPORT_STRUCTURE
    + """

Output:
"""
)


def format_report_prompt(context: ReportContext) -> str:
    return REPORT_PROMPT.format(input_text=context.text)
