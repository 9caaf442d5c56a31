"""A Kubernetes API client from a kubeconfig as pulumi-kubernetes takes it (`kubernetes:kubeconfig`):
its path, or its contents (YAML, or one-line JSON as `pulumi stack output kubeconfig` gives it);
None: KUBECONFIG or ~/.kube/config. Used where the program or a tool reads the cluster itself: the
destroy-time waits and `make preflight`."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml


def api_client(kubeconfig: str | None, context: str | None) -> Any:
    """A kubernetes.client.ApiClient; kubernetes.config.ConfigException for a kubeconfig that is neither."""
    import kubernetes  # imported where a cluster is read, not by every program run

    if kubeconfig and not Path(kubeconfig).expanduser().exists():
        contents = yaml.safe_load(kubeconfig)
        if not isinstance(contents, dict):
            raise kubernetes.config.ConfigException(f"neither a kubeconfig nor a file: {kubeconfig[:60]}")
        return kubernetes.config.new_client_from_config_dict(contents, context=context)
    path = str(Path(kubeconfig).expanduser()) if kubeconfig else None
    return kubernetes.config.new_client_from_config(config_file=path, context=context)
