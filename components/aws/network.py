"""A VPC for EKS: private subnets across AZs for nodes, public subnets with one NAT for egress."""

from __future__ import annotations

from dataclasses import dataclass

import pulumi
import pulumi_aws as aws

from gpt_oss_infra.components.base import Component
from gpt_oss_infra.core.render.aws import specs as aws_specs


@dataclass(frozen=True)
class NetworkArgs:
    cluster_name: str
    vpc_cidr: str
    zones: pulumi.Output[list[str]]  # ordered: pinned AZs first (core.render.aws.specs.availability_zone_order)
    zone_count: int


class Network(Component):
    def __init__(self, name: str, args: NetworkArgs, opts: pulumi.ResourceOptions | None = None):
        super().__init__("gpt-oss-infra:aws:Network", name, None, opts)
        self._args = args
        vpc = aws.ec2.Vpc(
            f"{name}-vpc",
            cidr_block=args.vpc_cidr,
            enable_dns_hostnames=True,
            enable_dns_support=True,
            tags={"Name": f"{args.cluster_name}-vpc"},
            opts=self.child_opts(),
        )
        gateway = aws.ec2.InternetGateway(
            f"{name}-igw", vpc_id=vpc.id, tags={"Name": f"{args.cluster_name}-igw"}, opts=self.child_opts()
        )
        public_routes = self._route_table(f"{name}-public", vpc, {"gateway_id": gateway.id})
        cidrs = aws_specs.subnet_cidrs(args.vpc_cidr, args.zone_count)
        public = [
            self._subnet(f"{name}-public-{i}", vpc, public_cidr, i, public_routes, {"kubernetes.io/role/elb": "1"})
            for i, (_, public_cidr) in enumerate(cidrs)
        ]
        # One NAT gateway: egress to image registries and Hugging Face at one NAT's cost.
        address = aws.ec2.Eip(f"{name}-nat-ip", domain="vpc", opts=self.child_opts())
        nat = aws.ec2.NatGateway(
            f"{name}-nat",
            allocation_id=address.id,
            subnet_id=public[0].id,
            tags={"Name": f"{args.cluster_name}-nat"},
            opts=self.child_opts(depends_on=[gateway]),
        )
        private_routes = self._route_table(f"{name}-private", vpc, {"nat_gateway_id": nat.id})
        self.private_subnet_ids = [
            self._subnet(
                f"{name}-private-{i}",
                vpc,
                private_cidr,
                i,
                private_routes,
                {"kubernetes.io/role/internal-elb": "1"},
            ).id
            for i, (private_cidr, _) in enumerate(cidrs)
        ]
        self.vpc_id = vpc.id
        self.register_outputs({"vpcId": self.vpc_id, "privateSubnetIds": self.private_subnet_ids})

    def _route_table(self, name: str, vpc: aws.ec2.Vpc, default_route: dict) -> aws.ec2.RouteTable:
        return aws.ec2.RouteTable(
            name,
            vpc_id=vpc.id,
            routes=[{"cidr_block": "0.0.0.0/0", **default_route}],
            tags={"Name": name},
            opts=self.child_opts(),
        )

    def _subnet(
        self,
        name: str,
        vpc: aws.ec2.Vpc,
        cidr: str,
        zone_index: int,
        routes: aws.ec2.RouteTable,
        role_tag: dict[str, str],
    ) -> aws.ec2.Subnet:
        """A subnet in the zone_index-th AZ, tagged for EKS load balancers, with its route table."""
        public = "kubernetes.io/role/elb" in role_tag
        subnet = aws.ec2.Subnet(
            name,
            vpc_id=vpc.id,
            cidr_block=cidr,
            availability_zone=self._args.zones.apply(lambda zones: zones[zone_index]),
            map_public_ip_on_launch=public or None,
            tags={"Name": name, f"kubernetes.io/cluster/{self._args.cluster_name}": "shared"} | role_tag,
            opts=self.child_opts(),
        )
        aws.ec2.RouteTableAssociation(
            f"{name}-routes", subnet_id=subnet.id, route_table_id=routes.id, opts=self.child_opts()
        )
        return subnet
