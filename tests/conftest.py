from __future__ import annotations

import pytest

from nara_kg.settings import apply_env_defaults

# The same defaults the CLI applies: tests see the environment a user of `nara-kg` sees.
apply_env_defaults()


@pytest.fixture(scope="session")
def embedder():  # type: ignore[no-untyped-def]
    from nara_kg.embedding import Embedder

    return Embedder()
