"""Where the weights live: the model cache PVC and the HF token Secret."""

from __future__ import annotations

from dataclasses import dataclass

import pulumi
import pulumi_kubernetes as k8s

from components.kube import resource_args
from core import manifests


@dataclass(frozen=True)
class ModelCacheArgs:
    namespace: str
    size: str
    storage_class: str
    hf_token: pulumi.Output[str] | None  # a Pulumi secret; no Secret object without it


class ModelCache(pulumi.ComponentResource):
    def __init__(self, name: str, args: ModelCacheArgs, opts: pulumi.ResourceOptions | None = None):
        super().__init__("gpt-oss-infra:model:ModelCache", name, None, opts)
        self.hf_token_secret = None
        if args.hf_token is not None:
            self.hf_token_secret = k8s.core.v1.Secret(
                f"{name}-hf-token",
                **resource_args(manifests.hf_token_secret(args.namespace, args.hf_token)),
                opts=pulumi.ResourceOptions(parent=self),
            )
        # The weights outlive every workload change: never deleted, never replaced by accident.
        self.pvc = k8s.core.v1.PersistentVolumeClaim(
            f"{name}-pvc",
            **resource_args(manifests.model_cache_pvc(args.namespace, args.size, args.storage_class)),
            opts=pulumi.ResourceOptions(parent=self, protect=True, retain_on_delete=True),
        )
        self.register_outputs({"pvcName": manifests.MODEL_CACHE_PVC})
