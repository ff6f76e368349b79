"""Includes in AsciiDoc: Asciidoctor's `include::` (with the attributes its target names),
Antora resource ids, and Spring's `include-code::`.

Constraints:
- `include::` is found where Asciidoctor's preprocessor expands it: in listing and literal
  blocks too (then `as_code`), never in a comment or a comment block; `\\include::` is an
  example, not an include.
- An attribute in a target takes the site's value first (hard set), then the file's own entries
  above the line; one that is not set refuses the include, never guessed at.
- An Antora resource id resolves under its module's family folder; another component or
  version, or a file outside a module, is refused. `include-code::` names a file written at
  build time, so it is always refused.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from docshelf.workspace.includes.model import (
    GENERATED,
    OTHER_COMPONENT,
    OTHER_VERSION,
    OUTSIDE_MODULE,
    UNSET_ATTRIBUTE,
    Include,
    Syntax,
)
from docshelf.workspace.includes.paths import Resolved, Site, folder_of, is_url, join

# The syntaxes an AsciiDoc file may hold, when the caller does not name its generator's.
SYNTAXES: tuple[Syntax, ...] = (
    "asciidoc-include",
    "antora-include",
    "antora-include-code",
)

_ATTRIBUTE_ENTRY = re.compile(r":(!?)([\w][\w-]*+)(!?):(?:[ \t]++(.*+)|[ \t]*+)")
_IFNDEF_ENTRY = re.compile(r"ifndef::([\w][\w-]*+)\[(:.*)\]")
_ATTRIBUTE_REF = re.compile(r"\{([\w][\w-]*+)\}")
# Verbatim blocks: listing `----` and literal `....`; comments `////`. (Markdown-style fences,
# "```lang", are listing blocks too.)
_VERBATIM = re.compile(r"(-{4,}+|\.{4,}+|/{4,}+)[ \t]*+")
# Where an Antora module's folders start: `<component>/modules/<module>/<family folder>/`.
_ANTORA_MODULE = re.compile(
    r"(?:^|/)modules/([^/]++)/(?=(?:pages|partials|examples|attachments|images|assets)/|[^/]*+$)"
)
_ANTORA_FAMILIES = {
    "page": "pages",
    "partial": "partials",
    "example": "examples",
    "attachment": "attachments",
    "image": "images",
}
_ANTORA_COORDINATE = re.compile(r"[\w.\-]++")


def scan_asciidoc(path: str, lines: list[str], on: frozenset[Syntax], site: Site) -> list[Include]:
    found: list[Include] = []
    entries: dict[str, str | None] = {}  # the file's own attribute entries so far
    block: str | None = None  # the delimiter of the open verbatim or comment block
    for number, line in enumerate(lines, 1):
        stripped = line.rstrip()
        if block is not None:
            if stripped == block:
                block = None
                continue
            if block.startswith("/"):
                continue  # Asciidoctor skips directives inside a comment block
        else:
            delimiter = _VERBATIM.fullmatch(line)
            if delimiter is not None:
                block = delimiter.group(1)
                continue
            if stripped.startswith("```"):
                block = "```"
                continue
        as_code = block is not None
        if stripped.startswith("//"):
            continue
        if not as_code:
            entry = _ATTRIBUTE_ENTRY.fullmatch(stripped)
            if entry is not None:
                unset = bool(entry.group(1) or entry.group(3))
                value = (entry.group(4) or "").rstrip()
                entries[entry.group(2)] = None if unset else _substitute(value, site, entries)
                continue
            default = _IFNDEF_ENTRY.fullmatch(stripped)
            if default is not None:
                inner = _ATTRIBUTE_ENTRY.fullmatch(default.group(2))
                name = default.group(1)
                if (
                    inner is not None
                    and inner.group(2) == name
                    and _lookup(name, site, entries) is None
                ):
                    entries[name] = _substitute((inner.group(4) or "").rstrip(), site, entries)
                continue
        if stripped.startswith("include::") and "asciidoc-include" in on:
            include = _asciidoc_include(path, number, stripped, as_code, on, site, entries)
            if include is not None:
                found.append(include)
        elif stripped.startswith("include-code::") and "antora-include-code" in on and not as_code:
            written = stripped[len("include-code::") :].partition("[")[0]
            found.append(
                Include(number, number, "antora-include-code", written, None, GENERATED, True)
            )
    return found


def _asciidoc_include(
    path: str,
    number: int,
    line: str,
    as_code: bool,
    on: frozenset[Syntax],
    site: Site,
    entries: Mapping[str, str | None],
) -> Include | None:
    """`include::target[attributes]`, as Asciidoctor's preprocessor reads it, else None."""
    rest = line[len("include::") :]
    bracket = rest.find("[")
    if bracket <= 0 or not rest.endswith("]"):
        return None
    written = rest[:bracket]
    if written != written.strip():
        return None
    selector = rest[bracket + 1 : -1]
    syntax: Syntax = "asciidoc-include"
    for ref in _ATTRIBUTE_REF.finditer(written):
        if _lookup(ref.group(1), site, entries, path) is None:
            problem = UNSET_ATTRIBUTE.format(ref.group(1))
            return Include(number, number, syntax, written, None, problem, as_code, selector)
    target = _ATTRIBUTE_REF.sub(lambda r: _lookup(r.group(1), site, entries, path) or "", written)
    if "antora-include" in on and "$" in target and not is_url(target):
        antora = _antora(path, target, site)
        if antora is not None:
            return Include(
                number,
                number,
                "antora-include",
                written,
                antora.target,
                antora.problem,
                as_code,
                selector,
            )
    resolved = join(folder_of(path), target)
    return Include(
        number, number, syntax, written, resolved.target, resolved.problem, as_code, selector
    )


def _lookup(
    name: str, site: Site, entries: Mapping[str, str | None], path: str | None = None
) -> str | None:
    """An attribute's value: the site's (hard set) first, then the file's own entries."""
    if name in site.attributes:
        return _substitute(site.attributes[name], site, {})
    if name in entries:
        return entries[name]
    if name == "docdir" and path is not None:
        return "."  # the file's own folder: includes resolve against it
    return None


def _substitute(value: str, site: Site, entries: Mapping[str, str | None]) -> str:
    """Attribute references in an entry's value, replaced once (an unset one stays as written,
    as Asciidoctor leaves it)."""
    if "{" not in value:
        return value

    def one(ref: re.Match[str]) -> str:
        name = ref.group(1)
        known = site.attributes.get(name)
        if known is None:
            known = entries.get(name)
        return ref.group(0) if known is None else known

    return _ATTRIBUTE_REF.sub(one, value)


def _antora(path: str, target: str, site: Site) -> Resolved | None:
    """An Antora resource id, `[version@][[component:]module:]family$relative`, under its
    module's family folder; None when `target` is no resource id."""
    coordinates, _, relative = target.partition("$")
    version, at, coordinates = coordinates.rpartition("@")
    parts = coordinates.split(":")
    if (
        len(parts) > 3
        or parts[-1] not in _ANTORA_FAMILIES
        or not all(_ANTORA_COORDINATE.fullmatch(p) for p in parts[:-1])
    ):
        return None
    if at:
        return Resolved(None, OTHER_VERSION.format(version + "@"))
    if len(parts) == 3:
        component = parts[0]
        if component != site.attributes.get("page-component-name"):
            return Resolved(None, OTHER_COMPONENT.format(component))
    here = _ANTORA_MODULE.search(path)
    if here is None:
        return Resolved(None, OUTSIDE_MODULE)
    module = parts[-2] if len(parts) >= 2 else here.group(1)
    root = path[: here.start(1) - len("modules/")]
    folder = f"{root}modules/{module}/{_ANTORA_FAMILIES[parts[-1]]}"
    return join(folder, relative)
