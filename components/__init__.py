"""Pulumi components: each turns plain manifests and specs from `core` into resources."""
