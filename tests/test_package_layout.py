"""A clone imports exactly what the wheel installs: gpt_oss_infra/ reaches core/, components/ and tools/
through symlinks, with no run-time __path__ edits, so editors and type checkers follow every import."""

from __future__ import annotations

import importlib.util
import os
import tomllib
from pathlib import Path

import gpt_oss_infra

ROOT = Path(__file__).resolve().parent.parent


def wheel_modules() -> set[str]:
    """Every Python file pyproject.toml's packages, package-dir and package-data put into the wheel, by
    the module name it has there."""
    setuptools = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    mapped = setuptools["package-dir"]

    def folder_of(package: str) -> Path:
        root = max((name for name in mapped if package == name or package.startswith(f"{name}.")), key=len)
        return ROOT / mapped[root] / package.removeprefix(root).lstrip(".").replace(".", "/")

    def module(package: str, folder: Path, source: Path) -> str:
        parts = source.relative_to(folder).with_suffix("").parts
        return ".".join((package, *(parts[:-1] if parts[-1] == "__init__" else parts)))

    modules = set()
    for package in setuptools["packages"]:
        modules |= {module(package, folder_of(package), source) for source in folder_of(package).glob("*.py")}
    for package, patterns in setuptools["package-data"].items():
        for pattern in patterns:
            found = folder_of(package).glob(pattern)
            modules |= {module(package, folder_of(package), source) for source in found if source.suffix == ".py"}
    return modules


def clone_modules() -> set[str]:
    """Every Python module under gpt_oss_infra/ in this clone, through its symlinks."""
    package = ROOT / "gpt_oss_infra"
    modules = set()
    sources = [Path(folder, name) for folder, _, names in os.walk(package, followlinks=True) for name in names]
    for source in (source for source in sources if source.suffix == ".py"):
        parts = source.relative_to(package).with_suffix("").parts
        parts = parts[:-1] if parts[-1] == "__init__" else parts
        modules.add(".".join(("gpt_oss_infra", *parts)))
    return modules


def test_a_clone_imports_exactly_the_modules_the_wheel_installs():
    assert gpt_oss_infra.__path__ == [str(ROOT / "gpt_oss_infra")]
    wheel = wheel_modules()
    assert {
        "gpt_oss_infra.core.stack",
        "gpt_oss_infra.components.gpt_oss_deployment",
        "gpt_oss_infra.tools.plan",
    } <= wheel
    assert clone_modules() == wheel


def test_the_repository_root_is_not_part_of_the_package():
    """Before 0.4.0 the root was appended to __path__: gpt_oss_infra.tests and gpt_oss_infra.gpt_oss_infra imported."""
    for stray in ("gpt_oss_infra.tests", "gpt_oss_infra.gpt_oss_infra", "gpt_oss_infra.policy"):
        assert importlib.util.find_spec(stray) is None, stray


def test_the_symlinks_point_at_the_top_level_folders():
    for folder in ("core", "components", "tools", "jobs"):
        link = ROOT / "gpt_oss_infra" / folder
        assert link.is_symlink() and link.resolve() == ROOT / folder
