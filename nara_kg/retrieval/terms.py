"""How the rule-based (offline) path reads text: content words and their overlap with a
question, and the ``method`` label every answer carries (rule-based, or which model).

Content words: lower-cased ``[a-z0-9]`` runs, a possessive ``'s`` dropped, a plural ``-s``/``-ies``
folded (records -> record, bodies -> body), minus English stopwords, question words and a few
words every archival text shares (record, document, file, archive, ...); single letters are
dropped, digits kept (years matter).
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Final

import snowballstemmer

from nara_kg.generation.llm import LLM, describe

#: The `method` of a rule-based classification, and of an extractive answer.
METHOD_RULE_BASED: Final = "rule-based"
METHOD_EXTRACTIVE: Final = "extractive (rule-based)"

_STOPWORD_LINES: Final = (
    "a about above after again against all also am an and any are aren as at be because been",
    "before being below between both but by can cannot could couldn did didn do does doesn doing",
    "don down during each else ever every few for from further get got had hadn has hasn have",
    "haven having he her here hers herself him himself his how i if in into is isn it its itself",
    "just let ll me more most much must my myself no nor not now of off on once only or other",
    "ought our ours ourselves out over own please re same say said says shall she should",
    "shouldn so some such tell than that the their theirs them themselves then there these they",
    "this those through to too under until up upon us very via was wasn we were weren what when",
    "where which while who whom whose why will with within without won would wouldn ye yes yet",
    "you your yours yourself yourselves",
    # Request verbs: they say what to do, not what about.
    "give show list display find know like want need describe explain",
    # Words every archival text shares (extractive reports say "related records" everywhere).
    "record document file archive archival material information related item",
)
_STOPWORDS: Final = frozenset(word for line in _STOPWORD_LINES for word in line.split())

_WORD: Final = re.compile(r"[a-z0-9]+(?:'[a-z]+)?")


#: Distinct words and texts remembered by :func:`fold` and :func:`content_terms`: global search
#: scores the same report summaries and findings for every question, and their words recur.
_FOLDED_WORDS: Final = 65_536
_TERMS_OF_TEXTS: Final = 32_768


@lru_cache(maxsize=_FOLDED_WORDS)
def fold(word: str) -> str:
    """The word without a possessive `'s`, its plural folded (records -> record)."""
    if word.endswith("'s"):
        word = word[:-2]
    word = word.replace("'", "")
    if len(word) > 4 and word.endswith("ies"):
        return word[:-3] + "y"
    if len(word) > 3 and word.endswith("s") and not word.endswith(("ss", "us", "is")):
        return word[:-1]
    return word


@lru_cache(maxsize=_TERMS_OF_TEXTS)
def content_terms(text: str) -> frozenset[str]:
    """The content words of a text, folded as described in the module docstring."""
    terms: set[str] = set()
    for raw in _WORD.findall(text.lower()):
        word = fold(raw)
        if not word or raw in _STOPWORDS or word in _STOPWORDS:
            continue
        if len(word) < 2 and not word.isdigit():
            continue
        terms.add(word)
    return frozenset(terms)


#: Snowball's English (Porter 2) stemmer, from the well-kept `snowballstemmer` package (pure
#: Python, no data files): "photographed" and "photographer" both stem to "photograph".
_STEMMER: Final = snowballstemmer.stemmer("english")


@lru_cache(maxsize=_FOLDED_WORDS)
def stem(word: str) -> str:
    """A content word's stem (digits kept as they are)."""
    return word if word.isdigit() else str(_STEMMER.stemWord(word))


#: Stopwords that are content words when answers compare stems: "haven" (a temporary haven,
#: not "haven't") and the archival words a how-many question counts ("11 files").
_ANSWER_WORDS: Final = frozenset({"haven", "document", "file", "item", "record", "material"})


@lru_cache(maxsize=_TERMS_OF_TEXTS)
def stems(text: str) -> frozenset[str]:
    """The stems of a text's content words (:func:`content_terms`, less :data:`_ANSWER_WORDS`
    among the stopwords)."""
    terms = set(content_terms(text))
    for raw in _WORD.findall(text.lower()):
        word = fold(raw)
        if word in _ANSWER_WORDS:
            terms.add(word)
    return frozenset(stem(term) for term in terms)


def overlap(question_terms: frozenset[str], text: str) -> tuple[float, frozenset[str]]:
    """The fraction of the question's content words the text has, and those words."""
    if not question_terms:
        return 0.0, frozenset()
    shared = question_terms & content_terms(text)
    return len(shared) / len(question_terms), shared


def llm_method(llm: LLM) -> str:
    """The `method` of what a model classified or answered."""
    return f"llm ({describe(llm)})"
