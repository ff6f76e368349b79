"""The composition root: the configured embedder and store, built and checked together."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from docshelf.app import configured_embedder, open_configured_store
from docshelf.config import Config
from docshelf.embedders import LocalEmbedder, OpenAIEmbedder
from docshelf.errors import ConfigError, StoreError


def test_each_embedder_name_builds_its_embedder() -> None:
    assert isinstance(configured_embedder(Config(embedder="local")), LocalEmbedder)
    openai = configured_embedder(
        Config(embedder="openai", base_url="http://127.0.0.1:9/v1", model="m", dimensions=8)
    )
    assert isinstance(openai, OpenAIEmbedder)
    assert openai.dim == 8
    assert configured_embedder(Config(embedder="none")) is None
    with pytest.raises(ConfigError, match="unknown embedder"):
        configured_embedder(Config(embedder="word2vec"))


def test_a_store_made_without_embeddings_refuses_a_model_at_start_up(tmp_path: Path) -> None:
    config = Config(store=str(tmp_path / "store.sqlite3"), embedder="none")
    with open_configured_store(config, None) as store:
        assert (store.model_id, store.dim) == ("none", 0)
    local = LocalEmbedder()
    with pytest.raises(StoreError) as refused:
        open_configured_store(config, local)
    assert "none (0 dimensions)" in str(refused.value)
    assert "all-MiniLM-L6-v2 (384 dimensions)" in str(refused.value)
    assert local.device is None  # refused before any model was loaded


def test_the_store_is_created_for_the_configured_model(tmp_path: Path) -> None:
    config = Config(store=str(tmp_path / "deep" / "store.sqlite3"))
    with open_configured_store(config, LocalEmbedder()) as store:
        assert (store.model_id, store.dim) == ("sentence-transformers/all-MiniLM-L6-v2", 384)


def test_the_local_embedder_never_imports_httpx() -> None:
    code = (
        "import sys\n"
        "from docshelf.app import configured_embedder\n"
        "from docshelf.config import Config\n"
        "configured_embedder(Config())\n"
        "print('httpx' in sys.modules)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True
    )
    assert done.stdout.strip() == "False"
