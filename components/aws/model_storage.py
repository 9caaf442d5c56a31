"""The AWS file system behind the model cache: EFS (elastic throughput) or FSx for Lustre.

FSx for Lustre access control [fsx-sg]: the file system's security group admits TCP 988 and
1018-1023 from itself and from the clients' groups, and the clients' group (the EKS cluster
security group every node carries) admits the same ports from the file system's group.
  [fsx-sg] https://docs.aws.amazon.com/fsx/latest/LustreGuide/limit-access-security-groups.html

What `pulumi destroy` does with the file system is modelCache.keepOnDestroy's: by default it is deleted
with the stack. Kept, an EFS file system is retained (Pulumi forgets it; its mount targets are deleted
first, so nothing of the network waits for it), and an FSx for Lustre one is deleted after a final
backup [fsx-delete]: retaining it would keep its network interfaces, and with them its security group,
subnet and the VPC, which EC2 refuses to delete while they are in use.
  [fsx-delete] https://docs.aws.amazon.com/fsx/latest/APIReference/API_DeleteFileSystemLustreConfiguration.html
               (SkipFinalBackup, default true; FinalBackupTags)
"""

from __future__ import annotations

from dataclasses import dataclass

import pulumi
import pulumi_aws as aws

from gpt_oss_infra.components.base import Component
from gpt_oss_infra.core.inputs.config import ModelCacheConfig
from gpt_oss_infra.core.resolve.sizing import fsx_capacity_gib

NFS_PORT = 2049
LUSTRE_PORTS = [(988, 988), (1018, 1023)]  # FSx for Lustre: LNet and its client ports [fsx-sg]
LUSTRE_VERSION = "2.15"  # FSx's recommended Lustre version; the one every PERSISTENT_2 option supports


@dataclass(frozen=True)
class ModelStorageArgs:
    config: ModelCacheConfig
    name: str  # cluster name, for tags
    vpc_id: pulumi.Input[str]
    subnet_ids: list[pulumi.Input[str]]  # private subnets (EFS: a mount target in each)
    node_security_group_id: pulumi.Input[str]  # the EKS cluster security group nodes carry


class ModelStorage(Component):
    """Outputs: file_system_id, for FSx dns_name and mount_name (the PV needs them), and `ready`:
    what a pod mounting the file system waits for (EFS mount targets, or the FSx file system and
    the node-side Lustre rules)."""

    def __init__(self, name: str, args: ModelStorageArgs, opts: pulumi.ResourceOptions | None = None):
        super().__init__("gpt-oss-infra:aws:ModelStorage", name, None, opts)
        efs = args.config.storage == "efs"
        keep = args.config.keep_on_destroy
        ports = [(NFS_PORT, NFS_PORT)] if efs else LUSTRE_PORTS
        group = aws.ec2.SecurityGroup(
            f"{name}-clients",
            vpc_id=args.vpc_id,
            description=f"model cache clients ({args.config.storage})",
            ingress=[
                {
                    "protocol": "tcp",
                    "from_port": low,
                    "to_port": high,
                    "security_groups": [args.node_security_group_id],
                    "self": not efs,  # Lustre servers talk to each other on the same ports
                }
                for low, high in ports
            ],
            egress=[{"protocol": "-1", "from_port": 0, "to_port": 0, "cidr_blocks": ["0.0.0.0/0"]}],
            tags={"Name": f"{args.name}-model-cache"},
            opts=self.child_opts(),
        )
        self.dns_name: pulumi.Output[str] | None = None
        self.mount_name: pulumi.Output[str] | None = None
        if efs:
            file_system = aws.efs.FileSystem(
                f"{name}-efs",
                encrypted=True,
                performance_mode="generalPurpose",
                throughput_mode="elastic",  # bursts to GB/s for the 60 GiB load without provisioning
                tags={"Name": f"{args.name}-model-cache"},
                # Kept, it holds no network: its mount targets (and their interfaces) are deleted, so the
                # security group, subnets and VPC can go.
                opts=self.child_opts(retain_on_delete=keep),
            )
            # Pulumi waits for each mount target to become available; pods mount through them.
            self.ready: list[pulumi.Resource] = [
                aws.efs.MountTarget(
                    f"{name}-efs-{index}",
                    file_system_id=file_system.id,
                    subnet_id=subnet,
                    security_groups=[group.id],
                    opts=self.child_opts(),
                )
                for index, subnet in enumerate(args.subnet_ids)
            ]
        else:
            file_system = aws.fsx.LustreFileSystem(
                f"{name}-fsx",
                deployment_type="PERSISTENT_2",
                storage_capacity=fsx_capacity_gib(args.config.size),
                per_unit_storage_throughput=args.config.fsx_throughput_per_tib,
                subnet_ids=args.subnet_ids[0],  # Lustre lives in one AZ: the first (pinned) one
                security_group_ids=[group.id],
                data_compression_type="LZ4",
                # No automatic backups: the cache holds a public checkpoint the download Job can fetch
                # again, and AWS's pages disagree on the default (0 or 30 days of billed backups).
                automatic_backup_retention_days=0,
                file_system_type_version=LUSTRE_VERSION,
                tags={"Name": f"{args.name}-model-cache"},
                # Never retained: its network interfaces would keep its security group, subnet and VPC from
                # being deleted (EC2's DependencyViolation). Kept, the weights outlive it as a final backup
                # [fsx-delete], which a new file system can be created from.
                skip_final_backup=not keep,
                final_backup_tags={"Name": f"{args.name}-model-cache-final"} if keep else None,
                opts=self.child_opts(),
            )
            # The clients' side of [fsx-sg]: nodes admit Lustre traffic from the file system.
            node_rules = [
                aws.vpc.SecurityGroupIngressRule(
                    f"{name}-nodes-lustre-{low}",
                    security_group_id=args.node_security_group_id,
                    referenced_security_group_id=group.id,
                    ip_protocol="tcp",
                    from_port=low,
                    to_port=high,
                    description=f"FSx for Lustre {low}-{high} from the model cache file system",
                    opts=self.child_opts(),
                )
                for low, high in LUSTRE_PORTS
            ]
            # Pulumi waits for the file system to become AVAILABLE.
            self.ready = [file_system, *node_rules]
            self.dns_name = file_system.dns_name
            self.mount_name = file_system.mount_name
        self.file_system_id = file_system.id
        self.register_outputs({"fileSystemId": self.file_system_id})
