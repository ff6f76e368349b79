"""The tools' input and output schemas (JSON Schema, draft 2020-12): every argument bounded as the
service checks it, no argument beyond those named (`additionalProperties: false`), and with several
workspaces a `workspace` argument listing them."""

from __future__ import annotations

from typing import Any

from docshelf.app import (
    DEFAULT_TOP_K,
    MAX_LINE_NUMBER,
    MAX_MAX_TOKENS,
    MAX_PATH_BYTES,
    MAX_TOP_K,
    MIN_MAX_TOKENS,
    MIN_PER_FILE,
    MIN_TOP_K,
    OVERVIEW_PAGE,
    READ_MAX_BYTES,
    READ_MAX_LINES,
    TOKENS_PER_EXCERPT,
)

_PATH_WORDS = (
    "relative to the repository, exactly as the hits show it ('docs/runbooks/payments.md')"
)

_SEARCH_PATH = {
    "type": "string",
    "maxLength": MAX_PATH_BYTES,
    "description": "Keep only excerpts of files under this folder ('docs/runbooks/') or "
    "matching this glob ('**/payments.md'), "
    + _PATH_WORDS.split(", exactly", maxsplit=1)[0]
    + "; the "
    "ranking is computed over those files only.",
}

INPUT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "query": {
            "type": "string",
            "description": "The question, or the words to look up: 'who owns checkout?', "
            "'payment gateway timeout', an error code or a flag name.",
        },
        "top_k": {
            "type": "integer",
            "minimum": MIN_TOP_K,
            "maximum": MAX_TOP_K,
            "default": DEFAULT_TOP_K,
            "description": f"How many excerpts to return, a whole number from {MIN_TOP_K} to "
            f"{MAX_TOP_K}.",
        },
        "per_file": {
            "type": "integer",
            "minimum": MIN_PER_FILE,
            "maximum": MAX_TOP_K,
            "description": "At most how many excerpts of one file, a whole number from "
            f"{MIN_PER_FILE} to top_k (default: top_k, no bound); 1 gives top_k different "
            "files. Each excerpt says how many more passages of its file matched; read the "
            "file with docs_read to see them.",
        },
        "max_tokens": {
            "type": "integer",
            "minimum": MIN_MAX_TOKENS,
            "maximum": MAX_MAX_TOKENS,
            "description": "The most tokens the answer may take (counted as its UTF-8 bytes / 4; "
            f"default {TOKENS_PER_EXCERPT} per excerpt of top_k, at least {MIN_MAX_TOKENS}). "
            "Past it, excerpts keep their citation and heading and lose their text; read those "
            "lines with docs_read.",
        },
        "path": _SEARCH_PATH,
        "repeat": {
            "type": "boolean",
            "default": False,
            "description": "Show passages this session was shown earlier again. Without it, such "
            "a passage comes back as its citation and heading, marked shown earlier.",
        },
    },
    "required": ["query"],
    "additionalProperties": False,
}

READ_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "path": {
            "type": "string",
            "maxLength": MAX_PATH_BYTES,
            "description": f"The file to read, {_PATH_WORDS}.",
        },
        "start_line": {
            "type": "integer",
            "minimum": 1,
            "maximum": MAX_LINE_NUMBER,
            "description": "The first line to read (default 1); a hit's start_line reads it, a "
            "few less reads what leads up to it.",
        },
        "end_line": {
            "type": "integer",
            "minimum": 1,
            "maximum": MAX_LINE_NUMBER,
            "description": f"The last line to read (default: as far as one answer goes, "
            f"{READ_MAX_LINES} lines or {READ_MAX_BYTES} bytes).",
        },
    },
    "required": ["path"],
    "additionalProperties": False,
}

OUTLINE_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "path": {
            "type": "string",
            "maxLength": MAX_PATH_BYTES,
            "description": "Outline only the files under this folder ('docs/runbooks/'), this "
            "file, or those matching this glob ('**/*.md'); default: all the docs.",
        },
    },
    "additionalProperties": False,
}

_HIT_PROPERTIES = {
    "path": {"type": "string"},
    "heading": {"type": "string"},
    "start_line": {"type": "integer"},
    "end_line": {"type": "integer"},
    "score": {"type": "number"},
    "content": {"type": "string"},
    "workspace": {"type": "string", "description": "The workspace the excerpt comes from."},
    "ref": {"type": "string", "description": "The commit the excerpt comes from."},
    "cut": {
        "type": "boolean",
        "description": "The text was left out to keep the answer within max_tokens.",
    },
    "repeated": {
        "type": "boolean",
        "description": "The text was left out: this session was shown these lines earlier.",
    },
    "more": {
        "type": "integer",
        "description": "How many more passages of this file matched than the answer shows of it "
        "(per_file); read the file with docs_read, or ask with a larger per_file.",
    },
    "copies": {
        "type": "array",
        "description": "Other workspaces holding the same text (a vendored copy, a fork): each "
        "place once, instead of another excerpt.",
        "items": {
            "type": "object",
            "properties": {
                "workspace": {"type": "string"},
                "path": {"type": "string"},
                "start_line": {"type": "integer"},
                "end_line": {"type": "integer"},
            },
            "required": ["workspace", "path", "start_line", "end_line"],
        },
    },
}

OUTPUT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "workspace": {
            "type": ["string", "null"],
            "description": "The workspace the excerpts come from (null when several answer: "
            "each hit names its own).",
        },
        "mode": {
            "type": "string",
            "enum": ["hybrid", "vector", "text"],
            "description": "How the excerpts were ranked: by meaning and words, meaning, or words.",
        },
        "ref": {
            "type": ["string", "null"],
            "description": "The commit the excerpts come from (null when several workspaces "
            "answer: see refs, and each hit's ref).",
        },
        "refs": {
            "type": "object",
            "additionalProperties": {"type": "string"},
            "description": "Each searched workspace's commit, by workspace.",
        },
        "query": {"type": "string", "description": "The query, as searched."},
        "note": {
            "type": ["string", "null"],
            "description": "Why the excerpts come from another commit than the pinned one.",
        },
        "hits": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": _HIT_PROPERTIES,
                "required": ["path", "heading", "start_line", "end_line", "score", "content"],
            },
        },
    },
    "required": ["ref", "query", "note", "hits"],
}

READ_OUTPUT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "workspace": {"type": "string"},
        "ref": {"type": "string", "description": "The commit the lines come from."},
        "path": {"type": "string"},
        "start_line": {"type": "integer"},
        "end_line": {"type": "integer", "description": "The last line given (cut or not)."},
        "total_lines": {"type": "integer", "description": "The file's number of lines."},
        "text": {"type": "string", "description": "The lines, joined by newlines."},
        "next_start_line": {
            "type": ["integer", "null"],
            "description": "The start_line to read on from; null at the file's end or the range's.",
        },
        "note": {"type": ["string", "null"]},
    },
    "required": [
        "workspace",
        "ref",
        "path",
        "start_line",
        "end_line",
        "total_lines",
        "text",
        "next_start_line",
        "note",
    ],
}

_HEADING = {
    "type": "object",
    "properties": {
        "depth": {"type": "integer"},
        "title": {"type": "string"},
        "start_line": {"type": "integer"},
        "end_line": {"type": "integer"},
    },
    "required": ["depth", "title", "start_line", "end_line"],
}

_FOLDER = {
    "type": "object",
    "properties": {"path": {"type": "string"}, "files": {"type": "integer"}},
    "required": ["path", "files"],
}

OUTLINE_OUTPUT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "workspace": {"type": "string"},
        "ref": {"type": "string"},
        "path": {"type": ["string", "null"]},
        "total_files": {"type": "integer"},
        "files": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {
                    "path": {"type": "string"},
                    "lines": {"type": "integer"},
                    "headings": {"type": "array", "items": _HEADING},
                },
                "required": ["path", "lines", "headings"],
            },
        },
        "narrower": {"type": "array", "items": _FOLDER},
        "cut": {
            "type": "boolean",
            "description": "Whether the outline was cut at the bound (see narrower).",
        },
        "note": {"type": ["string", "null"]},
        "workspaces": {
            "type": "array",
            "description": "With several workspaces and no workspace named: each one.",
            "items": {
                "type": "object",
                "properties": {
                    "workspace": {"type": "string"},
                    "ref": {"type": ["string", "null"]},
                    "files": {"type": "integer"},
                    "folders": {"type": "array", "items": _FOLDER},
                },
                "required": ["workspace", "ref", "files", "folders"],
            },
        },
        "total_workspaces": {
            "type": "integer",
            "description": "With the workspaces: how many are served in all.",
        },
        "page": {"type": "integer", "description": "With the workspaces: this page."},
        "pages": {"type": "integer", "description": "With the workspaces: how many pages."},
    },
}

# A `workspace` argument lists the served workspaces as an enum up to this many; past that it
# is a string the service checks (a schema of a thousand names costs every session tokens).
ENUM_WORKSPACES = 50


def with_workspaces(schema: dict[str, Any], labels: list[str]) -> dict[str, Any]:
    """`schema` with a `workspace` argument naming the served workspaces, when there are
    several (an enum of them, up to ENUM_WORKSPACES; past that a string, which the service
    checks), and for docs_outline a `page` of them; as it is for one."""
    if len(labels) < 2:
        return schema
    workspace: dict[str, Any] = {
        "type": "string",
        "description": "Which repository's docs (default: all of them, for docs_search and "
        "docs_outline).",
    }
    if len(labels) <= ENUM_WORKSPACES:
        workspace["enum"] = labels
    else:
        workspace["description"] += (
            f" One of the {len(labels)} served; docs_outline without a path lists them."
        )
    properties = {**schema["properties"], "workspace": workspace}
    if schema is OUTLINE_SCHEMA:
        properties["page"] = {
            "type": "integer",
            "minimum": 1,
            "description": f"Without workspace or path: which page of the workspaces, "
            f"{OVERVIEW_PAGE} a page (default 1).",
        }
    return {**schema, "properties": properties}
