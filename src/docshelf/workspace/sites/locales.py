"""Translations, told from the tree: locale folders (`docs/en/`, `docs/ja/`) holding the same pages,
and files named `page.<lang>.md` beside `page.md`. Used by every generator.

Constraints:
- A folder or a suffix counts as a locale only when it is a language code (ISO 639-1, a few
  ISO 639-3 codes with no two-letter one, each with optional script and region subtags), and
  only when its pages have counterparts in the default language: a folder named `it` or `ml`
  holding pages of its own is content, not a translation.
- The default language is the config's (its primary subtag decides: `en-US` is `en`).
"""

from __future__ import annotations

import posixpath
import re

from docshelf.workspace.sites.layout import Tree, is_doc

# ISO 639-1, and the ISO 639-3 codes that docs sites use for languages without a two-letter
# code (Filipino, Cantonese, Central Kurdish, Asturian).
# fmt: off
LANGUAGE_CODES = frozenset(
    {
        "aa", "ab", "ae", "af", "ak", "am", "an", "ar", "as", "av", "ay", "az", "ba", "be", "bg",
        "bh", "bi", "bm", "bn", "bo", "br", "bs", "ca", "ce", "ch", "co", "cr", "cs", "cu", "cv",
        "cy", "da", "de", "dv", "dz", "ee", "el", "en", "eo", "es", "et", "eu", "fa", "ff", "fi",
        "fj", "fo", "fr", "fy", "ga", "gd", "gl", "gn", "gu", "gv", "ha", "he", "hi", "ho", "hr",
        "ht", "hu", "hy", "hz", "ia", "id", "ie", "ig", "ii", "ik", "io", "is", "it", "iu", "ja",
        "jv", "ka", "kg", "ki", "kj", "kk", "kl", "km", "kn", "ko", "kr", "ks", "ku", "kv", "kw",
        "ky", "la", "lb", "lg", "li", "ln", "lo", "lt", "lu", "lv", "mg", "mh", "mi", "mk", "ml",
        "mn", "mr", "ms", "mt", "my", "na", "nb", "nd", "ne", "ng", "nl", "nn", "no", "nr", "nv",
        "ny", "oc", "oj", "om", "or", "os", "pa", "pi", "pl", "ps", "pt", "qu", "rm", "rn", "ro",
        "ru", "rw", "sa", "sc", "sd", "se", "sg", "si", "sk", "sl", "sm", "sn", "so", "sq", "sr",
        "ss", "st", "su", "sv", "sw", "ta", "te", "tg", "th", "ti", "tk", "tl", "tn", "to", "tr",
        "ts", "tt", "tw", "ty", "ug", "uk", "ur", "uz", "ve", "vi", "vo", "wa", "wo", "xh", "yi",
        "yo", "za", "zh", "zu", "fil", "yue", "ckb", "ast",
    }
)
# fmt: on

# A language tag: the language, then script (Hans), region (BR, 419) subtags, - or _ between.
_TAG = re.compile(r"([A-Za-z]{2,3})((?:[-_](?:[A-Za-z]{4}|[A-Za-z]{2}|\d{3}))*)")

# A translation's pages must mostly have a counterpart in the default language: at least this
# share of them (a translation may lag behind by a few pages, or hold one of its own).
SHARED_SHARE = 0.5


def tag_of(name: str) -> str | None:
    """The language tag a name is, lower-cased with '-' ("pt_BR" -> "pt-br"), or None."""
    match = _TAG.fullmatch(name)
    if not match or match.group(1).lower() not in LANGUAGE_CODES:
        return None
    if match.group(1) != match.group(1).lower():
        return None  # "EN" or "De" is a name, not a language folder
    return name.lower().replace("_", "-")


def same_language(tag: str, language: str) -> bool:
    return primary(tag) == primary(language)


def primary(tag: str) -> str:
    """A language tag's language: "pt_BR" -> "pt"."""
    return tag.lower().replace("_", "-").split("-", 1)[0]


def default_folder(tags: dict[str, str], language: str) -> str | None:
    """Of folders named by language tags, the one of `language`: its exact tag, else the one
    sharing its primary subtag."""
    wanted = language.lower().replace("_", "-")
    for name, tag in tags.items():
        if tag == wanted:
            return name
    return next((n for n, t in tags.items() if same_language(t, wanted)), None)


def locale_folders(tree: Tree, root: str, language: str) -> tuple[str | None, list[str]]:
    """The default language's folder directly under `root` (or None) and the folders beside
    it that are translations, as repo-relative paths."""
    dirs, _ = tree.children(root)
    tags = {d: t for d in dirs if (t := tag_of(d))}
    if not tags:
        return None, []
    prefix = "" if root == "." else root + "/"
    default = default_folder(tags, language)
    if default is not None:
        reference = _stems(tree, prefix + default)
    else:
        inside = tuple(prefix + d + "/" for d in tags)
        reference = {
            _stem(f[len(prefix) :]) for f in tree.docs_under(root) if not f.startswith(inside)
        }
    translated = []
    for name in sorted(tags):
        if name == default:
            continue
        stems = _stems(tree, prefix + name)
        shared = len(stems & reference)
        if stems and shared >= SHARED_SHARE * len(stems) and shared >= min(2, len(stems)):
            translated.append(prefix + name)
    return (prefix + default if default is not None and translated else None), translated


def suffix_translations(tree: Tree, root: str, language: str) -> dict[str, list[str]]:
    """Files `name.<lang>.<ext>` under `root` whose page exists in the default language
    (`name.<ext>` or `name.<default>.<ext>`), by language tag; the default's own left out."""
    docs = tree.docs_under(root)
    bases = {posixpath.splitext(f)[0] for f in docs}
    found: dict[str, list[str]] = {}
    for path in docs:
        base = posixpath.splitext(path)[0]
        stem, dot, suffix = base.rpartition(".")
        tag = tag_of(suffix) if dot and "/" not in suffix else None
        if tag is None or same_language(tag, language):
            continue
        siblings = [stem] + [f"{stem}.{t}" for t in _default_tags(language)]
        if any(s in bases for s in siblings):
            found.setdefault(suffix, []).append(path)
    return found


def suffixed(tree: Tree, root: str, suffix: str) -> list[str]:
    """The documentation files under `root` named `name.<suffix>.<ext>`."""
    ending = "." + suffix
    return [f for f in tree.docs_under(root) if posixpath.splitext(f)[0].endswith(ending)]


def _default_tags(language: str) -> list[str]:
    full = language.replace("_", "-")
    primary = full.split("-")[0]
    return list(dict.fromkeys([primary, full, full.lower()]))


def _stems(tree: Tree, folder: str) -> set[str]:
    return {_stem(f[len(folder) + 1 :]) for f in tree.files_under(folder) if is_doc(f)}


def _stem(path: str) -> str:
    """A page's path without its suffix: `guide/a.md` and `guide/a.mdx` are the same page."""
    return posixpath.splitext(path)[0]
