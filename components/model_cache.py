"""The public ModelCache block: where the weights live in the cluster (a StorageClass, or an FSx static
volume, the claim, the HF token Secret) and the pinned download Job that fills it. GptOssStack makes its
cache with this block too (`ModelCache.of_stack`).
This module is analyzed for the component schema: no postponed annotations here."""

from dataclasses import dataclass
from typing import NotRequired, TypedDict

import pulumi
import pulumi_kubernetes as k8s

from gpt_oss_infra.components.arguments import refusal, refuse_bad_arguments, refuse_plaintext
from gpt_oss_infra.components.block_decisions import (
    Block,
    CacheFacts,
    caches_of_this_program,
    cluster_of,
    refuse_made_twice,
    refused,
    this_program,
)
from gpt_oss_infra.components.kubernetes import resource_args, scripted_job
from gpt_oss_infra.components.targets.target import FileSystemRef
from gpt_oss_infra.components.teardown_resources import guards_of, volumes_gone
from gpt_oss_infra.core import blocks
from gpt_oss_infra.core.errors import ConfigError, Problem
from gpt_oss_infra.core.inputs.catalog import load_catalog
from gpt_oss_infra.core.render import manifests
from gpt_oss_infra.core.render.stack_objects import ModelCacheObjects
from gpt_oss_infra.core.render.teardown import Teardown


class ModelCacheArgs(TypedDict):
    namespace: str
    """The namespace of the deployments that load the model (it must exist)."""
    storage: NotRequired[str | None]
    """existing (the default: a ReadWriteMany StorageClass of the cluster), efs or fsx-lustre."""
    storage_class_name: NotRequired[str | None]
    """The ReadWriteMany StorageClass: with storage existing, the cluster's; with efs or fsx-lustre, the
    one made here (default gpt-oss-efs or gpt-oss-fsx-lustre: a cluster-wide name, so give each cache of
    a cluster its own)."""
    size: NotRequired[str | None]
    """The volume's size (default 400Gi)."""
    file_system_id: NotRequired[pulumi.Input[str] | None]
    """The EFS (fs-...) or FSx for Lustre file system, with storage efs or fsx-lustre."""
    fsx_dns_name: NotRequired[pulumi.Input[str] | None]
    """The FSx for Lustre file system's DNS name, with storage fsx-lustre."""
    fsx_mount_name: NotRequired[pulumi.Input[str] | None]
    """The FSx for Lustre file system's mount name, with storage fsx-lustre."""
    fsx_throughput_per_tib: NotRequired[int | None]
    """The FSx for Lustre file system's throughput per TiB (125, 250, 500 or 1000), for its check."""
    hf_token: NotRequired[pulumi.Input[str] | None]
    """A Hugging Face token for the download (a secret); none for a public model."""
    dynamo_release: NotRequired[str | None]
    """The Dynamo release of the deployments (their runtime image waits for the cache)."""
    model_revision: NotRequired[str | None]
    """The Hugging Face commit of openai/gpt-oss-120b to download (default: the one the stacks pin)."""
    kubernetes_version: NotRequired[str | None]
    """The cluster's Kubernetes version the objects are checked against (default 1.36)."""


@dataclass(frozen=True)
class DecidedModelCache:
    """What a ModelCache registers, decided from its arguments (or by GptOssStack from the stack config)."""

    objects: ModelCacheObjects
    file_system: FileSystemRef | None  # None for `existing` storage
    hf_token: pulumi.Output[str] | None  # a Pulumi secret, set when objects.hf_token_secret is
    download_timeout: str  # how long `pulumi up` waits for the download Job
    guards: Teardown | None  # its own teardown guard (GptOssStack guards its cache with the stack's)


class ModelCache(Block[DecidedModelCache]):
    """The shared volume of a namespace's deployments and the pinned download of one model revision
    into it: its claim (never replaced), on a StorageClass made here for EFS (or a static volume for FSx
    for Lustre) or an existing one, and the download Job, which `up` waits for: make each
    GptOssDeployment depend on this component. Kubernetes resources go through the program's provider.
    On EFS, `destroy` waits (a teardown guard in `<namespace>-teardown`) for the EFS CSI driver to delete
    the claim's access point: make this component depend on the cluster's nodes and that driver."""

    claim_name: pulumi.Output[str]
    """The PersistentVolumeClaim the deployments mount."""
    download_job: pulumi.Output[str]
    """The download Job's name."""

    def __init__(self, name: str, args: ModelCacheArgs, opts: pulumi.ResourceOptions | None = None):
        refuse_bad_arguments("ModelCache", name, args, ModelCacheArgs)
        refuse_plaintext("ModelCache", name, args, ["hf_token"])
        catalog = load_catalog()
        hf_token = args.get("hf_token")
        block = refused(
            "ModelCache",
            name,
            lambda: blocks.model_cache(
                blocks.whole(dict(args)), catalog, with_hf_token=hf_token is not None, owner=this_program()
            ),
        )
        file_system = _file_system(name, args)  # after the part model has checked `storage`
        objects = block.objects
        in_namespace = [objects.pvc, objects.persistent_volume, objects.hf_token_secret, *objects.download.objects()]
        made = {
            "namespace": [*filter(None, in_namespace), *(block.guards.objects() if block.guards else [])],
            "storage_class_name": [objects.storage_class] if objects.storage_class else [],
        }
        refuse_made_twice("ModelCache", name, opts, made)
        decided = DecidedModelCache(
            objects=block.objects,
            file_system=file_system,
            hf_token=pulumi.Output.secret(hf_token) if hf_token else None,
            download_timeout=f"{catalog.model_download.active_deadline_seconds}s",
            guards=block.guards,
        )
        self._register(name, decided, opts)
        caches_of_this_program().setdefault(args["namespace"], []).append(
            CacheFacts(
                name,
                blocks.shared_argument(args, "model_revision"),
                hf_token is not None,
                cluster_of(opts),
            )
        )

    def _register(self, name: str, decided: DecidedModelCache, opts: pulumi.ResourceOptions | None) -> None:
        super().__init__("gpt-oss-infra:index:ModelCache", name, None, opts)
        # What `pulumi destroy` waits on: the EFS CSI driver deleting the claim's access point.
        guards = guards_of(f"{name}-teardown", decided.guards, self.child_opts())
        storage = self._storage(name, decided)
        secrets = []
        objects = decided.objects
        if objects.hf_token_secret is not None:
            assert decided.hf_token is not None, "the core renders the token's Secret only when a token is given"
            secrets.append(
                k8s.core.v1.Secret(
                    f"{name}-hf-token",
                    **resource_args(objects.hf_token_secret),
                    string_data={manifests.HF_TOKEN_KEY: decided.hf_token},
                    opts=self.child_opts(),
                )
            )
        claim = k8s.core.v1.PersistentVolumeClaim(
            f"{name}-pvc",
            **resource_args(objects.pvc),
            opts=self.child_opts(depends_on=[*storage, *volumes_gone(guards)]),
        )
        # Pulumi waits for the Job to succeed (pulumi-kubernetes' Job await), so whatever depends
        # on it starts only with a complete cache.
        download = scripted_job(
            self,
            f"{name}-download",
            objects.download,
            depends_on=[claim, *secrets],
            custom_timeouts=pulumi.CustomTimeouts(create=decided.download_timeout, update=decided.download_timeout),
        )
        # Read from the claim and the Job: whatever uses them waits for the cache.
        self.claim_name = claim.metadata["name"]
        self.download_job = download.metadata["name"]
        self.register_outputs({"claimName": self.claim_name, "downloadJob": self.download_job})

    def _storage(self, name: str, decided: DecidedModelCache) -> list[pulumi.Resource]:
        """The StorageClass made for the cache (EFS, FSx for Lustre), and FSx's static volume."""
        objects = decided.objects
        storage: list[pulumi.Resource] = []
        if objects.storage_class is not None:
            storage_class = objects.storage_class
            if storage_class["provisioner"] == "efs.csi.aws.com":
                assert decided.file_system is not None, "an EFS StorageClass is the cache's own file system's"
                storage_class = storage_class | {
                    "parameters": storage_class["parameters"] | {"fileSystemId": decided.file_system.id}
                }
            storage.append(
                k8s.storage.v1.StorageClass(
                    f"{name}-storage-class",
                    **resource_args(storage_class),
                    # Kubernetes refuses to update these, and pulumi-kubernetes replaces a StorageClass only
                    # for its parameters and provisioner: a change replaces it, the old one first (one name).
                    # Its volumes keep the policy they were made with.
                    opts=self.child_opts(
                        replace_on_changes=["reclaimPolicy", "volumeBindingMode"], delete_before_replace=True
                    ),
                )
            )
        if objects.persistent_volume is not None:
            assert decided.file_system is not None, "a static volume (FSx for Lustre) is the cache's own file system's"
            volume = objects.persistent_volume
            csi = volume["spec"]["csi"] | {
                "volumeHandle": decided.file_system.id,
                "volumeAttributes": {
                    "dnsname": decided.file_system.dns_name,
                    "mountname": decided.file_system.mount_name,
                },
            }
            storage.append(
                k8s.core.v1.PersistentVolume(
                    f"{name}-pv",
                    **resource_args(volume | {"spec": volume["spec"] | {"csi": csi}}),
                    opts=self.child_opts(depends_on=storage),
                )
            )
        return storage


def _file_system(name: str, args: ModelCacheArgs) -> FileSystemRef | None:
    """The file system an EFS or FSx for Lustre cache provisions on, or the run stopped naming what is missing."""
    storage = args.get("storage") or "existing"
    needed = {"efs": ["file_system_id"], "fsx-lustre": ["file_system_id", "fsx_dns_name", "fsx_mount_name"]}
    missing = [argument for argument in needed.get(storage, []) if args.get(argument) is None]
    if missing:
        raise refusal(
            "ModelCache", name, ConfigError([Problem(m, f"required with storage {storage}") for m in missing])
        )
    if storage == "existing":
        return None
    file_system_id = args.get("file_system_id")
    assert file_system_id is not None, "checked with `missing` above"
    return FileSystemRef(file_system_id, args.get("fsx_dns_name"), args.get("fsx_mount_name"))
