"""core/render/aws/resources.py's network, registered: a VPC with private and public subnets per AZ, one NAT
gateway, and their routes."""

from __future__ import annotations

import pulumi

from gpt_oss_infra.components.aws.build import AwsResources, resolved
from gpt_oss_infra.core.render.aws import resources
from gpt_oss_infra.core.render.aws import specs as aws_specs

VPC_CIDR = "10.0.0.0/16"
ZONES = ["us-east-2b", "us-east-2a", "us-east-2c"]  # as availability_zone_order gives them: pinned first
NETWORK = "gpt-oss-infra:aws:Network"


def build_network(engine, zone_count: int = 3):
    def program():
        zones = pulumi.Output.from_input(ZONES[:zone_count])
        built = {}
        AwsResources(
            "Network", "net", resources.network("net", "gptoss-dev", VPC_CIDR, zone_count), built, {"zones": zones}
        )
        private = resolved(resources.private_subnets("net", zone_count), built)
        return {"vpc": built["net-vpc"].id, "private": pulumi.Output.all(*private)}

    return engine.run(program)


def test_subnets_follow_the_zone_order_with_their_cidrs_and_tags(engine):
    values = build_network(engine)
    assert values == {"vpc": "net-vpc-id", "private": ["net-private-0-id", "net-private-1-id", "net-private-2-id"]}
    assert {engine.parent_type(name) for name in engine.children("net")} == {NETWORK}
    for index, (private_cidr, public_cidr) in enumerate(aws_specs.subnet_cidrs(VPC_CIDR, 3)):
        private, public = engine.inputs(f"net-private-{index}"), engine.inputs(f"net-public-{index}")
        assert (private["cidrBlock"], public["cidrBlock"]) == (private_cidr, public_cidr)
        assert private["availabilityZone"] == public["availabilityZone"] == ZONES[index]
        assert private["vpcId"] == public["vpcId"] == "net-vpc-id"
        assert private["tags"] == {
            "Name": f"net-private-{index}",
            "kubernetes.io/cluster/gptoss-dev": "shared",
            "kubernetes.io/role/internal-elb": "1",
        }
        assert public["tags"] == {
            "Name": f"net-public-{index}",
            "kubernetes.io/cluster/gptoss-dev": "shared",
            "kubernetes.io/role/elb": "1",
        }
        assert public["mapPublicIpOnLaunch"] is True
        assert "mapPublicIpOnLaunch" not in private


def test_private_subnets_reach_out_through_one_nat_in_the_first_public_subnet(engine):
    build_network(engine)
    assert engine.names_of("aws:ec2/natGateway:NatGateway") == ["net-nat"]
    nat = engine.inputs("net-nat")
    assert (nat["subnetId"], nat["allocationId"]) == ("net-public-0-id", "net-nat-ip-id")
    assert engine.inputs("net-nat-ip")["domain"] == "vpc"
    assert engine.waits_for("net-nat") == ["net-igw"]  # a NAT gateway needs the VPC's internet gateway
    assert engine.inputs("net-private")["routes"] == [{"cidrBlock": "0.0.0.0/0", "natGatewayId": "net-nat-id"}]
    assert engine.inputs("net-public")["routes"] == [{"cidrBlock": "0.0.0.0/0", "gatewayId": "net-igw-id"}]
    for index in range(3):
        for kind in ("private", "public"):
            association = engine.inputs(f"net-{kind}-{index}-routes")
            assert association == {"subnetId": f"net-{kind}-{index}-id", "routeTableId": f"net-{kind}-id"}


def test_the_vpc_resolves_names_for_eks(engine):
    build_network(engine, zone_count=2)
    vpc = engine.inputs("net-vpc")
    assert vpc == {
        "cidrBlock": VPC_CIDR,
        "enableDnsHostnames": True,
        "enableDnsSupport": True,
        "tags": {"Name": "gptoss-dev-vpc"},
    }
    assert len(engine.names_of("aws:ec2/subnet:Subnet")) == 4


def test_the_plan_says_who_reaches_the_private_endpoint_in_subnets_of_the_callers_vpc():
    """In existing subnets no network is admitted by default: the summary said 'private endpoint from ' and
    nothing after it."""
    from gpt_oss_infra.core.inputs.config import EksClusterConfig

    network = {"existingPrivateSubnets": {"us-east-2a": "subnet-0a1b2c3d", "us-east-2b": "subnet-0e1f2a3b"}}
    cluster = {"kind": "eks", "name": "lab", "publicAccessCidrs": ["203.0.113.0/24"], "network": network}
    assert aws_specs.api_access(EksClusterConfig.model_validate(cluster)) == (
        "public endpoint from 203.0.113.0/24; private endpoint from the cluster security group's members only, its "
        "nodes (cluster.privateAccessCidrs admits networks)"
    )
    admitted = EksClusterConfig.model_validate(cluster | {"privateAccessCidrs": ["10.8.0.0/16"]})
    assert aws_specs.api_access(admitted).endswith("; private endpoint from 10.8.0.0/16")
