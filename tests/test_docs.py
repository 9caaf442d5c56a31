"""The manual (docs/, built with MkDocs) and README: what tests can check of what they claim, and that
the site builds with --strict (a broken link, a missing page or anchor fails)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys

import pytest

from gpt_oss_infra.tools import config_reference
from gpt_oss_infra.tools.plan import ROOT

DOCS = ROOT / "docs"
README_MAX_LINES = 200


def manual() -> str:
    """Every page of the manual, README (its home page) first."""
    return "\n".join(path.read_text() for path in [ROOT / "README.md", *sorted(DOCS.glob("*.md"))])


def test_every_version_that_could_not_be_verified_is_listed(catalog):
    page = (DOCS / "versions.md").read_text()
    section = page[page.index("## Versions that could not be verified") :]
    unverified = [
        f"{addon} {pin.version or '(EKS default)'} on {kubernetes}"
        for kubernetes, pins in catalog.addon_versions.items()
        for addon, pin in pins.items()
        if pin.evidence != "strong" or pin.version is None
    ]
    assert unverified
    for entry in unverified:
        assert entry in section, entry
    for version, dynamo in catalog.dynamo_versions.items():
        start = section.index(f"- dynamo-platform {version}:")
        end = section.find("\n  - ", start)
        bullet = section[start : end if end != -1 else None]
        for fact in dynamo.spec.unverified:  # each fact taken from another source than the release's own
            assert f"`{fact}`" in bullet, (version, fact)


def test_the_recipes_pages_modelled_tables_are_the_stored_estimates(catalog):
    """make estimate writes them; a hand edit, or estimates changed without them, fails here."""
    from gpt_oss_infra.tools import estimate

    page = estimate.RECIPES_PAGE.read_text()
    block = page[page.index(estimate.PAGE_BEGIN) + len(estimate.PAGE_BEGIN) : page.index(estimate.PAGE_END)]
    assert block.strip() == estimate.page_tables(catalog)


def test_the_config_reference_is_the_config_models():
    """make docs writes it from core/inputs/config.py; a hand edit or a model changed without it fails here."""
    page = config_reference.PAGE.read_text()
    assert config_reference.page_text(page) == page


@pytest.mark.parametrize(
    ("key", "type_text", "default"),
    [
        # Keys the README-era reference missed or got wrong, now read from the models.
        ("cluster.loadBalancerController", "bool", "`false`"),
        ("deployments.<name>.endpoint.allowedCidrs", "list of CIDR (at least 1)", "unset"),
        ("deployments.<name>.endpoint.clientRateLimits", "map of `<client>` to object (at most 15)", "`{}`"),
        ("cluster.kubernetesVersion", 'minor version ("1.36")', "`1.36`"),
        ("nodePools.<pool>.nodes", "int ≥ 0", "unset"),
        ("nodePools.<pool>.scaling.maxNodes", "int > 0", "required"),
        ("deployments.<name>.endpoint.clientRateLimits.<client>.unit", "`Second` \\| `Minute` \\| `Hour`", "`Minute`"),
    ],
)
def test_the_config_reference_has_every_key_with_its_type_and_default(key, type_text, default):
    rows = {row[0]: row for row in config_reference.rows()}
    assert rows[key][1:3] == (type_text, default)


def test_the_config_reference_catches_a_key_the_page_lacks():
    """The equality check above is not vacuous: a page missing one row is rewritten."""
    page = config_reference.PAGE.read_text()
    broken = "\n".join(line for line in page.splitlines() if "`cluster.loadBalancerController`" not in line) + "\n"
    assert broken != page
    assert config_reference.page_text(broken) == page


def test_the_config_reference_says_which_cluster_kind_a_key_belongs_to():
    rows = {row[0]: row for row in config_reference.rows()}
    assert rows["cluster.adopt"][3].startswith("*existing only*: ")
    assert rows["cluster.network.vpcCidr"][3].startswith("*eks only*: ")
    assert not rows["cluster.name"][3].startswith("*")


def test_every_published_phase_figure_is_quoted_in_the_manual():
    from gpt_oss_infra.tools.critical_path import load_phases

    text = manual()
    checked = [phase for phase in load_phases() if phase.minutes is not None]
    assert checked
    for phase in checked:
        assert phase.source and phase.published in text, phase.phase


def test_readme_is_short():
    assert len((ROOT / "README.md").read_text().splitlines()) <= README_MAX_LINES


def test_every_page_is_in_the_navigation():
    """mkdocs --strict warns only of links; a page left out of mkdocs.yml's nav would still be built, unseen."""
    import yaml

    def pages(nav):
        for entry in nav:
            for value in entry.values():
                yield from pages(value) if isinstance(value, list) else [value]

    nav = set(pages(yaml.safe_load((ROOT / "mkdocs.yml").read_text())["nav"]))
    assert nav - {"index.md"} == {path.name for path in DOCS.glob("*.md")}


def test_the_home_page_is_readme_with_its_links_made_relative_to_the_site():
    from gpt_oss_infra.tools.docs_home import home_page

    assert home_page("see [Checks](docs/checks.md#make-bench) and [x](https://x/docs/y)") == (
        "see [Checks](checks.md#make-bench) and [x](https://x/docs/y)"
    )


def _build(tmp_path, docs_dir=DOCS):
    """mkdocs build --strict of mkdocs.yml, from `docs_dir` (a copy, to break one), into tmp_path/site."""
    config = (ROOT / "mkdocs.yml").read_text()
    for relative, absolute in (
        ("docs_dir: docs", f"docs_dir: {docs_dir}"),
        ("- tools/docs_home.py", f"- {ROOT / 'tools' / 'docs_home.py'}"),
        ("paths: [.]", f"paths: [{ROOT}]"),
    ):
        assert relative in config, relative
        config = config.replace(relative, absolute)
    (tmp_path / "mkdocs.yml").write_text(config)
    args = [sys.executable, "-m", "mkdocs", "build", "--strict", "-d", str(tmp_path / "site")]
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    return subprocess.run(args, cwd=tmp_path, capture_output=True, text=True, timeout=120, env=env, check=False)


@pytest.mark.end_to_end
def test_the_site_builds_strictly(tmp_path):
    built = _build(tmp_path)
    assert built.returncode == 0, built.stderr
    api = (tmp_path / "site" / "api.html").read_text()
    # The API page is the blocks' own docstrings: one argument's, word for word.
    assert "The managed node group" in api and "node_role_arn" in api
    home = (tmp_path / "site" / "index.html").read_text()
    assert "The two commands" in home


@pytest.mark.end_to_end
def test_a_broken_link_fails_the_build(tmp_path):
    """--strict is what makes a broken link fail: a page linking to an anchor that does not exist."""
    broken = tmp_path / "docs"
    shutil.copytree(DOCS, broken)
    (broken / "checks.md").write_text((DOCS / "checks.md").read_text() + "\n[gone](versions.md#no-such-heading)\n")
    built = _build(tmp_path, broken)
    assert built.returncode != 0
    assert "no-such-heading" in built.stderr


def table_rows(page: str, header: str) -> list[list[str]]:
    """The cells of each row of the Markdown table under `header` (its first line) in docs/<page>."""
    lines = (DOCS / page).read_text().splitlines()
    start = lines.index(header) + 2  # past the header and its |---| line
    rows = []
    for line in lines[start:]:
        if not line.startswith("|"):
            break
        rows.append([cell.strip() for cell in line.strip("|").split("|")])
    return rows


def test_the_recipe_table_lists_every_recipe_with_its_hardware_and_sources(catalog):
    """docs/recipes.md's table is written by hand (its workers column is prose): each recipe of configs/recipes/
    once, its hardware, and only sources the recipe cites."""
    rows = table_rows("recipes.md", "| recipe | hardware | workers | source |")
    listed = {row[0].strip("`"): row for row in rows}
    assert len(listed) == len(rows) and sorted(listed) == sorted(catalog.recipes)
    for name, (_, hardware, _, source) in listed.items():
        recipe = catalog.recipes[name]
        assert hardware == recipe.hardware, name
        cited = re.findall(r"`([a-z0-9-]+)`", source)
        assert cited and all(any(f"[{id_}]" in text for text in recipe.sources) for id_ in cited), name


def test_the_support_table_is_the_price_lists_dates(catalog):
    """docs/versions.md's end-of-standard-support table, against configs/prices.yaml's eksStandardSupportEnds."""
    rows = table_rows("versions.md", "| version | standard support ends |")
    listed = {version: ends.split(" ")[0] for version, ends in rows}
    assert listed == {version: str(day) for version, day in catalog.prices.eks_standard_support_ends.items()}
