"""Words too common to identify an authority (a data table; the rule is in `surface_forms`).

`COMMON_WORDS`: a one-word surface form among them is never linked ("Photographs", "Interior",
"May" name nothing in particular in running text). `GENERIC_PHRASE_WORDS`: a longer form made
only of these and numbers is never linked ("Office of the Secretary", "Division of Personnel":
every department has one); it is the smaller list, so that a specific name built of ordinary
words ("National Park Service", "White House", "United States") is still linked. The words are
normalized (lower case, no punctuation), as `normalize` writes them.
"""

from __future__ import annotations

from typing import Final

_FUNCTION_WORDS: Final = """
a about above after again against all also am an and any are as at be because been before being
below between both but by can could did do does doing down during each few for from further had
has have having he her here hers herself him himself his how i if in into is it its itself just
me more most my myself no nor not now of off on once only or other our ours out over own same
she should so some such than that the their theirs them themselves then there these they this
those through to too under until up upon very was we were what when where which while who whom
why will with within without would you your yours
"""

_COMMON_WORDS: Final = """
action activities activity affairs area areas art arts association authority bank black board
book books branch brown building bureau business camp case center central change church city
civil class club college commission committee common community company conference congress
corps council country county court day defense department development director district
division east education employment energy executive family federal field file files finance
fire first foreign forest free general government great green group hall health high history
home hospital house human information institute interior internal international island justice
labor land law league library life line little local main management marine market medical
member members men military mission national natural navy new north office officer official
operations order park party peace people personnel place plan planning point policy post
power president press program project public railroad records region regional relations
report reports research reserve river road rock royal rural school science second security
senate service services social society south special staff state states station street
study survey system table team third town trade training transportation treasury trust union
unit united university valley war water west white women work works world young
"""

_UNIT_WORDS: Final = """
administration administrative administrator agency assistant board boards branch bureau central
chief commission committee council deputy department director division executive field general
headquarters office officer offices personnel regional secretary section service staff unit
"""

_RECORDS_WORDS: Final = """
agreements annual bill bills certificates chart charts circulars clippings contracts
correspondence diaries drawings files forms indexes inventories journals ledgers letters lists
manuals maps memoranda memorandum minutes notes orders papers photographs pictures plans posters
proceedings publications registers reports returns schedules scrapbooks secretary speeches
statements studies subject subjects transcripts
"""

_CALENDAR_WORDS: Final = """
january february march april may june july august september october november december
monday tuesday wednesday thursday friday saturday sunday spring summer autumn fall winter
"""

GENERIC_PHRASE_WORDS: Final[frozenset[str]] = frozenset(
    (_FUNCTION_WORDS + _UNIT_WORDS + _RECORDS_WORDS + _CALENDAR_WORDS).split()
)
COMMON_WORDS: Final[frozenset[str]] = GENERIC_PHRASE_WORDS | frozenset(_COMMON_WORDS.split())
