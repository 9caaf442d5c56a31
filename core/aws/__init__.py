"""The EKS target's side of the core: node groups, add-ons, Capacity Blocks and the EFA layout as
plain specs, decided from the config and what the AWS account reports."""
