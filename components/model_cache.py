"""Where the weights live: the model cache PVC and the HF token Secret."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pulumi
import pulumi_kubernetes as k8s

from components.base import Component
from components.kube import resource_args
from core import manifests


@dataclass(frozen=True)
class ModelCacheArgs:
    pvc: dict[str, Any]
    hf_token_secret: dict[str, Any] | None  # the Secret without data
    hf_token: pulumi.Output[str] | None  # a Pulumi secret, set when hf_token_secret is


class ModelCache(Component):
    def __init__(self, name: str, args: ModelCacheArgs, opts: pulumi.ResourceOptions | None = None):
        super().__init__("gpt-oss-infra:model:ModelCache", name, None, opts)
        if args.hf_token_secret is not None:
            k8s.core.v1.Secret(
                f"{name}-hf-token",
                **resource_args(args.hf_token_secret),
                string_data={manifests.HF_TOKEN_KEY: args.hf_token},
                opts=self.child_opts(),
            )
        # The weights outlive every workload change: never deleted, never replaced by accident.
        k8s.core.v1.PersistentVolumeClaim(
            f"{name}-pvc",
            **resource_args(args.pvc),
            opts=self.child_opts(protect=True, retain_on_delete=True),
        )
        self.register_outputs({})
