"""A Kubernetes API client from a kubeconfig as pulumi-kubernetes takes it (`kubernetes:kubeconfig`):
its path, or its contents (YAML, or one-line JSON as `pulumi stack output kubeconfig` gives it);
None: KUBECONFIG or ~/.kube/config. Used where the program or a tool reads the cluster itself: the
ownership check before `up` on an existing cluster (components/cluster_ownership.py) and `make preflight`."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml


def api_client(kubeconfig: str | None, context: str | None) -> Any:
    """A kubernetes.client.ApiClient; kubernetes.config.ConfigException for a kubeconfig that is neither."""
    import kubernetes  # imported where a cluster is read, not by every program run

    if kubeconfig and is_contents(kubeconfig):
        contents = yaml.safe_load(kubeconfig)
        if not isinstance(contents, dict):  # never quoted: contents may hold credentials
            raise kubernetes.config.ConfigException("neither a kubeconfig nor a file (kubernetes:kubeconfig)")
        return kubernetes.config.new_client_from_config_dict(contents, context=context)
    path = Path(kubeconfig).expanduser() if kubeconfig else None
    if path is not None and not path.is_file():  # the client's own message would not name it
        raise kubernetes.config.ConfigException(
            f"no kubeconfig file at {path} (kubernetes:kubeconfig: a path or the contents)"
        )
    return kubernetes.config.new_client_from_config(config_file=str(path) if path else None, context=context)


def is_contents(kubeconfig: str) -> bool:
    """Whether the value is a kubeconfig's contents rather than a path, decided without touching the file
    system: contents of some kilobytes are no path (Path.exists raises ENAMETOOLONG on them)."""
    return "\n" in kubeconfig or kubeconfig.lstrip().startswith(("{", "apiVersion")) or len(kubeconfig) > 4096
