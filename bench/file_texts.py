"""Store growth of keeping each indexed file's text (migration 0005): how many bytes of store the
file texts add per MB of indexed docs, and how many a commit that changes one file adds.

Run it from the repository root with

    .venv/bin/python bench/file_texts.py               # SQLite
    .venv/bin/python bench/file_texts.py --postgres    # SQLite and PostgreSQL (pgserver)

Data: the shared corpora (`../shared/data/corpora`: fastapi, rust-book, traefik) and the formats
trees (`../shared/data/formats`: asciidoctor-pdf, mdx-js, pytest, requests), each read as
`docshelf index TREE` reads a plain directory (open_workspace, sync, read_docs: the same
suffixes, the same skips, files over 1 MiB left out) and cut by the indexer's own file_chunks.
A set's trees go into one workspace and one ref, each file under `<tree>/<path>`. The `none`
embedder's store (model "none", width 0): rows without vectors, as the growth from the texts
does not depend on the model. "Indexed MB" is the sum of the files' UTF-8 sizes, 10^6 bytes a MB.

Method, per store and set (`corpora`, `formats`, and `all`, both together):

- Growth: two fresh stores get the same chunk rows, one with replace_doc_chunks(..., files)
  (`docshelf.indexer.file_rows` of the files, as the indexer writes them) and one with
  `files=()`; the ref is made current. SQLite: each file is VACUUMed after the store is closed
  and measured as page_count * page_size, and its file tables (file_texts, ref_files and their
  indexes) by the dbstat table. PostgreSQL: one new database each, VACUUM ANALYZE, then
  pg_database_size and pg_total_relation_size (table, TOAST and indexes) of docs_file_texts and
  docs_ref_files. "Added" is the with-texts store minus the without-texts store; "per indexed
  MB" divides it by the set's indexed MB. The write's wall time of each (one run, on a shared
  2-core machine: noisy) is shown beside.
- One-file commit, on the `all` set in a fresh store: ref A with all files, measured; then ref B,
  A with one file changed (the file of median size, a paragraph appended at its end), its chunk
  rows A's with that file's cut again, written with all its files, measured again. The figure is
  what B added to the file tables (each table measured as above), how many text rows and ref
  file rows exist after A and after B, and the bytes of a ref file row (ref_files' growth over
  B's rows). Then prune keeps only B: the changed file's old text goes, so the text rows are A's
  count again.
"""

from __future__ import annotations

import argparse
import os
import platform
import shlex
import sqlite3
import statistics
import sys
import tempfile
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from docshelf.chunking import embedding_input
from docshelf.indexer import NO_MODEL_ID, content_hash, file_chunks, file_rows
from docshelf.rows import ChunkRow, FileRow
from docshelf.stores import open_store
from docshelf.workspace import DocFile, open_workspace
from report import postgres_server

REPO = Path(__file__).resolve().parents[1]
SHARED = REPO.parent / "shared" / "data"
SETS = {
    "corpora": SHARED / "corpora",
    "formats": SHARED / "formats",
}

WORKSPACE = "bench"
REF_A = "a" * 40
REF_B = "b" * 40
BYTES_PER_MB = 1_000_000

# What ref B changes in its one file: a paragraph at the end, as a small doc fix is.
ADDED_PARAGRAPH = "\n\nA paragraph that bench/file_texts.py added for ref B.\n"

# The store's file tables, by store: the tables whose size the texts change.
SQLITE_TABLES = ("file_texts", "ref_files")
POSTGRES_TABLES = ("docs_file_texts", "docs_ref_files")


@dataclass(frozen=True, slots=True)
class DocSet:
    name: str
    trees: list[str]
    files: list[DocFile]
    skipped: int

    @property
    def indexed_bytes(self) -> int:
        return sum(utf8(f.text) for f in self.files)


@dataclass(frozen=True, slots=True)
class Measure:
    """A store's size: all of it, and each file table (with its TOAST and indexes); the rows of
    the file tables, and the bytes their texts take as stored (SQLite: their UTF-8; PostgreSQL:
    pg_column_size, after TOAST's compression)."""

    total: int
    tables: dict[str, int]
    text_rows: int
    ref_file_rows: int
    text_bytes: int

    @property
    def file_tables(self) -> int:
        return sum(self.tables.values())


@dataclass(frozen=True, slots=True)
class Growth:
    store: str
    docs: DocSet
    chunks: int
    without: Measure
    with_texts: Measure
    write_without_s: float
    write_with_s: float


@dataclass(frozen=True, slots=True)
class OneFile:
    store: str
    path: str
    old_bytes: int
    new_bytes: int
    files: int
    after_a: Measure
    after_b: Measure
    after_prune: Measure


def utf8(text: str) -> int:
    return len(text.encode("utf-8", "surrogatepass"))


# -- data ----------------------------------------------------------------------------------


def read_set(name: str, folder: Path) -> DocSet:
    """The docs of every tree under `folder`, read as `docshelf index TREE` reads it, each under
    `<tree>/`."""
    files: list[DocFile] = []
    trees: list[str] = []
    skipped = 0
    with tempfile.TemporaryDirectory(prefix="docshelf-bench-mirrors-") as mirrors:
        for tree in sorted(p for p in folder.iterdir() if p.is_dir()):
            ws = open_workspace(str(tree), mirrors_dir=Path(mirrors))
            docs = ws.read_docs(ws.sync())
            trees.append(f"{tree.name} ({len(docs.files)})")
            skipped += len(docs.skipped)
            files.extend(replace(f, path=f"{tree.name}/{f.path}") for f in docs.files)
    return DocSet(name, trees, sorted(files, key=lambda f: f.path), skipped)


def chunk_rows(files: Sequence[DocFile]) -> list[ChunkRow]:
    """The rows the indexer writes for `files` with the none embedder."""
    rows = []
    for f in files:
        for c in file_chunks(f):
            rows.append(
                ChunkRow(
                    path=c.path,
                    chunk=c.index,
                    heading=c.heading,
                    content=c.content,
                    start_line=c.start_line,
                    end_line=c.end_line,
                    content_hash=content_hash(NO_MODEL_ID, embedding_input(c)),
                    embedding=None,
                )
            )
    return rows


# -- stores --------------------------------------------------------------------------------


class SQLiteStores:
    name = "SQLite"

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.made = 0
        self.page_size = 0

    def new(self, label: str) -> str:
        self.made += 1
        return str(self.folder / f"{self.made}-{label}.sqlite3")

    def measure(self, location: str) -> Measure:
        """The store's size after VACUUM, with the store closed."""
        conn = sqlite3.connect(location)
        try:
            conn.execute("VACUUM")
            pages = conn.execute("PRAGMA page_count").fetchone()[0]
            page_size = conn.execute("PRAGMA page_size").fetchone()[0]
            by_table = dict(
                conn.execute(
                    "SELECT s.tbl_name, SUM(d.pgsize) FROM dbstat AS d "
                    "JOIN sqlite_schema AS s ON s.name = d.name GROUP BY s.tbl_name"
                ).fetchall()
            )
            texts, text_bytes = conn.execute(
                "SELECT COUNT(*), COALESCE(SUM(LENGTH(CAST(text AS BLOB))), 0) FROM file_texts"
            ).fetchone()
            ref_files = conn.execute("SELECT COUNT(*) FROM ref_files").fetchone()[0]
        finally:
            conn.close()
        if pages * page_size != os.path.getsize(location):
            raise SystemExit(f"{location}: page_count * page_size is not the file's size")
        self.page_size = int(page_size)
        tables = {t: int(by_table.get(t, 0)) for t in SQLITE_TABLES}
        return Measure(int(pages * page_size), tables, int(texts), int(ref_files), int(text_bytes))

    def facts(self) -> str:
        return (
            f"SQLite {sqlite3.sqlite_version}, page size {self.page_size}, texts stored as they "
            "are (no compression; a text longer than a page goes on overflow pages)"
        )


class PostgresStores:
    name = "PostgreSQL"

    def __init__(self, server: Any) -> None:
        self.server = server
        self.made = 0

    def new(self, label: str) -> str:
        import psycopg  # noqa: PLC0415 (only with --postgres)

        self.made += 1
        name = f"bench_file_texts_{self.made}_{label}"
        with psycopg.connect(self.server.get_uri(), autocommit=True) as conn:
            conn.execute(f"DROP DATABASE IF EXISTS {name}")
            conn.execute(f"CREATE DATABASE {name}")
        return str(self.server.get_uri(name))

    def measure(self, location: str) -> Measure:
        import psycopg  # noqa: PLC0415

        with psycopg.connect(location, autocommit=True) as conn:
            conn.execute("VACUUM ANALYZE")
            total = _one(conn, "SELECT pg_database_size(current_database())")
            tables = {
                t: int(_one(conn, f"SELECT pg_total_relation_size('{t}')")) for t in POSTGRES_TABLES
            }
            texts = _one(conn, "SELECT COUNT(*) FROM docs_file_texts")
            text_bytes = _one(
                conn, "SELECT COALESCE(SUM(pg_column_size(text)), 0) FROM docs_file_texts"
            )
            ref_files = _one(conn, "SELECT COUNT(*) FROM docs_ref_files")
        return Measure(int(total), tables, int(texts), int(ref_files), int(text_bytes))

    def facts(self) -> str:
        import psycopg  # noqa: PLC0415

        with psycopg.connect(self.server.get_uri(), autocommit=True) as conn:
            version = _one(conn, "SHOW server_version")
            compression = _one(conn, "SHOW default_toast_compression")
        return (
            f"PostgreSQL {version} from pgserver (default settings), TOAST compression "
            f"{compression} (texts over about 2 kB are compressed and stored out of line)"
        )


Stores = SQLiteStores | PostgresStores


def _one(conn: Any, sql: str) -> Any:
    row = conn.execute(sql).fetchone()
    return None if row is None else row[0]


def write(location: str, ref: str, rows: Sequence[ChunkRow], files: Sequence[FileRow]) -> float:
    """Write one ref and make it current; the seconds replace_doc_chunks took."""
    with open_store(location, model_id=NO_MODEL_ID, dim=0) as store:
        started = time.perf_counter()
        store.replace_doc_chunks(WORKSPACE, ref, rows, files)
        seconds = time.perf_counter() - started
        store.set_current(WORKSPACE, ref)
    return seconds


def growth(stores: Stores, docs: DocSet) -> Growth:
    rows = chunk_rows(docs.files)
    files = file_rows(docs.files)
    without = stores.new(f"{docs.name}_without")
    with_texts = stores.new(f"{docs.name}_with")
    write_without = write(without, REF_A, rows, ())
    write_with = write(with_texts, REF_A, rows, files)
    return Growth(
        stores.name,
        docs,
        len(rows),
        stores.measure(without),
        stores.measure(with_texts),
        write_without,
        write_with,
    )


def median_file(files: Sequence[DocFile]) -> DocFile:
    by_size = sorted(files, key=lambda f: (utf8(f.text), f.path))
    return by_size[len(by_size) // 2]


def one_file(stores: Stores, docs: DocSet) -> OneFile:
    changed = median_file(docs.files)
    new = replace(changed, text=changed.text.rstrip("\n") + ADDED_PARAGRAPH)
    files_b = [new if f.path == changed.path else f for f in docs.files]
    location = stores.new("one_file")
    write(location, REF_A, chunk_rows(docs.files), file_rows(docs.files))
    after_a = stores.measure(location)
    write(location, REF_B, chunk_rows(files_b), file_rows(files_b))
    after_b = stores.measure(location)
    with open_store(location, model_id=NO_MODEL_ID, dim=0) as store:
        store.prune(WORKSPACE, [REF_B])
    after_prune = stores.measure(location)
    return OneFile(
        stores.name,
        changed.path,
        utf8(changed.text),
        utf8(new.text),
        len(docs.files),
        after_a,
        after_b,
        after_prune,
    )


# -- report --------------------------------------------------------------------------------


def growth_table(results: Sequence[Growth]) -> list[str]:
    lines = [
        "| store | docs | files | indexed MB | chunks | store without texts | store with texts "
        "| added | added per indexed MB | file tables | texts as stored | write s without / with |",
        "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for g in results:
        mb = g.docs.indexed_bytes / BYTES_PER_MB
        added = g.with_texts.total - g.without.total
        lines.append(
            f"| {g.store} | {g.docs.name} | {len(g.docs.files)} | {mb:.2f} | {g.chunks} "
            f"| {g.without.total:,} | {g.with_texts.total:,} | {added:,} "
            f"| {added / mb:,.0f} ({added / g.docs.indexed_bytes:.2f} x) "
            f"| {g.with_texts.file_tables:,} (empty: {g.without.file_tables:,}) "
            f"| {g.with_texts.text_bytes:,} ({g.with_texts.text_rows} rows) "
            f"| {g.write_without_s:.2f} / {g.write_with_s:.2f} |"
        )
    return lines


def one_file_table(results: Sequence[OneFile], tables: Mapping[str, Sequence[str]]) -> list[str]:
    lines = [
        "| store | after | store bytes | text table bytes | ref files table bytes "
        "| text rows | ref file rows |",
        "| --- | --- | ---: | ---: | ---: | ---: | ---: |",
    ]
    for r in results:
        texts, refs = tables[r.store]
        for label, m in (("ref A", r.after_a), ("ref B", r.after_b), ("prune to B", r.after_prune)):
            lines.append(
                f"| {r.store} | {label} | {m.total:,} | {m.tables[texts]:,} | {m.tables[refs]:,} "
                f"| {m.text_rows} | {m.ref_file_rows} |"
            )
    return lines


def one_file_lines(r: OneFile, tables: Sequence[str]) -> list[str]:
    texts, refs = tables
    a, b = r.after_a, r.after_b
    text_added = b.tables[texts] - a.tables[texts]
    refs_added = b.tables[refs] - a.tables[refs]
    return [
        f"- {r.store}: ref B added {b.file_tables - a.file_tables:,} bytes to the file tables: "
        f"{text_added:,} to {texts} (the changed file is {r.new_bytes:,} bytes, its text row "
        f"{b.text_bytes - a.text_bytes:,} as stored; "
        f"{b.text_rows - a.text_rows} new text row: {a.text_rows} -> {b.text_rows}) and "
        f"{refs_added:,} to {refs} ({b.ref_file_rows - a.ref_file_rows} rows, "
        f"{refs_added / max(1, b.ref_file_rows - a.ref_file_rows):.0f} bytes a row); "
        f"the whole store grew {b.total - a.total:,} bytes (B's chunk rows too). "
        f"After the prune: {r.after_prune.text_rows} text rows "
        f"({'A' if r.after_prune.text_rows == a.text_rows else 'NOT A'}'s count)."
    ]


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument(
        "--postgres",
        action="store_true",
        help="measure PostgreSQL too, on a server started here from pgserver (data under /tmp)",
    )
    return parser.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    load = os.getloadavg()
    started = time.perf_counter()
    sets = [read_set(name, folder) for name, folder in SETS.items()]
    both = [f for s in sets for f in s.files]
    sets.append(
        DocSet(
            "all",
            [t for s in sets for t in s.trees],
            sorted(both, key=lambda f: f.path),
            sum(s.skipped for s in sets),
        )
    )
    everything = sets[-1]
    growths: list[Growth] = []
    one_files: list[OneFile] = []
    facts: list[str] = []
    with tempfile.TemporaryDirectory(prefix="docshelf-bench-file-texts-") as tmp:
        sqlite_stores = SQLiteStores(Path(tmp))
        for docs in sets:
            print(f"SQLite: {docs.name} ...", file=sys.stderr)
            growths.append(growth(sqlite_stores, docs))
        one_files.append(one_file(sqlite_stores, everything))
        facts.append(sqlite_stores.facts())
        if args.postgres:
            with postgres_server() as server:
                postgres_stores = PostgresStores(server)
                facts.append(postgres_stores.facts())
                for docs in sets:
                    print(f"PostgreSQL: {docs.name} ...", file=sys.stderr)
                    growths.append(growth(postgres_stores, docs))
                one_files.append(one_file(postgres_stores, everything))
    tables = {"SQLite": SQLITE_TABLES, "PostgreSQL": POSTGRES_TABLES}
    command = " ".join(["bench/file_texts.py", *map(shlex.quote, sys.argv[1:])])
    end = os.getloadavg()
    print(f"- command: `.venv/bin/python {command}`")
    print(
        f"- machine: {os.cpu_count()} CPUs, {platform.platform()}, "
        f"Python {platform.python_version()}"
    )
    print(
        "- load average: at the start "
        + ", ".join(f"{x:.2f}" for x in load)
        + "; at the end "
        + ", ".join(f"{x:.2f}" for x in end)
        + f" (1, 5, 15 min); the run took {time.perf_counter() - started:.0f} s"
    )
    for fact in facts:
        print(f"- store: {fact}")
    for docs in sets[:-1]:
        print(
            f"- {docs.name}: {', '.join(docs.trees)}; {len(docs.files)} files, "
            f"{docs.indexed_bytes / BYTES_PER_MB:.2f} MB; {docs.skipped} skipped"
        )
    sizes = [utf8(f.text) for f in everything.files]
    print(
        f"- file sizes (all): median {statistics.median(sizes):,.0f} bytes, "
        f"largest {max(sizes):,} bytes"
    )
    print()
    print("\n".join(growth_table(growths)))
    print()
    print(
        "Bytes of store; added = with texts - without; per indexed MB = added / indexed MB "
        "(and as a multiple of the indexed bytes); file tables = the file tables with their "
        "indexes (and TOAST), with texts and (empty) without; texts as stored = the bytes of "
        "the stored texts alone (SQLite: UTF-8; PostgreSQL: pg_column_size, compressed)."
    )
    print()
    changed = one_files[0]
    print(
        f"One-file commit on `all` ({changed.files} files): ref B changes {changed.path} "
        f"({changed.old_bytes:,} -> {changed.new_bytes:,} bytes, a paragraph appended)."
    )
    print()
    print("\n".join(one_file_table(one_files, tables)))
    print()
    for r in one_files:
        print("\n".join(one_file_lines(r, tables[r.store])))
    return 0


if __name__ == "__main__":
    sys.exit(main())
