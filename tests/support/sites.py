"""The real docs-site trees of ../shared/data/sites, as a test or a benchmark meets them.

The data leaves out the configs written in a programming language (its README quotes what they
set); `site_repo` writes configs of the same shape into a copy of the tree and commits it, so a
test reads the site as its git history would hold it. `markup_lines` is the judge of "generator
markup in a chunk": the patterns the issue names, per format, outside fenced code.
"""

from __future__ import annotations

import re
import shutil
from collections.abc import Sequence
from pathlib import Path

from docshelf.chunking import Chunk
from tests.support.gitrepo import Repo

SITES = Path(__file__).resolve().parents[3] / "shared" / "data" / "sites"

# What the README's tables say each config sets, written as such a config would say it. Only the
# keys the README quotes are set; the rest of a real config (themes, plugins) is left out.
QUOTED_CONFIGS: dict[str, dict[str, str]] = {
    "docusaurus-jest": {
        "website/docusaurus.config.mjs": (
            "export default {\n"
            "  title: 'Jest',\n"
            "  presets: [\n"
            "    [\n"
            "      '@docusaurus/preset-classic',\n"
            "      {\n"
            "        docs: {\n"
            "          path: '../docs',\n"
            "          sidebarPath: './sidebars.json',\n"
            "        },\n"
            "        blog: { showReadingTime: true },\n"
            "      },\n"
            "    ],\n"
            "  ],\n"
            "};\n"
        ),
    },
    "sphinx-celery": {
        "docs/conf.py": (
            "from sphinx_celery import conf\n\n"
            "globals().update(conf.build_config(\n"
            "    'celery', __file__,\n"
            "    project='Celery',\n"
            "))\n"
        ),
    },
    "vitepress-vitest": {
        "docs/.vitepress/config.ts": (
            "import { defineConfig } from 'vitepress'\n\n"
            "export default defineConfig({\n"
            "  title: 'Vitest',\n"
            "  srcExclude: ['**/guide/examples/*', '**/guide/cli-generated.md', 'AGENTS.md'],\n"
            "})\n"
        ),
    },
    "vitepress-i18n": {
        "docs/.vitepress/config.ts": (
            "import { defineConfig } from 'vitepress'\n\n"
            "export default defineConfig({\n"
            "  rewrites: { 'en/:rest*': ':rest*' },\n"
            "  locales: {\n"
            "    root: { label: 'English', lang: 'en-US' },\n"
            "    zh: { label: '简体中文', lang: 'zh-Hans' },\n"
            "    pt: { label: 'Português', lang: 'pt-BR' },\n"
            "    ru: { label: 'Русский', lang: 'ru-RU' },\n"
            "    es: { label: 'Español', lang: 'es' },\n"
            "    ko: { label: '한국어', lang: 'ko-KR' },\n"
            "    fa: { label: 'فارسی', lang: 'fa-IR', dir: 'rtl' },\n"
            "    ja: { label: '日本語', lang: 'ja' },\n"
            "  },\n"
            "})\n"
        ),
    },
}

# The current docs root of each tree, as its README's table says.
EXPECTED_ROOTS: dict[str, tuple[str, ...]] = {
    "mkdocs-chezmoi": ("assets/chezmoi.io/docs",),
    "docusaurus-jest": ("docs",),
    "hugo-hugoDocs": ("content/en",),
    "sphinx-celery": ("docs",),
    "antora-spring-security": ("docs/modules/ROOT/pages",),
    "mdbook-rust-cookbook": ("src",),
    "vitepress-vitest": ("docs",),
    "vitepress-i18n": ("docs/en",),
}

# Folders the README lists as not current docs, each of which the output must name (a subset:
# the ones a reader would look for first).
EXPECTED_NOT_READ: dict[str, tuple[str, ...]] = {
    "mkdocs-chezmoi": ("assets/chezmoi.io/snippets",),
    "docusaurus-jest": ("website/versioned_docs", "website/blog"),
    "hugo-hugoDocs": ("content/en/_common",),
    "sphinx-celery": (),
    "antora-spring-security": ("docs/modules/ROOT/partials",),
    "mdbook-rust-cookbook": (),
    "vitepress-vitest": ("docs/blog",),
    "vitepress-i18n": ("docs/zh", "docs/ja"),
}

TREES = tuple(EXPECTED_ROOTS)


def site_repo(tree: str, dest: Path, *, configs: bool = True) -> Repo:
    """A git repository at `dest` holding `tree`'s files (and, with `configs`, the configs its
    README quotes), committed on main."""
    shutil.copytree(SITES / tree, dest, symlinks=True)
    repo = Repo(dest)
    if configs:
        for path, text in QUOTED_CONFIGS.get(tree, {}).items():
            repo.write(path, text)
    repo.git("add", "-A")
    repo.git("commit", "--quiet", "-m", f"{tree}")
    return repo


_FENCE = re.compile(r"^[ \t]*(`{3,}|~{3,})")

# Generator syntax that must not reach a chunk, by the kind of file (the list).
_ANY = [
    r"\{\{[<%]",  # Hugo shortcodes
    r"--8<--",  # MkDocs snippets
    r"\{\{#(?:rustdoc_)?include",  # mdBook includes
    r"<!--\s*@include:",  # VitePress includes
]
MARKUP_PATTERNS: dict[str, re.Pattern[str]] = {
    "markdown": re.compile(
        "|".join(
            [
                *_ANY,
                r"^[ \t]*(?:!!!|\?\?\?\+?)[ \t]+\w",  # MkDocs admonitions
                r'^[ \t]*===\+?[ \t]+"',  # MkDocs content tabs
                r"^[ \t]*:::",  # Docusaurus / VitePress containers
                r"^[ \t]*(?:`{3,}|~{3,}|:{3,})\{[\w-]+\}",  # MyST directive fences
                r"</?[A-Z][\w.]*(?:[ \t/>]|$)",  # JSX / Vue components
            ]
        ),
        re.MULTILINE,
    ),
    "asciidoc": re.compile(
        "|".join(
            [
                *_ANY,
                r"^(?:-{4,}|={4,}|\*{4,}|\.{4,}|_{4,}|\|===|--)[ \t]*$",  # block delimiters
                r"^\[(?:source|tabs|NOTE|TIP|IMPORTANT|WARNING|CAUTION|,)[^\]]*\][ \t]*$",
                r"^(?:include|ifn?def|endif|ifeval)::",
                r"^:[\w-]+:(?:[ \t]|$)",  # attribute entries
            ]
        ),
        re.MULTILINE,
    ),
    "rst": re.compile(
        "|".join(
            [
                *_ANY,
                r"^[ \t]*\.\.[ \t]+[\w:-]+::",  # directive lines
                r"^[ \t]*\.\.[ \t]+_[^:]*:",  # label targets
            ]
        ),
        re.MULTILINE,
    ),
}
MARKUP_PATTERNS["mdx"] = MARKUP_PATTERNS["markdown"]
MARKUP_PATTERNS["text"] = MARKUP_PATTERNS["rst"]

INCLUDE_LINE = re.compile(
    r"^[ \t]*(?:--8<--|\{\{#(?:rustdoc_)?include|<!--\s*@include:|\.\.[ \t]+(?:literal)?include::"
    r"|include::|\{\{[<%]-?[ \t]*include[ \t])"
)


_CODE_SPAN = re.compile(r"(`+)(?:(?!\1).)+?\1")


def file_markup(chunks: Sequence[Chunk], kind: str) -> list[tuple[Chunk, list[str]]]:
    """The chunks of one file that hold generator markup outside code, with those lines.

    Whether a line is inside fenced code is read from the file's visible text as its chunks give
    it (a chunk cut out of a long fence starts inside it), and code spans are code too."""
    pattern = MARKUP_PATTERNS[kind]
    visible: dict[int, str] = {}
    for c in chunks:
        lines = c.content.split("\n")
        if len(lines) == c.end_line - c.start_line + 1:
            for k, line in enumerate(lines):
                visible[c.start_line + k] = line
    in_code: set[int] = set()
    fence = ""
    for number in range(1, max(visible, default=0) + 1):
        m = _FENCE.match(visible.get(number, ""))
        if fence:
            in_code.add(number)
            if m and m.group(1)[0] == fence[0] and len(m.group(1)) >= len(fence):
                fence = ""
        elif m:
            fence = m.group(1)
            in_code.add(number)
    found = []
    for c in chunks:
        lines = c.content.split("\n")
        whole = len(lines) == c.end_line - c.start_line + 1
        marked = [
            line
            for k, line in enumerate(lines)
            if not (whole and c.start_line + k in in_code)
            and pattern.search(_CODE_SPAN.sub("", line))
        ]
        if marked:
            found.append((c, marked))
    return found


def prose(content: str) -> str:
    """A chunk's content without its fenced code: markup shown inside a fence is code."""
    kept, fence = [], ""
    for line in content.split("\n"):
        m = _FENCE.match(line)
        if fence:
            if m and m.group(1)[0] == fence[0] and len(m.group(1)) >= len(fence):
                fence = ""
            continue
        if m:
            fence = m.group(1)
            continue
        kept.append(line)
    return "\n".join(kept)


def markup_lines(content: str, kind: str) -> list[str]:
    """The lines of a chunk's content, outside fenced code, that hold generator markup."""
    pattern = MARKUP_PATTERNS[kind]
    return [line for line in prose(content).split("\n") if pattern.search(line)]


def is_include_chunk(content: str) -> bool:
    """Whether a chunk is nothing but include directives."""
    lines = [line for line in content.split("\n") if line.strip()]
    return bool(lines) and all(INCLUDE_LINE.match(line) for line in lines)
