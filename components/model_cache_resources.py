"""Where the weights live in the cluster: StorageClass (and FSx PV), the PVC, the HF token Secret
and the pinned download Job that fills the cache."""

from __future__ import annotations

from dataclasses import dataclass

import pulumi
import pulumi_kubernetes as k8s

from gpt_oss_infra.components.base import Component
from gpt_oss_infra.components.kubernetes import resource_args, scripted_job
from gpt_oss_infra.components.targets.target import FileSystemRef
from gpt_oss_infra.core.render import manifests
from gpt_oss_infra.core.render.stack_objects import ModelCacheObjects


@dataclass(frozen=True)
class StackModelCacheArgs:
    objects: ModelCacheObjects
    file_system: FileSystemRef | None  # None for `existing` storage
    hf_token: pulumi.Output[str] | None  # a Pulumi secret, set when objects.hf_token_secret is
    download_timeout: str  # how long `pulumi up` waits for the download Job


class StackModelCache(Component):
    """GptOssStack's model cache. Its type keeps the token of the program before 0.1.0, so that live
    stacks keep their URNs; the public ModelCache makes the same resources. `download` is the Job;
    depend on it (or on this component) to wait for a full cache."""

    def __init__(self, name: str, args: StackModelCacheArgs, opts: pulumi.ResourceOptions | None = None):
        super().__init__("gpt-oss-infra:model:ModelCache", name, None, opts)
        self.download = add_model_cache(self, name, args).download
        self.register_outputs({"downloadJob": self.download.metadata["name"]})


@dataclass(frozen=True)
class CacheResources:
    claim: k8s.core.v1.PersistentVolumeClaim
    download: k8s.batch.v1.Job  # complete once `up` passes it


def add_model_cache(
    owner: Component, name: str, args: StackModelCacheArgs, after: list[pulumi.Resource] | None = None
) -> CacheResources:
    """The cache's resources, children of `owner`; its claim after `after` (its teardown guard, which
    must outlive it)."""
    objects = args.objects
    storage: list[pulumi.Resource] = []
    if objects.storage_class is not None:
        storage_class = objects.storage_class
        if storage_class["provisioner"] == "efs.csi.aws.com":
            assert args.file_system is not None, "an EFS StorageClass is the cache's own file system's"
            storage_class = storage_class | {
                "parameters": storage_class["parameters"] | {"fileSystemId": args.file_system.id}
            }
        storage.append(
            k8s.storage.v1.StorageClass(
                f"{name}-storage-class",
                **resource_args(storage_class),
                # Kubernetes refuses to update these, and pulumi-kubernetes replaces a StorageClass only
                # for its parameters and provisioner: a change replaces it, the old one first (one name).
                # Its volumes keep the policy they were made with.
                opts=owner.child_opts(
                    replace_on_changes=["reclaimPolicy", "volumeBindingMode"], delete_before_replace=True
                ),
            )
        )
    if objects.persistent_volume is not None:
        assert args.file_system is not None, "a static volume (FSx for Lustre) is the cache's own file system's"
        volume = objects.persistent_volume
        csi = volume["spec"]["csi"] | {
            "volumeHandle": args.file_system.id,
            "volumeAttributes": {
                "dnsname": args.file_system.dns_name,
                "mountname": args.file_system.mount_name,
            },
        }
        storage.append(
            k8s.core.v1.PersistentVolume(
                f"{name}-pv",
                **resource_args(volume | {"spec": volume["spec"] | {"csi": csi}}),
                opts=owner.child_opts(depends_on=storage),
            )
        )
    secrets = []
    if objects.hf_token_secret is not None:
        assert args.hf_token is not None, "the core renders the token's Secret only when a token is given"
        secrets.append(
            k8s.core.v1.Secret(
                f"{name}-hf-token",
                **resource_args(objects.hf_token_secret),
                string_data={manifests.HF_TOKEN_KEY: args.hf_token},
                opts=owner.child_opts(),
            )
        )
    pvc = k8s.core.v1.PersistentVolumeClaim(
        f"{name}-pvc", **resource_args(objects.pvc), opts=owner.child_opts(depends_on=[*storage, *(after or [])])
    )
    # Pulumi waits for the Job to succeed (pulumi-kubernetes' Job await), so whatever depends
    # on it starts only with a complete cache.
    download = scripted_job(
        owner,
        f"{name}-download",
        objects.download,
        depends_on=[pvc, *secrets],
        custom_timeouts=pulumi.CustomTimeouts(create=args.download_timeout, update=args.download_timeout),
    )
    return CacheResources(pvc, download)
