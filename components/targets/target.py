"""What every cluster target gives the rest of the program: one small object, whatever the kind."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pulumi
import pulumi_kubernetes as k8s


@dataclass(frozen=True)
class ClusterAccess:
    """How the program itself reaches the cluster, as its Kubernetes provider does: the kubeconfig
    (contents or a path; None: KUBECONFIG or ~/.kube/config) and context."""

    kubeconfig: pulumi.Input[str] | None
    context: str | None = None


@dataclass(frozen=True)
class FileSystemRef:
    """The file system behind the model cache, where the target creates one."""

    id: pulumi.Input[str]
    dns_name: pulumi.Input[str] | None = None  # FSx for Lustre
    mount_name: pulumi.Input[str] | None = None  # FSx for Lustre


@dataclass(frozen=True)
class ClusterTarget:
    provider: k8s.Provider  # every Kubernetes resource of the stack goes through it, but the CRDs below
    access: ClusterAccess  # the provider's kubeconfig: what the program reads the cluster with
    # The program-applied Dynamo CRDs' own, upserting provider (components/kubernetes.crds_provider), where
    # the release has the program apply CRDs (up to 1.2.1).
    crds_provider: k8s.Provider | None = None
    # Everything but GPU workloads waits for these, and only these.
    system_ready: list[pulumi.Resource] = field(default_factory=list)
    # Per pool the target makes nodes for: what its workloads wait for too (its node group, or an elastic
    # pool's NodePool, a cpu pool's included).
    gpu_ready: dict[str, pulumi.Resource] = field(default_factory=dict)
    file_system: FileSystemRef | None = None  # None: the model cache uses an existing StorageClass
    storage_ready: list[pulumi.Resource] = field(default_factory=list)  # what mounting the file system needs
    # What gateways wait for, so their Services get a load balancer (and lose it before it goes).
    load_balancers_ready: list[pulumi.Resource] = field(default_factory=list)
    exports: dict[str, Any] = field(default_factory=dict)  # stack outputs about the cluster
