"""`nara-kg serve`: the API and the chat page under uvicorn."""

from __future__ import annotations

from collections.abc import Callable

from nara_kg.api.limits import DEFAULT_RATE_PER_MINUTE

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8000


def serve(
    host: str = DEFAULT_HOST,
    port: int = DEFAULT_PORT,
    *,
    rate_per_minute: int = DEFAULT_RATE_PER_MINUTE,
    log: Callable[[str], None] = print,
) -> None:
    """Run until interrupted. One worker process: the embedding model is loaded once, and the
    endpoints run on its thread pool."""
    import uvicorn

    from nara_kg.api.app import STATIC_DIR, create_app

    if not (STATIC_DIR / "index.html").is_file():
        log("note: the chat page is not built yet: run `make web` (web/build.sh); the API works")
    app = create_app(rate_per_minute=rate_per_minute)
    log(f"chat page on http://{host}:{port}/  API schema: http://{host}:{port}/docs")
    uvicorn.run(app, host=host, port=port, log_level="info", access_log=False)
