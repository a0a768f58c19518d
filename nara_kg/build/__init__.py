"""What the graph-wide assets call: each stage computes what the graph should hold, compares it
with what it holds, and writes only the difference, so re-runs are cheap and converge to the same
graph after any interruption. After a change set from record_selection
(:mod:`nara_kg.ingest.stages.changes`), a writer whose last complete write is its base reads
and writes only the records it names and their neighbours. One module per asset group;
:mod:`.sync_state`, :mod:`.edge_sync` and :mod:`.mention_sync` hold the by-difference writing
the assets share."""
