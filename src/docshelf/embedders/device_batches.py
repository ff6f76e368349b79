"""The indexer's batches on a GPU: sized for the device, tokenised ahead on a host thread, copied
without waiting, and brought back once.

sentence-transformers' own `encode` does each batch's work in turn on one host thread:
tokenise, copy to the device, run the model, wait for it and copy the vectors back. A GPU as
fast as an H200 then waits on the host (about 3,400 chunks/s for this model at any batch size,
in float32 or float16). Here:
- the texts are sorted by length, longest first, so a batch pads little;
- a host thread tokenises the next AHEAD batches while the device runs (the tokenizer works
  outside Python's lock and spreads a batch over the cores itself), into pinned memory;
- each batch is copied to the device without waiting (`non_blocking`), run under autocast in
  the embedder's precision, normalised there and kept there, so the host never waits for the
  device until the last batch: the vectors come back in one copy, in the caller's order.

On a CPU the same function gives the same vectors as `encode` (that is how it is tested:
tests never need a GPU); the local embedder takes it only on CUDA.
"""

from __future__ import annotations

import contextlib
import functools
from collections import deque
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any

import numpy as np

from docshelf.rows import Vector

# Host threads that tokenise ahead of the device, and how many batches they keep ready. One:
# a fast tokenizer called from two threads at once can fail ("Already borrowed") while either
# sets its truncation and padding.
TOKENIZER_THREADS = 1
AHEAD = 4

# Device memory one text of a full 256-token window may take during a forward pass, with room
# to spare: this model's widest activation is 256 x 1,536 values a layer, and attention's
# scores 12 x 256 x 256 where a fused kernel does not apply.
DEVICE_BYTES_PER_TEXT = 8 * 1024 * 1024
# The share of the device's free memory the batches may take, and the bounds of their size: 1,024
# is where plain encode stops gaining on an H200.
DEVICE_MEMORY_SHARE = 0.25
MIN_DEVICE_BATCH = 32
MAX_DEVICE_BATCH = 1_024


def device_batch_size(free_bytes: int) -> int:
    """Texts a forward pass on a device with `free_bytes` of free memory: the largest power of
    two whose batch of full windows fits DEVICE_MEMORY_SHARE of it, within MIN_DEVICE_BATCH and
    MAX_DEVICE_BATCH."""
    fits = int(free_bytes * DEVICE_MEMORY_SHARE) // DEVICE_BYTES_PER_TEXT
    size = MIN_DEVICE_BATCH
    while size * 2 <= min(fits, MAX_DEVICE_BATCH):
        size *= 2
    return size


@functools.cache
def cuda_batch_size(device: Any) -> int:
    """device_batch_size for a CUDA device, from what it has free when first asked."""
    import torch  # noqa: PLC0415 - loaded with the model

    free, _total = torch.cuda.mem_get_info(device)
    return device_batch_size(int(free))


def encode_on_device(model: Any, texts: list[str], batch_size: int, precision: str) -> Vector:
    """One L2-normalised float32 row per text, in the order of `texts`, from `model` (a loaded
    sentence-transformers model) in `precision` (float32, or bfloat16 / float16 under autocast
    as `encode` runs in the embedder), `batch_size` texts a forward pass."""
    import torch  # noqa: PLC0415 - loaded with the model

    device = model.device
    cuda = device.type == "cuda"
    order = np.argsort([-len(t) for t in texts], kind="stable")
    starts = list(range(0, len(texts), batch_size))
    dtype = {"bfloat16": torch.bfloat16, "float16": torch.float16}.get(precision)

    def tokenised(start: int) -> dict[str, Any]:
        batch = [texts[i] for i in order[start : start + batch_size]]
        features: dict[str, Any] = (getattr(model, "preprocess", None) or model.tokenize)(batch)
        if cuda:  # pinned pages copy to the device without the host waiting
            features = {k: v.pin_memory() if torch.is_tensor(v) else v for k, v in features.items()}
        return features

    with ThreadPoolExecutor(TOKENIZER_THREADS, "docshelf-tokenize") as pool, torch.inference_mode():
        rows: list[Any] = []
        ready: deque[tuple[int, Future[dict[str, Any]]]] = deque()
        waiting = iter(starts)
        for start in waiting:
            ready.append((start, pool.submit(tokenised, start)))
            if len(ready) >= AHEAD:
                break
        while ready:
            start, future = ready.popleft()
            following = next(waiting, None)
            if following is not None:
                ready.append((following, pool.submit(tokenised, following)))
            features = {
                k: v.to(device, non_blocking=True) if torch.is_tensor(v) else v
                for k, v in future.result().items()
            }
            autocast = (
                torch.autocast(device_type=device.type, dtype=dtype)
                if dtype is not None
                else contextlib.nullcontext()
            )
            with autocast:
                embeddings = model(features)["sentence_embedding"]
            rows.append(torch.nn.functional.normalize(embeddings.float(), p=2, dim=1))
        if not rows:
            raise ValueError("no texts to embed")
        out = torch.cat(rows)
        placed = torch.empty_like(out)
        placed[torch.from_numpy(order).to(device)] = out
        return np.asarray(placed.cpu().numpy(), dtype=np.float32)
