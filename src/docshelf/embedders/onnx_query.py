"""A faster path for a search's query: the loaded model's transformer, exported once to ONNX and
run with ONNX Runtime on the CPU.

Constraints:
- Same vectors: only a model made of a Transformer, mean Pooling and Normalize (as
  all-MiniLM-L6-v2 is) takes this path, tokenised with the model's own tokenizer and maximum
  length; the vectors match the torch model's to about 1e-7. Any other model, a GPU, a missing
  onnx or onnxruntime, or a failed export leaves the embedder on torch.
- For short calls only: one query through ONNX Runtime takes 4.4 ms here against 11 to 15 ms
  through torch (BENCHMARKS.md); batches of an index stay on torch.
- The export happens once per machine and model: the file is cached, written whole or not at all.
"""

from __future__ import annotations

import hashlib
import logging
import os
import tempfile
import warnings
from importlib import metadata
from pathlib import Path
from typing import TYPE_CHECKING, Any

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


class OnnxQueryEncoder:
    """The ONNX Runtime session of one model, with its tokenizer and maximum length."""

    def __init__(self, session: Any, tokenizer: Any, max_length: int, inputs: list[str]) -> None:
        self._session = session
        self._tokenizer = tokenizer
        self._max_length = max_length
        self._inputs = inputs

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
        path = cache_dir / f"{_key(source)}.onnx"
        try:
            if not path.exists():
                _export(model, inputs, sample, path)
            options = ort.SessionOptions()
            options.intra_op_num_threads = SESSION_THREADS
            options.add_session_config_entry("session.intra_op.allow_spinning", "0")
            options.log_severity_level = 3
            session = ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])
        except Exception as e:  # onnx, torch and file system errors alike: torch still works
            log.warning("ONNX export of %s failed (%s): queries are embedded with torch", source, e)
            return None
        return cls(session, tokenizer, max_length, inputs)

    def encode(self, texts: list[str]) -> Vector:
        """One L2-normalised float32 row per text: mean pooling over the tokens, as the model."""
        batch = self._tokenizer(
            texts, padding=True, truncation=True, max_length=self._max_length, return_tensors="np"
        )
        feed = {name: batch[name].astype(np.int64) for name in self._inputs}
        (hidden,) = self._session.run(["hidden"], feed)
        mask = batch["attention_mask"][..., None].astype(np.float32)
        pooled = (hidden * mask).sum(axis=1) / np.maximum(mask.sum(axis=1), 1e-9)
        norms = np.linalg.norm(pooled, axis=1, keepdims=True)
        return np.ascontiguousarray(pooled / np.maximum(norms, 1e-12), dtype=np.float32)


def default_cache_dir() -> Path:
    """Where exported models are kept: docshelf's cache directory (platformdirs)."""
    from platformdirs import user_cache_dir  # noqa: PLC0415

    return Path(user_cache_dir("docshelf", appauthor=False)) / "onnx"


def _key(source: str) -> str:
    """A file name that changes with the model and with the libraries that export it."""
    versions = [_version(d) for d in ("torch", "transformers", "sentence-transformers", "onnx")]
    text = "\0".join([os.path.abspath(source) if os.path.isdir(source) else source, *versions])
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

    args = tuple(torch.from_numpy(sample[name].astype(np.int64)) for name in inputs)
    axes = {name: {0: "batch", 1: "tokens"} for name in inputs}
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".export-", suffix=".onnx")
    os.close(fd)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            torch.onnx.export(
                Hidden().eval(),
                args,
                tmp,
                input_names=inputs,
                output_names=["hidden"],
                dynamic_axes={**axes, "hidden": {0: "batch", 1: "tokens"}},
                opset_version=OPSET,
                dynamo=False,
            )
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
