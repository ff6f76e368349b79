"""A manifest of repositories: one TOML file listing the workspaces of an organisation, each
indexed (and later served) as `docshelf index SOURCE` would index it.

    [[workspace]]
    source = "../payments"          # a path, or a clone URL
    name = "payments"               # optional; default from the source
    ref = "main"                    # optional branch, tag or commit
    docs = ["docs"]                 # optional roots
    include = ["**/*.md"]           # optional globs, as --include and --exclude
    exclude = ["**/i18n/**"]

Constraints:
- A key docshelf does not know is refused by name (a misspelt `docs` must not index the whole
  tree), as is a value of the wrong type; each error names the file and the entry.
- A relative path is relative to the manifest's folder, not to where the command runs; a clone
  URL (https://, ssh://, git://, file://, user@host:path) and a path under ~ stay as written.
- Two entries of one workspace (the same name, or the same source without a name) are refused:
  they would index into each other's refs.
"""

from __future__ import annotations

import os
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from docshelf.errors import ConfigError
from docshelf.workspace.redaction import SCP_LIKE, URL, redact_url

# A manifest larger than this is refused before it is parsed: a thousand entries take about
# 200 KB.
MAX_MANIFEST_BYTES = 16 * 1024 * 1024

KEYS = ("source", "name", "ref", "docs", "include", "exclude")


@dataclass(frozen=True, slots=True)
class ManifestEntry:
    """One workspace of a manifest: `source` as open_workspace takes it (a relative path made
    absolute from the manifest's folder), and the options of `docshelf index` for it."""

    source: str
    name: str | None = None
    ref: str | None = None
    docs: tuple[str, ...] | None = None
    include: tuple[str, ...] = ()
    exclude: tuple[str, ...] = ()

    @property
    def label(self) -> str:
        """How a message names the entry: its name, else its source (a URL without password)."""
        return self.name or redact_url(self.source)


def read_manifest(path: Path) -> list[ManifestEntry]:
    """The workspaces the manifest at `path` lists, in its order.

    Raises:
        ConfigError: the file cannot be read, is not TOML, lists no workspace, or an entry has
            an unknown key, a value of the wrong type, or the workspace of another entry.
    """
    where = f"manifest {path}"
    try:
        size = path.stat().st_size
        if size > MAX_MANIFEST_BYTES:
            raise ConfigError(
                f"{where}: {size} bytes, more than {MAX_MANIFEST_BYTES}; split it into several"
            )
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ConfigError(f"{where}: no such file; give the path of a TOML manifest") from None
    except (OSError, UnicodeDecodeError) as e:
        raise ConfigError(f"{where} cannot be read: {e}") from None
    except tomllib.TOMLDecodeError as e:
        raise ConfigError(f"{where} is not valid TOML: {e}") from None
    unknown = sorted(set(data) - {"workspace"})
    if unknown:
        raise ConfigError(
            f"{where}: unknown key {unknown[0]!r}; a manifest holds [[workspace]] entries only"
        )
    entries = data.get("workspace")
    if not isinstance(entries, list) or not entries:
        raise ConfigError(
            f"{where} lists no workspace; add [[workspace]] entries, each with a source"
        )
    base = path.resolve().parent
    found = [_entry(item, f"{where}, workspace {n}", base) for n, item in enumerate(entries, 1)]
    seen: dict[str, int] = {}
    for n, entry in enumerate(found, start=1):
        key = entry.name if entry.name is not None else f"source {entry.source}"
        if key in seen:
            raise ConfigError(
                f"{where}, workspace {n} ({entry.label}): the same workspace as workspace "
                f"{seen[key]}; give each entry its own name"
            )
        seen[key] = n
    return found


def _entry(item: object, where: str, base: Path) -> ManifestEntry:
    if not isinstance(item, Mapping):
        raise ConfigError(f"{where}: not a table; write it as a [[workspace]] entry")
    unknown = sorted(set(item) - set(KEYS))
    if unknown:
        raise ConfigError(f"{where}: unknown key {unknown[0]!r}; the keys are {', '.join(KEYS)}")
    source = item.get("source")
    if not isinstance(source, str) or not source.strip():
        raise ConfigError(f"{where}: source must be a path or a clone URL (a non-empty string)")
    name, ref = _text(item, "name", where), _text(item, "ref", where)
    docs = _texts(item, "docs", where)
    return ManifestEntry(
        _resolved(source.strip(), base),
        name,
        ref,
        docs,
        _texts(item, "include", where) or (),
        _texts(item, "exclude", where) or (),
    )


def _text(item: Mapping[str, Any], key: str, where: str) -> str | None:
    value = item.get(key)
    if value is None:
        return None
    if not isinstance(value, str) or not value.strip():
        raise ConfigError(f"{where}: {key} must be a non-empty string; got {value!r}")
    return value.strip()


def _texts(item: Mapping[str, Any], key: str, where: str) -> tuple[str, ...] | None:
    value = item.get(key)
    if value is None:
        return None
    if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
        raise ConfigError(
            f'{where}: {key} must be a list of non-empty strings, e.g. {key} = ["docs"]; '
            f"got {value!r}"
        )
    return tuple(value)


def _resolved(source: str, base: Path) -> str:
    """A relative path made absolute from the manifest's folder; a URL or ~ path as written."""
    if URL.match(source) or SCP_LIKE.match(source) or source.startswith("~"):
        return source
    return os.path.normpath(base / source)
