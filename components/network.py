"""A VPC for EKS: private subnets across AZs for nodes, public subnets with one NAT for egress."""

from __future__ import annotations

from dataclasses import dataclass

import pulumi
import pulumi_aws as aws

from components.base import Component
from core import infra


@dataclass(frozen=True)
class NetworkArgs:
    cluster_name: str
    vpc_cidr: str
    zones: pulumi.Output[list[str]]  # ordered: pinned AZs first (core.infra.availability_zone_order)
    zone_count: int


class Network(Component):
    def __init__(self, name: str, args: NetworkArgs, opts: pulumi.ResourceOptions | None = None):
        super().__init__("gpt-oss-infra:aws:Network", name, None, opts)
        cluster_tag = {f"kubernetes.io/cluster/{args.cluster_name}": "shared"}
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
        public_routes = aws.ec2.RouteTable(
            f"{name}-public",
            vpc_id=vpc.id,
            routes=[{"cidr_block": "0.0.0.0/0", "gateway_id": gateway.id}],
            tags={"Name": f"{args.cluster_name}-public"},
            opts=self.child_opts(),
        )
        self.private_subnet_ids: list[pulumi.Output[str]] = []
        nat = None
        for index, (private_cidr, public_cidr) in enumerate(
            infra.subnet_cidrs(args.vpc_cidr, args.zone_count)
        ):
            zone = args.zones.apply(lambda zones, i=index: zones[i])
            public = aws.ec2.Subnet(
                f"{name}-public-{index}",
                vpc_id=vpc.id,
                cidr_block=public_cidr,
                availability_zone=zone,
                map_public_ip_on_launch=True,
                tags={"Name": f"{args.cluster_name}-public-{index}", "kubernetes.io/role/elb": "1"}
                | cluster_tag,
                opts=self.child_opts(),
            )
            aws.ec2.RouteTableAssociation(
                f"{name}-public-{index}-routes",
                subnet_id=public.id,
                route_table_id=public_routes.id,
                opts=self.child_opts(),
            )
            if nat is None:  # one NAT gateway: egress to registries and Hugging Face, at one NAT's cost
                address = aws.ec2.Eip(f"{name}-nat-ip", domain="vpc", opts=self.child_opts())
                nat = aws.ec2.NatGateway(
                    f"{name}-nat",
                    allocation_id=address.id,
                    subnet_id=public.id,
                    tags={"Name": f"{args.cluster_name}-nat"},
                    opts=self.child_opts(depends_on=[gateway]),
                )
                private_routes = aws.ec2.RouteTable(
                    f"{name}-private",
                    vpc_id=vpc.id,
                    routes=[{"cidr_block": "0.0.0.0/0", "nat_gateway_id": nat.id}],
                    tags={"Name": f"{args.cluster_name}-private"},
                    opts=self.child_opts(),
                )
            private = aws.ec2.Subnet(
                f"{name}-private-{index}",
                vpc_id=vpc.id,
                cidr_block=private_cidr,
                availability_zone=zone,
                tags={"Name": f"{args.cluster_name}-private-{index}", "kubernetes.io/role/internal-elb": "1"}
                | cluster_tag,
                opts=self.child_opts(),
            )
            aws.ec2.RouteTableAssociation(
                f"{name}-private-{index}-routes",
                subnet_id=private.id,
                route_table_id=private_routes.id,
                opts=self.child_opts(),
            )
            self.private_subnet_ids.append(private.id)
        self.vpc_id = vpc.id
        self.register_outputs({"vpcId": self.vpc_id, "privateSubnetIds": self.private_subnet_ids})
