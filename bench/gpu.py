"""The indexer on a GPU: `docshelf index`'s chunks/s against sentence-transformers' own encode,
side by side in one process, on a corpus of `--chunks` chunks. Issue 16's goal: 10,000 chunks/s
or more end to end (plain encode on an H200: about 3,400, batch 1,024, float32).

Run it from the repository root:

    .venv/bin/python bench/gpu.py                              # here: 100,000 chunks
    .venv/bin/python bench/gpu.py --chunks 2000 --device cpu   # a smoke run on any machine
    .venv/bin/python bench/gpu.py --pack .gpu                  # what a GPU machine needs

A GPU machine lent to a session (/work/.library/device) has torch, sentence-transformers and
tokenizers but not docshelf's other needs, the packaged model (91 MB, over what travels) or the
shared corpora. `--pack DIR` writes them into DIR: the packaged model with its weights in
float16 (they are made float32 again there, `--from`), the traefik, fastapi and rust-book docs,
and the wheels of snowballstemmer and platformdirs. Then, with DIR in `.git/info/exclude`:

    run(carry=[".gpu"], command="python3 -m pip install -q --no-index --no-deps --target /tmp/site
        .gpu/wheels/*.whl && PYTHONPATH=/tmp/site:src:bench PYTHONUNBUFFERED=1 python3
        bench/gpu.py --from .gpu | tee $OUT/gpu.txt")

The model made from float16 weights is not the packaged one to the last bit (its vectors are
within about 1e-3 of it); the encode and the index below use the same one, so they compare.

Data: bench/memory.py's corpus (copies of the docs with the words of each prose line rotated, so
every chunk is a text of its own) of at least `--chunks` chunks, committed to a git repository
under /tmp.

Method: LocalEmbedder with the default settings (`--precision auto`: float16 on CUDA behind its
probe; forward passes sized for the device's free memory) is loaded and warmed before anything
is timed. Then, in turn:
- encode: the model's own `encode` of the distinct texts the indexer embeds, batch 1,024,
  float32, normalised (the anchor);
- index: `Indexer(store, embedder, workspace).index(commit)` into a fresh SQLite store, end to
  end (git, chunking, hashing, lookup, embedding, writing), with its phases;
- the stored vectors against the encode's: the lowest and the median cosine.
"""

from __future__ import annotations

import argparse
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))
from docshelf.embedders.local import LocalEmbedder, packaged_model_path
from docshelf.indexer import content_hash
from docshelf.stores import SQLiteStore
from docshelf.workspace import GitWorkspace, open_workspace
from indexing import embedded_texts, make_repository, raw_encode, timed_index
from memory import build_corpus
from report import cpu_model, markdown_table, version

REPO = Path(__file__).resolve().parent.parent
CORPORA = REPO.parent / "shared" / "data" / "corpora"
SOURCES = ("traefik", "fastapi", "rust-book")
WHEELS = ("snowballstemmer", "platformdirs")
DEFAULT_CHUNKS = 100_000
ENCODE_BATCH = 1_024
# Texts embedded both ways before the clock starts (a tenth of the corpus where it is small).
WARM_UP_TEXTS = 2_048
GOAL_CHUNKS_PER_SECOND = 10_000


def progress(message: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)


def pack(into: Path) -> None:
    """The model in float16, the source docs and the wheels a GPU machine lacks, under `into`."""
    from safetensors.torch import load_file, save_file  # noqa: PLC0415

    model = Path(packaged_model_path())
    shutil.copytree(model, into / "model", ignore=shutil.ignore_patterns("*.safetensors"))
    weights = load_file(model / "model.safetensors")
    save_file({k: v.half() for k, v in weights.items()}, into / "model" / "model.safetensors")
    for name in SOURCES:
        shutil.copytree(CORPORA / name, into / "sources" / name)
    download = [sys.executable, "-m", "pip", "download", "-q", "--no-deps"]
    subprocess.run([*download, "-d", into / "wheels", *WHEELS], check=True)
    size = sum(f.stat().st_size for f in into.rglob("*") if f.is_file())
    print(f"packed {into}: {size / 1e6:.1f} MB")


def float32_model(packed: Path, into: Path) -> Path:
    """A copy of the packed model with its float16 weights made float32 again."""
    from safetensors.torch import load_file, save_file  # noqa: PLC0415

    target = into / "model"
    shutil.copytree(packed, target, ignore=shutil.ignore_patterns("*.safetensors"))
    weights = load_file(packed / "model.safetensors")
    save_file({k: v.float() for k, v in weights.items()}, target / "model.safetensors")
    return target


def source_files(roots: Sequence[Path]) -> list[tuple[str, str]]:
    from docshelf.chunking import kind_of  # noqa: PLC0415

    files: list[tuple[str, str]] = []
    for root in roots:
        for path in sorted(root.rglob("*")):
            if path.is_file() and kind_of(path.name) is not None:
                text = path.read_text(encoding="utf-8", errors="replace")
                files.append((f"{root.name}/{path.relative_to(root).as_posix()}", text))
    return files


def stored_vectors(path: Path, hashes: Sequence[str]) -> np.ndarray:
    with sqlite3.connect(path) as conn:
        rows = dict(conn.execute("SELECT content_hash, embedding FROM chunks").fetchall())
    return np.stack([np.frombuffer(rows[h], "<f4") for h in hashes])


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--chunks", type=int, default=DEFAULT_CHUNKS, help="%(default)s")
    parser.add_argument("--device", help="cuda or cpu (default: the one docshelf picks)")
    parser.add_argument("--pack", type=Path, help="write what a GPU machine needs here, and stop")
    parser.add_argument("--from", dest="packed", type=Path, help="a folder --pack wrote")
    return parser.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    if args.pack is not None:
        pack(args.pack)
        return 0
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="docshelf-bench-gpu-") as tmp:
        work = Path(tmp)
        roots = [args.packed / "sources" / n if args.packed else CORPORA / n for n in SOURCES]
        model = float32_model(args.packed / "model", work) if args.packed else None
        corpus = work / "corpus"
        files, chunks = build_corpus(source_files(roots), args.chunks, corpus)
        progress(f"corpus: {files} files, {chunks} chunks")
        work_tree, commit = make_repository(corpus, work / "repo")
        ws = open_workspace(str(work_tree), name="bench", mirrors_dir=work / "mirrors")
        assert isinstance(ws, GitWorkspace)

        loaded = time.perf_counter()
        embedder = LocalEmbedder(None if model is None else str(model), device=args.device)
        texts, n_files, n_chunks = embedded_texts(ws, commit, embedder.model_id)
        warm = texts[-min(WARM_UP_TEXTS, max(len(texts) // 10, 32)) :]
        embedder.embed_documents(warm)
        st_model = embedder._load()
        raw_encode(st_model, warm, ENCODE_BATCH)
        load_s = time.perf_counter() - loaded
        progress(
            f"model on {embedder.device} in {load_s:.1f} s: {embedder.precision}, "
            f"{embedder.batch_size} texts a pass; {len(texts)} texts to embed"
        )

        encode_s, want = raw_encode(st_model, texts, ENCODE_BATCH)
        progress(f"encode: {encode_s:.1f} s")
        store_path = work / "store.sqlite3"
        store = SQLiteStore.open(store_path, model_id=embedder.model_id, dim=embedder.dim)
        from docshelf.indexer import Indexer  # noqa: PLC0415

        index_s, result, phases = timed_index(Indexer(store, embedder, ws), commit, "index")
        store.close()
        progress(f"index: {index_s:.1f} s, {result.embedded} embedded")
        got = stored_vectors(store_path, [content_hash(embedder.model_id, t) for t in texts])
        cosines = (got * want).sum(axis=1)

    gpu = torch.cuda.get_device_name() if torch.cuda.is_available() else "none"
    print(f"- command: `{' '.join(['python', *sys.argv])}`")
    print(f"- machine: {cpu_model()}, GPU: {gpu}")
    print(f"- torch {version('torch')}, sentence-transformers {version('sentence-transformers')}")
    print(f"- corpus: {n_files} files, {n_chunks} chunks, {len(texts)} distinct texts embedded")
    print(f"- model: {embedder.model_id} on {embedder.device}, loaded and warmed in {load_s:.1f} s")
    print(f"- index: {embedder.precision}, {embedder.batch_size} texts a forward pass")
    print(f"- whole run: {time.perf_counter() - started:.0f} s\n")
    rows = [
        ["encode (float32, batch 1,024)", f"{encode_s:.2f}", f"{len(texts) / encode_s:,.0f}"],
        ["docshelf index, end to end", f"{index_s:.2f}", f"{len(texts) / index_s:,.0f}"],
    ]
    print(markdown_table(["run", "seconds", "chunks/s"], rows))
    print()
    split = phases.split(phases.started + index_s)
    print(
        markdown_table(
            ["phase of the index", "seconds"], [[k, f"{v:.2f}"] for k, v in split.items()]
        )
    )
    print()
    print(
        f"- stored against encode: cosine lowest {cosines.min():.6f}, median "
        f"{float(np.median(cosines)):.6f}"
    )
    speed = len(texts) / index_s
    met = "met" if speed >= GOAL_CHUNKS_PER_SECOND else "not met"
    print(f"- {met}: {speed:,.0f} chunks/s; goal {GOAL_CHUNKS_PER_SECOND:,} end to end")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
