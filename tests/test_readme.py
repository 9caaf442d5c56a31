"""README's claims that tests can check: every version that could not be verified is listed."""

from __future__ import annotations

from gpt_oss_infra.tools.plan import ROOT


def test_readme_lists_every_version_that_could_not_be_verified(catalog):
    readme = (ROOT / "README.md").read_text()
    section = readme[readme.index("### Versions that could not be verified") :]
    section = section[: section.index("\n## ", 1)] if "\n## " in section[1:] else section
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


def test_readmes_modelled_tables_are_the_stored_estimates(catalog):
    """make estimate writes them; a hand edit, or estimates changed without them, fails here."""
    from gpt_oss_infra.tools import estimate

    readme = (ROOT / "README.md").read_text()
    block = readme[readme.index(estimate.README_BEGIN) + len(estimate.README_BEGIN) : readme.index(estimate.README_END)]
    assert block.strip() == estimate.readme_tables(catalog)
