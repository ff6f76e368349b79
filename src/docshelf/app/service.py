"""The service a long-running face holds: the store, the embedder and the searcher, and each
workspace it serves (with a source, its indexer). `Service` is everything a face may call:
search, read and outline (what the tools answer), pins, syncs, status and warm-up.

Constraints:
- A call's rules live here, once for one workspace or several: its arguments are checked once,
  the refs it answers from are chosen once, and a current ref that moves under it is handled
  once. The searcher ranks; the reading module reads; neither words a message about a workspace.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeAlias

from docshelf.app.status import ServiceState, SyncState, sync_state, workspace_state
from docshelf.chunking import kind_of
from docshelf.errors import ConfigError, DocshelfError, NotIndexedError, WorkspaceError, term
from docshelf.paths import check_path, check_path_filter, selected
from docshelf.reading import (
    OVERVIEW_PAGE,
    DocsOutline,
    Reading,
    WorkspaceOverview,
    WorkspacesPage,
    check_line,
    check_page,
    narrower_paths,
    no_such_path,
    outline_files,
    read_lines,
    top_folders,
)
from docshelf.search import (
    DEFAULT_TOP_K,
    Answer,
    Fusion,
    Mode,
    Scope,
    Searcher,
    check_mode,
    check_per_file,
    check_query,
    check_top_k,
)
from docshelf.shown import listed, short_ref, shown_value
from docshelf.workspace import COMMIT_ID

if TYPE_CHECKING:
    from docshelf.embedders import LocalEmbedder, OpenAIEmbedder
    from docshelf.indexer import Indexer, IndexResult
    from docshelf.paths import PathFilter
    from docshelf.rows import StoredFile
    from docshelf.stores.contract import Store
    from docshelf.workspace import Workspace

Embedder: TypeAlias = "LocalEmbedder | OpenAIEmbedder"

_log = logging.getLogger("docshelf.app")

# A search reads the current ref, then that ref's rows: a sync (of this process or another) that
# promotes a new ref in between may prune those rows under it, leaving fewer excerpts or none.
# Such a search is asked again, from the new current ref; promotions are a sync apart (a second
# at least), so the second try holds.
SEARCH_ATTEMPTS = 3

# A call pinned to a commit the store holds but its read replica has not replayed yet waits this
# long for the replica, asking every REPLICA_POLL_SECONDS, then answers from the ref the replica
# holds and says so.
REPLICA_WAIT_SECONDS = 2.0
REPLICA_POLL_SECONDS = 0.05


@dataclass(frozen=True, slots=True)
class Served:
    """One workspace of a service: its name in the store, the short name shown for it
    (`label`), the command that indexes it (named when nothing is indexed yet) and, with a
    source to sync, the source and its indexer."""

    name: str
    label: str
    index_hint: str = "docshelf index"
    source: Workspace | None = None
    indexer: Indexer | None = None
    # The revision a sync follows (a branch, tag or commit; None: the source's HEAD), and what
    # the workspace was opened from (a manifest's entry), to tell when it changed.
    rev: str | None = None
    origin: object = None


# What a service's `reload` calls: the workspaces to serve now, given those served (so that an
# unchanged one keeps its indexer and its shown name).
Reload: TypeAlias = "Callable[[Sequence[Served]], list[Served]]"


@dataclass(frozen=True, slots=True)
class Reloaded:
    """What a reload changed: the shown names added and removed, or why nothing changed."""

    added: list[str]
    removed: list[str]
    error: str | None = None


def merge_lists(store: Store) -> int:
    """Merge the store's term lists when its current refs have moved on enough since the last
    merge (Store.merge_term_lists), logged; how many refs were merged. A failure is logged,
    never raised: the index before it stands, and searches read each ref's own lists until a
    later merge."""
    started = time.perf_counter()
    try:
        merged = store.merge_term_lists()
    except DocshelfError as e:
        _log.warning("merging the term lists: %s", e)
        return 0
    if merged:
        _log.info(
            "merged the term lists of %d current refs in %.1f s",
            merged,
            time.perf_counter() - started,
        )
    return merged


# The current refs of some workspaces, and which of their refs are indexed.
_KnownRefs: TypeAlias = "tuple[dict[str, str], set[tuple[str, str]]]"

# A session's pins: the commit of each workspace it is pinned in, by the workspace's shown name;
# a plain commit pins a service of one workspace.
Pins: TypeAlias = "str | Mapping[str, str] | None"


class Service:
    """What a long-running server needs, built once: the store, the embedder and the searcher,
    and for each workspace it serves, with a source to sync, the indexer (background syncs and
    pins). `search`, `read` and `outline` are what the tools answer."""

    def __init__(
        self,
        store: Store,
        embedder: Embedder | None,
        served: Sequence[Served],
        *,
        fusion: Fusion | None = None,
        reload: Reload | None = None,
        read_store: Store | None = None,
    ) -> None:
        if not served:
            raise ConfigError("a service needs at least one workspace to serve")
        self.store = store
        # Where searches, reads and outlines are answered from: a streaming replica of the
        # store, or the store itself. Pins, syncs and indexing go to the store.
        self.reads = store if read_store is None else read_store
        self.embedder = embedder
        self.searcher = Searcher(self.reads, embedder, fusion=fusion)
        # Replaced whole by `reload`, never changed in place: a call that took the list keeps
        # a consistent set of workspaces to the end.
        self.served: list[Served] = list(served)
        self._reload = reload
        # The pinned refs the replica had not replayed when last asked, by (workspace, ref).
        self._lagging: dict[tuple[str, str], bool] = {}
        self._reloading = threading.Lock()
        self._last_sync: dict[str, SyncState] = {}

    # -- one workspace (the first, and for most services the only one) ---------------------

    @property
    def source(self) -> Workspace | None:
        return self.served[0].source

    @property
    def indexer(self) -> Indexer | None:
        return self.served[0].indexer

    @property
    def workspace(self) -> str:
        return self.served[0].name

    # -- all of them -----------------------------------------------------------------------

    @property
    def labels(self) -> list[str]:
        """The shown names of the served workspaces, in order."""
        return [s.label for s in self.served]

    @property
    def several(self) -> bool:
        return len(self.served) > 1

    @property
    def text_only(self) -> bool:
        """Whether searches match words only (a store made without an embedder, or a service
        opened without one)."""
        return self.embedder is None

    @property
    def can_sync(self) -> bool:
        """Whether the service has a source to sync (SOURCE or a manifest was given)."""
        return self._reload is not None or any(
            s.source is not None and s.indexer is not None for s in self.served
        )

    @property
    def syncable(self) -> list[str]:
        """The shown names of the served workspaces with a source to sync, in order."""
        return [s.label for s in self.served if s.source is not None and s.indexer is not None]

    def reload(self) -> Reloaded | None:
        """Choose the workspaces to serve again (a manifest read again): those added start
        being served, those removed stop (their indexers closed; what the store holds of them
        stays). None when the service has nothing to reload from; on a failure (a manifest that is
        now refused) the workspaces served stay as they are, and `Reloaded.error` says why.
        """
        if self._reload is None:
            return None
        with self._reloading:
            before = self.served
            try:
                after = self._reload(before)
            except DocshelfError as e:
                return Reloaded([], [], f"{e}; serving the same workspaces")
            if not after:
                return Reloaded([], [], "no workspace is listed; serving the same ones")
            self.served = after
            # An entry that changed (its docs, its ref) is served by a new Served: the old
            # one's indexer is closed with those of the workspaces removed.
            kept = {id(s) for s in after}
            gone = [s for s in before if id(s) not in kept]
            for served in gone:
                if served.indexer is not None:
                    served.indexer.close()
            labels = {s.label for s in after}
            for label in list(self._last_sync):
                if label not in labels:
                    del self._last_sync[label]
        names_before, names_after = {s.name for s in before}, {s.name for s in after}
        added = [s.label for s in after if s.name not in names_before]
        removed = [s.label for s in before if s.name not in names_after]
        return Reloaded(added, removed)

    def served_as(self, workspace: object) -> Served:
        """The served workspace of that shown name (or store name); with None, the only one.

        Raises:
            ConfigError: no such workspace, or None while several are served.
        """
        if workspace is None:
            if self.several:
                raise ConfigError(
                    f"{term('workspace')} must be named: several are served ({listed(self.labels)})"
                )
            return self.served[0]
        for served in self.served:
            if workspace in (served.label, served.name):
                return served
        raise ConfigError(
            f"{term('workspace')} must be one of {listed(self.labels)}; got "
            f"{shown_value(workspace)}"
        )

    def _targets(self, workspace: object) -> list[Served]:
        return list(self.served) if workspace is None else [self.served_as(workspace)]

    def _pin_of(self, served: Served, ref: Pins) -> str | None:
        if ref is None or isinstance(ref, str):
            return ref
        return ref.get(served.label)

    def current(self, workspace: str | None = None) -> str | None:
        """The workspace's current ref, or None when nothing is indexed yet.

        Raises:
            ConfigError: several workspaces are served and none is named.
            StoreError: the store cannot be read.
        """
        return self.reads.current(self.served_as(workspace).name)

    def pin(self, rev: str, workspace: str | None = None) -> tuple[str, Callable[[], None]]:
        """`rev` resolved to a commit, pinned in the store when the service has the source (so
        that prunes keep it), and the call that releases the pin.

        Raises:
            ConfigError: several workspaces are served and none is named.
            WorkspaceError: `rev` names no commit.
            StoreError: the pin could not be recorded.
        """
        served = self.served_as(workspace)
        commit = self.resolve(rev, served.label)
        assert commit is not None
        if served.indexer is None:
            return commit, _nothing
        return commit, served.indexer.pin(commit)

    def pin_all(self, specs: Sequence[str]) -> tuple[Pins, Callable[[], None]]:
        """Pins from `--ref` or `?ref=` values: `NAME=REV` for a workspace by its shown name, or
        a bare `REV` when one workspace is served; the pins (a commit for one workspace, else
        a commit per shown name) and the call that releases them all.

        Raises:
            ConfigError: a bare REV while several workspaces are served, an unknown NAME, or
                one workspace pinned twice.
            WorkspaceError: a REV names no commit.
            StoreError: a pin could not be recorded.
        """
        pins: dict[str, str] = {}
        releases: list[Callable[[], None]] = []

        def release() -> None:
            for one in releases:
                one()

        try:
            for label, rev in self._wanted(specs).items():
                commit, undo = self.pin(rev, label) if self.several else self.pin(rev)
                pins[label] = commit
                releases.append(undo)
        except BaseException:
            release()
            raise
        return self._as_pins(pins), release

    def resolve_all(self, specs: Sequence[str]) -> Pins:
        """`--ref` values (as pin_all takes them) resolved to commits, pinning nothing.

        Raises:
            ConfigError, WorkspaceError: as pin_all.
        """
        return self._as_pins(
            {label: self.resolve(rev, label) or rev for label, rev in self._wanted(specs).items()}
        )

    def _as_pins(self, pins: dict[str, str]) -> Pins:
        if not pins:
            return None
        return next(iter(pins.values())) if not self.several else pins

    def _wanted(self, specs: Sequence[str]) -> dict[str, str]:
        wanted: dict[str, str] = {}
        for spec in specs:
            name, equals, rev = spec.partition("=")
            served = next((s for s in self.served if equals and name in (s.label, s.name)), None)
            if served is None:
                if self.several:
                    raise ConfigError(
                        f"ref {shown_value(spec)} must name its workspace as NAME=REV: several "
                        f"are served ({listed(self.labels)})"
                    )
                served, rev = self.served[0], spec
            if served.label in wanted:
                raise ConfigError(f"workspace {served.label} is pinned twice; pin it once")
            wanted[served.label] = rev
        return wanted

    def warm_up(self, query: str) -> None:
        """Answer `query` once and drop the answer: loads the model and the current refs'
        vectors before the first real call.

        Raises:
            DocshelfError: the search failed (nothing indexed, the model or the store).
        """
        self.search(query, 1)  # every workspace at once: one search, however many there are

    def resolve(self, rev: str | None, workspace: str | None = None) -> str | None:
        """`rev` as a full commit id: resolved by git when the workspace is a repository (no
        fetch), else taken as given when it already is one.

        Raises:
            ConfigError: several workspaces are served and none is named.
            WorkspaceError: `rev` names no commit.
        """
        if rev is None:
            return None
        served = self.served_as(workspace)
        if served.source is not None:
            return served.source.resolve(rev)
        if COMMIT_ID.fullmatch(rev):  # a full commit id, or a plain directory's ref
            return rev
        from docshelf.workspace import open_workspace  # noqa: PLC0415 - see the imports above

        # The default workspace name is the repository's path: resolve there when it is one.
        if Path(served.name).is_dir():
            here = open_workspace(served.name, mirrors_dir=Path(served.name))
            return here.resolve(rev)
        raise WorkspaceError(
            f"{rev!r} is not a full commit id, and the workspace {served.label} is not a "
            "local repository to resolve it in; give the full commit id"
        )

    def search(
        self,
        query: object,
        top_k: object = DEFAULT_TOP_K,
        *,
        ref: Pins = None,
        mode: object = None,
        path: object = None,
        workspace: object = None,
        per_file: object = None,
    ) -> Answer:
        """The `top_k` excerpts for `query` (`Answer.hits`, best first) from `ref` (a full
        commit id, see `resolve`; with several workspaces, a commit per shown name) or the
        current ref; asked again when the current ref moved during the search (its rows may
        have been pruned under it). `mode` is hybrid, vector or text (default: hybrid, or text
        for a store made without an embedder). `path` keeps the files under a folder
        (`docs/runbooks/`) or matching a glob (`**/payments.md`), ranked among themselves.
        `workspace` searches one of several (default: all, ranked together). At most
        `per_file` excerpts come from one file (1..top_k; default: top_k, no bound), each
        counting the file's other passages that matched (`Hit.more`); excerpts of one file that
        overlap or nearly touch are one.

        Raises:
            ConfigError: the query, top_k, per_file, mode, path or workspace is refused.
            NotIndexedError: nothing is indexed for the workspace yet.
            EmbeddingError, StoreError: the embedder or the store failed.
        """
        chosen = check_path_filter(path, "search_path")
        targets = self._targets(workspace)
        text = check_query(query)
        k = check_top_k(top_k)
        cap = check_per_file(per_file, k)
        how = check_mode(mode, self.embedder)
        attempt = 1
        while True:
            try:
                answer, moved = self._answer(text, k, how, chosen, targets, ref, cap)
            except NotIndexedError:
                if attempt == SEARCH_ATTEMPTS or not self.reads.currents([s.name for s in targets]):
                    raise
            else:
                # A pinned ref's rows are kept by its pin; only an answer from current can race.
                if not moved or attempt == SEARCH_ATTEMPTS:
                    return answer
            attempt += 1

    def _answer(
        self,
        text: str,
        k: int,
        how: Mode,
        chosen: PathFilter | None,
        targets: Sequence[Served],
        ref: Pins,
        per_file: int,
    ) -> tuple[Answer, bool]:
        """One try of a search: the ref of each target, the paths `chosen` keeps there, the
        ranking over all of them; and whether a current ref it answered from has moved since."""
        one = len(targets) == 1
        scopes: list[Scope] = []
        notes: list[str] = []
        refs: dict[str, str] = {}
        unindexed: list[str] = []
        pinned_of: dict[str, str | None] = {}
        # The refs of every target in two reads of the store, however many targets there are.
        known = self._known_refs(targets, ref) if not one else None
        for served in targets:
            pinned = self._pin_of(served, ref)
            try:
                answer_ref, note = self._ref_for(served, pinned, known=known)
            except NotIndexedError:
                if one:
                    raise
                unindexed.append(served.label)
                continue
            pinned_of[served.name] = pinned
            refs[served.label] = answer_ref
            if note:
                notes.append(note)
            paths = None
            if chosen is not None:
                files = self.reads.files(served.name, answer_ref)
                paths = [f.path for f in selected(files, chosen)]
                if not paths and one:
                    where = _where(served, answer_ref)
                    raise ConfigError(no_such_path(chosen.text, files, where, prefix=True))
            if paths is None or paths:
                scopes.append(Scope(served.name, served.label, answer_ref, paths))
        if not refs:
            raise NotIndexedError(
                "none of the documentation served is indexed yet ("
                + listed(unindexed)
                + "); index it with docshelf index, then ask again"
            )
        if chosen is not None and not scopes:
            raise ConfigError(
                f"no indexed doc is under {chosen.text!r} in any served workspace "
                f"({', '.join(refs)}); call {term('docs_outline')} to see where the docs are"
            )
        if unindexed:
            notes.append("Not indexed yet, so not searched: " + listed(unindexed) + ".")
        hits = self.searcher.rank_scopes(text, scopes, k, how, per_file)
        from_current = [s for s in scopes if s.ref != pinned_of[s.workspace]]
        now = self.reads.currents([s.workspace for s in from_current]) if from_current else {}
        moved = any(s.ref != now.get(s.workspace) for s in from_current)
        note = " ".join(notes) or None
        if one:
            return Answer(targets[0].label, scopes[0].ref, text, how, note, hits), moved
        return Answer("", "", text, how, note, hits, refs), moved

    def _known_refs(self, targets: Sequence[Served], ref: Pins) -> _KnownRefs:
        """The current ref of each target and which of their current and pinned refs are
        indexed: two reads of the store."""
        currents = self.reads.currents([s.name for s in targets])
        asked = {(name, r) for name, r in currents.items()}
        for served in targets:
            pinned = self._pin_of(served, ref)
            if pinned is not None:
                asked.add((served.name, pinned))
        return currents, self.reads.indexed_refs(asked)

    def _ref_for(
        self,
        served: Served,
        pinned: str | None,
        what: str = "these excerpts",
        *,
        known: _KnownRefs | None = None,
    ) -> tuple[str, str | None]:
        """The ref to answer from: `pinned` when it is indexed, else the current ref, with a
        note naming both commits, so that the model never takes another commit's docs for the
        one it investigates. `known`: the refs read already (`_known_refs`).

        Raises:
            NotIndexedError: nothing is indexed for the workspace yet.
        """
        if known is None:
            current = self.reads.current(served.name)

            def indexed(r: str) -> bool:
                return self.reads.has_chunks(served.name, r)
        else:
            current = known[0].get(served.name)

            def indexed(r: str) -> bool:
                return (served.name, r) in known[1]

        if pinned is not None and (indexed(pinned) or self._replayed(served, pinned)):
            return pinned, None
        if current is None or not indexed(current):
            raise NotIndexedError(
                f"the documentation of {served.name} is not indexed yet; index it with "
                f"{served.index_hint}, then ask again"
            )
        if pinned is None or pinned == current:
            return current, None
        if self._lagging.get((served.name, pinned)):
            note = (
                f"Note: this session is pinned to commit {short_ref(pinned)}, which is indexed "
                "but not yet on the replica this server reads from; "
                f"{what} come from commit {short_ref(current)}, the latest the replica holds, "
                "and may differ from the pinned commit's docs. Ask again in a moment."
            )
        else:
            note = (
                f"Note: this session is pinned to commit {short_ref(pinned)}, which has no "
                f"indexed documentation; {what} come from the current commit "
                f"{short_ref(current)} instead and may differ from the pinned commit's docs."
            )
        return current, note

    def _replayed(self, served: Served, ref: str) -> bool:
        """Whether the replica this service reads from holds `ref` after a bounded wait
        (REPLICA_WAIT_SECONDS), when the store has it indexed and the replica not yet; False at
        once without a replica, or when the store does not have it either (or cannot say: it
        may be down while the replica serves)."""
        key = (served.name, ref)
        self._lagging.pop(key, None)
        if self.reads is self.store:
            return False
        try:
            on_primary = self.store.has_chunks(served.name, ref)
        except DocshelfError:
            return False
        if not on_primary:
            return False
        deadline = time.monotonic() + REPLICA_WAIT_SECONDS
        while time.monotonic() < deadline:
            time.sleep(REPLICA_POLL_SECONDS)
            if self.reads.has_chunks(served.name, ref):
                return True
        self._lagging[key] = True
        return False

    def read(
        self,
        path: object,
        start_line: object = None,
        end_line: object = None,
        *,
        ref: Pins = None,
        workspace: object = None,
    ) -> Reading:
        """Lines `start_line`..`end_line` (default: from the start) of the indexed file `path`
        at `ref` (default: the current ref), exactly as the commit holds them, numbered as the
        hits cite them; at most READ_MAX_LINES lines and READ_MAX_BYTES bytes, the answer saying
        where to read on. Read from the store's copy of the file, never from the disk.

        Raises:
            ConfigError: a refused argument, or a path that is not an indexed doc of that
                commit (the message names the closest that are).
            NotIndexedError: nothing is indexed yet, or the ref was indexed before docshelf kept
                file texts (the message names the command that fills them in).
            StoreError: the store cannot be read.
        """
        doc = check_path(path)
        first = check_line(start_line, "start_line")
        last = check_line(end_line, "end_line")
        if workspace is None and self.several:
            served = self._holder(ref, lambda files: any(f.path == doc for f in files), doc, doc)
        else:
            served = self.served_as(workspace)
        answer_ref, note = self._files_ref(served, self._pin_of(served, ref), "these lines")
        text = self.reads.file_text(served.name, answer_ref, doc)
        if text is None:
            files = self.reads.files(served.name, answer_ref)
            raise ConfigError(no_such_path(doc, files, _where(served, answer_ref), prefix=False))
        got = read_lines(text, first, last, doc)
        return Reading(served.label, answer_ref, doc, *got[:4], got[4], note, got[5])

    def outline(
        self,
        path: object = None,
        *,
        ref: Pins = None,
        workspace: object = None,
        page: object = None,
    ) -> DocsOutline | WorkspacesPage:
        """The indexed docs of `ref` (default: current) as files with their headings and line
        ranges: those under `path` (a folder, a file or a glob), or all; bounded like `read`,
        naming narrower paths when cut. With several workspaces and neither a workspace nor a
        path: a page of them (`page`, from 1), each with its commit and its top-level folders.

        Raises:
            ConfigError: a refused argument, or a path under which no doc was indexed.
            NotIndexedError: nothing is indexed yet, or the ref has no file texts.
            StoreError: the store cannot be read.
        """
        chosen = check_path_filter(path)
        if workspace is None and chosen is None and self.several:
            return self.overview(ref, page)
        if workspace is None and self.several:
            assert chosen is not None
            served = self._holder(
                ref, lambda files: bool(selected(files, chosen)), chosen.text, chosen.prefix
            )
        else:
            served = self.served_as(workspace)
        pinned = self._pin_of(served, ref)
        answer_ref, note = self._files_ref(served, pinned, "this outline's files")
        files = self.reads.files(served.name, answer_ref)
        kept = selected(files, chosen)
        if not kept:
            assert chosen is not None
            where = _where(served, answer_ref)
            raise ConfigError(no_such_path(chosen.text, files, where, prefix=True))
        texts = _LazyTexts(self.reads, served.name, answer_ref, kept)
        shown_files, complete = outline_files(texts, [kind_of(f.path) or "text" for f in kept])
        narrower = [] if complete else narrower_paths(kept, None if chosen is None else chosen.text)
        return DocsOutline(
            served.label,
            answer_ref,
            None if chosen is None else chosen.text,
            shown_files,
            len(kept),
            narrower,
            note,
            cut=not complete,
        )

    def _holder(
        self, ref: Pins, holds: Callable[[list[StoredFile]], bool], path: str, prefix: str
    ) -> Served:
        """The one served workspace whose docs `holds` accepts (a path named without its
        workspace), among their files under `prefix`: three reads of the store, however many
        workspaces (`_known_refs`, then every answering ref's files under `prefix` at once).

        Raises:
            ConfigError: none or several hold it: name the workspace.
        """
        known = self._known_refs(self.served, ref)
        answering: dict[tuple[str, str], Served] = {}
        for served in self.served:
            try:
                answer_ref, _ = self._ref_for(served, self._pin_of(served, ref), known=known)
            except NotIndexedError:
                continue
            answering[(served.name, answer_ref)] = served
        found = self.reads.files_refs(list(answering), prefix)
        holders = [served for key, served in answering.items() if holds(found.get(key, []))]
        if len(holders) == 1:
            return holders[0]
        if holders:
            raise ConfigError(
                f"{shown_value(path)} is in the docs of {listed([h.label for h in holders])}; "
                f"name one as {term('workspace')}"
            )
        raise ConfigError(
            f"{shown_value(path)} is not an indexed doc of any served workspace "
            f"({listed(self.labels)}); call {term('docs_outline')} to see their docs, and name "
            f"the {term('workspace')}"
        )

    def overview(self, ref: Pins = None, page: object = None) -> WorkspacesPage:
        """A page of the served workspaces at a glance (OVERVIEW_PAGE of them, in the order
        served), each at its pinned (else current) commit: what the tools' descriptions say is
        served. Only the page's workspaces are read.

        Raises:
            ConfigError: `page` is not a whole number from 1 to the number of pages.
            StoreError: the store cannot be read.
        """
        served = self.served
        pages = max(1, -(-len(served) // OVERVIEW_PAGE))
        number = check_page(page, pages)
        chosen = served[(number - 1) * OVERVIEW_PAGE : number * OVERVIEW_PAGE]
        views = [self._overview(one, self._pin_of(one, ref)) for one in chosen]
        return WorkspacesPage(views, number, pages, len(served))

    def _overview(self, served: Served, pinned: str | None) -> WorkspaceOverview:
        try:
            answer_ref, _ = self._files_ref(served, pinned)
        except NotIndexedError:
            return WorkspaceOverview(served.label, None, 0, [])
        files = self.reads.files(served.name, answer_ref)
        kinds = sorted({kind_of(f.path) or "text" for f in files})
        return WorkspaceOverview(
            served.label, answer_ref, len(files), top_folders(files), tuple(kinds)
        )

    def _files_ref(
        self, served: Served, pinned: str | None, what: str = "these files"
    ) -> tuple[str, str | None]:
        answer_ref, note = self._ref_for(served, pinned, what)
        if not self.reads.has_files(served.name, answer_ref):
            raise NotIndexedError(
                f"commit {short_ref(answer_ref)} of {served.label} was indexed before docshelf "
                f"kept the text of each file, so it cannot be read or outlined yet; run "
                f"{served.index_hint}"
                + (
                    " to fill them in (its vectors are reused), then ask again"
                    if answer_ref == self.reads.current(served.name)
                    else f" --ref {answer_ref} to fill them in (its vectors are reused; it becomes "
                    "current until the next docshelf index), then ask again"
                )
            )
        return answer_ref, note

    def sync(self, workspace: str | None = None) -> IndexResult | None:
        """Sync the source and refresh the index (the background sync's step): bounded, and a
        failure is logged, never raised.

        Raises:
            ConfigError: the workspace has no source to sync.
        """
        served = self.served_as(workspace)
        ref = self.check(served.label)
        return None if ref is None else self.refresh(served.label, ref)

    def merge_lists(self) -> int:
        """Merge the store's term lists when they are due (see `merge_lists`); how many refs
        were merged."""
        return merge_lists(self.store)

    def check(self, workspace: str | None = None) -> str | None:
        """A sync's first half: bring the source up to date (a mirror fetches only when its
        remote moved) and resolve the revision it follows; None when that failed (logged, and
        the status says so). Safe to run for several workspaces at once.

        Raises:
            ConfigError: the workspace has no source to sync.
        """
        served = self._syncing(workspace)
        assert served.indexer is not None
        try:
            return served.indexer.sync(served.rev)
        except DocshelfError as e:
            _log.error("syncing %s: %s", served.label, e)
            self._last_sync[served.label] = sync_state(None, f"syncing {served.label}: {e}")
            return None
        except Exception:  # a bug: the status still says the sync failed; the caller logs it
            self._last_sync[served.label] = sync_state(
                None, f"syncing {served.label} failed unexpectedly (the log has the details)"
            )
            raise

    def refresh(self, workspace: str | None, ref: str) -> IndexResult | None:
        """A sync's second half: index `ref` (unless it already is) and make it current,
        within the refresh timeout; None when that failed (logged). One at a time.

        Raises:
            ConfigError: the workspace has no source to sync.
        """
        served = self._syncing(workspace)
        assert served.indexer is not None
        result = served.indexer.refresh(ref)
        self._last_sync[served.label] = sync_state(result, served.indexer.last_failure)
        return result

    def _syncing(self, workspace: str | None) -> Served:
        served = self.served_as(workspace)
        if served.source is None or served.indexer is None:
            raise ConfigError("nothing to sync: give the repository (SOURCE) to serve")
        return served

    def status(self) -> ServiceState:
        """The store, and per served workspace its current commit, when that was indexed and
        what its read skipped, its refs, its live pins and this process's last sync.

        Raises:
            StoreError: the store cannot be read.
        """
        states = [
            workspace_state(
                self.store,
                s.name,
                s.label,
                syncs=s.source is not None and s.indexer is not None,
                last_sync=self._last_sync.get(s.label),
            )
            for s in self.served
        ]
        store = self.store
        return ServiceState(store.location, store.model_id, store.dim, self.text_only, states)

    def close(self) -> None:
        for served in self.served:
            if served.indexer is not None:
                served.indexer.close()
        if self.reads is not self.store:
            self.reads.close()
        self.store.close()

    def __enter__(self) -> Service:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class _LazyTexts(Sequence[tuple["StoredFile", "str | None"]]):
    """The texts of `files`, read from the store only as the outline reaches them (a cut
    outline of thousands of files reads a few)."""

    def __init__(self, store: Store, workspace: str, ref: str, files: Sequence[StoredFile]):
        self._store, self._workspace, self._ref, self._files = store, workspace, ref, files

    def __len__(self) -> int:
        return len(self._files)

    def __getitem__(self, i: Any) -> Any:
        if isinstance(i, slice):
            return [self[j] for j in range(*i.indices(len(self)))]
        file = self._files[i]
        return file, self._store.file_text(self._workspace, self._ref, file.path)

    def __iter__(self) -> Iterator[tuple[StoredFile, str | None]]:
        for file in self._files:
            yield file, self._store.file_text(self._workspace, self._ref, file.path)


def _where(served: Served, ref: str) -> str:
    return f"{served.label} at commit {short_ref(ref)}"


def _nothing() -> None:
    pass
