"""What `pulumi destroy` waits for: AWS resources that controllers in the cluster make for Kubernetes
objects, and delete only while they run. They are not Pulumi resources, so dependencies alone cannot
order their deletion: a wait, deleted (run) after what uses them and before the controller, holds
the destroy until they are gone, or fails it, bounded, naming what is left.

  Load balancers  each gateway's NLB, its listeners, target groups and security groups: the AWS Load
                  Balancer Controller deletes them when the Envoy Service that Envoy Gateway made for
                  the Gateway is deleted, then removes the Service's finalizer
                  (aws-load-balancer-controller#3043: if the controller goes first, they stay). The wait
                  runs after the Gateways, before the controller and Envoy Gateway; it waits for the
                  Services to be gone.
  EBS volumes     the EBS CSI driver's, for the claims of the charts' StatefulSets (NATS JetStream in
                  the platform's namespace; Prometheus in the monitoring namespace). Uninstalling a
                  chart leaves a StatefulSet's claims behind; deleting the namespace, which Pulumi does
                  (and waits for) before the wait, deletes them, and the driver then deletes their
                  volumes (reclaim policy Delete). The wait runs before the nodes and the driver go:
                  it waits for those volumes to be gone.

Not awaited: the model cache's EFS access point and FSx volume (reclaim policy Retain: the weights stay,
with the protected file system), and the VPC CNI's network interfaces, released with their nodes.
"""

from __future__ import annotations

from dataclasses import dataclass

# Time for the controllers to delete what they made: an NLB goes in a minute or two, an EBS volume
# once detached from its node, which happens when the pod that used it is gone.
WAIT_SECONDS = 900


@dataclass(frozen=True)
class DestroyWait:
    name: str  # of its Pulumi resource, under the component that holds it
    nlb_services: list[str]  # "namespace/name": Services whose finalizer holds an NLB, to be gone
    claim_namespaces: list[str]  # the volumes (reclaim Delete) of claims in these namespaces, to be gone
    leftovers: str  # where to look in the AWS account if the wait gives up
    timeout_seconds: int = WAIT_SECONDS


def load_balancer_wait(envoy_services: list[str], cluster: str) -> DestroyWait:
    return DestroyWait(
        name="load-balancers-gone",
        nlb_services=envoy_services,
        claim_namespaces=[],
        leftovers=(
            "aws resourcegroupstaggingapi get-resources --tag-filters "
            f"Key=elbv2.k8s.aws/cluster,Values={cluster} (the controller's NLBs, target groups and security groups)"
        ),
    )


def volume_wait(namespaces: list[str]) -> DestroyWait:
    return DestroyWait(
        name="volumes-gone",
        nlb_services=[],
        claim_namespaces=namespaces,
        leftovers=(
            "aws ec2 describe-volumes --filters Name=tag:kubernetes.io/created-for/pvc/namespace,Values="
            f"{','.join(namespaces)} (the EBS CSI driver tags each volume with its claim's namespace and name)"
        ),
    )
