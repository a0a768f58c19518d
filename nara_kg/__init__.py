"""NARA catalog -> GraphRAG knowledge graph: the pure core behind the Dagster code location."""

__version__ = "0.1.0"
