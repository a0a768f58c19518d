"""Entity linking: authority records named in chunk text, found by their surface forms
(Aho-Corasick over normalized names) and settled by the record's context. Pure: no Neo4j, no
Dagster.

normalize -> surface_forms (from authorities) -> matcher -> disambiguate -> linker (`link_chunks`).
"""
