"""What torch's CPU kernels and glibc's heap keep after a batch, given back or never kept: the
local model's indexing batches call these (embedders/local.py)."""

from __future__ import annotations

import ctypes
import functools
import os
from typing import Any

# oneDNN (torch's CPU kernels) caches a compiled primitive, with its buffers, for every shape it
# has run, up to 1,024 of them; the indexer's batches, sorted by length, are nearly all of
# shapes of their own. Embedding the 1,177 shortest AWS chunks grew to 892 MiB with the cache
# and 603 MiB without, in the same time (BENCHMARKS.md). A value the user sets is kept.
ONEDNN_CACHE_ENV = "ONEDNN_PRIMITIVE_CACHE_CAPACITY"
ONEDNN_CACHE_CAPACITY = "0"

# torch's bfloat16 matrix products on a CPU go through ideep, which keeps a cache of its own of
# one computation per shape, up to 1,024 of them (LRU_CACHE_CAPACITY), whatever oneDNN's is:
# 800 batches of random shapes grew 296 MiB with it and 12 MiB with a capacity of 1, in the same
# 93 s. 16 keeps the few shapes of one forward pass. A value the user sets is kept.
IDEEP_CACHE_ENV = "LRU_CACHE_CAPACITY"
IDEEP_CACHE_CAPACITY = "16"


@functools.cache
def _malloc_trim() -> Any:
    """glibc's malloc_trim, or None where the C library has none (musl, macOS)."""
    try:
        trim = ctypes.CDLL(None).malloc_trim
    except (AttributeError, OSError):
        return None
    trim.argtypes = [ctypes.c_size_t]
    trim.restype = ctypes.c_int
    return trim


def release_free_heap() -> None:
    """Give the free pages of the C heap back to the system (glibc's malloc_trim; nothing where
    there is none). torch frees a batch's activations into glibc's heaps, which keep them, and
    the next batch of another shape takes fresh pages beside them: 2,000 chunks embedded in the
    indexer's batches ended at 848 MiB resident (peak 938) without a trim after each batch and
    at 570 (peak 790) with it, in the same time (BENCHMARKS.md)."""
    trim = _malloc_trim()
    if trim is not None:
        trim(0)


def bound_native_caches() -> None:
    """Turn off oneDNN's cache of primitives per shape (ONEDNN_CACHE_ENV) and bound ideep's
    (IDEEP_CACHE_ENV), each unless the user set it; read when torch first runs such a kernel,
    so call it before."""
    os.environ.setdefault(ONEDNN_CACHE_ENV, ONEDNN_CACHE_CAPACITY)
    os.environ.setdefault(IDEEP_CACHE_ENV, IDEEP_CACHE_CAPACITY)
