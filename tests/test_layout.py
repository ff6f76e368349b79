"""The layout DEVELOPERS.md draws, read from the modules' own imports: imports point down only,
faces reach the parts through app, and no module outgrows 600 lines unless DEVELOPERS.md says
why."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

from tests.conftest import REPO

SRC = REPO / "src" / "docshelf"

# Higher imports lower, never the other way. The faces (the package's public API, the command
# line, the MCP server) are on top; stores and embedders sit low but only app may build them.
RANK = {
    "docshelf": 9,
    "cli": 8,
    "mcp_server": 8,
    "web": 8,
    "present": 7,
    "app": 6,
    "search": 5,
    "answers": 4,
    "reading": 4,
    "paths": 3,
    "indexer": 3,
    "pins": 2,
    "workspace": 2,
    "stores": 2,
    "embedders": 2,
    "chunking": 1,
    "rows": 1,
    "progress": 1,
    "config": 0,
    "errors": 0,
    "shown": 0,
    "_platform": 0,
}

# Parts a face never imports: it calls app.Service, which alone holds a store or an indexer.
BEHIND_APP = {"stores", "embedders", "indexer", "pins", "rows"}
FACES = {"docshelf", "cli", "mcp_server", "web"}

# What the three faces may import besides their own modules: the composition root, what the user
# sees, the public API's version, and the settings, errors and progress events they report.
FACE_IMPORTS = {"app", "present", "docshelf", "config", "errors", "progress"}
THREE_FACES = {"cli", "mcp_server", "web"}

# Reached through the Protocols that indexer and search declare; only app imports them.
ONLY_APP = {"stores", "embedders"}

MAX_LINES = 600


def part(module: str) -> str:
    """The layout part of a dotted module name: docshelf.stores.sqlite -> stores."""
    names = module.split(".")
    return names[1] if len(names) > 1 else "docshelf"


def modules() -> Iterator[tuple[str, Path]]:
    for path in sorted(SRC.rglob("*.py")):
        names = list(path.relative_to(SRC.parent).with_suffix("").parts)
        if names[-1] == "__init__":
            names.pop()
        yield ".".join(names), path


def is_module(dotted: str) -> bool:
    path = SRC.parent.joinpath(*dotted.split("."))
    return path.is_dir() or path.with_suffix(".py").is_file()


def imports(path: Path) -> Iterator[tuple[str, list[str]]]:
    """Every docshelf module `path` imports (at the top, in a function, or for type checking),
    with the names taken from it."""
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            if node.module.split(".")[0] != "docshelf":
                continue
            names = [a.name for a in node.names]
            submodules = [n for n in names if is_module(f"{node.module}.{n}")]
            for name in submodules:  # from docshelf import mcp_server
                yield f"{node.module}.{name}", []
            if len(submodules) < len(names):
                yield node.module, [n for n in names if n not in submodules]
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] == "docshelf":
                    yield alias.name, []


def test_every_module_belongs_to_a_part_of_the_layout() -> None:
    assert {part(m) for m, _ in modules()} <= set(RANK)


def test_imports_point_down_only() -> None:
    wrong = []
    for module, path in modules():
        here = part(module)
        for imported, names in imports(path):
            there = part(imported)
            if there == here:
                continue
            if there == "docshelf" and names == ["__version__"]:
                continue  # the version, which the package root reads from its metadata
            if here == "cli" and there == "mcp_server":
                continue  # `docshelf serve` starts the MCP face
            if here == "mcp_server" and there == "web":
                continue  # `docshelf serve --http` serves the web page beside /mcp
            if RANK[there] >= RANK[here]:
                wrong.append(f"{module} imports {imported}")
    assert wrong == []


def test_faces_reach_stores_embedders_and_the_indexer_only_through_app() -> None:
    wrong = []
    for module, path in modules():
        if part(module) not in FACES:
            continue
        for imported, _ in imports(path):
            # The package root names the indexer's result types (IndexResult, Progress).
            if module == "docshelf" and imported == "docshelf.indexer":
                continue
            if part(imported) in BEHIND_APP:
                wrong.append(f"{module} imports {imported}")
    assert wrong == []


def test_only_app_imports_the_stores_and_the_embedders() -> None:
    wrong = [
        f"{module} imports {imported}"
        for module, path in modules()
        if part(module) not in ONLY_APP and part(module) != "app"
        for imported, _ in imports(path)
        if part(imported) in ONLY_APP
    ]
    assert wrong == []


def test_chunking_imports_nothing_of_ours_but_config() -> None:
    for module, path in modules():
        if part(module) == "chunking":
            assert {part(i) for i, _ in imports(path)} <= {"chunking", "config"}, module


def test_no_module_is_over_600_lines_unless_developers_md_says_why() -> None:
    developers = (REPO / "DEVELOPERS.md").read_text(encoding="utf-8")
    long = [
        path.relative_to(SRC.parent).as_posix()
        for _, path in modules()
        if len(path.read_text(encoding="utf-8").splitlines()) > MAX_LINES
    ]
    unexplained = [name for name in long if f"`{name}` is over {MAX_LINES} lines" not in developers]
    assert unexplained == []


def test_the_faces_import_only_app_present_the_public_api_config_errors_and_progress() -> None:
    wrong = []
    for module, path in modules():
        here = part(module)
        if here not in THREE_FACES:
            continue
        for imported, _ in imports(path):
            there = part(imported)
            if there == here or there in FACE_IMPORTS:
                continue
            if (here, there) in {("cli", "mcp_server"), ("mcp_server", "web")}:
                continue  # `docshelf serve` starts the MCP face, which serves the web page
            wrong.append(f"{module} imports {imported}")
    assert wrong == []


def test_the_service_reaches_stores_through_the_protocol_only() -> None:
    service = SRC / "app" / "service.py"
    names = {name for _, taken in imports(service) for name in taken}
    modules_ = {imported for imported, _ in imports(service)}
    assert not {"SQLiteStore", "PostgresStore"} & names
    assert {m for m in modules_ if part(m) == "stores"} <= {"docshelf.stores.contract"}
    source = service.read_text(encoding="utf-8")
    assert "SQLiteStore" not in source and "PostgresStore" not in source
