"""A faster path for a search's query: the loaded model's transformer, exported once to ONNX and
run with ONNX Runtime on the CPU.

Constraints:
- Same vectors: only a model made of a Transformer, mean Pooling and Normalize (as
  all-MiniLM-L6-v2 is) takes this path, tokenised with the model's own tokenizer and maximum
  length; the vectors match the torch model's to about 1e-7. Any other model, a GPU, a missing
  onnx or onnxruntime, or a failed export leaves the embedder on torch.
- For short calls only: one query through ONNX Runtime takes 4.4 ms here against 11 to 15 ms
  through torch (BENCHMARKS.md); batches of an index stay on torch.
- The export happens once per machine and model: the files are cached, written whole or not at
  all. The weights are a file of their own, which ONNX Runtime maps rather than copies.
- Without torch: beside the export goes what a query needs besides it (the tokenizer, its
  truncation and padding, the width), so a later process embeds its queries from the cache with
  ONNX Runtime and the `tokenizers` library alone (`OnnxQueryEncoder.cached`), a second instead of
  the 15 that importing torch and sentence-transformers takes on 2 cores. torch loads only for a
  batch, or when the cache lacks the model.
- The int8 model (`quantize`): the export's weights quantized to int8 by ONNX Runtime's dynamic
  quantization, `<key>.int8.onnx` beside the export, with the same query file. Its vectors are
  not the float model's, so it is a model of its own (embedders/local.py), for documents and
  queries alike.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import tempfile
import warnings
from importlib import metadata
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np

from docshelf.rows import Vector

if TYPE_CHECKING:
    from sentence_transformers import SentenceTransformer

log = logging.getLogger("docshelf.embedders")

# The ONNX operator set of the export: supported by every onnxruntime of the last years.
OPSET = 17

# Threads of one ONNX Runtime session: a query is small, and two keep a core for the rest of the
# search (the store's full-text ranking runs beside it on a busy server).
SESSION_THREADS = 2

_INPUTS = ("input_ids", "attention_mask", "token_type_ids")

# The version of the file beside an export that lets a query skip torch (`<key>.query.json`).
QUERY_FORMAT = 1

# The export's weights, in a file of their own beside its graph (`<key>.onnx`).
WEIGHTS_SUFFIX = ".weights"

# The layout of an export, part of its cache key: 2 keeps the weights out of the graph.
EXPORT_FORMAT = 2

# The int8 model's graph, beside the export it is quantized from; the name changes with the
# quantization's settings.
INT8_SUFFIX = ".int8-v1.onnx"


class Tokenize(Protocol):
    def __call__(self, texts: list[str]) -> dict[str, np.ndarray]: ...


class OnnxQueryEncoder:
    """The ONNX Runtime session of one model, with the tokenizer that feeds it."""

    def __init__(self, session: Any, tokenize: Tokenize, inputs: list[str], dim: int) -> None:
        self._session = session
        self._tokenize = tokenize
        self._inputs = inputs
        self.dim = dim

    @classmethod
    def build(
        cls, model: SentenceTransformer, source: str, cache_dir: Path
    ) -> OnnxQueryEncoder | None:
        """The encoder of `model`, exporting it to `cache_dir` the first time; None when the model
        or this install cannot take the ONNX path (the reason is logged)."""
        try:
            import onnxruntime as ort  # noqa: PLC0415 - optional, and heavy to import
        except ImportError:
            log.info("onnxruntime is not installed: queries are embedded with torch")
            return None
        modules = [type(m).__name__ for m in model]
        pooling = getattr(model[1], "pooling_mode", None) if len(modules) > 1 else None
        if modules != ["Transformer", "Pooling", "Normalize"] or pooling != "mean":
            log.info("model %s is %s: queries are embedded with torch", source, modules)
            return None
        tokenizer = model.tokenizer
        if model.max_seq_length is None:
            log.info("model %s states no maximum length: queries are embedded with torch", source)
            return None
        max_length = int(model.max_seq_length)
        sample = tokenizer(["docshelf"], return_tensors="np")
        inputs = [name for name in _INPUTS if name in sample]
        key = _key(source)
        path = cache_dir / f"{key}.onnx"
        try:
            if not (path.exists() and path.with_suffix(WEIGHTS_SUFFIX).exists()):
                _export(model, inputs, sample, path)
            session = _session(ort, path)
        except Exception as e:  # onnx, torch and file system errors alike: torch still works
            log.warning("ONNX export of %s failed (%s): queries are embedded with torch", source, e)
            return None
        dim = model_width(model) or 0
        query = cache_dir / f"{key}.query.json"
        if not query.exists():
            _write_query_file(query, tokenizer, max_length, inputs, dim)

        def tokenize(texts: list[str]) -> dict[str, np.ndarray]:
            batch = tokenizer(
                texts, padding=True, truncation=True, max_length=max_length, return_tensors="np"
            )
            return {name: np.asarray(batch[name]) for name in (*inputs, "attention_mask")}

        return cls(session, tokenize, inputs, dim)

    @classmethod
    def cached(
        cls, source: str, cache_dir: Path, *, int8: bool = False, threads: int = SESSION_THREADS
    ) -> OnnxQueryEncoder | None:
        """The encoder of `source` (or of its int8 model) from an earlier export, with neither
        torch nor transformers; None when the cache lacks it (or onnxruntime or tokenizers is
        missing, or the files do not load: the reason is logged)."""
        key = _key(source)
        path, query = cache_dir / f"{key}.onnx", cache_dir / f"{key}.query.json"
        if int8:
            path = cache_dir / f"{key}{INT8_SUFFIX}"
            if not (path.exists() and query.exists()):
                return None
        elif not (path.exists() and path.with_suffix(WEIGHTS_SUFFIX).exists() and query.exists()):
            return None
        try:
            import onnxruntime as ort  # noqa: PLC0415 - optional, and heavy to import
            from tokenizers import Tokenizer  # noqa: PLC0415

            held = json.loads(query.read_text(encoding="utf-8"))
            if held.get("format") != QUERY_FORMAT:
                return None
            tokenizer = Tokenizer.from_str(held["tokenizer"])
            tokenizer.enable_truncation(int(held["max_length"]), **held["truncation"])
            tokenizer.enable_padding(**held["padding"])
            inputs = [str(name) for name in held["inputs"]]
            dim = int(held["dim"])
            session = _session(ort, path, threads)
        except Exception as e:  # a missing library, a damaged file: torch builds it again
            log.info("the cached ONNX model of %s does not load (%s): using torch", source, e)
            return None

        def tokenize(texts: list[str]) -> dict[str, np.ndarray]:
            encoded = tokenizer.encode_batch(texts)
            return {
                "input_ids": np.array([e.ids for e in encoded], dtype=np.int64),
                "attention_mask": np.array([e.attention_mask for e in encoded], dtype=np.int64),
                "token_type_ids": np.array([e.type_ids for e in encoded], dtype=np.int64),
            }

        return cls(session, tokenize, inputs, dim)

    def encode(self, texts: list[str], *, shrink: bool = False) -> Vector:
        """One L2-normalised float32 row per text: mean pooling over the tokens, as the model.
        With `shrink`, the session's memory arena gives back what this call grew it by (for a
        batch of documents, far larger than a query)."""
        batch = self._tokenize(texts)
        feed = {name: batch[name].astype(np.int64) for name in self._inputs}
        options = None
        if shrink:
            import onnxruntime as ort  # noqa: PLC0415 - loaded with the session already

            options = ort.RunOptions()
            options.add_run_config_entry("memory.enable_memory_arena_shrinkage", "cpu:0")
        (hidden,) = self._session.run(["hidden"], feed, options)
        mask = batch["attention_mask"][..., None].astype(np.float32)
        pooled = (hidden * mask).sum(axis=1) / np.maximum(mask.sum(axis=1), 1e-9)
        norms = np.linalg.norm(pooled, axis=1, keepdims=True)
        return np.ascontiguousarray(pooled / np.maximum(norms, 1e-12), dtype=np.float32)


def model_width(model: SentenceTransformer) -> int | None:
    """The width of the model's vectors, as it states it (None: it does not), under the name of
    either sentence-transformers release."""
    get_width = getattr(model, "get_embedding_dimension", None) or (
        model.get_sentence_embedding_dimension
    )
    width = get_width()
    return None if width is None else int(width)


def quantize(source: str, cache_dir: Path) -> None:
    """Write the int8 model of `source` from its export in `cache_dir` (which must be there),
    whole or not at all: every MatMul's weights quantized to signed 8 bits, a scale per output
    channel, activations quantized as each batch runs (ONNX Runtime's dynamic quantization).
    A scale per channel keeps the vectors much nearer the float model's: on 64 traefik texts
    the lowest cosine was 0.989 with it and 0.901 with one scale per tensor (BENCHMARKS.md).

    Raises:
        ImportError, OSError, or onnxruntime's errors: the model could not be quantized.
    """
    from onnxruntime.quantization import QuantType, quantize_dynamic  # noqa: PLC0415

    key = _key(source)
    path = cache_dir / f"{key}{INT8_SUFFIX}"
    with tempfile.TemporaryDirectory(dir=cache_dir, prefix=".quantize-") as work:
        made = Path(work) / path.name
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            quantize_dynamic(
                str(cache_dir / f"{key}.onnx"),
                str(made),
                weight_type=QuantType.QInt8,
                per_channel=True,
            )
        os.replace(made, path)


def _session(ort: Any, path: Path, threads: int = SESSION_THREADS) -> Any:
    options = ort.SessionOptions()
    options.intra_op_num_threads = threads
    options.add_session_config_entry("session.intra_op.allow_spinning", "0")
    options.log_severity_level = 3
    return ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])


def _write_query_file(
    path: Path, tokenizer: Any, max_length: int, inputs: list[str], dim: int
) -> None:
    """What a query needs besides the export, written whole or not at all; a tokenizer without a
    `tokenizers` backend writes nothing (queries of later processes then load torch)."""
    backend = getattr(tokenizer, "backend_tokenizer", None)
    if backend is None or dim < 1:
        return
    held = {
        "format": QUERY_FORMAT,
        "max_length": max_length,
        # The settings the transformers tokenizer applies to a call with padding=True,
        # truncation=True and max_length (PreTrainedTokenizerFast.set_truncation_and_padding).
        "truncation": {
            "stride": 0,
            "strategy": "longest_first",
            "direction": tokenizer.truncation_side,
        },
        "padding": {
            "direction": tokenizer.padding_side,
            "pad_id": tokenizer.pad_token_id,
            "pad_type_id": tokenizer.pad_token_type_id,
            "pad_token": tokenizer.pad_token,
        },
        "inputs": inputs,
        "dim": dim,
        "tokenizer": backend.to_str(),
    }
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".query-", suffix=".json")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            json.dump(held, out)
        os.replace(tmp, path)
    except OSError as e:
        log.info("could not write %s (%s): later queries load torch", path, e)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)


def default_cache_dir() -> Path:
    """Where exported models are kept: docshelf's cache directory (platformdirs)."""
    from platformdirs import user_cache_dir  # noqa: PLC0415

    return Path(user_cache_dir("docshelf", appauthor=False)) / "onnx"


def _key(source: str) -> str:
    """A file name that changes with the model and with the libraries that export it."""
    versions = [_version(d) for d in ("torch", "transformers", "sentence-transformers", "onnx")]
    named = os.path.abspath(source) if os.path.isdir(source) else source
    text = "\0".join([named, *versions, f"export {EXPORT_FORMAT}"])
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:24]


def _version(distribution: str) -> str:
    try:
        return metadata.version(distribution)
    except metadata.PackageNotFoundError:
        return "-"


def _export(model: SentenceTransformer, inputs: list[str], sample: Any, path: Path) -> None:
    import torch  # noqa: PLC0415 - loaded with the model already

    transformer: Any = model[0].auto_model

    class Hidden(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.inner: Any = transformer

        def forward(self, *tensors: torch.Tensor) -> torch.Tensor:
            out = self.inner(**dict(zip(inputs, tensors, strict=True)))
            hidden: torch.Tensor = out.last_hidden_state
            return hidden

    import onnx  # noqa: PLC0415 - only to export

    args = tuple(torch.from_numpy(sample[name].astype(np.int64)) for name in inputs)
    axes = {name: {0: "batch", 1: "tokens"} for name in inputs}
    path.parent.mkdir(parents=True, exist_ok=True)
    weights = path.with_suffix(WEIGHTS_SUFFIX)
    with tempfile.TemporaryDirectory(dir=path.parent, prefix=".export-") as work:
        whole = Path(work) / "whole.onnx"
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            torch.onnx.export(
                Hidden().eval(),
                args,
                str(whole),
                input_names=inputs,
                output_names=["hidden"],
                dynamic_axes={**axes, "hidden": {0: "batch", 1: "tokens"}},
                opset_version=OPSET,
                dynamo=False,
            )
        # The graph names its weights file; ONNX Runtime maps that file instead of copying the
        # weights out of the graph (BENCHMARKS.md: a session of 121 MiB instead of 193 MiB).
        onnx.save_model(
            onnx.load(str(whole)),
            str(Path(work) / path.name),
            save_as_external_data=True,
            all_tensors_to_one_file=True,
            location=weights.name,
            size_threshold=1024,
        )
        # The weights first, then the graph that names them: a graph in the cache always has
        # its whole weights beside it (two processes exporting at once write the same bytes).
        os.replace(Path(work) / weights.name, weights)
        os.replace(Path(work) / path.name, path)
