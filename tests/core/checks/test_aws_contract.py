"""tools/aws_contract.py on requests built here: each kind of constraint botocore's models state is
found, named by resource, input, member, value and what the API allows; the mapping
(configs/aws-api/mapping.yaml) agrees with the models, and a typo in it is caught."""

from __future__ import annotations

from gpt_oss_infra.core.checks import aws_contract
from gpt_oss_infra.core.checks.aws_contract import (
    ASCII_ONLY,
    MAPPING_FILE,
    OMIT,
    TRANSFORMS,
    RequestProblem,
    compiled_pattern,
    load_mapping,
    mapping_errors,
    resource_problems,
)
from gpt_oss_infra.tools.pulumi_engine import SECRET, UNKNOWN, Registration

NODE_GROUP = "aws:eks/nodeGroup:NodeGroup"
LUSTRE = "aws:fsx/lustreFileSystem:LustreFileSystem"


def problems(type_: str, inputs: dict, mapping=None) -> list[RequestProblem]:
    return list(resource_problems(Registration(type_, "res", None, inputs, {}), mapping))


def node_group(**inputs) -> dict:
    """A node group the API accepts, with these inputs changed."""
    return {
        "clusterName": "gptoss-dev",
        "nodeRoleArn": "arn:aws:iam::123456789012:role/nodes",
        "subnetIds": ["subnet-0123456789abcdef0"],
        "amiType": "AL2023_x86_64_NVIDIA",
        "capacityType": "ON_DEMAND",
        "instanceTypes": ["p5.48xlarge"],
        "scalingConfig": {"desiredSize": 1, "maxSize": 2, "minSize": 0},
    } | inputs


def lustre(**inputs) -> dict:
    return {
        "subnetIds": "subnet-0123456789abcdef0",
        "deploymentType": "PERSISTENT_2",
        "perUnitStorageThroughput": 250,
        "storageCapacity": 1200,
    } | inputs


def only(found: list[RequestProblem]) -> RequestProblem:
    assert len(found) == 1, [str(problem) for problem in found]
    return found[0]


# --- the mapping against the models


def test_the_mapping_agrees_with_the_botocore_models():
    assert mapping_errors(load_mapping()) == []


def test_a_typo_in_the_mapping_is_caught(tmp_path):
    text = MAPPING_FILE.read_text()
    for old, new in [
        ("call: eks:CreateAccessEntry", "call: eks:CreateAccesEntry"),
        ("LaunchTemplateData.InstanceMarketOptions.MarketType", "LaunchTemplateData.InstanceMarketOptions.Market"),
        ("          principalArn: {input: principalArn}\n          policyArn", "          policyArn"),
        ("Possible values are: 1, 3, 5, 7, 14, 30,", "Possible values are: 1, 3, 5, 7, 14, 31,"),
        ("transform: bool_string", "transform: boolean_string"),
        ("API_CreatePlacementGroup.html", "API_CreatePlacementGroups.html"),
    ]:
        assert old in text, old
        text = text.replace(old, new, 1)
    (tmp_path / "mapping.yaml").write_text(text)
    errors = "\n".join(mapping_errors(load_mapping(tmp_path / "mapping.yaml")))
    assert "eks:CreateAccesEntry: no such operation in botocore's models as vendored (OperationNotFoundError)" in errors
    assert (
        "instanceMarketOptions.marketType -> LaunchTemplateData.InstanceMarketOptions.Market: no such member" in errors
    )
    assert "eks:AssociateAccessPolicy: required lists ['accessScope', 'clusterName', 'policyArn']" in errors
    assert "rule on retentionInDays: its documentation does not say 'Possible values are: 1, 3, 5, 7, 14, 31," in errors
    assert "unknown transform boolean_string" in errors
    assert "ec2:CreatePlacementGroup: reference https://docs.aws.amazon.com/AWSEC2/latest/APIReference/" in errors


# --- constraints of the models


def test_a_valid_node_group_has_no_problem():
    assert problems(NODE_GROUP, node_group()) == []


def test_a_value_outside_the_enum():
    problem = only(problems(NODE_GROUP, node_group(amiType="AL2023_x86_64_GPU")))
    assert (problem.resource, problem.input, problem.member) == ("res", "amiType", "eks:CreateNodegroup amiType")
    assert problem.value == "AL2023_x86_64_GPU"
    assert problem.allowed.startswith("one of AMITypes: AL2_x86_64, AL2_x86_64_GPU,")
    assert str(problem).startswith("res: amiType -> eks:CreateNodegroup amiType = 'AL2023_x86_64_GPU': the API allows")


def test_an_instance_type_is_one_ec2_knows_also_where_the_eks_model_takes_any_string():
    problem = only(problems(NODE_GROUP, node_group(instanceTypes=["p5.48xlarge", "p5.96xlarge"])))
    assert (problem.input, problem.member, problem.value) == (
        "instanceTypes[1]",
        "eks:CreateNodegroup instanceTypes[1]",
        "p5.96xlarge",
    )
    assert problem.allowed.startswith("one of the ") and " values of ec2 InstanceType (closest: " in problem.allowed


def test_string_length_and_pattern():
    cluster = {"name": "-" + "x" * 100, "roleArn": "arn", "vpcConfig": {"subnetIds": ["subnet-1"]}}
    found = problems("aws:eks/cluster:Cluster", cluster)
    assert [problem.allowed for problem in found] == [
        "ClusterName of length from 1 to 100 (this one: 101)",
        "ClusterName matching ^[0-9A-Za-z][A-Za-z0-9\\-_]*",
    ]
    assert {problem.member for problem in found} == {"eks:CreateCluster name"}


def test_a_pattern_matches_the_whole_value_as_aws_does():
    """CloudWatch Logs' pattern has no anchors; a name with a space still breaks it."""
    found = problems("aws:cloudwatch/logGroup:LogGroup", {"name": "/aws/eks/my cluster"})
    assert only(found).allowed == "LogGroupName matching [\\.\\-_/#A-Za-z0-9]+"


def test_java_unicode_classes_and_lookaheads_in_patterns():
    """EFS tag keys: `^(?![aA]{1}[wW]{1}[sS]{1}:)([\\p{L}\\p{Z}\\p{N}_.:/=+\\-@]+)$`."""
    assert problems("aws:efs/fileSystem:FileSystem", {"tags": {"Größe": "groß 1"}}) == []
    problem = only(problems("aws:efs/fileSystem:FileSystem", {"tags": {"aws:owner": "x"}}))
    assert (problem.input, problem.member, problem.value) == ("tags", "efs:CreateFileSystem Tags[0].Key", "aws:owner")


def test_patterns_are_translated_from_java_or_reported():
    letters = compiled_pattern(r"[\p{L}]+")
    assert letters.fullmatch("Größe") and not letters.fullmatch("G1")
    # Auto Scaling's XML strings: the surrogate pair \uD800\uDC00 is U+10000 in Java.
    xml = compiled_pattern(r"[\u0020-\uD7FF\uE000-\uFFFD\uD800\uDC00-\uDBFF\uDFFF\r\n\t]*")
    assert xml.fullmatch("block 🚀") and not xml.fullmatch("bell \a")
    assert (
        compiled_pattern(r"\p{Alpha}+") == "'\\\\p{Alpha}+' cannot be checked in Python (bad escape \\p at position 0)"
    )


def test_an_ascii_value_is_checked_as_against_the_whole_pattern():
    """The ASCII-only pattern (what an ASCII value is checked with) accepts exactly the ASCII
    characters the whole one does, a category with no ASCII code point (marks) included."""
    for category in ("L", "Z", "N", "P", "S", "M"):
        whole, ascii_only = (
            compiled_pattern(rf"[\p{{{category}}}_]"),
            compiled_pattern(rf"[\p{{{category}}}_]", ASCII_ONLY),
        )
        assert [chr(c) for c in range(ASCII_ONLY) if whole.fullmatch(chr(c))] == [
            chr(c) for c in range(ASCII_ONLY) if ascii_only.fullmatch(chr(c))
        ], category
    letters = compiled_pattern(r"\p{L}+", ASCII_ONLY)
    assert letters.fullmatch("Gross") and not letters.fullmatch("G1")


def test_a_pattern_python_cannot_compile_is_a_problem_not_a_crash(monkeypatch):
    monkeypatch.setattr(aws_contract, "compiled_pattern", lambda pattern, _below: f"{pattern!r} cannot be checked")
    problem = only(problems("aws:cloudwatch/logGroup:LogGroup", {"name": "/aws/eks/logs"}))
    assert problem.allowed == "LogGroupName matching '[\\\\.\\\\-_/#A-Za-z0-9]+' cannot be checked"


def test_number_range():
    problem = only(problems(NODE_GROUP, node_group(scalingConfig={"desiredSize": 0, "maxSize": 0, "minSize": 0})))
    assert (problem.input, problem.member, problem.value) == (
        "scalingConfig.maxSize",
        "eks:CreateNodegroup scalingConfig.maxSize",
        0,
    )
    assert problem.allowed == "Capacity at least 1"


def test_a_value_of_the_wrong_type():
    found = problems(NODE_GROUP, node_group(scalingConfig={"desiredSize": "2", "maxSize": True, "minSize": 0}))
    assert [(problem.input, problem.value, problem.allowed) for problem in found] == [
        ("scalingConfig.desiredSize", "2", "type integer (ZeroCapacity)"),
        ("scalingConfig.maxSize", True, "type integer (Capacity)"),
    ]


def test_list_and_map_lengths():
    groups = [f"sg-{index:017x}" for index in range(51)]
    problem = only(problems(LUSTRE, lustre(securityGroupIds=groups)))
    assert (problem.input, problem.member, problem.value) == (
        "securityGroupIds",
        "fsx:CreateFileSystem SecurityGroupIds",
        "51 items",
    )
    assert problem.allowed == "SecurityGroupIds at most 50 items"
    tags = {f"key-{index}": "value" for index in range(51)}
    problem = only(problems(NODE_GROUP, node_group(tags=tags)))
    assert (problem.input, problem.value, problem.allowed) == ("tags", "51 entries", "TagMap from 1 to 50 entries")


def test_a_missing_required_member_of_the_request():
    problem = only(problems(NODE_GROUP, {k: v for k, v in node_group().items() if k != "nodeRoleArn"}))
    assert (problem.input, problem.member, problem.value) == ("nodeRoleArn", "eks:CreateNodegroup nodeRole", None)
    assert (
        problem.allowed == "nodeRole set: CreateNodegroupRequest requires clusterName, nodegroupName, subnets, nodeRole"
    )
    assert "res: nodeRoleArn -> eks:CreateNodegroup nodeRole = unset: the API allows nodeRole set" in str(problem)


def test_a_missing_required_member_of_a_nested_structure():
    addon = {"clusterName": "gptoss-dev", "addonName": "vpc-cni", "podIdentityAssociations": [{"serviceAccount": "x"}]}
    problem = only(problems("aws:eks/addon:Addon", addon))
    assert (problem.input, problem.member) == (
        "podIdentityAssociations[0].roleArn",
        "eks:CreateAddon podIdentityAssociations[0].roleArn",
    )
    assert problem.allowed.startswith("roleArn set: AddonPodIdentityAssociations requires serviceAccount, roleArn")


def test_required_members_the_provider_fills_are_not_missing():
    """nodegroupName: the provider names the group; FileSystemType: LUSTRE, by the resource type."""
    assert problems(NODE_GROUP, node_group()) == []
    assert problems(LUSTRE, lustre()) == []


def test_secret_and_unknown_values_are_present_but_not_checked():
    inputs = node_group(amiType=UNKNOWN, nodeRoleArn=SECRET, instanceTypes=[UNKNOWN], subnetIds=UNKNOWN)
    assert problems(NODE_GROUP, inputs) == []


# --- transforms, per-item calls, documented rules


def test_a_terraform_style_boolean_string_must_parse():
    template = {"blockDeviceMappings": [{"deviceName": "/dev/xvda", "ebs": {"encrypted": "yes"}}]}
    problem = only(problems("aws:ec2/launchTemplate:LaunchTemplate", template))
    assert (problem.input, problem.member, problem.value) == (
        "blockDeviceMappings[0].ebs.encrypted",
        "ec2:CreateLaunchTemplate LaunchTemplateData.BlockDeviceMappings[0].Ebs.Encrypted",
        "yes",
    )
    assert problem.allowed == 'a boolean as a string ("true" or "false"), which the provider parses'


def test_the_transforms():
    assert TRANSFORMS["bool_string"]("true") is True and TRANSFORMS["bool_string"]("") is OMIT
    assert TRANSFORMS["key_value_list"]({"Name": "x"}) == [{"Key": "Name", "Value": "x"}]
    assert TRANSFORMS["one_item_list"]("subnet-0123456789abcdef0") == ["subnet-0123456789abcdef0"]
    assert TRANSFORMS["unset_when_minus_one"](-1) is OMIT and TRANSFORMS["unset_when_minus_one"](0) == 0


def test_one_call_per_item_names_the_item():
    table = {"vpcId": "vpc-1", "routes": [{"cidrBlock": "0.0.0.0/0", "gatewayId": "igw-1"}, {"cidrBlock": 10}]}
    problem = only(problems("aws:ec2/routeTable:RouteTable", table))
    assert (problem.input, problem.member, problem.value) == (
        "routes[1].cidrBlock",
        "ec2:CreateRoute DestinationCidrBlock",
        10,
    )


def test_a_documented_value_rule_applies_only_when_its_condition_holds():
    problem = only(problems(LUSTRE, lustre(perUnitStorageThroughput=200)))
    assert (problem.input, problem.member, problem.value) == (
        "perUnitStorageThroughput",
        "fsx:CreateFileSystem LustreConfiguration.PerUnitStorageThroughput",
        200,
    )
    assert problem.allowed == (
        "one of 125, 250, 500, 1000 when LustreConfiguration.DeploymentType is PERSISTENT_2 and StorageType is SSD"
        " or unset ('For PERSISTENT_2 SSD storage: 125, 250, 500, 1000 MB/s/TiB.')"
    )
    assert problems(LUSTRE, lustre(deploymentType="PERSISTENT_1", perUnitStorageThroughput=200)) == []


def test_a_documented_range_and_pattern():
    problem = only(problems("aws:kms/key:Key", {"deletionWindowInDays": 60}))
    assert (problem.member, problem.allowed) == (
        "kms:ScheduleKeyDeletion PendingWindowInDays",
        "from 7 to 30 ('If you include a value, it must be between 7 and 30, inclusive.')",
    )
    rule = {"securityGroupId": "sg-1", "referencedSecurityGroupId": "sg-2", "description": "EFA & NCCL"}
    problem = only(problems("aws:vpc/securityGroupIngressRule:SecurityGroupIngressRule", rule))
    assert (problem.input, problem.member) == (
        "description",
        "ec2:AuthorizeSecurityGroupIngress IpPermissions[0].UserIdGroupPairs[0].Description",
    )


# --- what the mapping does not cover


def test_an_input_or_a_type_the_mapping_does_not_know_is_a_problem():
    problem = only(problems(NODE_GROUP, node_group(diskSizeGb=100)))
    assert (problem.input, problem.member, problem.value) == ("diskSizeGb", "(no member)", 100)
    problem = only(problems("aws:s3/bucket:Bucket", {"bucket": "b"}))
    assert (problem.input, problem.value) == ("(all)", "aws:s3/bucket:Bucket")
    assert problem.allowed == "only types configs/aws-api/mapping.yaml maps or lists under not_checked"


def test_a_type_listed_as_not_checked_is_skipped(tmp_path):
    path = tmp_path / "mapping.yaml"
    path.write_text("resources: {}\nnot_checked:\n  aws:s3/bucket:Bucket: no bucket is created in AWS here\n")
    mapping = load_mapping(path)
    assert mapping.covers("aws:s3/bucket:Bucket")
    assert problems("aws:s3/bucket:Bucket", {"bucket": "b"}, mapping) == []
