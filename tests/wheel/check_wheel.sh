#!/usr/bin/env bash
# The packaging check of `make test` (`make wheel-test`): build docshelf's wheel, install it into a
# fresh virtual environment with constraints.txt (torch from the machine's CPU wheel, everything
# else from the package index through the pip cache), and run docshelf from that environment only:
# --help, chunk, then index and search of a small Markdown tree with the packaged model. It fails
# when the wheel lacks a file the package needs (py.typed, a migration, the web page's files,
# LICENSE) or a dependency that pyproject.toml forgot to declare.
#
# Usage: tests/wheel/check_wheel.sh   (BUILD_PYTHON: a python with pip, default .venv/bin/python;
#                                      PYTHON: the interpreter of the fresh venv, default python3)
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
build_python=${BUILD_PYTHON:-$root/.venv/bin/python}
python=${PYTHON:-python3}

tmp=$(mktemp -d /tmp/docshelf-wheel.XXXXXX)
trap 'rm -rf "$tmp"' EXIT

fail() {
    echo "check_wheel: FAIL: $*" >&2
    exit 1
}
step() {
    echo "check_wheel: $* ($SECONDS s)"
}

# --- build ----------------------------------------------------------------------------------
step "building the wheel"
"$build_python" -m pip wheel --quiet --no-deps --wheel-dir "$tmp/dist" "$root"
wheels=("$tmp"/dist/docshelf-*.whl)
[[ ${#wheels[@]} -eq 1 && -f ${wheels[0]} ]] || fail "expected one docshelf wheel in $tmp/dist"
wheel=${wheels[0]}

# --- install into a fresh environment -------------------------------------------------------
step "installing $(basename "$wheel") into a fresh virtual environment"
"$python" -m venv "$tmp/venv"
venv=$tmp/venv
# --no-compile: byte-compiling all of torch and transformers would take a minute; what runs
# compiles itself on first import.
"$venv/bin/python" -m pip install --quiet --no-compile -c "$root/constraints.txt" "$wheel"

# From here on, only the fresh environment: nothing of the checkout or the caller's settings.
for name in $(compgen -e); do
    case $name in DOCSHELF_* | PYTHON* | VIRTUAL_ENV | HF_* | TRANSFORMERS_* | XDG_*) unset "$name" ;; esac
done
export PATH="$venv/bin:/usr/local/bin:/usr/bin:/bin"
export PYTHONNOUSERSITE=1
export HOME=$tmp/home XDG_DATA_HOME=$tmp/data XDG_CACHE_HOME=$tmp/cache XDG_CONFIG_HOME=$tmp/config
# The packaged model must load with no network at all.
export HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1
mkdir -p "$HOME"
cd "$tmp"

# --- what the installed package holds -------------------------------------------------------
step "checking the installed files"
package=$("$venv/bin/python" -c 'import docshelf, pathlib; print(pathlib.Path(docshelf.__file__).parent)')
[[ $package == "$venv"/* ]] || fail "docshelf was imported from $package, not from the fresh venv"
[[ -f $package/py.typed ]] || fail "py.typed is not in the installed package"
expected=0
for sql in "$root"/src/docshelf/stores/migrations/*/*.sql; do
    relative=${sql#"$root"/src/docshelf/}
    cmp -s "$sql" "$package/$relative" || fail "$relative is missing from the installed package"
    expected=$((expected + 1))
done
[[ $expected -gt 0 ]] || fail "no migrations found in the checkout"
installed=$(find "$package/stores/migrations" -name '*.sql' | wc -l)
[[ $installed -eq $expected ]] || fail "$installed migrations installed, $expected in the checkout"
# The web page's files are package data, served from the installed package.
for asset in "$root"/src/docshelf/web/static/*; do
    relative=${asset#"$root"/src/docshelf/}
    cmp -s "$asset" "$package/$relative" || fail "$relative is missing from the installed package"
done
"$venv/bin/python" - <<'EOF' || fail "the wheel's metadata"
import re
from importlib import metadata

dist = metadata.distribution("docshelf")
names = {str(p) for p in dist.files or ()}
assert any(n.endswith(".dist-info/licenses/LICENSE") for n in names), "LICENSE not in the wheel"
assert dist.metadata["License-Expression"] == "MIT", dist.metadata["License-Expression"]
pins = [r for r in dist.requires or () if re.search(r"===?\s*[0-9]", r.split(";")[0])]
assert not pins, f"exact pins belong in constraints.txt, not in the metadata: {pins}"
assert metadata.version("torch").startswith("2.13.0"), metadata.version("torch")
print(f"check_wheel: docshelf {dist.version}, {len(names)} files, torch {metadata.version('torch')}")
EOF

# --- run it ---------------------------------------------------------------------------------
step "docshelf --help"
help=$(docshelf --help)
for command in chunk index search serve; do
    grep -q "^  $command " <<<"$help" || fail "docshelf --help does not list $command"
done

docs=$tmp/docs
mkdir -p "$docs/runbooks" "$docs/teams"
cat >"$docs/runbooks/payments.md" <<'EOF'
# Payments runbook

## Timeouts

When the card processor takes longer than thirty seconds to answer, the checkout page gives up
and asks the customer to try again later. Raise the limit in payments.yaml only after talking
to the on-call engineer.

## Refunds

Refunds go back to the original card within five working days.
EOF
cat >"$docs/teams/ownership.md" <<'EOF'
# Who owns what

## Checkout

The Storefront team owns the checkout service; its channel is #storefront.

## Search

The Discovery team owns product search and its ranking.
EOF
cat >"$docs/garden.md" <<'EOF'
# Gardening notes

Tomatoes need full sun, deep watering twice a week and a stake once they flower.
EOF

step "docshelf chunk"
docshelf chunk --json "$docs" >"$tmp/chunks.json"
"$venv/bin/python" - "$tmp/chunks.json" <<'EOF' || fail "docshelf chunk"
import json, sys

rows = json.load(open(sys.argv[1]))
paths = {row["path"] for row in rows}
assert paths == {"runbooks/payments.md", "teams/ownership.md", "garden.md"}, paths
assert any(row["heading"] == "Payments runbook > Timeouts" for row in rows), rows
EOF

store=$tmp/store.sqlite3
step "docshelf index (the packaged model)"
docshelf index "$docs" --store "$store" --mirror-dir "$tmp/mirrors" --workspace wheel --json \
    >"$tmp/index.json"
"$venv/bin/python" - "$tmp/index.json" <<'EOF' || fail "docshelf index"
import json, sys

result = json.load(open(sys.argv[1]))
assert result["files"] == 3 and result["chunks"] >= 5, result
assert result["embedded"] == result["chunks"], result
EOF

step "docshelf search"
# By meaning only, and in words the file does not use: the answer must come from the model.
answer=$(docshelf search "what happens when the bank is slow to reply?" --mode vector -k 1 \
    --store "$store" --workspace wheel)
grep -q "runbooks/payments.md" <<<"$answer" || fail "search did not find the runbook: $answer"
# The default (hybrid) ranking, through the same store and model.
answer=$(docshelf search "who is responsible for checkout?" -k 1 --store "$store" --workspace wheel)
grep -q "teams/ownership.md" <<<"$answer" || fail "search did not find the owners: $answer"

step "passed"
