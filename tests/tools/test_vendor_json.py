"""tools/vendor_json.py: the program reads each vendored CRD from a JSON twin that says exactly what
the published YAML says, and the AWS API models from the part of botocore's data it uses, exactly as
the installed botocore has it."""

from __future__ import annotations

import gzip
import json
import shutil

import botocore
import pytest

from gpt_oss_infra.core.checks.aws_contract import load_mapping
from gpt_oss_infra.core.paths import CONFIG_DIR, VENDOR_DIR
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


# --- the part of botocore's data the program reads (vendor/botocore/aws-models.json.gz)


def vendored_text(vendor_dir=VENDOR_DIR) -> bytes:
    return gzip.decompress(vendor_json.aws_models_file(vendor_dir).read_bytes())


def vendored_models(vendor_dir=VENDOR_DIR) -> dict:
    return json.loads(vendored_text(vendor_dir))


def test_the_vendored_aws_models_are_the_installed_botocores():
    assert vendor_json.stale_aws_models() == []
    models = vendored_models()
    assert models["botocore"] == botocore.__version__
    session = vendor_json.botocore_own_session()
    loader = session.get_component("data_loader")
    for service, model in models["models"].items():
        whole = loader.load_service_model(service, "service-2")
        # each shape and operation as botocore has it, in its order: a refusal lists a structure's members so
        for name, shape in model["shapes"].items():
            assert json.dumps(shape) == json.dumps(whole["shapes"][name]), (service, name)
        for name, operation in model["operations"].items():
            assert json.dumps(operation) == json.dumps(whole["operations"][name]), (service, name)
    scaling = models["models"]["eks"]["shapes"]["NodegroupScalingConfig"]["members"]
    assert list(scaling) == ["minSize", "maxSize", "desiredSize"]
    # the enum the instance types are checked against, every value
    instance_types = models["models"]["ec2"]["shapes"]["InstanceType"]
    assert instance_types["enum"] == session.get_service_model("ec2").shape_for("InstanceType").enum
    assert len(instance_types["enum"]) > 900
    mapped = {operation.call for entry in load_mapping().resources.values() for operation in entry.operations}
    vendored = {f"{service}:{name}" for service, model in models["models"].items() for name in model["operations"]}
    assert vendored == mapped
    assert models["regions"]["eks"] == sorted(
        region
        for partition in session.get_available_partitions()
        for region in session.get_available_regions("eks", partition)
    )


def test_every_vendored_service_is_listed_in_the_contracts_sources():
    listed = (CONFIG_DIR / "aws-api" / "SOURCES.md").read_text()
    services = vendored_models()["models"]
    assert len(services) == 10
    for service, model in services.items():
        assert f"| `{service}`" in listed and model["metadata"]["apiVersion"] in listed, service


def test_stale_aws_models_are_named_and_written_again(tmp_path, capsys):
    target = vendor_json.aws_models_file(tmp_path)
    assert vendor_json.main(["--check", "--vendor-dir", str(tmp_path)]) == 1
    assert f"{target}: missing" in capsys.readouterr().err

    models = vendored_models()
    models["models"]["ec2"]["shapes"]["InstanceType"]["enum"].remove("p5.48xlarge")
    target.parent.mkdir()
    target.write_bytes(gzip.compress(json.dumps(models).encode()))
    assert vendor_json.main(["--check", "--vendor-dir", str(tmp_path)]) == 1
    said = capsys.readouterr().err
    assert (
        f"{target}: not what botocore {botocore.__version__} says (written from botocore {botocore.__version__})"
        in said
    )

    assert vendor_json.main(["--vendor-dir", str(tmp_path)]) == 0
    assert vendor_json.main(["--check", "--vendor-dir", str(tmp_path)]) == 0
    assert vendored_text(tmp_path) == vendored_text()  # the text: gzip's bytes depend on the zlib build
