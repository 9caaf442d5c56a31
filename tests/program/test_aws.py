"""The AWS resources of every example stack: node groups, IAM, the cluster, add-ons and endpoint access."""

from __future__ import annotations

import json

import pytest

from gpt_oss_infra.core.dynamo_graph import components_by_name
from tests.support import by_type, example_entries, run_entries, run_in_account

AWS_STACKS = {
    # stack: (pool, instance type, AMI type, capacity type)
    "dev": ("gpu", "p5en.48xlarge", "AL2023_x86_64_NVIDIA", "ON_DEMAND"),
    "b200": ("b200", "p6-b200.48xlarge", "AL2023_x86_64_NVIDIA", "ON_DEMAND"),
    "gb200": ("gb200", "p6e-gb200.36xlarge", "AL2023_ARM_64_NVIDIA", "CAPACITY_BLOCK"),
    "h100": ("h100", "p5.48xlarge", "AL2023_x86_64_NVIDIA", "SPOT"),
    "h200": ("h200", "p5e.48xlarge", "AL2023_x86_64_NVIDIA", "CAPACITY_BLOCK"),
}


@pytest.fixture(scope="module")
def runs():
    runs = {stack: run_entries(example_entries(stack), stack=stack) for stack in AWS_STACKS}
    for stack, run in runs.items():
        assert run.error is None, (stack, run.error)
    return runs


@pytest.fixture(params=sorted(AWS_STACKS))
def aws_run(request, runs):
    return request.param, runs[request.param]


def test_gpu_node_group_matches_the_catalog(aws_run):
    stack, run = aws_run
    pool, instance_type, ami_type, capacity_type = AWS_STACKS[stack]
    group = next(r for r in by_type(run, "aws:eks/nodeGroup:NodeGroup") if r.name.endswith(f"-{pool}"))
    template = next(
        r for r in by_type(run, "aws:ec2/launchTemplate:LaunchTemplate") if r.name == f"{group.name}-template"
    )
    inputs = group.inputs
    assert inputs["amiType"] == ami_type
    assert inputs["capacityType"] == capacity_type
    assert inputs["taints"] == [{"key": "nvidia.com/gpu", "value": "true", "effect": "NO_SCHEDULE"}]
    hardware = example_entries(stack)["gpt-oss-infra:nodePools"][pool]["hardware"]
    assert inputs["labels"] == {
        "nvidia.com/gpu.present": "true",
        "gpt-oss-infra/hardware": hardware,
        "gpt-oss-infra/pool": pool,
    }
    # Repair replaces a node: only where capacity is not fixed by a reservation.
    assert inputs["nodeRepairConfig"] == {"enabled": capacity_type != "CAPACITY_BLOCK"}
    # GPU groups are updated without extra nodes first, from a pinned template version.
    assert inputs["updateConfig"] == {"maxUnavailable": 1, "updateStrategy": "MINIMAL"}
    assert inputs["launchTemplate"]["version"] == "1"  # the template's own version number, never $Latest
    assert template.inputs["metadataOptions"]["httpTokens"] == "required"
    assert template.inputs["blockDeviceMappings"][0]["ebs"]["volumeSize"] == 500
    if capacity_type == "CAPACITY_BLOCK":
        pool_config = example_entries(stack)["gpt-oss-infra:nodePools"][pool]
        assert template.inputs["instanceType"] == instance_type
        assert "instanceTypes" not in inputs
        assert template.inputs["instanceMarketOptions"] == {"marketType": "capacity-block"}
        assert template.inputs["capacityReservationSpecification"] == {
            "capacityReservationTarget": {"capacityReservationId": pool_config["capacityReservationId"]}
        }
        assert len(inputs["subnetIds"]) == 1  # only the reservation's AZ
        assert not by_type(run, "aws:ec2/placementGroup:PlacementGroup")  # the reservation fixes placement
    else:
        assert inputs["instanceTypes"] == [instance_type]
        assert "instanceMarketOptions" not in template.inputs


def test_iam_grants_no_wildcard_actions_on_wildcard_resources(aws_run):
    _, run = aws_run
    for role in by_type(run, "aws:iam/role:Role"):
        for statement in json.loads(role.inputs["assumeRolePolicy"])["Statement"]:
            assert statement["Principal"].get("Service") in {
                "eks.amazonaws.com",
                "ec2.amazonaws.com",
                "pods.eks.amazonaws.com",
            }
    policies = [r.inputs["policyArn"] for r in by_type(run, "aws:iam/rolePolicyAttachment:RolePolicyAttachment")]
    assert policies and all(arn.startswith("arn:aws:iam::aws:policy/") for arn in policies)  # AWS-managed only
    inline = [r for r in run.resources if r.type in ("aws:iam/policy:Policy", "aws:iam/rolePolicy:RolePolicy")]
    assert inline == []


def test_cluster_is_api_authenticated_encrypted_and_logged(aws_run):
    stack, run = aws_run
    (cluster,) = by_type(run, "aws:eks/cluster:Cluster")
    inputs = cluster.inputs
    assert inputs["accessConfig"]["authenticationMode"] == "API"
    assert inputs["vpcConfig"]["endpointPrivateAccess"] is True
    assert inputs["encryptionConfig"]["resources"] == ["secrets"]
    assert inputs["enabledClusterLogTypes"] == [
        "api",
        "audit",
        "authenticator",
        "controllerManager",
        "scheduler",
    ]
    assert inputs["version"] == example_entries(stack)["gpt-oss-infra:cluster"].get("kubernetesVersion", "1.36")
    if inputs["vpcConfig"]["endpointPublicAccess"]:
        assert inputs["vpcConfig"]["publicAccessCidrs"] == ["203.0.113.0/24"]
    assert run.outputs["kubeconfig"] == "[secret]"
    assert run.outputs["kubectlHint"].startswith("aws eks update-kubeconfig --name ")


def test_addons_have_their_own_roles_and_the_storage_driver(aws_run):
    stack, run = aws_run
    addons = {r.inputs["addonName"]: r for r in by_type(run, "aws:eks/addon:Addon")}
    storage = example_entries(stack).get("gpt-oss-infra:modelCache", {}).get("storage", "efs")
    driver = {"efs": "aws-efs-csi-driver", "fsx-lustre": "aws-fsx-csi-driver"}[storage]
    assert set(addons) == {"vpc-cni", "kube-proxy", "eks-pod-identity-agent", "coredns", "aws-ebs-csi-driver", driver}
    # FSx through a static PV: its driver calls no FSx API, so it gets no role (least privilege).
    with_roles = ("vpc-cni", "aws-ebs-csi-driver", *([driver] if storage == "efs" else []))
    roles = [addons[name].inputs["podIdentityAssociations"][0]["roleArn"] for name in with_roles]
    assert len(set(roles)) == len(with_roles)
    if storage == "fsx-lustre":
        assert "podIdentityAssociations" not in addons[driver].inputs
    ebs_identity = addons["aws-ebs-csi-driver"].inputs["podIdentityAssociations"][0]
    assert ebs_identity["serviceAccount"] == "ebs-csi-controller-sa"
    attached = {
        r.inputs["policyArn"]
        for r in by_type(run, "aws:iam/rolePolicyAttachment:RolePolicyAttachment")
        if r.name.startswith("gptoss-node-addons-aws-ebs-csi-driver-role")
    }
    assert attached == {"arn:aws:iam::aws:policy/service-role/AmazonEBSCSIDriverPolicy"}
    assert "podIdentityAssociations" not in addons["coredns"].inputs


def test_only_pools_whose_traffic_crosses_nodes_get_efa(aws_run):
    """Aggregated workers never move KV cache between nodes, so none of these pools needs EFA:
    not even the 2-node b200 and h200 pools, which had it by node count before. gb200's
    disaggregated deployment crosses nodes: its 4 EFA interfaces (1.6.1's -efa image is multi-arch;
    1.2.1 had no arm64 one). b200-disagg is covered in test_efa.py."""
    stack, run = aws_run
    templates = {r.name: r.inputs for r in by_type(run, "aws:ec2/launchTemplate:LaunchTemplate")}
    releases = {r.inputs["chart"] for r in by_type(run, "kubernetes:helm.sh/v3:Release")}
    expected_efa = {"dev": 0, "h100": 0, "b200": 0, "gb200": 4, "h200": 0}[stack]
    pool = AWS_STACKS[stack][0]
    interfaces = templates[f"gptoss-nodes-{pool}-template"].get("networkInterfaces", [])
    assert sum(i["interfaceType"] == "efa-only" for i in interfaces) == expected_efa
    assert ("aws-efa-k8s-device-plugin" in releases) == bool(expected_efa)
    assert "nvidia-device-plugin" in releases and "gpu-operator" not in releases


def test_existing_cluster_registers_no_aws_resource():
    run = run_entries(example_entries("existing-cluster"), stack="existing-cluster")
    assert run.error is None
    assert run.resources
    assert [r.type for r in run.resources if r.type.startswith("aws:")] == []
    graph = next(r for r in run.resources if r.type.endswith("DynamoGraphDeployment"))
    worker = components_by_name(graph.inputs)["TrtllmWorker"]
    assert worker.pod["nodeSelector"] == {"nvidia.com/gpu.product": "NVIDIA-H200"}
    # No GPU software on an existing cluster by default: only the Dynamo platform release.
    charts = [r.inputs["chart"] for r in run.resources if r.type == "kubernetes:helm.sh/v3:Release"]
    assert charts == ["https://helm.ngc.nvidia.com/nvidia/ai-dynamo/charts/dynamo-platform-1.6.1.tgz"]
    # What exists there already is refused before anything changes, or adopted by name (cluster.adopt):
    # the provider never upserts (tests/components/test_cluster_ownership.py).
    (provider,) = [r for r in run.resources if r.type == "pulumi:providers:kubernetes"]
    assert "upsertExistingObjects" not in provider.inputs


def test_node_groups_wait_for_the_base_addons(aws_run):
    _, run = aws_run
    for group in by_type(run, "aws:eks/nodeGroup:NodeGroup"):
        assert set(group.options["dependsOn"]) >= {
            "gptoss-addons-vpc-cni",
            "gptoss-addons-kube-proxy",
            "gptoss-addons-eks-pod-identity-agent",
        }


def test_addons_are_pinned_for_the_cluster_kubernetes_version(aws_run, catalog):
    stack, run = aws_run
    kubernetes = example_entries(stack)["gpt-oss-infra:cluster"].get("kubernetesVersion", "1.36")
    pinned = catalog.addon_versions[kubernetes]
    addons = by_type(run, "aws:eks/addon:Addon")
    assert addons
    for addon in addons:
        # No build pinned (gb200's aws-fsx-csi-driver on 1.36): no addonVersion, EKS installs its default.
        assert addon.inputs.get("addonVersion") == pinned[addon.inputs["addonName"]].version, addon.name


def test_an_addon_without_a_pin_is_created_at_the_eks_default_and_warned():
    entries = example_entries("gb200")  # FSx for Lustre: no aws-fsx-csi-driver build found for 1.34 (nor 1.35, 1.36)
    entries["gpt-oss-infra:cluster"]["kubernetesVersion"] = "1.34"
    run = run_entries(entries, stack="gb200-134")
    assert run.error is None, run.error
    fsx = next(r for r in by_type(run, "aws:eks/addon:Addon") if r.inputs["addonName"] == "aws-fsx-csi-driver")
    assert "addonVersion" not in fsx.inputs
    assert any("no aws-fsx-csi-driver build is pinned for Kubernetes 1.34" in line for line in run.log)


def test_private_endpoint_is_reachable_from_the_vpc():
    run = run_entries(example_entries("prod"), stack="prod")
    assert run.error is None, run.error
    (rule,) = [
        r for r in by_type(run, "aws:vpc/securityGroupIngressRule:SecurityGroupIngressRule") if r.parent == "gptoss-eks"
    ]
    assert rule.inputs["securityGroupId"] == "gptoss-eks-cluster-sg-id"  # the cluster security group
    assert (rule.inputs["cidrIpv4"], rule.inputs["fromPort"], rule.inputs["toPort"]) == ("10.0.0.0/16", 443, 443)
    assert run.outputs["report"]["apiAccess"].startswith("private endpoint only, from 10.0.0.0/16")


def test_an_instance_type_ec2_does_not_offer_where_the_stack_needs_it_is_refused_before_anything_is_registered():
    """EC2's answer at preview and `up` (DescribeInstanceTypeOfferings): here, an account that offers
    nothing in the zone gb200's Capacity Block pins, then nothing at all in the region."""

    def only_in(zones):
        return lambda account: account.zones.__setitem__(slice(None), zones)

    run = run_in_account(example_entries("gb200"), only_in(["us-east-2a"]), stack="gb200")
    assert run.resources == []
    assert (
        "gpt-oss-infra:nodePools.gb200.availabilityZone: EC2 does not offer p6e-gb200.36xlarge in us-east-2b; "
        "it does in us-east-2a" in str(run.error)
    )
    run = run_in_account(example_entries("gb200"), only_in([]), stack="gb200")
    assert run.resources == []
    for key, instance_type in [
        ("cluster.systemNodes.instanceType", "m7i.2xlarge"),
        ("nodePools.gb200.hardware", "p6e-gb200.36xlarge"),
    ]:
        assert f"gpt-oss-infra:{key}: EC2 offers {instance_type} in none of this region's availability zones" in str(
            run.error
        )


def test_the_pod_identity_roles_are_the_ones_readme_names():
    """docs/created-cluster.md and docs/production.md (Endpoint): vpc-cni and each CSI driver get their own
    Pod Identity role, and so does the load balancer controller; nothing else does."""
    from tests.support import example_entries, run_entries

    run = run_entries(example_entries("staging") | {"gpt-oss-infra:apiKeys": {"ci": "sk-test"}}, stack="staging")
    with_roles = sorted(
        r.inputs["addonName"]
        for r in run.resources
        if r.type == "aws:eks/addon:Addon" and r.inputs.get("podIdentityAssociations")
    )
    assert with_roles == ["aws-ebs-csi-driver", "aws-efs-csi-driver", "vpc-cni"]
    associations = [
        r.inputs["serviceAccount"]
        for r in run.resources
        if r.type == "aws:eks/podIdentityAssociation:PodIdentityAssociation"
    ]
    assert associations == ["aws-load-balancer-controller"]
