"""Docs sites found from their generators' configs: the real trees of ../shared/data/sites read in
place (their README's "Docs root, and what is not current docs" table is the expectation), and
small synthetic trees for each generator, for configs that cannot be read, and for translations,
old versions and blogs."""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Mapping
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from docshelf.config import DOC_SUFFIXES
from docshelf.workspace.selection import Selection
from docshelf.workspace.sites import Discovery, Site, find_sites, yamlish
from tests.support.sites import EXPECTED_NOT_READ, EXPECTED_ROOTS, QUOTED_CONFIGS

# The configs the data leaves out (written in a programming language), as the README quotes
# them, with a little of the rest of a real config around the quoted keys.
DOCUSAURUS_JEST = """\
import path from 'path';

// docs: { path: 'commented-out' } must not count.
export default {
  title: 'Jest',
  presets: [
    [
      '@docusaurus/preset-classic',
      /** @type {import('@docusaurus/preset-classic').Options} */ ({
        docs: {
          path: '../docs',
          sidebarPath: path.resolve('./sidebars.json'),
          editUrl: ({docPath}) => `https://github.com/jestjs/jest/edit/main/docs/${docPath}`,
          versions: { current: { path: 'next' } },
        },
        blog: { showReadingTime: true },
      }),
    ],
  ],
  i18n: { defaultLocale: 'en', locales: ['en', 'ja', 'pt-BR', 'zh-Hans'] },
  themeConfig: { docs: { sidebar: { hideable: true } } },
};
"""
SPHINX_CELERY = """\
from sphinx_celery import conf

globals().update(conf.build_config(
    'celery', __file__,
    project='Celery',
    extra_extensions=['sphinx_click', 'celery.contrib.sphinx', 'celerydocs'],
))
"""
VITEPRESS_VITEST = """\
import { defineConfig } from 'vitepress'

export default ({ mode }: { mode: string }) => defineConfig({
  lang: 'en-US',
  title: 'Vitest',
  srcExclude: ['**/guide/examples/*', '**/guide/cli-generated.md', 'AGENTS.md'],
  themeConfig: { nav: [{ text: '简体中文', link: 'https://cn.vitest.dev' }] },
})
"""
VITEPRESS_I18N = """\
import { defineConfig } from 'vitepress'

export default defineConfig({
  rewrites: { 'en/:rest*': ':rest*' },
  locales: { root: { label: 'English', lang: 'en-US' }, zh: { lang: 'zh-Hans' },
    pt: { lang: 'pt-BR' }, ru: { lang: 'ru-RU' }, es: { lang: 'es' }, ko: { lang: 'ko-KR' },
    fa: { lang: 'fa-IR', dir: 'rtl' }, ja: { lang: 'ja' } },
})
"""
VITEPRESS_I18N_TRANSLATIONS = ("docs/es", "docs/fa", "docs/ja", "docs/ko", "docs/pt", "docs/ru")

Reader = Callable[[str], "str | None"]


def site_tree(
    top: Path, configs: Mapping[str, str | None] | None = None
) -> tuple[list[str], Reader, list[str]]:
    """A tree's paths (the data's, with `configs` added), a reader of its files in place, and
    the list of the paths that reader was asked for."""
    configs = dict(configs or {})
    paths = sorted(
        os.path.relpath(os.path.join(folder, name), top)
        for folder, _, names in os.walk(top)
        for name in names
    )
    paths += [p for p in configs if p not in paths]
    asked: list[str] = []

    def read(path: str) -> str | None:
        asked.append(path)
        if path in configs:
            return configs[path]
        try:
            return (top / path).read_text(encoding="utf-8")
        except OSError:
            return None

    return paths, read, asked


def read_docs(found: Discovery | Site, paths: list[str]) -> list[str]:
    """The documentation files a selection of the found roots and exclude globs keeps, matched by
    the same globs the workspace's selection uses, in path order."""
    selection = Selection(found.roots, (), found.exclude)
    return sorted(
        p
        for p in paths
        if p.lower().endswith(DOC_SUFFIXES)
        and any(r == "." or p.startswith(r + "/") for r in found.roots)
        and selection.keeps(p)
    )


def only(found: Discovery) -> Site:
    assert len(found.sites) == 1, found.sites
    return found.sites[0]


def synthetic(files: Mapping[str, str | None]) -> Discovery:
    """The sites of a tree given as {path: text} (None: a file that cannot be read)."""
    return find_sites(list(files), files.get)


# The real trees.


def test_mkdocs_site_nested_in_assets_reads_its_docs_dir_and_not_its_snippets(
    shared_data: Path,
) -> None:
    paths, read, asked = site_tree(shared_data / "sites" / "mkdocs-chezmoi")
    site = only(find_sites(paths, read))
    assert (site.generator, site.config) == ("MkDocs", "assets/chezmoi.io/mkdocs.yml")
    assert site.roots == ("assets/chezmoi.io/docs",)
    assert site.not_read == ("assets/chezmoi.io/snippets",)
    assert site.include_bases == ("assets/chezmoi.io/snippets",)
    assert site.note == ""
    kept = read_docs(site, paths)
    assert len(kept) == 285  # the .md pages; the 7 .md.tmpl are templates
    assert asked == ["assets/chezmoi.io/mkdocs.yml"]


def test_docusaurus_site_reads_the_docs_its_preset_names_and_not_old_versions_or_the_blog(
    shared_data: Path,
) -> None:
    config = {"website/docusaurus.config.mjs": DOCUSAURUS_JEST}
    paths, read, _ = site_tree(shared_data / "sites" / "docusaurus-jest", config)
    site = only(find_sites(paths, read))
    assert (site.generator, site.config) == ("Docusaurus", "website/docusaurus.config.mjs")
    assert site.roots == ("docs",)
    assert {"website/versioned_docs", "website/blog"} <= set(site.not_read)
    kept = read_docs(site, paths)
    assert len(kept) == 37
    assert "docs/_TypeScriptExamplesNote.md" not in kept  # a partial, not a page
    assert not any("versioned_docs" in p or "/blog/" in p for p in kept)


def test_docusaurus_config_that_cannot_be_read_falls_back_to_its_default_layout_with_a_note(
    shared_data: Path,
) -> None:
    config: dict[str, str | None] = {"website/docusaurus.config.mjs": None}
    paths, read, _ = site_tree(shared_data / "sites" / "docusaurus-jest", config)
    found = find_sites(paths, read)
    # Docusaurus's default is website/docs, which this tree does not hold: no site, and a note.
    assert found.sites == ()
    assert found.notes == (
        "website/docusaurus.config.mjs could not be read; no Docusaurus site found",
    )


def test_hugo_site_reads_its_mounted_content_and_not_its_headless_shared_bundle(
    shared_data: Path,
) -> None:
    paths, read, asked = site_tree(shared_data / "sites" / "hugo-hugoDocs")
    site = only(find_sites(paths, read))
    assert (site.generator, site.config, site.language) == ("Hugo", "hugo.toml", "en")
    assert site.roots == ("content/en",)
    assert site.not_read == ("archetypes", "content/en/_common")
    assert site.include_bases == ("content/en",)
    kept = read_docs(site, paths)
    assert len(kept) == 992 - 47
    assert not any(p.startswith("content/en/_common/") for p in kept)
    # The config, and the index file of the one section that may be headless.
    assert asked == ["hugo.toml", "content/en/_common/_index.md"]


def test_sphinx_site_reads_its_source_and_not_release_history_or_included_text(
    shared_data: Path,
) -> None:
    config = {"docs/conf.py": SPHINX_CELERY}
    paths, read, _ = site_tree(shared_data / "sites" / "sphinx-celery", config)
    site = only(find_sites(paths, read))
    assert (site.generator, site.config) == ("Sphinx", "docs/conf.py")
    assert site.roots == ("docs",)
    assert {"docs/history", "docs/includes"} <= set(site.not_read)
    kept = read_docs(site, paths)
    assert not any(p.startswith(("docs/history/", "docs/includes/")) for p in kept)
    # Sphinx renders .rst; the .txt files beside the pages are included text and word lists.
    assert not any(p.endswith(".txt") for p in kept)
    assert "docs/userguide/configuration.rst" in kept


def test_sphinx_conf_named_by_read_the_docs_is_taken_even_when_it_cannot_be_read(
    shared_data: Path,
) -> None:
    config: dict[str, str | None] = {"docs/conf.py": None}
    paths, read, _ = site_tree(shared_data / "sites" / "sphinx-celery", config)
    site = only(find_sites(paths, read))
    assert site.roots == ("docs",)
    assert site.note.startswith("docs/conf.py could not be read; read as Sphinx's default layout")


def test_antora_component_reads_module_pages_with_partials_and_nav_apart(
    shared_data: Path,
) -> None:
    paths, read, _ = site_tree(shared_data / "sites" / "antora-spring-security")
    site = only(find_sites(paths, read))  # the buildSrc test fixture makes no site
    assert (site.generator, site.config) == ("Antora", "docs/antora.yml")
    assert site.roots == ("docs/modules/ROOT/pages",)
    assert site.not_read == ("docs/modules/ROOT/partials",)
    assert site.nav == ("docs/modules/ROOT/nav.adoc",)
    assert site.include_bases == ("docs/modules/ROOT",)
    assert len(read_docs(site, paths)) == 191


def test_mdbook_reads_its_src_and_takes_summary_as_navigation(shared_data: Path) -> None:
    paths, read, _ = site_tree(shared_data / "sites" / "mdbook-rust-cookbook")
    site = only(find_sites(paths, read))  # crates/.../config.toml is no Hugo config
    assert (site.generator, site.config) == ("mdBook", "book.toml")
    assert site.roots == ("src",)
    assert site.nav == ("src/SUMMARY.md",)
    kept = read_docs(site, paths)
    assert len(kept) == 327 - 1
    assert "src/SUMMARY.md" not in kept


def test_vitepress_site_leaves_out_its_blog_and_what_src_exclude_names(
    shared_data: Path,
) -> None:
    config = {"docs/.vitepress/config.ts": VITEPRESS_VITEST}
    paths, read, _ = site_tree(shared_data / "sites" / "vitepress-vitest", config)
    site = only(find_sites(paths, read))
    assert (site.generator, site.config) == ("VitePress", "docs/.vitepress/config.ts")
    assert site.roots == ("docs",)
    assert site.language == "en-US"
    assert {
        "docs/blog",
        "docs/blog.md",
        "docs/**/guide/examples/*",
        "docs/**/guide/cli-generated.md",
        "docs/AGENTS.md",
    } <= set(site.not_read)
    kept = read_docs(site, paths)
    assert not any(p.startswith(("docs/blog", "docs/guide/examples/")) for p in kept)
    assert not {"docs/guide/cli-generated.md", "docs/AGENTS.md", "docs/public/robots.txt"} & set(
        kept
    )
    assert "docs/guide/index.md" in kept


@pytest.mark.parametrize(
    "config",
    [
        pytest.param(VITEPRESS_I18N, id="rewrite-and-locales"),
        pytest.param(None, id="unreadable"),
        pytest.param("export default defineConfig({ title: 'VitePress' })", id="no-locales"),
    ],
)
def test_vitepress_site_in_eight_languages_reads_english_only(
    shared_data: Path, config: str | None
) -> None:
    configs = {"docs/.vitepress/config.ts": config}
    paths, read, _ = site_tree(shared_data / "sites" / "vitepress-i18n", configs)
    site = only(find_sites(paths, read))  # __tests__/e2e and template/ are no site of its own
    assert site.roots == ("docs/en",)
    assert set(VITEPRESS_I18N_TRANSLATIONS) | {"docs/zh"} <= set(site.not_read)
    kept = read_docs(site, paths)
    assert len(kept) == 36
    assert all(p.startswith("docs/en/") for p in kept)
    assert (site.note != "") == (config is None)


@pytest.mark.parametrize("tree", sorted(EXPECTED_ROOTS))
def test_every_site_tree_has_the_roots_and_not_read_folders_its_readme_lists(
    shared_data: Path, tree: str
) -> None:
    paths, read, _ = site_tree(shared_data / "sites" / tree, QUOTED_CONFIGS.get(tree))
    found = find_sites(paths, read)
    assert found.roots == EXPECTED_ROOTS[tree]
    assert set(EXPECTED_NOT_READ[tree]) <= set(found.not_read)
    assert found.notes == ()


@pytest.mark.parametrize("tree", sorted(EXPECTED_ROOTS))
def test_only_configs_are_read_and_each_once(shared_data: Path, tree: str) -> None:
    configs = {
        "docusaurus-jest": {"website/docusaurus.config.mjs": DOCUSAURUS_JEST},
        "sphinx-celery": {"docs/conf.py": SPHINX_CELERY},
        "vitepress-vitest": {"docs/.vitepress/config.ts": VITEPRESS_VITEST},
        "vitepress-i18n": {"docs/.vitepress/config.ts": VITEPRESS_I18N},
    }.get(tree)
    paths, read, asked = site_tree(shared_data / "sites" / tree, configs)
    find_sites(paths, read)
    assert len(asked) == len(set(asked))
    hugo_index = {"content/en/_common/_index.md"}
    assert all(not p.lower().endswith(DOC_SUFFIXES) or p in hugo_index for p in asked), asked


def test_a_thousand_paths_are_looked_through_in_well_under_ten_milliseconds() -> None:
    paths = [f"docs/section{i // 20}/page{i}.md" for i in range(900)]
    paths += [f"src/pkg{i}/mod.py" for i in range(100)]
    paths += ["mkdocs.yml", "docs/v1.x/index.md", "docs/page.fr.md", "docs/page.md"]
    config = "site_name: x\ndocs_dir: docs\n"
    best = min(_timed(lambda: find_sites(paths, lambda _: config)) for _ in range(5))
    assert best < 0.010


def _timed(call: Callable[[], object]) -> float:
    start = time.perf_counter()
    call()
    return time.perf_counter() - start


# Configs that cannot be read, and configs that are never run.


@pytest.mark.parametrize(
    ("config", "text", "page"),
    [
        ("mkdocs.yml", "site_name: x\n\tdocs_dir: y\n", "docs/index.md"),
        ("mkdocs.yml", None, "docs/index.md"),
        ("book.toml", "[book\nsrc = 'x'\n", "src/intro.md"),
        ("hugo.toml", "contentDir = [", "content/_index.md"),
        ("antora.yml", "nav: [modules/ROOT/nav.adoc\n", "modules/ROOT/pages/index.adoc"),
        (
            "website/docusaurus.config.js",
            "export default { docs: { path: 'x' ]}",
            "website/docs/a.md",
        ),
        ("docs/.vitepress/config.mts", "defineConfig({ srcExclude: ['a' })", "docs/index.md"),
        ("_config.yml", "title: 'x\n", "index.md"),
        ("mint.json", "{ not json", "index.mdx"),
        ("docs/conf.py", "exclude_patterns = ['_build'", "docs/index.rst"),
    ],
)
def test_a_config_that_cannot_be_read_or_parsed_falls_back_to_the_default_layout_with_a_note(
    config: str, text: str | None, page: str
) -> None:
    found = synthetic({config: text, page: "# Page\n"})
    site = only(found)
    assert page.startswith(tuple(r + "/" for r in site.roots if r != ".")) or site.roots == (".",)
    assert site.note.startswith(f"{config} could not be ")
    assert "default layout instead" in site.note
    assert found.notes == (site.note,)


def test_a_config_whose_presence_says_too_little_makes_no_site_when_it_cannot_be_read() -> None:
    # Any Next.js app has a next.config, any tool may have a docs.json or an astro.config.
    files: dict[str, str | None] = {
        "next.config.mjs": None,
        "pages/index.mdx": "",
        "docs.json": None,
        "index.mdx": "",
        "astro.config.mjs": None,
    }
    assert synthetic(files).sites == ()


def test_a_python_config_is_read_as_text_and_never_run(tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    conf = (
        "import os\n"
        f"os.system('touch {marker}')\n"
        f"open('{marker}', 'w').write('ran')\n"
        "extensions = ['myst_parser']\n"
        "exclude_patterns = ['_build', 'drafts/**']\n"
        "language = 'fr'\n"
    )
    found = synthetic({"docs/conf.py": conf, "docs/index.rst": "", "docs/drafts/a.md": ""})
    site = only(found)
    assert not marker.exists()
    assert (site.roots, site.language) == (("docs",), "fr")
    assert "docs/drafts/**" in site.exclude


def test_a_javascript_config_is_read_by_pattern_and_its_comments_say_nothing() -> None:
    config = (
        "// docs: { path: 'old-docs' },\n"
        "/* presets: [['classic', { docs: { path: 'commented' } }]] */\n"
        "const fs = require('fs'); fs.rmSync('/', { recursive: true });\n"
        "module.exports = { plugins: [['@docusaurus/plugin-content-docs', "
        "{ id: 'community', path: 'community' }]], presets: [['classic', { docs: false }]] };\n"
    )
    files = {
        "docusaurus.config.js": config,
        "community/index.md": "",
        "old-docs/a.md": "",
        "docs/a.md": "",
    }
    assert only(synthetic(files)).roots == ("community",)


def test_configs_of_vendored_code_tests_and_templates_make_no_site() -> None:
    files = {
        "node_modules/pkg/mkdocs.yml": "site_name: x\n",
        "node_modules/pkg/docs/a.md": "",
        "__tests__/e2e/.vitepress/config.ts": "export default {}",
        "__tests__/e2e/index.md": "",
        "template/docusaurus.config.js": "export default {}",
        "template/docs/a.md": "",
        "buildSrc/src/test/resources/samples/antora.yml": "name: x\n",
        "buildSrc/src/test/resources/samples/modules/ROOT/pages/a.adoc": "",
        "examples/site/mkdocs.yml": "site_name: x\n",
        "examples/site/docs/a.md": "",
    }
    assert synthetic(files).sites == ()


def test_a_conf_py_or_config_toml_of_another_tool_is_no_site() -> None:
    files = {
        "conf.py": "bind = '0.0.0.0'\nworkers = 4\n",
        "index.md": "",
        "config.toml": "title = 'x'\n",
        "docs/a.md": "",
    }
    assert synthetic(files).sites == ()


# One synthetic site per generator.


def test_mkdocs_exclude_docs_lines_are_globs_under_docs_dir_and_its_language_is_read() -> None:
    config = (
        "site_name: x\n"
        "docs_dir: documentation\n"
        "exclude_docs: |\n"
        "  drafts/\n"
        "  /private.md\n"
        "plugins:\n"
        "  - i18n:\n"
        "      languages:\n"
        "        - locale: de\n"
        "          default: true\n"
        "        - locale: en\n"
    )
    files = {
        "mkdocs.yml": config,
        "documentation/index.md": "",
        "documentation/private.md": "",
        "documentation/guide/drafts/a.md": "",
        "documentation/index.en.md": "",
        "docs/other.md": "",
    }
    site = only(synthetic(files))
    assert (site.roots, site.language) == (("documentation",), "de")
    assert read_docs(site, list(files)) == ["documentation/index.md"]


def test_hugo_reads_the_default_languages_content_dir_and_finds_headless_bundles() -> None:
    config = (
        "baseURL: https://example.org/\n"
        "defaultContentLanguage: de\n"
        "languages:\n"
        "  de:\n"
        "    contentDir: content/de\n"
        "  en:\n"
        "    contentDir: content/en\n"
    )
    files: dict[str, str | None] = {
        "site/hugo.yaml": config,
        "site/content/de/_index.md": "",
        "site/content/de/docs/a.md": "",
        "site/content/de/_shared/_index.md": "+++\nheadless = true\n+++\n",
        "site/content/de/_shared/note.md": "",
        "site/content/de/_archive/index.md": "---\ntitle: Not headless\n---\n",
        "site/content/de/_archive/b.md": "",
        "site/content/en/_index.md": "",
        "site/archetypes/default.md": "",
    }
    site = only(synthetic(files))
    assert (site.roots, site.language) == (("site/content/de",), "de")
    assert set(site.not_read) == {
        "site/content/en",
        "site/content/de/_shared",
        "site/archetypes",
    }
    assert site.include_bases == ("site/content/de",)


def test_a_config_toml_beside_hugo_folders_is_hugos() -> None:
    files = {"config.toml": "title = 'x'\n", "content/posts/a.md": "", "layouts/index.html": ""}
    site = only(synthetic(files))
    assert (site.generator, site.roots) == ("Hugo", ("content",))


def test_starlight_reads_content_docs_and_leaves_out_locale_folders() -> None:
    config = (
        "import starlight from '@astrojs/starlight';\n"
        "export default defineConfig({ integrations: [starlight({ title: 'Docs',\n"
        "  locales: { root: { label: 'English', lang: 'en' }, fr: { label: 'Français' },\n"
        "    'zh-cn': { label: '简体中文', lang: 'zh-CN' } } })] });\n"
    )
    files = {
        "astro.config.mjs": config,
        "src/content/docs/index.mdx": "",
        "src/content/docs/guides/a.md": "",
        "src/content/docs/fr/index.mdx": "",
        "src/content/docs/zh-cn/index.mdx": "",
        "src/pages/index.astro": "",
    }
    site = only(synthetic(files))
    assert (site.generator, site.roots) == ("Starlight", ("src/content/docs",))
    assert site.not_read == ("src/content/docs/fr", "src/content/docs/zh-cn")
    assert read_docs(site, list(files)) == [
        "src/content/docs/guides/a.md",
        "src/content/docs/index.mdx",
    ]


def test_starlight_with_a_default_locale_folder_reads_that_folder() -> None:
    config = (
        "export default { integrations: [starlight({ defaultLocale: 'en',\n"
        "  locales: { en: { label: 'English' }, de: { label: 'Deutsch', lang: 'de' } } })] }\n"
    )
    files = {
        "docs/astro.config.ts": config,
        "docs/src/content/docs/en/index.md": "",
        "docs/src/content/docs/de/index.md": "",
    }
    site = only(synthetic(files))
    assert site.roots == ("docs/src/content/docs/en",)
    assert site.not_read == ("docs/src/content/docs/de",)


def test_an_astro_site_without_starlight_is_no_docs_site() -> None:
    files = {"astro.config.mjs": "export default defineConfig({})", "src/content/docs/a.md": ""}
    assert synthetic(files).sites == ()


def test_jekyll_reads_its_site_with_collections_and_not_posts_drafts_or_includes() -> None:
    config = "title: x\nlang: de\ncollections:\n  recipes:\n    output: true\nexclude: [notes/]\n"
    files = {
        "docs/_config.yml": config,
        "docs/index.md": "",
        "docs/_recipes/soup.md": "",
        "docs/_posts/2020-01-01-hello.md": "",
        "docs/_drafts/next.md": "",
        "docs/_includes/footer.md": "",
        "docs/notes/todo.md": "",
        "README.md": "",
    }
    site = only(synthetic(files))
    assert (site.generator, site.roots, site.language) == ("Jekyll", ("docs",), "de")
    assert {"docs/_posts", "docs/_drafts", "docs/_includes", "docs/notes"} <= set(site.not_read)
    assert site.include_bases == ("docs/_includes",)
    assert read_docs(site, list(files)) == ["docs/_recipes/soup.md", "docs/index.md"]


def test_mintlify_reads_its_folder_with_snippets_and_other_languages_apart() -> None:
    config = (
        '{"$schema": "https://mintlify.com/docs.json", "name": "x", "navigation": '
        '{"languages": [{"language": "es", "groups": []}, '
        '{"language": "en", "default": true, "groups": []}]}}'
    )
    files = {
        "docs/docs.json": config,
        "docs/index.mdx": "",
        "docs/quickstart.mdx": "",
        "docs/es/index.mdx": "",
        "docs/snippets/note.mdx": "",
    }
    site = only(synthetic(files))
    assert (site.generator, site.roots, site.language) == ("Mintlify", ("docs",), "en")
    assert set(site.not_read) == {"docs/es", "docs/snippets"}
    assert read_docs(site, list(files)) == ["docs/index.mdx", "docs/quickstart.mdx"]


def test_a_docs_json_without_navigation_is_not_mintlify() -> None:
    assert synthetic({"docs.json": '{"version": 2}', "index.md": ""}).sites == ()


def test_nextra_reads_pages_and_leaves_out_translated_pages_beside_their_originals() -> None:
    config = (
        "import nextra from 'nextra'\n"
        "const withNextra = nextra({ theme: 'nextra-theme-docs' })\n"
        "export default withNextra({\n"
        "  i18n: { locales: ['en', 'fr', 'ja'], defaultLocale: 'en' },\n"
        "})\n"
    )
    files = {
        "next.config.mjs": config,
        "pages/index.en.mdx": "",
        "pages/index.fr.mdx": "",
        "pages/index.ja.mdx": "",
        "pages/guide/setup.en.mdx": "",
        "pages/guide/setup.ja.mdx": "",
        "pages/only-french.fr.mdx": "",
        "pages/_app.mdx": "",
    }
    site = only(synthetic(files))
    assert (site.generator, site.roots, site.language) == ("Nextra", ("pages",), "en")
    assert read_docs(site, list(files)) == [
        "pages/guide/setup.en.mdx",
        "pages/index.en.mdx",
        "pages/only-french.fr.mdx",
    ]


# Translations, old versions and blogs, whatever the generator.


def test_a_translation_by_suffix_is_left_out_only_beside_its_original() -> None:
    files = {
        "mkdocs.yml": "site_name: x\n",
        "docs/index.md": "",
        "docs/index.fr.md": "",
        "docs/setup.md": "",
        "docs/setup.fr.md": "",
        "docs/notes.de.md": "",
        "docs/setup.it.md": "",
    }
    site = only(synthetic(files))
    assert "docs/**/*.fr.*" in site.exclude  # every French page has its English one
    assert read_docs(site, list(files)) == ["docs/index.md", "docs/notes.de.md", "docs/setup.md"]


def test_locale_folders_without_a_config_keep_the_default_language() -> None:
    files = {"mkdocs.yml": "site_name: x\ntheme:\n  language: ja\n"}
    for lang in ("en", "ja", "pt-BR"):
        files |= {f"docs/{lang}/index.md": "", f"docs/{lang}/guide/a.md": ""}
    site = only(synthetic(files))
    assert site.roots == ("docs/ja",)
    assert set(site.not_read) == {"docs/en", "docs/pt-BR"}


def test_a_folder_named_like_a_language_with_pages_of_its_own_is_content() -> None:
    files = {
        "mkdocs.yml": "site_name: x\n",
        "docs/index.md": "",
        "docs/ml/training.md": "",
        "docs/ml/serving.md": "",
        "docs/it/inventory.md": "",
    }
    site = only(synthetic(files))
    assert site.not_read == ()
    assert len(read_docs(site, list(files))) == 4


def test_old_version_folders_beside_current_docs_and_blogs_are_not_read() -> None:
    files = {
        "mkdocs.yml": "site_name: x\n",
        "docs/index.md": "",
        "docs/guide/a.md": "",
        "docs/v1.x/index.md": "",
        "docs/2.0/index.md": "",
        "docs/blog/2024-01-01-release.md": "",
        "docs/blog.md": "",
        "docs/history/changelog-1.0.md": "",
        "docs/history/changelog-2.0.md": "",
    }
    site = only(synthetic(files))
    assert set(site.not_read) == {
        "docs/v1.x",
        "docs/2.0",
        "docs/blog",
        "docs/blog.md",
        "docs/history",
    }
    assert read_docs(site, list(files)) == ["docs/guide/a.md", "docs/index.md"]


def test_of_version_folders_alone_the_newest_is_current() -> None:
    files = {"book.toml": "[book]\nsrc = 'book'\n"}
    files |= {f"book/{v}/index.md": "" for v in ("v1", "v2", "v10")}
    site = only(synthetic(files))
    assert set(site.not_read) == {"book/v1", "book/v2"}
    assert read_docs(site, list(files)) == ["book/v10/index.md"]


def test_discovery_unites_its_sites_roots_and_leaves_out_nested_ones() -> None:
    files = {
        "_config.yml": "title: x\n",
        "index.md": "",
        "_posts/2020-01-01-a.md": "",
        "docs/mkdocs.yml": "site_name: y\n",
        "docs/docs/a.md": "",
    }
    found = synthetic(files)
    assert [s.generator for s in found.sites] == ["MkDocs", "Jekyll"]
    assert found.roots == (".",)
    assert "_posts" in found.not_read
    assert "/_posts" in found.exclude


# Config texts of any shape: pieces of the syntax the readers look for, in any order.
CONFIG_NAMES = (
    "mkdocs.yml",
    "website/docusaurus.config.js",
    "docs/conf.py",
    ".readthedocs.yaml",
    "hugo.toml",
    "hugo.yaml",
    "hugo.json",
    "docs/antora.yml",
    "book.toml",
    "docs/.vitepress/config.ts",
    "astro.config.mjs",
    "_config.yml",
    "docs.json",
    "next.config.mjs",
)
CONFIG_PIECES = st.sampled_from(
    [
        *"ab:- \n\t[]{}'\"#|>!&*,.?%`/\\()=+;$_019",
        *("docs", "path", "locales", "srcDir", "starlight(", "nextra", "i18n", "---", "    "),
        *("  - ", "key: ", "docs: {", "path: '", "'en/:rest*': ':rest*'", "[[module.mounts]]"),
    ]
)


@given(st.sampled_from(CONFIG_NAMES), st.lists(CONFIG_PIECES, max_size=60).map("".join))
def test_any_config_text_makes_a_site_a_note_or_nothing_never_an_error(
    config: str, text: str
) -> None:
    files = {
        config: text,
        "docs/index.md": "",
        "docs/index.rst": "",
        "website/docs/a.md": "",
        "content/a.md": "",
        "docs/modules/ROOT/pages/a.adoc": "",
        "src/a.md": "",
        "pages/a.mdx": "",
    }
    found = synthetic(files)
    for site in found.sites:
        assert site.roots
        assert all(not r.startswith(("/", "..")) for r in site.roots)


# The YAML reader.


def test_the_yaml_reader_reads_the_block_and_flow_forms_configs_use() -> None:
    text = (
        "# a comment\n"
        "site_name: 'It''s' # trailing comment\n"
        "nav:\n"
        "- Home: index.md\n"
        "- Guide:\n"
        "  - guide/a.md\n"
        "markdown_extensions:\n"
        "  - pymdownx.snippets:\n"
        "      base_path: [snippets, 'docs/x']\n"
        "  - pymdownx.superfences:\n"
        "      format: !!python/name:pymdownx.superfences.fence_code_format\n"
        "exclude_docs: |\n"
        "  drafts/\n"
        "  *.tmp\n"
        "url: https://example.org/#top\n"
        "---\n"
        "second: document\n"
    )
    assert yamlish.parse(text) == {
        "site_name": "It's",
        "nav": [{"Home": "index.md"}, {"Guide": ["guide/a.md"]}],
        "markdown_extensions": [
            {"pymdownx.snippets": {"base_path": ["snippets", "docs/x"]}},
            {"pymdownx.superfences": {"format": None}},
        ],
        "exclude_docs": "drafts/\n*.tmp\n",
        "url": "https://example.org/#top",
    }


@pytest.mark.parametrize(
    "text",
    ["a: 1\n\tb: 2\n", "a:\n  b: 1\n c: 2\n", "a: [1, 2\n", "a: 'open\n", "? complex\n: key\n"],
)
def test_the_yaml_reader_refuses_what_it_cannot_read(text: str) -> None:
    with pytest.raises(ValueError):
        yamlish.parse(text)
