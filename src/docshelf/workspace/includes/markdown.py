"""Includes in Markdown and MDX: MkDocs snippets, mdBook links, VitePress includes and code
snippets, MDX imports of partials, Hugo's include shortcode, and MyST's include fences.

Constraints:
- Each syntax is found where its generator expands it, and nowhere else. Preprocessors expand
  inside code fences too (MkDocs snippets, mdBook, VitePress `<!--@include:-->`, Hugo
  shortcodes): such an include is `as_code`. Markdown block syntax (VitePress `<<<`, MDX
  imports, MyST fences) is not found in code.
- Escaped forms (`;--8<--`, `\\{{#include}}`, `<!--@@include:`, `{{%/* include */%}}`) are
  examples, not includes. An MDX import counts only when the page renders it (`<X />`).
- A target resolves against the file's folder, or a site base for MkDocs snippets (never leaving
  it), Hugo's content folder, '@/' (VitePress) and '@site/' (Docusaurus).
- Every pattern runs in time linear in its line: a 1 MB line costs one pass, not one per match.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field

from docshelf.chunking.fences import Fence, fence_closes, fence_open
from docshelf.workspace.includes.model import (
    FOLDER,
    LEAVES_BASE,
    NO_SOURCE_DIR,
    URL,
    Include,
    Syntax,
)
from docshelf.workspace.includes.paths import (
    Resolved,
    Site,
    first,
    folder_of,
    is_url,
    join,
)
from docshelf.workspace.includes.rst import rst_include

# The syntaxes a Markdown or MDX file may hold, when the caller does not name its generator's.
SYNTAXES: tuple[Syntax, ...] = (
    "mkdocs-snippet",
    "mdbook-include",
    "vitepress-include",
    "vitepress-snippet",
    "mdx-import",
    "hugo-include",
    "sphinx-include",  # MyST's ```{include} fence
    "sphinx-literalinclude",
)

# pymdownx.snippets: `--8<-- "file"` on its own line (one space or more, a quoted path, nothing
# after it: a space after the quote is its escape), or the bare block marker; `;` escapes both.
_SNIPPET = re.compile(
    r"""[ \t]*+(;*+)-++8<-++(?:[ \t]++("(?:\\.|[^"\\])*+"|'(?:\\.|[^'\\])*+'))?+"""
)
# A snippet's suffix: a section `:name`, or a line range `:3`, `:3:5`, `::5`, `:3:`.
_SNIPPET_SUFFIX = re.compile(r"(?i)(.*?)(:[a-z][-_0-9a-z]*+|:[0-9]*+(?::[0-9]*+)?+)?")
# mdBook's links: an escaped one (`\{{#...}}`), or `{{#include path[:anchor|:range] }}`. (A
# target holding a brace is not one: each attempt stops at the next brace.)
_MDBOOK = re.compile(
    r"\\\{\{#[^{}]*+\}\}|\{\{\s*+#(include|rustdoc_include|playground)\s++([^{}]++)\}\}"
)
_VITEPRESS_OPEN = re.compile(r"<!--\s*+@include:\s*+")
_VITEPRESS_RANGE = re.compile(r"\{(\d*+),(\d*+)\}$")
_VITEPRESS_REGION = re.compile(r"#[^\s{#/]++$")
# `<<< path#region {1,3 lang} [title]`: the code-snippet import, at the start of a line.
_CODE_SNIPPET = re.compile(r"[ \t]*+<<<[ \t]*+(\S.*+)")
_SNIPPET_TITLE = re.compile(r" ?\[[^\[\]]*+\]$")
_SNIPPET_META = re.compile(r" ?\{[^{}]*+\}$")
_SNIPPET_REGION = re.compile(r"#[\w-]++$")
# An MDX default import of a Markdown partial, on its own line at the top level.
_MDX_IMPORT = re.compile(
    r"""import\s++([A-Za-z_$][\w$]*+)\s++from\s++(["'])([^"'\n]*+)\2\s*+;?+\s*+"""
)
_JSX_TAG = re.compile(r"<([A-Za-z_$][\w$]*+)(?=[\s/>])")
# Hugo's include shortcode, `{{% include "path" %}}` or `{{< include "path" >}}`; the escaped
# `{{%/* include */%}}` has `/*` before the name, so it never matches.
_HUGO = re.compile(
    r"""\{\{([<%])\s*+include\s++(?:"([^"]*+)"|`([^`]*+)`|([^\s"`%<>{}]++))\s*+/?+\s*+[%>]\}\}"""
)
_HUGO_CONTENT_SUFFIXES = (".md", ".markdown", ".html", ".htm", ".adoc", ".rst", ".org", ".pdc")
# MyST's include directive as a fence: ```{include} path
_MYST = re.compile(r"\{(include|literalinclude)\}[ \t]*+(.*+)")
_MYST_SYNTAX: dict[str, Syntax] = {
    "include": "sphinx-include",
    "literalinclude": "sphinx-literalinclude",
}
_OPTION = re.compile(r"[ \t]*+:([\w-]++):(.*+)")


@dataclass(slots=True)
class _Myst:
    """An open MyST include fence: its line, directive, argument, and leading options."""

    line: int
    directive: str
    written: str
    options: list[str] = field(default_factory=list)
    in_options: bool = True


def scan_markdown(path: str, lines: list[str], on: frozenset[Syntax], site: Site) -> list[Include]:
    found: list[Include] = []
    imports: list[tuple[str, Include]] = []
    tags: set[str] = set()
    fence: Fence | None = None
    myst: _Myst | None = None
    block: int | None = None  # the line of an open snippet block's marker
    block_items: list[tuple[str, bool]] = []
    snippets = "mkdocs-snippet" in on
    for number, line in enumerate(lines, 1):
        if (snippets and "8<" in line) or block is not None:
            m = _SNIPPET.fullmatch(line)
            if m is not None and not m.group(1):
                if m.group(2) is None:  # a bare marker opens or closes a block
                    if block is None:
                        block, block_items = number, []
                    else:
                        for raw, as_code in block_items:
                            found.append(_snippet(block, number, raw, as_code, site))
                        block = None
                elif block is None:  # pymdownx ignores an inline snippet inside a block
                    written = m.group(2)[1:-1]
                    found.append(_snippet(number, number, written, fence is not None, site))
                continue
            if block is not None:
                item = line.strip()
                if item and not item.startswith(";"):
                    block_items.append((item, fence is not None))
                continue
        in_code = fence is not None
        if fence is not None:
            if fence_closes(line, fence):
                fence = None
                if myst is not None:
                    found.append(_myst(path, myst, number, site))
                    myst = None
            elif myst is not None and myst.in_options:
                if _OPTION.fullmatch(line) is not None:
                    myst.options.append(line.strip())
                else:
                    myst.in_options = False
        else:
            opened = fence_open(line)
            if opened is not None:
                fence = opened
                info = line[line.find(opened.marker) + len(opened.marker) :].strip()
                directive = _MYST.fullmatch(info)
                if directive is not None and _MYST_SYNTAX[directive.group(1)] in on:
                    myst = _Myst(number, directive.group(1), directive.group(2))
                continue
        if "{{" in line:
            if "mdbook-include" in on:
                found.extend(_mdbook(path, number, line, in_code))
            if "hugo-include" in on:
                found.extend(_hugo(path, number, line, in_code, site))
        if "vitepress-include" in on and "<!--" in line:
            found.extend(_vitepress_includes(path, number, line, in_code, site))
        if in_code:
            continue
        if "vitepress-snippet" in on and "<<<" in line:
            m = _CODE_SNIPPET.fullmatch(line.rstrip())
            if m is not None:
                found.append(_code_snippet(path, number, m.group(1), site))
        if "mdx-import" in on:
            if line.startswith("import"):
                m = _MDX_IMPORT.fullmatch(line)
                if m is not None:
                    include = _mdx_import(path, number, m.group(3), site)
                    if include is not None:
                        imports.append((m.group(1), include))
            if "<" in line:
                tags.update(t.group(1) for t in _JSX_TAG.finditer(line))
    if myst is not None:  # an unclosed fence runs to the end of the file
        found.append(_myst(path, myst, len(lines), site))
    if block is not None:  # pymdownx reads an unclosed block's paths all the same
        found.extend(_snippet(block, len(lines), raw, code, site) for raw, code in block_items)
    # A partial imported and never rendered (`<X />`) shows nothing on the page.
    found.extend(include for name, include in imports if name in tags)
    found.sort(key=lambda i: (i.line, i.end_line))
    return found


def _snippet(line: int, end_line: int, written: str, as_code: bool, site: Site) -> Include:
    written = written.strip()
    if is_url(written):
        return Include(line, end_line, "mkdocs-snippet", written, None, URL, as_code)
    m = _SNIPPET_SUFFIX.fullmatch(written)
    name, selector = (m.group(1).strip(), m.group(2) or "") if m else (written, "")
    bases = site.bases or ("",)
    candidates = []
    for base in bases:
        joined = join(base, name)
        # pymdownx's restrict_base_path: a path that climbs out of its base is not looked for.
        if joined.target is not None and base and not joined.target.startswith(base + "/"):
            joined = Resolved(None, LEAVES_BASE)
        candidates.append(joined)
    chosen = first(candidates, site.paths)
    return Include(
        line, end_line, "mkdocs-snippet", written, chosen.target, chosen.problem, as_code, selector
    )


def _mdbook(path: str, number: int, line: str, in_code: bool) -> Iterator[Include]:
    for m in _MDBOOK.finditer(line):
        if m.group(1) is None:  # escaped
            continue
        argument = m.group(2).strip()
        written = argument.split(None, 1)[0] if argument else ""
        name, _, selector = written.partition(":")
        as_code = in_code or m.group(1) == "playground"
        resolved = join(folder_of(path), name) if name else Resolved(None, FOLDER)
        if is_url(written):
            resolved = Resolved(None, URL)
        yield Include(
            number,
            number,
            "mdbook-include",
            written,
            resolved.target,
            resolved.problem,
            as_code,
            selector,
        )


def _vitepress_includes(
    path: str, number: int, line: str, in_code: bool, site: Site
) -> Iterator[Include]:
    pos = 0
    while (start := line.find("<!--", pos)) >= 0:
        m = _VITEPRESS_OPEN.match(line, start)
        if m is None:
            pos = start + 4
            continue
        end = line.find("-->", m.end())
        if end < 0:
            return  # no later include on this line can close either
        pos = end + 3
        written = line[m.end() : end].strip()
        if not written:
            continue
        name, selector = written, ""
        ranged = _VITEPRESS_RANGE.search(name)
        if ranged is not None:
            name, selector = name[: ranged.start()], ranged.group(0)
        region = _VITEPRESS_REGION.search(name)
        if region is not None:
            name, selector = name[: region.start()], region.group(0) + selector
        resolved = _vitepress_path(path, name, site)
        yield Include(
            number,
            number,
            "vitepress-include",
            written,
            resolved.target,
            resolved.problem,
            in_code,
            selector,
        )


def _vitepress_path(path: str, name: str, site: Site) -> Resolved:
    """`@/x` (or `@x`) is under srcDir, anything else relative to the file."""
    if name.startswith("@"):
        if not site.bases:
            return Resolved(None, NO_SOURCE_DIR)
        return join(site.bases[0], name[2:] if name.startswith("@/") else name[1:])
    return join(folder_of(path), name)


def _code_snippet(path: str, number: int, written: str, site: Site) -> Include:
    name, selector = written, ""
    for pattern in (_SNIPPET_TITLE, _SNIPPET_META, _SNIPPET_REGION):
        m = pattern.search(name)
        if m is not None:
            name, selector = name[: m.start()], m.group(0).strip() + " " + selector
    resolved = _vitepress_path(path, name.strip(), site)
    return Include(
        number,
        number,
        "vitepress-snippet",
        written,
        resolved.target,
        resolved.problem,
        True,
        selector.strip(),
    )


def _mdx_import(path: str, number: int, source: str, site: Site) -> Include | None:
    """An import of a relative .md/.mdx file (or one under Docusaurus's `@site/`), else None."""
    if not source.lower().endswith((".md", ".mdx")):
        return None
    if source.startswith(("./", "../")):
        resolved = join(folder_of(path), source)
    elif source.startswith("@site/") and site.bases:
        resolved = join(site.bases[0], source[len("@site/") :])
    else:
        return None
    return Include(number, number, "mdx-import", source, resolved.target, resolved.problem)


def _hugo(path: str, number: int, line: str, in_code: bool, site: Site) -> Iterator[Include]:
    for m in _HUGO.finditer(line):
        written = next(g for g in m.groups()[1:] if g is not None).strip()
        # Page.GetPage: a logical path, relative to the page's folder first, then to the
        # content folder; '/' is the content folder. The file suffix may be left out.
        if is_url(written):
            candidates = [Resolved(None, URL)]
        elif written.startswith("/"):
            logical = written[1:]
            candidates = [join(b, n) for b in site.bases for n in _hugo_names(logical)]
        else:
            folders = [folder_of(path), *site.bases]
            candidates = [join(f, n) for f in folders for n in _hugo_names(written)]
        chosen = first(candidates, site.paths)
        yield Include(
            number, number, "hugo-include", written, chosen.target, chosen.problem, in_code
        )


def _hugo_names(logical: str) -> list[str]:
    if logical.lower().endswith(_HUGO_CONTENT_SUFFIXES) or not logical.strip("/"):
        return [logical]
    logical = logical.rstrip("/")
    return [logical + ".md", logical + "/index.md", logical + "/_index.md", logical]


def _myst(path: str, myst: _Myst, end: int, site: Site) -> Include:
    syntax = _MYST_SYNTAX[myst.directive]
    folder = folder_of(path)
    return rst_include(myst.line, end, syntax, myst.written, myst.options, folder, site)
