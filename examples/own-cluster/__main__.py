"""A program that owns its EKS cluster and network, and adds gpt-oss-120b to it with gpt-oss-infra's
public components only: GpuNodePool, DynamoPlatform, ModelCache and GptOssDeployment.

Everything above "gpt-oss-infra's building blocks" is this program's own (a minimal EKS cluster: two
zones, private nodes behind one NAT gateway, API-mode access entries, Pod Identity add-ons, an EFS
file system for the model and NVIDIA's device plugin); replace it with your own cluster as it is.
"""

import json

import pulumi
import pulumi_aws as aws
import pulumi_kubernetes as k8s

from gpt_oss_infra import DynamoPlatform, GptOssDeployment, GpuNodePool, ModelCache

config = pulumi.Config()
region = pulumi.Config("aws").require("region")
name = pulumi.get_stack()  # the cluster is named after the stack
zones = aws.get_availability_zones(state="available").names[:2]

# --- the program's own network: public subnets for the NAT gateway, private ones for the nodes ---
vpc = aws.ec2.Vpc("vpc", cidr_block="10.0.0.0/16", enable_dns_hostnames=True, enable_dns_support=True)
gateway = aws.ec2.InternetGateway("igw", vpc_id=vpc.id)
public_routes = aws.ec2.RouteTable(
    "public", vpc_id=vpc.id, routes=[{"cidr_block": "0.0.0.0/0", "gateway_id": gateway.id}]
)
public, private = [], []
for index, zone in enumerate(zones):
    subnet = aws.ec2.Subnet(f"public-{zone}", vpc_id=vpc.id, cidr_block=f"10.0.{index}.0/24", availability_zone=zone)
    aws.ec2.RouteTableAssociation(f"public-{zone}-routes", subnet_id=subnet.id, route_table_id=public_routes.id)
    public.append(subnet)
nat = aws.ec2.NatGateway("nat", subnet_id=public[0].id, allocation_id=aws.ec2.Eip("nat-ip", domain="vpc").id)
private_routes = aws.ec2.RouteTable(
    "private", vpc_id=vpc.id, routes=[{"cidr_block": "0.0.0.0/0", "nat_gateway_id": nat.id}]
)
for index, zone in enumerate(zones):
    subnet = aws.ec2.Subnet(
        f"private-{zone}", vpc_id=vpc.id, cidr_block=f"10.0.{64 + index * 64}.0/18", availability_zone=zone
    )
    aws.ec2.RouteTableAssociation(f"private-{zone}-routes", subnet_id=subnet.id, route_table_id=private_routes.id)
    private.append(subnet)
private_ids = [subnet.id for subnet in private]


def role(role_name: str, service: str, policies: list[str]) -> aws.iam.Role:
    """A role an AWS service assumes, with AWS-managed policies."""
    actions = ["sts:AssumeRole", "sts:TagSession"] if service == "pods.eks.amazonaws.com" else ["sts:AssumeRole"]
    trust = {
        "Version": "2012-10-17",
        "Statement": [{"Effect": "Allow", "Principal": {"Service": service}, "Action": actions}],
    }
    created = aws.iam.Role(role_name, assume_role_policy=json.dumps(trust))
    for policy in policies:
        aws.iam.RolePolicyAttachment(
            f"{role_name}-{policy.rsplit('/', 1)[-1]}",
            role=created.name,
            policy_arn=f"arn:aws:iam::aws:policy/{policy}",
        )
    return created


# --- the program's own EKS cluster, its system nodes and add-ons ---
cluster = aws.eks.Cluster(
    "cluster",
    name=name,
    version="1.36",
    role_arn=role("cluster-role", "eks.amazonaws.com", ["AmazonEKSClusterPolicy"]).arn,
    vpc_config={
        "subnet_ids": private_ids,
        "endpoint_private_access": True,
        "endpoint_public_access": True,
        "public_access_cidrs": [config.require("apiAccessCidr")],
    },
    access_config={"authentication_mode": "API", "bootstrap_cluster_creator_admin_permissions": True},
)
# The VPC CNI gets its permissions through Pod Identity (no node role here has them), before any node
# joins; CoreDNS and the EFS CSI driver run on nodes, so they come after the system nodes.
addon_roles = {
    "vpc-cni": ("aws-node", "AmazonEKS_CNI_Policy"),
    "aws-efs-csi-driver": ("efs-csi-controller-sa", "service-role/AmazonEFSCSIDriverPolicy"),
}


def addon(addon_name: str, after: list[pulumi.Resource]) -> aws.eks.Addon:
    identity = None
    if addon_name in addon_roles:
        service_account, policy = addon_roles[addon_name]
        addon_role = role(f"{addon_name}-role", "pods.eks.amazonaws.com", [policy])
        identity = [{"role_arn": addon_role.arn, "service_account": service_account}]
    return aws.eks.Addon(
        addon_name,
        cluster_name=cluster.name,
        addon_name=addon_name,
        pod_identity_associations=identity,
        resolve_conflicts_on_create="OVERWRITE",
        opts=pulumi.ResourceOptions(depends_on=after),
    )


node_addons = [addon(addon_name, []) for addon_name in ["eks-pod-identity-agent", "vpc-cni", "kube-proxy"]]
system_nodes = aws.eks.NodeGroup(
    "system",
    cluster_name=cluster.name,
    node_role_arn=role(
        "system-node-role", "ec2.amazonaws.com", ["AmazonEKSWorkerNodePolicy", "AmazonEC2ContainerRegistryReadOnly"]
    ).arn,
    subnet_ids=private_ids,
    instance_types=["m7i.2xlarge"],
    scaling_config={"desired_size": 2, "min_size": 2, "max_size": 2},
    opts=pulumi.ResourceOptions(depends_on=node_addons),
)
addons = [*node_addons, *(addon(addon_name, [system_nodes]) for addon_name in ["coredns", "aws-efs-csi-driver"])]

# The model's file system: EFS, reachable from the cluster's security group in each private subnet.
efs_access = aws.ec2.SecurityGroup(
    "efs",
    vpc_id=vpc.id,
    description="NFS from the cluster nodes",
    ingress=[
        {
            "protocol": "tcp",
            "from_port": 2049,
            "to_port": 2049,
            "security_groups": [cluster.vpc_config.cluster_security_group_id],
        }
    ],
)
file_system = aws.efs.FileSystem("model", encrypted=True, throughput_mode="elastic")
mounts = [
    aws.efs.MountTarget(
        f"model-{zone}", file_system_id=file_system.id, subnet_id=subnet.id, security_groups=[efs_access.id]
    )
    for zone, subnet in zip(zones, private, strict=True)
]

kubeconfig = pulumi.Output.secret(
    pulumi.Output.all(cluster.endpoint, cluster.certificate_authority.data).apply(
        lambda values: json.dumps(
            {
                "apiVersion": "v1",
                "kind": "Config",
                "clusters": [{"name": name, "cluster": {"server": values[0], "certificate-authority-data": values[1]}}],
                "contexts": [{"name": name, "context": {"cluster": name, "user": name}}],
                "current-context": name,
                "users": [
                    {
                        "name": name,
                        "user": {
                            "exec": {
                                "apiVersion": "client.authentication.k8s.io/v1beta1",
                                "command": "aws",
                                "args": ["eks", "get-token", "--cluster-name", name, "--region", region],
                            }
                        },
                    }
                ],
            }
        )
    )
)
kubernetes = k8s.Provider("kubernetes", kubeconfig=kubeconfig, enable_server_side_apply=True)
on_cluster = pulumi.ResourceOptions(provider=kubernetes, depends_on=addons)  # resources
in_cluster = pulumi.ResourceOptions(providers=[kubernetes], depends_on=addons)  # components: for their children
workloads = k8s.core.v1.Namespace("gpt-oss-namespace", metadata={"name": "gpt-oss"}, opts=on_cluster)
# GPU nodes advertise nvidia.com/gpu through NVIDIA's device plugin (the EKS NVIDIA AMI has the driver).
device_plugin = k8s.helm.v3.Release(
    "nvidia-device-plugin",
    chart="nvidia-device-plugin",
    version="0.19.3",
    repository_opts={"repo": "https://nvidia.github.io/k8s-device-plugin"},
    namespace="nvidia-device-plugin",
    create_namespace=True,
    values={
        "tolerations": [{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}],
        "nodeSelector": {"nvidia.com/gpu.present": "true"},
    },
    opts=on_cluster,
)

# --- gpt-oss-infra's building blocks ---
hardware = config.get("hardware") or "h200"
pool = GpuNodePool(
    "gpu",
    {"cluster_name": cluster.name, "subnet_ids": private_ids, "hardware": hardware, "nodes": 1},
    opts=pulumi.ResourceOptions(depends_on=node_addons),
)
platform = DynamoPlatform("dynamo", {}, opts=in_cluster)  # Dynamo 1.6.1: no NATS, so no block volume
cache = ModelCache(
    "model-cache",
    {"namespace": "gpt-oss", "storage": "efs", "file_system_id": file_system.id},
    opts=pulumi.ResourceOptions.merge(in_cluster, pulumi.ResourceOptions(depends_on=[*mounts, workloads])),
)
deployment = GptOssDeployment(
    "gpt-oss",
    {
        "recipe": config.get("recipe") or "h200-agg-low-latency",
        "gpus": config.get_int("gpus") or 4,
        "namespace": "gpt-oss",
        "node_pool": "gpu",
    },
    opts=pulumi.ResourceOptions(providers=[kubernetes], depends_on=[platform, cache, pool, device_plugin]),
)

pulumi.export("clusterName", cluster.name)
pulumi.export("endpoint", deployment.endpoint)
pulumi.export("servingCheck", deployment.serving_check)
