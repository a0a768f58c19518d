"""Cypher, one module per concern. Every statement is parameterized; labels and relationship
types reach a statement only through :mod:`nara_kg.model.schema`'s allow-lists."""
