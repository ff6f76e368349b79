"""Defaults, each with the reason for its value.

Modules below the command line and the MCP server never read the environment: whatever is
configurable reaches them as an argument, built once at the edge.
"""

from __future__ import annotations

# A chunk must fit any embedding model's input limit and still hold a whole runbook step or an
# ownership table. Measured in bytes of UTF-8, so a page of CJK text is held to the same budget.
MAX_CHUNK_BYTES = 2000

# Each later piece of a section repeats up to this many bytes of whole trailing lines of the piece
# before it, so a sentence cut at the boundary is whole in at least one piece.
OVERLAP_BYTES = 300

# The paragraph chunker's budget in characters: a few paragraphs of prose per chunk.
PARAGRAPH_MAX_CHARS = 800

# The paragraph chunker copies this much of the previous chunk's tail to the front of the next,
# so a match near a boundary is not lost. Never more than a quarter of the budget.
PARAGRAPH_OVERLAP_CHARS = 120

# Files docshelf reads as documentation, and which chunker each gets by default.
MARKDOWN_SUFFIXES = (".md", ".markdown")
TEXT_SUFFIXES = (".txt",)

# A heading's title in the breadcrumb is cut after this many characters: the breadcrumb labels a
# chunk and prefixes its embedding input; the full heading line stays in the chunk's content.
MAX_TITLE_CHARS = 200
