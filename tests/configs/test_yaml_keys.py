"""Every YAML file of configs/ names each key once. The catalog reads them with LibYAML's fast loader,
which keeps the last of two equal keys without a word (a copy-paste slip once turned the mocker's
`decode_speedup_ratio` into a second `speedup_ratio` that way); the strict loader stack files get
refuses them."""

from __future__ import annotations

import pytest
import yaml

from gpt_oss_infra.core.inputs.catalog import CONFIG_DIR
from gpt_oss_infra.core.yaml_files import load_strict_yaml

OWN_SIZE_LIMIT = 200_000  # bytes: vendored CRD bundles and chart values are larger (and upstream's)


def own_yaml_files() -> list:
    return sorted(p for p in CONFIG_DIR.rglob("*.yaml") if p.stat().st_size < OWN_SIZE_LIMIT)


@pytest.mark.parametrize("path", own_yaml_files(), ids=lambda p: str(p.relative_to(CONFIG_DIR)))
def test_no_key_is_given_twice(path):
    for document in path.read_text().split("\n---\n"):
        try:
            load_strict_yaml(document)
        except yaml.MarkedYAMLError as error:
            pytest.fail(f"{path}:{error.problem_mark.line + 1}: {error.problem}")


def test_a_repeated_key_is_caught():
    with pytest.raises(yaml.MarkedYAMLError, match="duplicate key 'speedup_ratio'"):
        load_strict_yaml("speedup_ratio: 1\nspeedup_ratio: 2\n")
