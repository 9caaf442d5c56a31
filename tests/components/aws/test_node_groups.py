"""core/render/aws/resources.py's node groups, registered: managed node groups with their launch templates,
EFA, placement and schedules."""

from __future__ import annotations

import json

import pulumi_aws as aws

from gpt_oss_infra.components.aws.build import AwsResources
from gpt_oss_infra.core.render.aws import resources
from gpt_oss_infra.core.render.aws import specs as aws_specs
from tests.components.conftest import BLOCK_START

SUBNETS = ["subnet-first", "subnet-second", "subnet-third"]  # private subnets, in availability_zone_order
RESERVED_ZONE_SUBNET = "subnet-us-east-2b"
NODE_GROUPS = "gpt-oss-infra:aws:NodeGroups"


def build_node_groups(engine, groups):
    made = {}

    def program():
        cluster = aws.eks.Cluster("cluster", role_arn="arn:role", version="1.35", vpc_config={"subnet_ids": SUBNETS})
        network = resources.cluster_network("cluster")
        described = resources.node_groups(
            "nodes", groups, network, SUBNETS, {"us-east-2b": RESERVED_ZONE_SUBNET}, "test-env"
        )
        made["nodes"] = AwsResources("NodeGroups", "nodes", described.resources(), {"cluster": cluster})
        return {"urn": made["nodes"].urn}

    engine.run(program)
    assert {engine.parent_type(name) for name in engine.children("nodes")} == {NODE_GROUPS}
    return made["nodes"]


def test_each_pool_is_a_group_of_its_shape_on_a_pinned_template_version(engine, eks_plan):
    groups = eks_plan("dev").eks.groups
    nodes = build_node_groups(engine, groups)
    assert engine.names_of("aws:eks/nodeGroup:NodeGroup") == ["nodes-system", "nodes-gpu"]
    assert nodes.made["nodes-system"] is engine.built["nodes-system"].resource
    assert nodes.made["nodes-gpu"] is engine.built["nodes-gpu"].resource
    for spec in groups:
        group = engine.inputs(f"nodes-{spec.pool}")
        assert (group["clusterName"], group["nodeRoleArn"]) == ("cluster-name", "arn:aws:mock::nodes-node-role")
        # The cluster's version, read from it: EKS steps a control plane only once its groups are on its version.
        assert group["version"] == "1.35"
        assert (group["amiType"], group["capacityType"]) == (spec.ami_type, spec.capacity_type)
        assert group["instanceTypes"] == [spec.instance_type]
        assert group["subnetIds"] == SUBNETS
        assert group["scalingConfig"] == {
            "desiredSize": spec.scaling["desired_size"],
            "minSize": spec.scaling["min_size"],
            "maxSize": spec.scaling["max_size"],
        }
        assert group.get("labels") == spec.labels
        assert group.get("taints", []) == spec.taints
        # The template's own latest version, never $Latest: the group changes only when Pulumi says so.
        assert group["launchTemplate"] == {"id": f"nodes-{spec.pool}-template-id", "version": "3"}
        assert group["nodeRepairConfig"] == {"enabled": spec.node_repair}
        assert group["tags"] == aws_specs.node_group_tags(spec, "test-env")
        assert group["updateConfig"] == {"maxUnavailable": 1} | (
            {"updateStrategy": spec.update_strategy} if spec.update_strategy else {}
        )
        assert engine.built[f"nodes-{spec.pool}"].opts.ignore_changes is None
    assert "nodes-efa" not in engine.built
    assert engine.names_of("aws:autoscaling/schedule:Schedule") == []


def test_nodes_assume_their_role_with_the_node_policies_only(engine, eks_plan):
    build_node_groups(engine, eks_plan("dev").eks.groups)
    role = engine.inputs("nodes-node-role")
    assert json.loads(role["assumeRolePolicy"]) == aws_specs.service_trust_policy("ec2.amazonaws.com")
    attachments = engine.names_of("aws:iam/rolePolicyAttachment:RolePolicyAttachment")
    assert [engine.inputs(name)["policyArn"] for name in attachments] == [
        f"arn:aws:iam::aws:policy/{policy}" for policy in aws_specs.NODE_MANAGED_POLICIES
    ]


def test_each_group_waits_for_its_roles_policies_so_destroy_detaches_them_after_its_nodes_are_gone(engine, eks_plan):
    """The provider's docs (aws_eks_node_group): the role's permissions must be made before and deleted after
    the group, else EKS cannot delete its instances and network interfaces. A Ref to the role's ARN made the
    group wait for the role only, so destroy detached the policies in the same step as it deleted the group."""
    build_node_groups(engine, eks_plan("dev").eks.groups)
    attachments = engine.names_of("aws:iam/rolePolicyAttachment:RolePolicyAttachment")
    assert len(attachments) == len(aws_specs.NODE_MANAGED_POLICIES)
    for group in engine.names_of("aws:eks/nodeGroup:NodeGroup"):
        assert set(attachments) <= set(engine.waits_for(group)), group


def test_launch_templates_require_imdsv2_and_an_encrypted_gp3_root_volume(engine, eks_plan):
    groups = eks_plan("dev").eks.groups
    build_node_groups(engine, groups)
    for spec in groups:
        template = engine.inputs(f"nodes-{spec.pool}-template")
        assert template["metadataOptions"] == {
            "httpEndpoint": "enabled",
            "httpTokens": "required",
            "httpPutResponseHopLimit": 1,  # pods cannot reach the node's credentials
        }
        assert template["blockDeviceMappings"] == [
            {
                "deviceName": "/dev/xvda",
                "ebs": {
                    "volumeSize": spec.disk_size_gib,
                    "volumeType": "gp3",
                    "encrypted": "true",
                    "deleteOnTermination": "true",
                },
            }
        ]
        assert template["tagSpecifications"] == [
            {"resourceType": "instance", "tags": {"gpt-oss-infra/pool": spec.pool}}
        ]
        assert template["updateDefaultVersion"] is True
        # On-demand groups: EKS's default networking, the instance type on the group.
        assert not {"instanceType", "networkInterfaces", "placement", "instanceMarketOptions"} & set(template)


def test_efa_interfaces_carry_the_cluster_group_and_one_for_efa_peers(engine, eks_plan):
    groups = eks_plan("b200-disagg").eks.groups
    [efa] = [spec for spec in groups if spec.network_interfaces]
    build_node_groups(engine, groups)
    assert engine.inputs("nodes-efa") == {
        "vpcId": "cluster-vpc-id",
        "description": "EFA: all traffic between members",
        "ingress": [{"protocol": "-1", "fromPort": 0, "toPort": 0, "self": True}],
        "egress": [{"protocol": "-1", "fromPort": 0, "toPort": 0, "self": True}],
    }
    interfaces = engine.inputs(f"nodes-{efa.pool}-template")["networkInterfaces"]
    assert [(i["networkCardIndex"], i["deviceIndex"], i["interfaceType"]) for i in interfaces] == [
        (i["network_card_index"], i["device_index"], i["interface_type"]) for i in efa.network_interfaces
    ]
    for interface in interfaces:
        assert interface["securityGroups"] == ["cluster-sg-id", "nodes-efa-id"]
        assert interface["deleteOnTermination"] == "true"
    assert "networkInterfaces" not in engine.inputs("nodes-system-template")


def test_efa_without_a_reservation_lands_in_one_cluster_placement_group_in_one_az(engine, eks_plan):
    groups = eks_plan("b200-disagg").eks.groups
    [efa] = [spec for spec in groups if spec.placement_group]
    build_node_groups(engine, groups)
    assert engine.names_of("aws:ec2/placementGroup:PlacementGroup") == [f"nodes-{efa.pool}-placement"]
    assert engine.inputs(f"nodes-{efa.pool}-placement") == {"strategy": "cluster"}
    placement = engine.inputs(f"nodes-{efa.pool}-template")["placement"]
    assert placement == {"groupName": f"nodes-{efa.pool}-placement-name"}
    assert engine.inputs(f"nodes-{efa.pool}")["subnetIds"] == [SUBNETS[0]]


def test_a_capacity_block_group_runs_in_its_reservation(engine, eks_plan):
    groups = eks_plan("gb200").eks.groups
    [block] = [spec for spec in groups if spec.capacity_type == "CAPACITY_BLOCK"]
    build_node_groups(engine, groups)
    group = engine.inputs(f"nodes-{block.pool}")
    assert group["subnetIds"] == [RESERVED_ZONE_SUBNET]
    assert "instanceTypes" not in group  # Capacity Blocks take the type from the template only
    template = engine.inputs(f"nodes-{block.pool}-template")
    assert template["instanceType"] == block.instance_type
    assert template["instanceMarketOptions"] == {"marketType": "capacity-block"}
    assert template["capacityReservationSpecification"] == {
        "capacityReservationTarget": {"capacityReservationId": block.capacity_reservation_id}
    }
    # The scheduled actions own the desired size after creation.
    assert engine.built[f"nodes-{block.pool}"].opts.ignore_changes == ["scalingConfig.desiredSize"]
    assert engine.built["nodes-system"].opts.ignore_changes is None


def test_a_capacity_blocks_schedules_scale_the_groups_auto_scaling_group(engine, eks_plan):
    groups = eks_plan("gb200").eks.groups
    [block] = [spec for spec in groups if spec.schedules]
    build_node_groups(engine, groups)
    start, end = f"nodes-{block.pool}-block-start", f"nodes-{block.pool}-block-end"
    assert engine.names_of("aws:autoscaling/schedule:Schedule") == [start, end]
    for name, schedule in zip([start, end], block.schedules, strict=True):
        action = engine.inputs(name)
        assert action == {
            "scheduledActionName": f"gpt-oss-infra-{schedule.name}",
            "autoscalingGroupName": f"nodes-{block.pool}-asg",
            "startTime": schedule.at.strftime("%Y-%m-%dT%H:%M:%SZ"),
            "desiredCapacity": schedule.desired,
            "minSize": -1,  # left as they are
            "maxSize": -1,
        }
    assert engine.inputs(start)["startTime"] == BLOCK_START.replace("+00:00", "Z")
    # Only the scale-up may have started late (catch-up): its start time is then left alone.
    assert engine.built[start].opts.ignore_changes == ["startTime"]
    assert engine.built[end].opts.ignore_changes is None
