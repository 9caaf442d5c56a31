"""AWS pieces of the EKS cluster target: control plane, network, node groups, model storage."""
