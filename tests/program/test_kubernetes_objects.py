"""Every Kubernetes object the program registers is a manifest the core rendered and checked, as it is:
the run-time side of tests/test_import_graph.py's one-path test. Only the values the shell alone knows
are filled in: a created file system's id in the EFS StorageClass, FSx's in its static volume, and the
Karpenter node role's name in an elastic pool's EC2NodeClass."""

from __future__ import annotations

import pytest

from tests.support import example_entries, rendered_objects, stack_names, successful_run

# What the shell fills in, by kind and field (components/model_cache.py): the file system made with the
# stack, known once it exists.
FILLED_BY_THE_SHELL = {
    ("StorageClass", "parameters"): ["fileSystemId"],  # EFS
    ("PersistentVolume", "spec"): ["csi.volumeHandle", "csi.volumeAttributes"],  # FSx for Lustre
    ("EC2NodeClass", "spec"): ["role"],  # an elastic pool's: Karpenter's node role (components/aws/karpenter.py)
}


def registered_and_rendered(stack: str) -> tuple[list[dict], dict[tuple, dict]]:
    """The Kubernetes objects the shared run of the stack registers (not Helm releases or providers), and
    those the core rendered for that run, by kind, namespace and name."""
    entries = example_entries(stack)
    rendered = {
        (obj["kind"], obj["metadata"].get("namespace", ""), obj["metadata"]["name"]): obj
        for obj in rendered_objects(entries, stack)
    }
    kubernetes = [
        r.inputs
        for r in successful_run(entries, stack).resources
        if r.type.startswith("kubernetes:") and not r.type.startswith(("kubernetes:helm", "pulumi:providers"))
    ]
    return kubernetes, rendered


def differences(registered: dict, manifest: dict) -> list[str]:
    """The top-level fields in which a registered object is not its manifest, but for the shell's fills."""
    found = []
    for field in sorted(set(registered) | set(manifest)):
        fills = FILLED_BY_THE_SHELL.get((manifest["kind"], field), [])
        if _without(registered.get(field), fills) != _without(manifest.get(field), fills):
            found.append(field)
    return found


def _without(value: object, paths: list[str]) -> object:
    """`value` without the dotted `paths` in it."""
    if not isinstance(value, dict) or not paths:
        return value
    heads = {path.split(".", 1)[0] for path in paths}
    return {
        key: _without(item, [path.split(".", 1)[1] for path in paths if path.startswith(f"{key}.")])
        for key, item in value.items()
        if key not in heads or any(path.startswith(f"{key}.") for path in paths)
    }


@pytest.mark.parametrize("stack", stack_names())
def test_every_kubernetes_object_registered_is_a_rendered_manifest(stack):
    registered, rendered = registered_and_rendered(stack)
    assert len(registered) == len(rendered) > 10
    for inputs in registered:
        key = (inputs["kind"], inputs["metadata"].get("namespace", ""), inputs["metadata"]["name"])
        assert key in rendered, key
        assert differences(inputs, rendered[key]) == [], key


def test_an_object_the_shell_changed_is_caught():
    manifest = {"kind": "ConfigMap", "metadata": {"name": "a"}, "data": {"k": "v"}}
    assert differences(manifest | {"data": {"k": "changed"}}, manifest) == ["data"]
    storage_class = {"kind": "StorageClass", "parameters": {"x": "1"}}
    filled = {"kind": "StorageClass", "parameters": {"fileSystemId": "fs-0123", "x": "1"}}
    assert differences(filled, storage_class) == []
    assert differences(filled | {"parameters": {"fileSystemId": "fs-0123", "x": "2"}}, storage_class) == ["parameters"]
