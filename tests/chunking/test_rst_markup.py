"""The reStructuredText chunker's visible text is what the rendered page shows, and reference
entries are sections: directive lines, options, targets and comments leave it, the words a
directive carries stay on its line, code becomes a fence on the file's own lines, roles show
their text, and each `.. option::` (or confval, py:function, Celery's setting...) names its
chunks."""

from __future__ import annotations

import re
import time
from pathlib import Path

import pytest

from docshelf.chunking.markdown import HEADING_SEPARATOR
from docshelf.chunking.rst import outline_rst, split_rst
from tests.chunking.test_rst import SHAPE_SECONDS, SHAPE_SIZE, check, headings, visible

CELERY = "sites/sphinx-celery/docs"
# What the issue counts as reStructuredText markup left in a chunk: a directive line or a target.
DIRECTIVE_LINE = re.compile(r"^\s*\.\. [a-z][\w:-]*::", re.MULTILINE)
LABEL_TARGET = re.compile(r"^\s*\.\. _[^\n]*:", re.MULTILINE)
# The goal: fewer than this share of chunks hold markup.
MARKUP_SHARE = 0.02


def chunks_of(text: str) -> list[tuple[str, int, int, str]]:
    return [(c.heading, c.start_line, c.end_line, c.content) for c in check("doc.rst", text)]


# --- Directive lines -----------------------------------------------------------------------------


def test_a_directive_line_and_its_options_become_empty_lines_and_its_body_stays() -> None:
    text = (
        "Top\n===\n\n.. only:: html\n   :class: x\n\n   Shown in HTML.\n\n"
        ".. contents::\n   :local:\n   :depth: 2\n\n.. automodule:: celery.app\n    :members:\n"
    )
    assert visible(text) == [
        "Top", "===", "", "", "", "", "   Shown in HTML.", "", "", "", "", "", "", "", "",
    ]  # fmt: skip


def test_an_admonition_shows_its_label_or_its_title_on_its_line() -> None:
    text = (
        ".. note::\n\n   Body.\n\n.. warning:: Mind the gap.\n\n"
        ".. admonition:: Read this first\n\n   Body.\n\n.. seealso:: :ref:`routing <guide>`\n"
    )
    shown = visible(text)
    assert shown[0] == "Note"
    assert shown[4] == "Warning: Mind the gap."
    assert shown[6] == "Read this first"
    assert shown[10] == "See also: routing"


def test_version_notes_read_as_sphinx_renders_them() -> None:
    text = (
        ".. versionadded:: 5.1\n\n.. versionchanged:: 4.0 The default changed.\n\n"
        ".. deprecated:: 3.2\n   Use the new API.\n"
    )
    shown = visible(text)
    assert shown[0] == "Added in version 5.1."
    assert shown[2] == "Changed in version 4.0: The default changed."
    assert shown[4:6] == ["Deprecated since version 3.2.", "   Use the new API."]


def test_targets_comments_substitutions_includes_and_index_entries_never_reach_a_chunk() -> None:
    text = (
        "Top\n===\n\n- item\n\n  .. _nested-label:\n\n  .. a nested comment\n     more\n\n"
        "  .. |name| replace:: Celery\n\n.. include:: ../includes/installation.txt\n\n"
        ".. index:: single: worker\n\nText.\n"
    )
    (chunk,) = check("doc.rst", text)
    assert chunk.content == "Top\n===\n\n- item" + "\n" * 13 + "Text."
    assert len(visible(text)) == text.count("\n") + 1


def test_a_toctree_shows_its_entries_and_their_titles_and_a_hidden_one_nothing() -> None:
    text = (
        ".. toctree::\n   :maxdepth: 2\n\n   intro\n   First steps <getting-started/first>\n\n"
        ".. toctree::\n   :hidden:\n\n   history/index\n"
    )
    assert visible(text) == ["", "", "", "   intro", "   First steps", "", "", "", "", "", ""]


def test_directives_nested_in_list_items_and_bodies_are_markup_too() -> None:
    text = (
        "- Install it:\n\n  .. code-block:: console\n\n      $ pip install celery\n\n"
        "  .. note::\n\n     .. versionadded:: 5.0\n\n     Text.\n"
    )
    assert visible(text) == [
        "- Install it:", "", "  ```console", "", "      $ pip install celery", "  ```",
        "  Note", "", "     Added in version 5.0.", "", "     Text.", "",
    ]  # fmt: skip


def test_a_directive_in_a_block_quote_on_the_first_line_is_markup_too() -> None:
    assert visible("   .. note:: x\n\n   y\n") == ["   Note: x", "", "   y", ""]


def test_explicit_markup_that_goes_on_with_a_paragraph_is_text() -> None:
    text = "- item text\n  .. not a directive:: here\n"
    assert visible(text)[1] == "  .. not a directive:: here"


# --- Code ----------------------------------------------------------------------------------------


def test_a_code_block_becomes_a_fence_with_its_language_on_the_files_own_lines() -> None:
    text = (
        "Run it:\n\n.. code-block:: python\n   :linenos:\n\n   app = Celery()\n"
        "   x = ':class:`kept`'\n\nAfter.\n"
    )
    assert visible(text) == [
        "Run it:", "", "```python", "", "", "   app = Celery()", "   x = ':class:`kept`'", "```",
        "After.", "",
    ]  # fmt: skip
    assert chunks_of(text) == [("", 1, 9, "\n".join(visible(text)[:9]))]


def test_a_code_block_with_no_blank_line_after_it_is_left_unfenced() -> None:
    assert visible(".. code:: sh\n\n   ls\n\n") == ["```sh", "", "   ls", "```", ""]
    # What follows the file's last newline is no line: no fence may stand there.
    assert visible(".. code:: sh\n\n   ls\n") == ["", "", "   ls", ""]
    assert visible(".. code:: sh\n\n   ls") == ["", "", "   ls"]
    (chunk,) = check("doc.rst", "Title\n=====\n\n.. code:: sh\n\n   ls\n")
    assert chunk.end_line == 6


def test_a_literal_block_is_fenced_and_its_paragraph_shows_one_colon() -> None:
    text = "Example::\n\n    code\n\nSpaced ::\n\n    code\n\n::\n\n    code\n\nEnd.\n"
    assert visible(text) == [
        "Example:", "```", "    code", "```", "Spaced", "```", "    code", "```", "", "```",
        "    code", "```", "End.", "",
    ]  # fmt: skip


def test_nested_markup_is_read_on_its_lines_as_docutils_reads_them_without_trailing_blanks() -> (
    None
):
    # docutils drops a line's trailing whitespace (a no-break space too) before it reads it.
    text = (
        "- Example:: \n\n     code\n\n- Run::\u00a0\n\n     more\n\n"
        ".. note::\n\n   Text.\n\n   .. a comment\u00a0\n\n   .. _label:\u3000\n\nEnd.\n"
    )
    assert visible(text) == [
        "- Example:", "```", "     code", "```", "- Run:", "```", "     more", "```", "Note", "",
        "   Text.", "", "", "", "", "", "End.", "",
    ]  # fmt: skip


def test_a_list_item_s_literal_block_needs_the_blank_line_after_its_colons() -> None:
    text = "- Example::\n     not code\n\n- Run::\n\n     code\n\nEnd.\n"
    assert visible(text) == [
        "- Example::", "     not code", "", "- Run:", "```", "     code", "```", "End.", "",
    ]  # fmt: skip


def test_a_fence_is_longer_than_any_backquotes_the_code_opens_a_line_with() -> None:
    text = ".. code-block:: markdown\n\n   ```python\n   x\n   ```\n\n"
    assert visible(text) == ["````markdown", "", "   ```python", "   x", "   ```", "````", ""]


def test_markup_inside_code_is_code() -> None:
    text = ".. code-block:: rst\n\n   .. note:: kept\n   .. _kept:\n   :ref:`kept`\n\nend\n"
    assert visible(text)[2:5] == ["   .. note:: kept", "   .. _kept:", "   :ref:`kept`"]


# --- Roles and references ------------------------------------------------------------------------


def test_roles_and_references_show_their_text() -> None:
    text = (
        "Use :class:`celery.Celery` with :setting:`broker_url` (:pypi:`redis`).\n"
        "See :ref:`the guide <guide>`, :meth:`~celery.Task.apply_async` and :func:`!print`.\n"
        "Join `Gitter <https://gitter.im>`_ or the `mailing-list`_.\n"
        "Keep ``inline literals``, *emphasis* and **strong**.\n"
    )
    assert visible(text) == [
        "Use celery.Celery with broker_url (redis).",
        "See the guide, apply_async and print.",
        "Join Gitter or the mailing-list.",
        "Keep ``inline literals``, *emphasis* and **strong**.",
        "",
    ]


# --- Reference entries ---------------------------------------------------------------------------


def options_section(count: int) -> str:
    options = "".join(
        f".. option:: --flag-{n}\n\n    What flag {n} does, at some length.\n"
        + "    More about it on a second line of its description.\n" * 12
        + "\n"
        for n in range(count)
    )
    return "celery worker\n=============\n\nRuns a worker.\n\nOptions\n-------\n\n" + options


def test_each_option_of_a_commands_options_section_names_its_chunks() -> None:
    text = options_section(40)
    chunks = check("worker.rst", text)
    lines = text.split("\n")
    flags = [c for c in chunks if c.heading.startswith("celery worker > Options > ")]
    assert {c.heading.split(HEADING_SEPARATOR)[-1] for c in flags} == {
        f"--flag-{n}" for n in range(40)
    }
    for c in flags:
        flag = c.heading.split(HEADING_SEPARATOR)[-1]
        assert lines[c.start_line - 1] == f".. option:: {flag}"  # the hit starts at its entry
        assert c.content.startswith(flag + "\n")  # and shows its name first
    assert not any(c.heading == "celery worker > Options" for c in chunks)


def test_a_long_entry_keeps_its_name_in_every_chunk_cut_from_it() -> None:
    text = "Options\n=======\n\n.. option:: --long\n\n" + "    A line of its text.\n" * 300
    chunks = check("doc.rst", text)
    assert len(chunks) > 2
    assert {c.heading for c in chunks} == {"Options > --long"}


def test_an_entry_sits_one_level_below_its_title_and_runs_to_the_next_heading() -> None:
    text = (
        "Guide\n=====\n\nConfig\n------\n\n.. confval:: broker_url\n   :type: str\n\n"
        "   Where the broker is.\n\nMore about config.\n\nNext\n----\n\nnext\n"
    )
    assert chunks_of(text) == [
        (
            "Guide > Config > broker_url",
            7,
            12,
            "broker_url\n   type: str\n\n   Where the broker is.\n\nMore about config.",
        ),
        ("Guide > Next", 14, 17, "Next\n----\n\nnext"),
    ]


def test_entries_nested_in_a_class_name_their_chunks_by_class_and_method() -> None:
    text = (
        "API\n===\n\n.. py:class:: Celery(main=None)\n\n   The app.\n\n"
        "   .. py:method:: send_task(name, args=None)\n\n      Send a task.\n\n"
        "   .. attribute:: conf\n\n      Its configuration.\n\n   Back in the class.\n\nEnd.\n"
    )
    assert headings(text) == ["API > Celery", "API > Celery > send_task", "API > Celery > conf"]
    assert visible(text)[3] == "Celery(main=None)"
    assert visible(text)[7] == "   send_task(name, args=None)"


def test_an_unknown_domains_entry_names_one_thing_and_before_a_title_is_its_target() -> None:
    text = (
        "Settings\n========\n\n.. setting:: broker_url\n\n``broker_url``\n~~~~~~~~~~~~~~\n\n"
        "Default.\n\n.. control:: revoke\n\n    Revokes a task.\n"
    )
    assert visible(text)[3] == ""
    assert headings(text) == ["Settings > broker_url", "Settings > broker_url > revoke"]


def test_an_autodoc_entry_without_a_body_shows_its_name() -> None:
    text = "Node\n====\n\n.. autoclass:: _pytest.nodes.Node()\n    :members:\n\nNext\n====\n\nx\n"
    assert chunks_of(text)[0] == ("Node", 1, 4, "Node\n====\n\n_pytest.nodes.Node()")


def test_without_entries_the_sections_are_the_titles_alone() -> None:
    text = options_section(3)
    assert {s.heading for s in outline_rst(text, entries=False).sections} == {
        "",
        "celery worker",
        "celery worker > Options",
    }
    assert outline_rst(text, entries=False).text == outline_rst(text).text


def test_titles_and_entry_names_in_breadcrumbs_are_plain_words() -> None:
    text = (
        "Using `Celery <https://celeryq.dev>`_ with *Django*\n"
        "===================================================\n\n"
        ".. option:: ``--app``\n\n   The :class:`~celery.Celery` app.\n"
    )
    assert headings(text) == ["Using Celery with Django > --app"]


# --- A real site ---------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def celery_chunks(shared_data: Path) -> dict[str, list[tuple[str, str]]]:
    """Each file's (breadcrumb, text) chunks, every invariant checked on the way."""
    root = shared_data / CELERY
    files = sorted(root.rglob("*.rst"))
    assert len(files) > 200
    return {
        f.relative_to(root).as_posix(): [
            (c.heading, c.content) for c in check(f.name, f.read_text(encoding="utf-8"))
        ]
        for f in files
    }


def test_sphinx_celery_chunks_hold_almost_no_directive_lines_or_targets(
    celery_chunks: dict[str, list[tuple[str, str]]],
) -> None:
    chunks = [c for cs in celery_chunks.values() for c in cs]
    marked = [c for c in chunks if DIRECTIVE_LINE.search(c[1]) or LABEL_TARGET.search(c[1])]
    assert len(marked) / len(chunks) < MARKUP_SHARE, marked[:5]


def test_sphinx_celery_settings_and_reference_entries_name_their_chunks(
    celery_chunks: dict[str, list[tuple[str, str]]],
) -> None:
    chunks = celery_chunks["userguide/configuration.rst"]
    crumbs = {heading.split(HEADING_SEPARATOR)[-1] for heading, _ in chunks}
    assert {"broker_url", "accept_content", "worker_concurrency"} <= crumbs
    amqp = celery_chunks["reference/celery.app.amqp.rst"]
    assert (
        "AMQP > Connection",
        "        Connection\n\n            Broker connection class used. "
        "Default is kombu.Connection.",
    ) in amqp


# Nested blocks 600 deep hold about SHAPE_SIZE characters of indentation.
DEPTH = 600
SHAPES = {
    "directives nested in directives": "".join(" " * d + ".. note::\n\n" for d in range(DEPTH)),
    "entries nested in entries": "".join(f"{' ' * d}.. option:: -{d}\n\n" for d in range(DEPTH))
    + " " * DEPTH
    + "x\n",
    "code blocks nested in list items": "- x\n\n  .. code:: sh\n\n     y\n\n" * (SHAPE_SIZE // 36),
    "unclosed roles": ":a:`" * (SHAPE_SIZE // 4) + "\n" + ":ref:`x <" * (SHAPE_SIZE // 9),
    "role names of many parts": ":" + "a:" * SHAPE_SIZE + "`x`\n",
    "references never closed": "`a <" * (SHAPE_SIZE // 4) + "\n" + "`x`" * (SHAPE_SIZE // 3),
    "literal blocks in list items": "- x::\n\n   y::\n\n" * (SHAPE_SIZE // 14),
    "a toctree of many entries": ".. toctree::\n\n" + "   a <b>\n" * (SHAPE_SIZE // 9),
    "comments nested in a note": ".. note::\n\n" + "   .. c\n" * (SHAPE_SIZE // 8),
    "dots in a note's lines": ".. note::\n\n" + "   a.. b\n" * (SHAPE_SIZE // 9),
    "a code block in a note": ".. note::\n\n   .. code:: sh\n\n" + "      y\n" * (SHAPE_SIZE // 8),
}


@pytest.mark.parametrize("shape", SHAPES)
def test_markup_in_pathological_shapes_is_read_in_linear_time(shape: str) -> None:
    text = SHAPES[shape]
    started = time.perf_counter()
    split_rst("shape.rst", text)
    assert time.perf_counter() - started < SHAPE_SECONDS
    check("shape.rst", text[: SHAPE_SIZE // 10])
