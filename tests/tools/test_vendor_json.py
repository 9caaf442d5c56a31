"""tools/vendor_json.py: the program reads each vendored CRD from a JSON twin that says exactly what
the published YAML says."""

from __future__ import annotations

import gzip
import json
import shutil

import pytest

from gpt_oss_infra.core.paths import VENDOR_DIR
from gpt_oss_infra.core.yaml_files import json_twin, read_vendored_documents
from gpt_oss_infra.tools import vendor_json


@pytest.mark.end_to_end  # parses every vendored CRD's YAML (megabytes): the slower tier
def test_every_vendored_crd_has_a_twin_with_its_documents():
    assert vendor_json.stale_twins() == []
    assert len(vendor_json.vendored_crd_files()) >= 20  # Dynamo's three sets and the other projects'


def test_a_missing_or_changed_twin_is_named_and_written_again(tmp_path, capsys):
    shutil.copytree(VENDOR_DIR / "crds" / "prometheus-operator", tmp_path / "crds" / "prometheus-operator")
    folder = tmp_path / "crds" / "prometheus-operator" / "v0.93.1"
    json_twin(folder / "crd-podmonitors.yaml.gz").unlink()
    changed = json_twin(folder / "crd-servicemonitors.yaml.gz")
    (crd,) = read_vendored_documents(folder / "crd-servicemonitors.yaml.gz")
    crd["spec"]["names"]["kind"] = "NotServiceMonitor"
    changed.write_bytes(gzip.compress(json.dumps([crd]).encode()))

    assert vendor_json.main(["--check", "--vendor-dir", str(tmp_path)]) == 1
    said = capsys.readouterr().err
    assert f"{json_twin(folder / 'crd-podmonitors.yaml.gz')}: missing" in said
    assert f"{changed}: not the documents of crd-servicemonitors.yaml.gz" in said
    assert "crd-prometheusrules" not in said

    assert vendor_json.main(["--vendor-dir", str(tmp_path)]) == 0
    assert vendor_json.main(["--check", "--vendor-dir", str(tmp_path)]) == 0
    (crd,) = read_vendored_documents(folder / "crd-servicemonitors.yaml.gz")
    assert crd["spec"]["names"]["kind"] == "ServiceMonitor"
