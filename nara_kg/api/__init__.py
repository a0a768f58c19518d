"""The question-answering surface: an HTTP API (FastAPI) and the chat page it serves."""

from __future__ import annotations

from nara_kg.api.app import create_app
from nara_kg.api.services import Services

__all__ = ["Services", "create_app"]
