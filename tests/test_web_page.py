"""The web page in a real browser (Debian's headless Chromium, driven through chromium-driver),
against a real `docshelf serve --http` over each store: a shared link opens with its search
done, typing searches, the keyboard moves and opens, a hit opens its file with its lines
highlighted and in view, a doc's markup stays text, an answer past its budget shows a cut hit by
its citation and says what it left out, the status lists a skipped symlink, the token is asked
for, the page fits a phone, and nothing is fetched from another host."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlencode, urlsplit

import httpx
import psycopg
import pytest
from selenium import webdriver
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys

from docshelf.config import NO_MODEL_DIM, NO_MODEL_ID
from docshelf.rows import ChunkRow, FileRow
from docshelf.stores import open_store
from tests.support.browser import chromium, wait
from tests.support.gitrepo import Repo, write_shop_docs
from tests.support.serving import http_serve
from tests.test_cli_index import docshelf

TOKEN = "a-token-for-the-page-tests-0123"

DANGER = (
    "# Danger\n\nA doc that holds markup: <script>window.pwned = 1</script> and "
    '<img src="x" onerror="window.pwned = 2"> stay text.\n'
)


def long_doc() -> str:
    """A file whose last section, lines 250-252, is far below the first screen."""
    lines = ["# Long", "", *(f"Filler line {n} of the long document." for n in range(3, 250))]
    lines += ["## Far section", "", "The rollback lever sits far down this long file."]
    return "\n".join(lines) + "\n"


# A doc deep in the tree an old wiki's export made: its path is 380 bytes, and a hit whose text
# is cut still names it twice (its place, and where to read the text left out).
DEEP = "docs/" + "".join(
    f"wiki-export-{n}-of-the-old-operations-handbook-kept-as-it-was-imported-folder-by-folder/"
    for n in range(1, 5)
)
DEEP += "harbour-surveys-" + "x" * (380 - len(DEEP) - len("harbour-surveys-.md")) + ".md"
TIDE_PARTS = 8


def tide_doc() -> str:
    """Eight parts that match "tide gauge calibration", each one chunk of 1,790 bytes (its
    heading line and its text), set apart by an interlude that does not match: no two join, and
    each part an answer leaves out is counted on its hits as `more`."""
    lines = ["# Harbour surveys", ""]
    for n in range(1, TIDE_PARTS + 1):
        heading = f"## Part {n} of the survey, as the harbour master wrote it up after the season"
        sentence = "Calibrate the tide gauge against the harbour benchmark before each survey. "
        text = (sentence * 30)[: 1790 - len(heading) - 2].rstrip()
        lines += [heading, "", text, "", f"## Interlude {n}", "", "Nothing to see here.", ""]
    return "\n".join(lines)


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> Repo:
    made = Repo(tmp_path_factory.mktemp("page") / "shop")
    write_shop_docs(made)
    made.write("docs/danger.md", DANGER)
    made.write("docs/long.md", long_doc())
    made.symlink("docs/link.md", "../README.md")
    made.commit("docs")
    return made


@pytest.fixture(scope="module", params=["sqlite", "postgresql"])
def store(
    request: pytest.FixtureRequest, repo: Repo, tmp_path_factory: pytest.TempPathFactory
) -> str:
    """The repository indexed (without a model) into a SQLite file or a new PostgreSQL
    database."""
    if request.param == "sqlite":
        location = str(tmp_path_factory.mktemp("store") / "store.sqlite3")
    else:
        server = request.getfixturevalue("postgres_server")
        with psycopg.connect(server.get_uri(), autocommit=True) as conn:
            conn.execute("CREATE DATABASE docshelf_page")
        location = server.get_uri("docshelf_page")
    done = docshelf("index", str(repo.path), "--store", location, "--embedder", "none")
    assert done.returncode == 0, done.stderr
    return location


def serve(repo: Repo, store: str, log: Path, **env: str) -> Any:
    args = ["serve", str(repo.path), "--store", store, "--embedder", "none"]
    return http_serve(args, log, env=env)


@pytest.fixture(scope="module")
def base(repo: Repo, store: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    log = tmp_path_factory.mktemp("log") / "serve.log"
    with serve(repo, store, log) as (url, _):
        yield url.removesuffix("/mcp")


@pytest.fixture(scope="module")
def browser() -> Iterator[webdriver.Chrome]:
    with chromium() as driver:
        yield driver


@pytest.fixture
def page(browser: webdriver.Chrome, base: str) -> Iterator[webdriver.Chrome]:
    """The browser, with the page's logs checked after each test: no request went to another
    host, and the console has no error (a Content-Security-Policy refusal would be one)."""
    browser.set_window_size(1200, 800)
    browser.get_log("browser")
    browser.get_log("performance")
    yield browser
    assert_only_this_server(browser, base)


def assert_only_this_server(driver: webdriver.Chrome, base: str) -> None:
    requested = []
    for entry in driver.get_log("performance"):
        message = json.loads(entry["message"])["message"]
        if message["method"] == "Network.requestWillBeSent":
            requested.append(message["params"]["request"]["url"])
    assert requested, "the browser's network log is empty"
    elsewhere = [url for url in requested if not url.startswith(base + "/")]
    assert elsewhere == []
    errors = [e for e in driver.get_log("browser") if e["level"] == "SEVERE"]
    assert errors == []


def shown(driver: webdriver.Chrome, css: str) -> Any:
    return wait(driver).until(
        lambda d: next((e for e in d.find_elements(By.CSS_SELECTOR, css) if e.is_displayed()), None)
    )


def texts(driver: webdriver.Chrome, css: str) -> list[str]:
    """The shown text of every element that matches, read in one script so that a re-render
    cannot come between finding the elements and reading them."""
    found = driver.execute_script(
        "return [...document.querySelectorAll(arguments[0])].map((e) => e.innerText);", css
    )
    return [str(text) for text in found]


def hit_places(driver: webdriver.Chrome) -> list[str]:
    """The places of the hits shown, or none while a search is in flight (the list is
    `aria-busy` until that search's answer is shown)."""
    if driver.execute_script("return document.getElementById('hits').hasAttribute('aria-busy')"):
        return []
    return texts(driver, "#hits .where")


def wait_for_hits(driver: webdriver.Chrome, first: str) -> list[str]:
    wait(driver).until(lambda d: hit_places(d)[:1] == [first])
    return hit_places(driver)


def in_view(driver: webdriver.Chrome, element: Any) -> bool:
    return bool(
        driver.execute_script(
            "const r = arguments[0].getBoundingClientRect();"
            "return r.top >= 0 && r.bottom <= window.innerHeight;",
            element,
        )
    )


def test_a_shared_link_opens_with_its_search_done(
    page: webdriver.Chrome, base: str, repo: Repo
) -> None:
    page.get(f"{base}/?q=payment+gateway+timeout")
    places = wait_for_hits(page, "docs/runbooks/payments.md:3-5")
    assert len(places) <= 5
    first = page.find_element(By.CSS_SELECTOR, "#hits a.hit")
    assert "Payments runbook \u203a Timeout" in first.text
    assert first.find_element(By.CSS_SELECTOR, ".badge").text == "shop"  # the workspace
    assert first.find_element(By.CSS_SELECTOR, ".commit").text == repo.head()[:12]
    marked = {m.text.lower() for m in first.find_elements(By.TAG_NAME, "mark")}
    assert {"payment", "gateway", "timeout"} <= marked
    assert page.find_element(By.ID, "q").get_attribute("value") == "payment gateway timeout"
    page.get(f"{base}/?q=who+owns+checkout&k=1&path=docs/services/**")
    assert wait_for_hits(page, "docs/services/checkout.md:3-5") == ["docs/services/checkout.md:3-5"]
    assert page.find_element(By.ID, "k").get_attribute("value") == "1"
    assert page.find_element(By.ID, "path").get_attribute("value") == "docs/services/**"


def test_typing_searches_and_the_keyboard_moves_opens_and_comes_back(
    page: webdriver.Chrome, base: str
) -> None:
    page.get(f"{base}/")
    shown(page, "#help")
    page.find_element(By.TAG_NAME, "body").send_keys("/")
    typed = page.switch_to.active_element
    assert typed.get_attribute("id") == "q"
    typed.send_keys("who owns ")
    wait(page).until(lambda d: "q=who+owns" in d.current_url)  # a pause: the search ran
    time.sleep(0.5)
    typed.send_keys("checkout")  # and the space typed before it is still there
    wait(page).until(lambda d: "q=who+owns+checkout" in d.current_url)
    wait_for_hits(page, "docs/services/checkout.md:3-5")  # the answer to the whole query
    assert typed.get_attribute("value") == "who owns checkout"
    typed.send_keys(Keys.ARROW_DOWN)
    assert page.switch_to.active_element.get_attribute("data-index") == "0"
    page.switch_to.active_element.send_keys(Keys.ARROW_DOWN)
    if len(hit_places(page)) > 1:
        assert page.switch_to.active_element.get_attribute("data-index") == "1"
        page.switch_to.active_element.send_keys(Keys.ARROW_UP)
    assert page.switch_to.active_element.get_attribute("data-index") == "0"
    page.switch_to.active_element.send_keys(Keys.ENTER)
    shown(page, "#read-view")
    query = parse_qs(urlsplit(page.current_url).query)
    assert query["view"] == ["read"] and query["path"] == ["docs/services/checkout.md"]
    lit = wait(page).until(lambda d: d.find_elements(By.CSS_SELECTOR, "#lines .line.hl"))
    assert [e.get_attribute("id") for e in lit] == ["L3", "L4", "L5"]
    assert "Checkout is owned by the Payments team" in lit[2].text
    outline = shown(page, "#file-outline .toc")
    assert [a.text.strip() for a in outline.find_elements(By.TAG_NAME, "a")] == [
        "Checkout",
        "Owners",
    ]
    page.find_element(By.TAG_NAME, "body").send_keys(Keys.ESCAPE)
    shown(page, "#search-view")
    wait_for_hits(page, "docs/services/checkout.md:3-5")


def test_enter_in_the_path_box_searches_at_once_and_back_restores_the_search(
    page: webdriver.Chrome, base: str
) -> None:
    page.get(f"{base}/?q=payments")
    wait(page).until(lambda d: len(hit_places(d)) > 1)  # the runbook and the service page
    path = page.find_element(By.ID, "path")
    path.send_keys("docs/services/", Keys.ENTER)
    wait(page).until(lambda d: "path=docs%2Fservices%2F" in d.current_url)
    wait(page).until(
        lambda d: {p.split(":")[0] for p in hit_places(d)} == {"docs/services/checkout.md"}
    )
    page.find_element(By.CSS_SELECTOR, "#hits a.hit").click()
    shown(page, "#read-view")
    page.back()
    shown(page, "#search-view")
    assert page.find_element(By.ID, "path").get_attribute("value") == "docs/services/"
    assert page.find_element(By.ID, "k").get_attribute("value") == "5"


def test_a_hit_far_down_a_long_file_is_highlighted_and_scrolled_into_view(
    page: webdriver.Chrome, base: str
) -> None:
    page.get(f"{base}/?q=rollback+lever")
    wait_for_hits(page, "docs/long.md:250-252")
    page.find_element(By.CSS_SELECTOR, "#hits a.hit").click()
    far = wait(page).until(lambda d: d.find_element(By.ID, "L252"))
    assert "rollback lever" in far.text
    assert "hl" in (far.get_attribute("class") or "")
    wait(page).until(lambda d: in_view(d, far))
    assert page.find_element(By.ID, "earlier").is_displayed()
    for first in ("L10", "L1"):  # 209 lines above: two reads of at most 200
        page.execute_script("window.scrollTo(0, 0)")  # up to the button, as a reader scrolls
        page.find_element(By.ID, "earlier").click()
        wait(page).until(lambda d, first=first: d.find_elements(By.ID, first))
    assert not page.find_element(By.ID, "earlier").is_displayed()
    assert len(page.find_elements(By.CSS_SELECTOR, "#lines .line")) == 252
    assert page.find_element(By.ID, "L250").get_attribute("class") == "line hl"


def test_a_docs_markup_is_shown_as_text_and_never_runs(page: webdriver.Chrome, base: str) -> None:
    page.get(f"{base}/?q=markup+pwned")
    wait_for_hits(page, "docs/danger.md:1-3")
    excerpt = page.find_element(By.CSS_SELECTOR, "#hits .excerpt").text
    assert "<script>window.pwned = 1</script>" in excerpt
    assert '<img src="x" onerror="window.pwned = 2">' in excerpt
    page.get(f"{base}/?view=read&path=docs/danger.md")
    line = wait(page).until(lambda d: d.find_element(By.ID, "L3"))
    assert "<script>window.pwned = 1</script>" in line.text
    assert page.execute_script("return window.pwned") is None
    assert page.execute_script("return document.scripts.length") == 1  # app.js alone
    assert page.find_elements(By.CSS_SELECTOR, "#lines img, #lines script") == []


def test_an_answer_past_its_budget_shows_a_cut_hit_by_its_citation_and_says_what_it_left_out(
    browser: webdriver.Chrome, location: str, tmp_path: Path
) -> None:
    """Asked for 6 hits, the page's answer gets the default budget, 450 tokens a hit (2,700, or
    10,800 bytes of text): parts of 1,790 bytes fit whole four times, the fifth keeps its citation
    with its text cut, and the sixth's citation no longer fits (a cut hit's citation names the
    380-byte path twice): it is left out, and said. Any budget from about 2,650 to 2,850 tokens
    gives this answer (`docshelf search -k 6 --max-tokens N`), so a few bytes more or less in the
    rendering do not change it. Each hit shown counts the parts of its file the answer had no
    place for (`more`), and the cut hit still opens its lines."""
    surveys = Repo(tmp_path / "surveys")
    surveys.write(DEEP, tide_doc())
    surveys.commit("surveys")
    done = docshelf("index", str(surveys.path), "--store", location, "--embedder", "none")
    assert done.returncode == 0, done.stderr
    with serve(surveys, location, tmp_path / "serve.log") as (url, _):
        base = url.removesuffix("/mcp")
        asked = {"q": "tide gauge calibration", "k": "6"}
        found = httpx.get(f"{base}/api/search", params=asked)
        assert found.status_code == 200, found.text
        answer = found.json()
        hits = answer["hits"]
        assert (answer["max_tokens"], answer["left_out"]) == (2700, 1)
        assert [hit["cut"] for hit in hits] == [False, False, False, False, True]
        assert [bool(hit["content"]) for hit in hits] == [True, True, True, True, False]
        assert {(hit["path"], hit["more"]) for hit in hits} == {(DEEP, TIDE_PARTS - 6)}
        places = [f"{hit['path']}:{hit['start_line']}-{hit['end_line']}" for hit in hits]
        browser.set_window_size(1200, 800)
        browser.get_log("browser")
        browser.get_log("performance")
        browser.get(f"{base}/?{urlencode(asked)}")
        assert wait_for_hits(browser, places[0]) == places
        assert texts(browser, "#summary") == [f"5 hits at {surveys.head()[:12]}, ranked by words"]
        assert texts(browser, "#hits .crumbs") == [
            hit["heading"].replace(" > ", " \u203a ") for hit in hits
        ]
        assert texts(browser, "#hits .more") == ["+2 more in this file"] * 5
        excerpts = browser.execute_script(
            "return [...document.querySelectorAll('#hits .excerpt')]"
            ".map((e) => [e.className, e.textContent]);"
        )
        assert excerpts == [["excerpt", hit["content"]] for hit in hits[:4]] + [
            ["excerpt muted", "Text left out to keep the answer short: open the hit to read it."]
        ]
        assert texts(browser, "#hits > li.muted") == [
            "1 more hit left out to keep the answer short: ask for fewer, or a narrower path."
        ]
        cut = hits[4]
        browser.find_elements(By.CSS_SELECTOR, "#hits a.hit")[4].click()
        lit = wait(browser).until(lambda d: d.find_elements(By.CSS_SELECTOR, "#lines .line.hl"))
        assert [e.get_attribute("id") for e in lit] == [
            f"L{n}" for n in range(cut["start_line"], cut["end_line"] + 1)
        ]
        assert "Calibrate the tide gauge" in lit[-1].text
        assert_only_this_server(browser, base)


def test_the_status_lists_the_skipped_symlink_and_the_commit(
    page: webdriver.Chrome, base: str, repo: Repo
) -> None:
    page.get(f"{base}/")
    shown(page, "#help")
    page.find_element(By.ID, "nav-status").click()
    skipped = shown(page, "#status-view table.skipped")
    assert "docs/link.md" in skipped.text
    assert "symbolic link, not followed" in skipped.text
    card = page.find_element(By.CSS_SELECTOR, "#status-view .card")
    assert repo.head() in card.text
    assert "this server does not sync it" in card.text


def test_the_outline_of_the_corpus_is_browsable_down_to_a_file(
    page: webdriver.Chrome, base: str
) -> None:
    page.get(f"{base}/?view=outline")
    files = wait(page).until(lambda d: d.find_elements(By.CSS_SELECTOR, "#outline-view .path"))
    assert [f.text for f in files] == [
        "docs/danger.md",
        "docs/long.md",
        "docs/runbooks/payments.md",
        "docs/services/checkout.md",
    ]
    files[2].click()
    line = wait(page).until(lambda d: d.find_element(By.ID, "L1"))
    assert line.text.endswith("# Payments runbook")
    # The file's outline comes in after its lines.
    wait(page).until(lambda d: d.find_element(By.LINK_TEXT, "Timeout")).click()
    wait(page).until(lambda d: d.find_element(By.ID, "L3").get_attribute("class") == "line hl")
    assert "lines=3-5" in page.current_url


def test_the_page_fits_a_phone(page: webdriver.Chrome, base: str) -> None:
    page.set_window_size(390, 844)
    for link in ("/?q=payment+gateway+timeout", "/?view=read&path=docs/long.md&lines=250-252"):
        page.get(base + link)
        shown(page, "#hits a.hit, #lines .line")
        width = page.execute_script(
            "return [document.documentElement.scrollWidth, window.innerWidth]"
        )
        assert width[0] <= width[1], link


def test_with_a_token_the_page_refuses_until_it_is_given(
    browser: webdriver.Chrome,
    repo: Repo,
    store: str,
    tmp_path: Path,
) -> None:
    with serve(repo, store, tmp_path / "serve.log", DOCSHELF_TOKEN=TOKEN) as (url, _):
        base = url.removesuffix("/mcp")
        browser.get(f"{base}/")
        browser.execute_script("sessionStorage.clear()")
        browser.get(f"{base}/?q=payment+gateway+timeout")
        box = shown(browser, "#token")
        assert not browser.find_element(By.ID, "search-view").is_displayed()
        assert texts(browser, "#hits .where") == []
        box.send_keys("not-the-token-at-all", Keys.ENTER)
        shown(browser, "#token-error")
        assert texts(browser, "#hits .where") == []
        browser.find_element(By.ID, "token").send_keys(TOKEN, Keys.ENTER)
        wait_for_hits(browser, "docs/runbooks/payments.md:3-5")
        assert browser.execute_script("return sessionStorage.getItem('docshelf.token')") == TOKEN
        assert browser.get_cookies() == []
        assert TOKEN not in browser.current_url
        browser.get(f"{base}/?view=status")  # the tab keeps it: no second prompt
        shown(browser, "#status-view .card")
        browser.execute_script("sessionStorage.clear()")


def test_several_workspaces_are_searched_together_or_one_chosen_in_the_page(
    browser: webdriver.Chrome, repo: Repo, location: str, tmp_path: Path
) -> None:
    billing = Repo(tmp_path / "billing")
    billing.write("docs/invoices.md", "# Invoices\n\nA payment timeout on invoices is 60 s.\n")
    # A name with glob characters: the page asks for its outline with them escaped.
    billing.write("docs/notes [draft].md", "# Draft notes\n\n## Open questions\n\nNone yet.\n")
    # A page both repositories vendor: one hit, naming the other copy.
    vendored = "# Key rotation\n\nRotate the signing key every 90 days with the vault.\n"
    billing.write("docs/shared/keys.md", vendored)
    billing.commit("billing docs")
    repo.write("docs/shared/keys.md", vendored)
    repo.commit("vendored keys")
    for source in (repo, billing):
        done = docshelf("index", str(source.path), "--store", location, "--embedder", "none")
        assert done.returncode == 0, done.stderr
    args = ["serve", str(repo.path), str(billing.path), "--store", location, "--embedder", "none"]
    with http_serve(args, tmp_path / "serve.log") as (url, _):
        base = url.removesuffix("/mcp")
        browser.get(f"{base}/?q=payment+timeout")
        wait(browser).until(lambda d: len(hit_places(d)) > 1)
        assert set(texts(browser, "#hits .badge")) == {"shop", "billing"}
        chooser = shown(browser, "#workspace")
        options = ["all workspaces", "shop", "billing"]
        assert texts(browser, "#workspace option") == options
        chooser.find_element(By.CSS_SELECTOR, "option[value='billing']").click()
        wait(browser).until(lambda d: "workspace=billing" in d.current_url)
        wait(browser).until(lambda d: hit_places(d) == ["docs/invoices.md:1-3"])
        browser.get(f"{base}/?q=rotate+the+signing+key+with+the+vault")
        wait_for_hits(browser, "docs/shared/keys.md:1-3")
        assert texts(browser, "#hits .more") == ["same text in 1 more place"]
        assert len(texts(browser, "#hits .badge")) == 1  # one hit: the other is its copy
        browser.get(f"{base}/?q=payment+timeout&workspace=shop")
        wait_for_hits(browser, "docs/runbooks/payments.md:3-5")
        assert set(texts(browser, "#hits .badge")) == {"shop"}
        assert browser.find_element(By.ID, "workspace").get_attribute("value") == "shop"
        browser.find_element(By.CSS_SELECTOR, "#hits a.hit").click()
        wait(browser).until(lambda d: d.find_elements(By.CSS_SELECTOR, "#lines .line.hl"))
        assert "workspace=shop" in browser.current_url
        browser.get(f"{base}/?view=outline")
        wait(browser).until(lambda d: texts(d, "#outline-view .path") == ["shop", "billing"])
        draft = urlencode({"view": "read", "workspace": "billing", "path": "docs/notes [draft].md"})
        browser.get(f"{base}/?{draft}")
        wait(browser).until(lambda d: d.find_element(By.ID, "L1").text.endswith("# Draft notes"))
        wait(browser).until(
            lambda d: (
                [a.strip() for a in texts(d, "#file-outline .toc a")]
                == ["Draft notes", "Open questions"]
            )
        )


def test_the_outline_of_many_workspaces_pages_through_them(
    browser: webdriver.Chrome, tmp_path: Path
) -> None:
    location = str(tmp_path / "org.sqlite3")
    with open_store(location, model_id=NO_MODEL_ID, dim=NO_MODEL_DIM) as made:
        for team in range(60):
            text = f"# Team {team:02d}\n\nTeam {team:02d} owns its runbook.\n"
            row = ChunkRow("docs/team.md", 0, f"Team {team:02d}", text, 1, 3, f"h{team}", None)
            made.replace_doc_chunks(
                f"team{team:02d}",
                f"{team:040x}",
                [row],
                [FileRow("docs/team.md", text, f"t{team}", 3)],
            )
            made.set_current(f"team{team:02d}", f"{team:040x}")
    args = ["serve", "--store", location, "--embedder", "none"]
    with http_serve(args, tmp_path / "serve.log") as (url, _):
        base = url.removesuffix("/mcp")
        browser.get(f"{base}/?view=outline")
        wait(browser).until(lambda d: len(texts(d, "#outline-view .path")) == 50)
        assert texts(browser, "#outline-view .path")[0] == "team00"
        assert "60 workspaces, page 1 of 2" in shown(browser, "#workspace-pages").text
        browser.find_element(By.LINK_TEXT, "next").click()
        wait(browser).until(
            lambda d: texts(d, "#outline-view .path") == [f"team{t}" for t in range(50, 60)]
        )
        assert "page=2" in browser.current_url
        assert "page 2 of 2" in shown(browser, "#workspace-pages").text
        browser.find_element(By.LINK_TEXT, "previous").click()
        wait(browser).until(lambda d: texts(d, "#outline-view .path")[:1] == ["team00"])
