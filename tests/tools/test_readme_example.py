"""README's Python API example, copied into a user's own project as a reader would, with what it says is
the reader's own (an auto-named EKS cluster, its private subnets, an EFS file system and the cluster's
Kubernetes provider), planned offline with `python -m gpt_oss_infra plan`: it plans; and what AWS would
refuse of a program's own resource is said as the program's, not blamed on its stack file. The page's Pulumi
YAML program cannot run here: the config it gives GptOssStack is checked as the component checks it."""

from __future__ import annotations

import re

import pytest
import yaml

from gpt_oss_infra.core.stack import build_stack
from gpt_oss_infra.tools import plan
from gpt_oss_infra.tools.plan import ROOT

YOURS = """import pulumi
import pulumi_aws as aws
import pulumi_kubernetes as k8s

cluster = aws.eks.Cluster(  # auto-named, as most are
    "cluster", role_arn="arn:aws:iam::111122223333:role/eks", vpc_config={"subnet_ids": ["subnet-a", "subnet-b"]}
)
private_subnet_ids = ["subnet-a", "subnet-b"]
file_system = aws.efs.FileSystem("file-system")
kubernetes = k8s.Provider("kubernetes", kubeconfig=cluster.name.apply(lambda _: "{}"))
cluster_software = [aws.eks.Addon("efs-csi-driver", cluster_name=cluster.name, addon_name="aws-efs-csi-driver")]
"""
STACK_FILE = """config:
  aws:region: us-east-2
  my-inference:teamAKey:
    secure: AAABAOuZ1n2ciphertext
"""


def readme_example() -> str:
    page = (ROOT / "docs" / "components.md").read_text()
    section = page[page.index("## The Python API") :]
    return re.search(r"```python\n(.*?)```", section, flags=re.S).group(1)


@pytest.fixture
def project(tmp_path, monkeypatch):
    (tmp_path / "Pulumi.yaml").write_text("name: my-inference\nruntime: python\n")
    (tmp_path / "Pulumi.dev.yaml").write_text(STACK_FILE)
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_readmes_python_example_plans_as_a_reader_copies_it(project, capsys):
    (project / "__main__.py").write_text(YOURS + readme_example())
    assert plan.main(["--stack", "dev"]) == 0, capsys.readouterr().err
    assert capsys.readouterr().out.endswith("wrote build/plan/dev/\n")
    assert (project / "build" / "plan" / "dev" / "resources.json").exists()


def test_what_aws_would_refuse_of_a_programs_own_resource_is_not_blamed_on_its_stack_file(project, capsys):
    (project / "__main__.py").write_text(YOURS + 'aws.cloudwatch.LogGroup("logs", retention_in_days=2)\n')
    assert plan.main(["--stack", "dev"]) == 1
    err = capsys.readouterr().err
    assert err.startswith("plan dev: AWS would refuse requests of the program"), err
    assert "invalid stack config" not in err and "logs: AWS would refuse it" in err


def yaml_example() -> dict:
    """The components page's Pulumi YAML program (the block that declares its resources)."""
    page = (ROOT / "docs" / "components.md").read_text()
    blocks = re.findall(r"```yaml\n(.*?)```", page, flags=re.S)
    (program,) = [block for block in blocks if "type: gpt-oss-infra:index:GptOssStack" in block]
    return yaml.safe_load(program)


def test_the_yaml_examples_stack_config_is_one_the_program_takes(catalog):
    """Pulumi YAML cannot run here; the config it gives GptOssStack is checked as the component checks it."""
    (config,) = [
        resource["properties"]["config"]
        for resource in yaml_example()["resources"].values()
        if resource["type"] == "gpt-oss-infra:index:GptOssStack"
    ]
    stack = build_stack(config, catalog, with_hf_token=False)
    assert [deployment.name for deployment in stack.deployments] == ["gpt-oss"]
