"""The rules every site shares, applied to what a generator module drafted: translations, old
versions, blogs and changelog posts, include-only folders, files the generator does not render.
The result is the Site the caller reads and shows.

Constraints:
- Only what the tree holds is named: a not-current folder with no documentation file in it is
  not shown, a root that holds nothing is dropped (and the site with it when none is left).
- Everything a site leaves out under its roots is in `exclude` and has its reason in
  `not_read`, so nothing inside a root is left out unseen.
- Pure: paths in, a Site out; no file is read.
"""

from __future__ import annotations

import posixpath
import re

from docshelf.workspace.sites.layout import (
    Draft,
    Site,
    Tree,
    glob,
    glob_matches,
    glob_under,
    inside,
    is_doc,
    parent,
    unique,
    vendored,
)
from docshelf.workspace.sites.locales import locale_folders, suffix_translations, suffixed

# Folders of blog posts: dated news, not the current docs (Jekyll keeps drafts beside them).
BLOG_DIRS = frozenset({"blog", "blogs", "_posts", "_drafts"})

# Folders that hold release history: old changelogs and "what's new" pages, read as current only
# when their files are not named by version (a "changes" folder may be a page about changes).
HISTORY_DIRS = frozenset(
    {
        "history",
        "changelog",
        "changelogs",
        "changes",
        "release-notes",
        "release_notes",
        "releasenotes",
        "whatsnew",
        "whats-new",
        "whats_new",
    }
)
# A file named by a version: changelog-5.6.rst, whatsnew-4.0.rst, v2.1.md, 1.0.0.md.
_VERSIONED_NAME = re.compile(r"(?:^|[-_.v])\d+\.\d+|^v\d+")
# At least this share of a history folder's files is named by version.
HISTORY_SHARE = 0.5

# Folders that generators and writers keep for text that pages include, never a page of its own.
INCLUDE_DIRS = frozenset(
    {"_includes", "_partials", "_snippets", "_fragments", "_common", "_shared", "includes"}
)

# Copies of the docs as an older release had them: Docusaurus's versioned_docs (and
# <plugin id>_versioned_docs), and folders named by version beside the current docs (v1.x, 2.0,
# version-1.2).
_VERSIONED_DOCS = re.compile(r"(?:.+_)?versioned_docs")
_VERSION_DIR = re.compile(r"(?:v|version[-_]?)?\d+(?:\.(?:\d+|x|X))*(?:[-_.][xX])?")


def finish(draft: Draft, tree: Tree) -> Site | None:
    """The site a draft describes, the shared rules applied; None when no root holds a file."""
    roots: list[str] = []
    # A glob that names one path ("/drafts", as glob_under anchors a top-level name) is shown
    # and checked as that path.
    not_read = [e.lstrip("/") if _is_path(e) else e for e in draft.not_read]
    not_read += draft.translations
    for given in unique(draft.roots):
        if not tree.is_dir(given) or not tree.docs_under(given):
            continue
        default, translated = locale_folders(tree, given, draft.language)
        not_read += translated
        narrowed = default is not None and _only_in(tree, given, [default, *translated], draft)
        root = default if default is not None and narrowed else given
        roots.append(root)
        not_read += _versions(tree, root)
        for folder in tree.dirs_under(root):
            name = folder.rsplit("/", 1)[-1]
            if vendored(folder if root == "." else folder[len(root) + 1 :]):
                continue
            if name in BLOG_DIRS:
                not_read.append(folder)
                not_read += _index_pages(tree, folder)
            elif (
                name in INCLUDE_DIRS
                or _VERSIONED_DOCS.fullmatch(name)
                or _is_history(tree, folder, name)
            ):
                not_read.append(folder)
    if not roots:
        return None
    left_out = tuple(p + "/" for p in not_read if _is_path(p))
    for root in roots:
        for tag, files in sorted(suffix_translations(tree, root, draft.language).items()):
            whole = len(files) == len(suffixed(tree, root, tag))
            pattern = glob_under(root, f"**/*.{tag}.*", gitignore=False) if whole else None
            not_read += [pattern] if pattern else files
        not_read += _foreign(tree, root, draft.suffixes, left_out)
    shown = _outermost([e for e in unique(not_read) if _holds_docs(tree, e)])
    exclude = list(draft.exclude)
    for entry in shown:
        if not _is_path(entry):
            exclude.append(entry)
        elif any(inside(entry, r) for r in roots):
            exclude.append(glob(entry))
    nav = [p for p in unique(draft.nav) if tree.is_file(p)]
    exclude += [glob(p) for p in nav if any(inside(p, r) for r in roots)]
    note = draft.note
    if note:
        note += f"; read as {draft.generator}'s default layout instead ({', '.join(roots)})"
    return Site(
        generator=draft.generator,
        config=draft.config,
        roots=unique(sorted(roots)),
        not_read=tuple(shown),
        exclude=unique(exclude),
        nav=tuple(nav),
        include_bases=unique(b for b in draft.include_bases if tree.is_dir(b)),
        language=draft.language,
        note=note,
    )


def _outermost(entries: list[str]) -> list[str]:
    """The entries but the paths that lie inside another path of them."""
    paths = [e for e in entries if _is_path(e)]
    return [
        e for e in entries if not _is_path(e) or not any(p != e and inside(e, p) for p in paths)
    ]


def _only_in(tree: Tree, root: str, folders: list[str], draft: Draft) -> bool:
    """Whether every page under `root` lies in one of `folders` (other files are assets)."""
    return all(
        any(inside(f, d) for d in folders)
        for f in tree.docs_under(root)
        if f.lower().endswith(draft.suffixes)
    )


def _versions(tree: Tree, root: str) -> list[str]:
    """Folders directly under `root` named by version, but the one that is current: all of
    them beside other pages (the current docs, or a `latest` folder), else all but the newest."""
    dirs, files = tree.children(root)
    versions = [d for d in dirs if _VERSION_DIR.fullmatch(d)]
    if not versions:
        return []
    prefix = "" if root == "." else root + "/"
    others = [d for d in dirs if d not in versions and tree.docs_under(prefix + d)]
    if others or any(is_doc(f) for f in files):
        old = versions
    else:
        newest = max(versions, key=lambda d: [int(n) for n in re.findall(r"\d+", d)])
        old = [d for d in versions if d != newest]
    return [prefix + d for d in old]


def _is_history(tree: Tree, folder: str, name: str) -> bool:
    if name.lower() not in HISTORY_DIRS:
        return False
    docs = tree.docs_under(folder)
    named = [f for f in docs if _VERSIONED_NAME.search(f.rsplit("/", 1)[-1])]
    return bool(docs) and len(named) >= HISTORY_SHARE * len(docs)


def _index_pages(tree: Tree, folder: str) -> list[str]:
    """The page beside a folder that lists it: blog.md beside blog/."""
    _, files = tree.children(parent(folder))
    prefix = "" if parent(folder) == "." else parent(folder) + "/"
    name = folder.rsplit("/", 1)[-1]
    return [prefix + f for f in files if posixpath.splitext(f)[0] == name and is_doc(f)]


def _foreign(
    tree: Tree, root: str, suffixes: tuple[str, ...], left_out: tuple[str, ...]
) -> list[str]:
    """Globs of the documentation files under `root` that the generator does not render (those
    in folders already left out aside)."""
    found = sorted(
        {
            posixpath.splitext(f)[1].lower()
            for f in tree.docs_under(root)
            if not f.lower().endswith(suffixes) and not f.startswith(left_out)
        }
    )
    globs = [glob_under(root, f"**/*{suffix}", gitignore=False) for suffix in found]
    return [g for g in globs if g]


def _is_path(entry: str) -> bool:
    return not any(c in entry for c in "*?[")


def _holds_docs(tree: Tree, entry: str) -> bool:
    return glob_matches(tree, entry) if not _is_path(entry) else bool(tree.docs_under(entry))
