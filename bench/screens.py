"""Screenshots of the web page of `docshelf serve --http`, for the README (docs/images/).

Run it from the repository root with

    .venv/bin/python bench/screens.py                   # or: make screens
    .venv/bin/python bench/screens.py --out /tmp/shots  # somewhere else

Data: the shared traefik corpus (`../shared/data/corpora/traefik`, its docs/ tree), copied into a
temporary directory and committed as a git repository, with one symbolic link added to its docs
(so that the status view has a skipped file to show). It is indexed with the packaged model
into a fresh SQLite store, in its own process.

Method: `docshelf serve COPY --http --port 0 --sync-interval 3600` (the sync at start shows in
the status view), then Debian's headless Chromium through chromium-driver (tests/support/
browser.py) opens each view at 1280x860 (the phone view at 390x844), waits for its data, and
saves a PNG: search.png (a shared `/?q=` link), read.png (its first hit opened: the lines
highlighted, the file's outline beside), outline.png, status.png and phone.png. The table
printed at the end names each file, its size, and the time from opening the URL to the data
shown (one run, a warm server: a measure of this page on this machine, not a benchmark).
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from selenium.webdriver.common.by import By

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from tests.support.browser import chromium, wait  # noqa: E402 - after the path above

DOCSHELF = REPO / ".venv" / "bin" / "docshelf"
CORPUS = REPO.parent / "shared" / "data" / "corpora" / "traefik"
OUT = REPO / "docs" / "images"
QUERY = "how do I redirect HTTP to HTTPS"
GIT_ENV = {
    **os.environ,
    "GIT_AUTHOR_NAME": "bench",
    "GIT_AUTHOR_EMAIL": "bench@example.invalid",
    "GIT_COMMITTER_NAME": "bench",
    "GIT_COMMITTER_EMAIL": "bench@example.invalid",
}
# Starting the server (the model loads at its warm-up) on a busy two-core machine.
START_SECONDS = 180.0
WIDE = (1280, 860)
PHONE = (390, 844)


def make_repository(into: Path) -> Path:
    work_tree = into / "traefik"
    shutil.copytree(CORPUS, work_tree, symlinks=True, copy_function=shutil.copyfile)
    for directory, _dirs, _files in os.walk(work_tree):
        os.chmod(directory, 0o755)
    (work_tree / "docs" / "latest.md").symlink_to("../README.md")
    for args in (["init", "-q", "-b", "main"], ["add", "-A"], ["commit", "-qm", "docs"]):
        subprocess.run(["git", "-C", str(work_tree), *args], check=True, env=GIT_ENV)
    return work_tree


def start_server(work_tree: Path, store: Path, log: Path) -> tuple[subprocess.Popen[bytes], str]:
    with log.open("wb") as err:
        server = subprocess.Popen(
            [
                *(str(DOCSHELF), "serve", str(work_tree), "--store", str(store)),
                *("--http", "--port", "0", "--sync-interval", "3600"),
            ],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=err,
            env={**os.environ, "HF_HUB_OFFLINE": "1"},
        )
    deadline = time.monotonic() + START_SECONDS
    while True:
        text = log.read_text()
        found = re.search(r"the web page is at (http://\S+/)$", text, re.M)
        if found and "ready: the first search" in text:
            return server, found.group(1).rstrip("/")
        if server.poll() is not None or time.monotonic() > deadline:
            raise SystemExit(f"the server did not start:\n{text}")
        time.sleep(0.2)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=OUT, help="where the PNGs go")
    options = parser.parse_args()
    options.out.mkdir(parents=True, exist_ok=True)
    rows: list[tuple[str, int, float]] = []
    with tempfile.TemporaryDirectory(prefix="docshelf-screens-") as scratch:
        root = Path(scratch)
        work_tree = make_repository(root)
        store = root / "store.sqlite3"
        started = time.perf_counter()
        subprocess.run(
            [str(DOCSHELF), "index", str(work_tree), "--store", str(store)],
            check=True,
            env={**os.environ, "HF_HUB_OFFLINE": "1"},
        )
        print(f"indexed in {time.perf_counter() - started:.1f} s", file=sys.stderr)
        server, base = start_server(work_tree, store, root / "serve.log")
        try:
            with chromium(*WIDE) as driver:

                def shoot(name: str, url: str, ready: str, size: tuple[int, int] = WIDE) -> None:
                    driver.set_window_size(*size)
                    opened = time.perf_counter()
                    driver.get(base + url)
                    wait(driver).until(
                        lambda d: any(
                            e.is_displayed() for e in d.find_elements(By.CSS_SELECTOR, ready)
                        )
                    )
                    shown = time.perf_counter() - opened
                    time.sleep(0.3)  # the scroll into view settles
                    path = options.out / name
                    driver.save_screenshot(str(path))
                    rows.append((name, path.stat().st_size, shown))

                query = QUERY.replace(" ", "+")
                shoot("search.png", f"/?q={query}", "#hits a.hit")
                link = driver.find_element(By.CSS_SELECTOR, "#hits a.hit").get_attribute("href")
                assert link is not None
                shoot("read.png", link.removeprefix(base), "#lines .line.hl")
                shoot("outline.png", "/?view=outline", "#outline-view .files")
                shoot("status.png", "/?view=status", "#status-view table.skipped")
                shoot("phone.png", f"/?q={query}", "#hits a.hit", PHONE)
        finally:
            server.send_signal(signal.SIGTERM)
            server.wait(60)
    print(f"\nbench/screens.py: the web page of docshelf serve --http, into {options.out}")
    print(f"corpus: traefik docs (+1 symlink), packaged model, SQLite; query {QUERY!r}\n")
    print(f"{'file':<12} {'bytes':>8} {'data shown after':>17}")
    for name, size, shown in rows:
        print(f"{name:<12} {size:>8} {shown * 1000:>14.0f} ms")


if __name__ == "__main__":
    main()
