"""DynamoGraphDeployment shapes: the one place that knows where a graph's fields live, per apiVersion.

Dynamo's graph API changed shape between releases (configs/dynamo/versions.yaml says which release
renders which):
- nvidia.com/v1alpha1: `spec.services.<name>` with `componentType` (+ `subComponentType` for prefill
  and decode), `resources` with `gpu` and `custom`, `sharedMemory.size`, the model volume as
  `volumeMounts` + `spec.pvcs`, `envFromSecret`, `extraPodMetadata`, and `extraPodSpec` whose
  `mainContainer` is the component's process;
- nvidia.com/v1beta1: a `spec.components` list, each with `name`, `type`, `replicas`,
  `sharedMemorySize` and a plain Kubernetes `podTemplate` whose container named `main` is the
  component's process (its own `resources`, `envFrom` and `volumeMounts`).

Everything else in the program (the renderer, the placement check, the dependency walk, the policy
pack and the tests) reads and writes graphs as `GraphComponent`s, the same whatever the shape:
`render_graph` writes one, `graph_components` reads one back.

Standard library only: the policy pack, which runs in its own venv, imports this module too.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Literal

KIND = "DynamoGraphDeployment"
MAIN_CONTAINER = "main"  # v1beta1: the podTemplate container the operator merges its defaults into
GPU_RESOURCE = "nvidia.com/gpu"
# The apiVersions of the shapes below (_SHAPES): what a release's graphApiVersion may name.
GraphApiVersion = Literal["nvidia.com/v1alpha1", "nvidia.com/v1beta1"]


@dataclass(frozen=True)
class ModelVolume:
    """A PersistentVolumeClaim mounted into the main container (the model cache)."""

    claim: str
    mount_path: str


@dataclass(frozen=True)
class GraphComponent:
    """One component of a graph (the frontend, or a worker role), whatever the apiVersion.

    `pod` is a Kubernetes PodSpec whose `containers` holds the main container alone, without the
    fields this class carries apart (GPUs and devices, the model volume's mount, the env Secret)."""

    name: str
    type: str  # frontend | worker | prefill | decode | planner
    replicas: int
    pod: dict[str, Any]
    labels: dict[str, str] = field(default_factory=dict)
    annotations: dict[str, str] = field(default_factory=dict)
    gpus: int = 0
    devices: dict[str, str] = field(default_factory=dict)  # other extended resources, e.g. EFA devices
    shared_memory: str | None = None  # /dev/shm size; None: the operator's default
    volume: ModelVolume | None = None
    env_secret: str | None = None  # a Secret whose keys become the main container's environment
    # The Dynamo runtime version of an image whose tag does not say it (v1beta1 only: v1alpha1 has no
    # such field, and admission asks for it only from 1.4, whose graphs are v1beta1).
    runtime_version: str | None = None
    # Its replicas are the DynamoGraphDeploymentScalingAdapter's, which Dynamo's Planner scales: the graph
    # leaves them out (the operator starts the adapter at one, `replicas` here), so no apply resets them.
    scaling_adapter: bool = False

    @property
    def main(self) -> dict[str, Any]:
        main: dict[str, Any] = self.pod["containers"][0]
        return main

    def resources(self) -> dict[str, str]:
        return ({GPU_RESOURCE: str(self.gpus)} if self.gpus else {}) | self.devices

    def pod_template(self) -> dict[str, Any]:
        """The Kubernetes PodTemplateSpec this component's pods get: the main container with its
        resources, env Secret and model volume mount, and the claim among the pod's volumes."""
        main = {"name": MAIN_CONTAINER, **self.main}
        if self.resources():  # beside the main container's own CPU and memory, if it has any
            own = self.main.get("resources") or {}
            main["resources"] = {
                "requests": (own.get("requests") or {}) | self.resources(),
                "limits": (own.get("limits") or {}) | self.resources(),
            }
        if self.env_secret:
            main["envFrom"] = [{"secretRef": {"name": self.env_secret}}]
        spec = dict(self.pod)
        if self.volume:
            main["volumeMounts"] = [
                *main.get("volumeMounts", []),
                {"name": self.volume.claim, "mountPath": self.volume.mount_path},
            ]
            claim = {"name": self.volume.claim, "persistentVolumeClaim": {"claimName": self.volume.claim}}
            spec["volumes"] = [*spec.get("volumes", []), claim]
        spec["containers"] = [main]
        metadata: dict[str, Any] = {"labels": self.labels}
        if self.annotations:
            metadata["annotations"] = self.annotations
        return {"metadata": metadata, "spec": spec}


class _V1alpha1:
    api_version: GraphApiVersion = "nvidia.com/v1alpha1"

    @staticmethod
    def write_spec(backend_framework: str | None, components: list[GraphComponent]) -> dict[str, Any]:
        claims = list(dict.fromkeys(c.volume.claim for c in components if c.volume))
        spec: dict[str, Any] = {"backendFramework": backend_framework} if backend_framework else {}
        if claims:  # the operator may only mount claims the graph lists
            spec["pvcs"] = [{"name": claim, "create": False} for claim in claims]
        spec["services"] = {component.name: _V1alpha1._service(component) for component in components}
        return spec

    @staticmethod
    def _service(component: GraphComponent) -> dict[str, Any]:
        service: dict[str, Any] = {
            "componentType": "worker" if component.type in ("prefill", "decode") else component.type,
        }
        if not component.scaling_adapter:  # else its scaling adapter's, which the operator starts at one
            service["replicas"] = component.replicas
        if component.gpus or component.devices:
            resources: dict[str, Any] = {"gpu": str(component.gpus)}
            if component.devices:
                resources["custom"] = component.devices
            service["resources"] = {"requests": resources, "limits": resources}
        if component.shared_memory:
            service["sharedMemory"] = {"size": component.shared_memory}
        if component.volume:
            service["volumeMounts"] = [{"name": component.volume.claim, "mountPoint": component.volume.mount_path}]
        metadata: dict[str, Any] = {"labels": component.labels}
        if component.annotations:
            metadata["annotations"] = component.annotations
        service["extraPodMetadata"] = metadata
        # The pod's fields in their own order, the main container where `containers` stands.
        service["extraPodSpec"] = {
            ("mainContainer" if key == "containers" else key): (value[0] if key == "containers" else value)
            for key, value in component.pod.items()
        }
        if component.type in ("prefill", "decode"):
            service["subComponentType"] = component.type
        if component.env_secret:
            service["envFromSecret"] = component.env_secret
        if component.scaling_adapter:  # v1alpha1: off unless enabled (the CRD's description)
            service["scalingAdapter"] = {"enabled": True}
        return service

    @staticmethod
    def read_spec(spec: dict[str, Any]) -> list[GraphComponent]:
        components = []
        for name, service in (spec.get("services") or {}).items():
            extra = service.get("extraPodSpec") or {}
            pod = {("containers" if key == "mainContainer" else key): value for key, value in extra.items()}
            pod["containers"] = [extra.get("mainContainer") or {}]
            requests = (service.get("resources") or {}).get("requests") or {}
            metadata = service.get("extraPodMetadata") or {}
            mounts = service.get("volumeMounts") or []
            components.append(
                GraphComponent(
                    name=name,
                    type=service.get("subComponentType") or service.get("componentType", ""),
                    replicas=service.get("replicas", 1),
                    pod=pod,
                    labels=metadata.get("labels") or {},
                    annotations=metadata.get("annotations") or {},
                    gpus=int(requests.get("gpu", 0)),
                    devices=requests.get("custom") or {},
                    shared_memory=(service.get("sharedMemory") or {}).get("size"),
                    volume=ModelVolume(mounts[0]["name"], mounts[0]["mountPoint"]) if mounts else None,
                    env_secret=service.get("envFromSecret"),
                    scaling_adapter=bool((service.get("scalingAdapter") or {}).get("enabled")),
                )
            )
        return components


class _V1beta1:
    api_version: GraphApiVersion = "nvidia.com/v1beta1"

    @staticmethod
    def write_spec(backend_framework: str | None, components: list[GraphComponent]) -> dict[str, Any]:
        framework = {"backendFramework": backend_framework} if backend_framework else {}
        return framework | {"components": [_V1beta1._component(component) for component in components]}

    @staticmethod
    def _component(component: GraphComponent) -> dict[str, Any]:
        written: dict[str, Any] = {"name": component.name, "type": component.type}
        if not component.scaling_adapter:  # else its scaling adapter's, which the operator starts at one
            written["replicas"] = component.replicas
        if component.shared_memory:
            written["sharedMemorySize"] = component.shared_memory
        if component.runtime_version:
            written["runtimeVersionOverride"] = component.runtime_version
        if component.scaling_adapter:  # v1beta1: the object's presence opts in (the CRD's description)
            written["scalingAdapter"] = {}
        written["podTemplate"] = component.pod_template()
        return written

    @staticmethod
    def read_spec(spec: dict[str, Any]) -> list[GraphComponent]:
        return [_V1beta1._read_component(component) for component in spec.get("components") or []]

    @staticmethod
    def _read_component(component: dict[str, Any]) -> GraphComponent:
        template = component.get("podTemplate") or {}
        spec = dict(template.get("spec") or {})
        containers = spec.get("containers") or []
        main = dict(next((c for c in containers if c.get("name") == MAIN_CONTAINER), {}))
        main.pop("name", None)
        # GPUs and other extended resources (a domain-qualified name) are the component's; CPU and memory
        # stay the main container's own.
        resources = main.pop("resources", None) or {}
        requests = {name: value for name, value in (resources.get("requests") or {}).items() if "/" in name}
        own = {
            kind: {name: value for name, value in amounts.items() if "/" not in name}
            for kind, amounts in resources.items()
            if any("/" not in name for name in amounts or {})
        }
        if own:
            main["resources"] = own
        secrets = [source["secretRef"]["name"] for source in main.pop("envFrom", None) or [] if "secretRef" in source]
        claims = {
            volume["name"]: volume["persistentVolumeClaim"]["claimName"]
            for volume in spec.get("volumes") or []
            if "persistentVolumeClaim" in volume
        }
        # The model volume: a claim mounted by the main container under the claim's own name.
        mount = next(
            (m for m in main.get("volumeMounts") or [] if claims.get(m["name"]) == m["name"] and not m.get("readOnly")),
            None,
        )
        if mount:
            main["volumeMounts"] = [m for m in main["volumeMounts"] if m is not mount]
            if not main["volumeMounts"]:
                del main["volumeMounts"]
            spec["volumes"] = [v for v in spec["volumes"] if v.get("name") != mount["name"]]
            if not spec["volumes"]:
                del spec["volumes"]
        spec["containers"] = [main]
        metadata = template.get("metadata") or {}
        return GraphComponent(
            name=component.get("name", ""),
            type=component.get("type", ""),
            replicas=component.get("replicas", 1),
            pod=spec,
            labels=metadata.get("labels") or {},
            annotations=metadata.get("annotations") or {},
            gpus=int(requests.pop(GPU_RESOURCE, 0)),
            devices=requests,
            shared_memory=component.get("sharedMemorySize"),
            volume=ModelVolume(mount["name"], mount["mountPath"]) if mount else None,
            env_secret=secrets[0] if secrets else None,
            runtime_version=component.get("runtimeVersionOverride"),
            scaling_adapter="scalingAdapter" in component,
        )


def image_release(image: str) -> str | None:
    """The Dynamo release an image's tag names (`1.6.1`, `1.6.1-efa`, `1.2.1-efa-amd64` -> the
    semantic version), or None (a digest, a custom tag): Dynamo's admission (1.4+) then needs
    `runtimeVersionOverride` to know the runtime's version."""
    if "@" in image:
        return None
    version = re.match(r"(\d+\.\d+\.\d+)(-|$)", image.rpartition(":")[2])
    return version[1] if version else None


_SHAPES: dict[str, type[_V1alpha1] | type[_V1beta1]] = {shape.api_version: shape for shape in (_V1alpha1, _V1beta1)}
API_VERSIONS = tuple(_SHAPES)


def pulumi_type(api_version: str) -> str:
    """The Pulumi type token of a graph of this apiVersion (part of its URN)."""
    return f"kubernetes:{api_version}:{KIND}"


GRAPH_TYPES = tuple(pulumi_type(api_version) for api_version in API_VERSIONS)


def other_graph_types(api_version: str) -> list[str]:
    """The types a graph had under the other apiVersions: its aliases across a release change."""
    return [type_ for type_ in GRAPH_TYPES if type_ != pulumi_type(api_version)]


def render_graph(
    api_version: str, metadata: dict[str, Any], backend_framework: str | None, components: list[GraphComponent]
) -> dict[str, Any]:
    """The graph manifest; without backendFramework when None (the mocker's, as in Dynamo's own template)."""
    return {
        "apiVersion": api_version,
        "kind": KIND,
        "metadata": metadata,
        "spec": _SHAPES[api_version].write_spec(backend_framework, components),
    }


def resource_components(pulumi_type_token: str, inputs: dict[str, Any]) -> list[GraphComponent]:
    """The components of a graph resource, from its Pulumi type and inputs."""
    api_version = pulumi_type_token.split(":")[1]
    return _SHAPES[api_version].read_spec(inputs.get("spec") or {})


def graph_components(graph: dict[str, Any]) -> list[GraphComponent]:
    """The components of a rendered graph (a manifest, or a graph resource's inputs)."""
    return _SHAPES[graph["apiVersion"]].read_spec(graph.get("spec") or {})


def components_by_name(graph: dict[str, Any]) -> dict[str, GraphComponent]:
    return {component.name: component for component in graph_components(graph)}
