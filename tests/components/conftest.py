"""Shared machinery of the component tests: a recording Pulumi mock engine and the stacks components are built from."""

from __future__ import annotations

import contextvars
import functools
import json
import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import pulumi
import pulumi_kubernetes as k8s
import pytest

from gpt_oss_infra.components.pulumi_config import mark_offline
from gpt_oss_infra.components.targets import eks as eks_target
from gpt_oss_infra.core.inputs.catalog import Catalog
from gpt_oss_infra.core.inputs.config import namespace_config
from gpt_oss_infra.core.render.cluster_plan import ClusterPlan
from gpt_oss_infra.core.render.ownership import SELF_MANAGED_ORGANIZATION
from gpt_oss_infra.core.render.stack_objects import Stack
from gpt_oss_infra.core.stack import build_stack
from gpt_oss_infra.tools.pulumi_engine import AccountMocks, MockAccount, catalog_instance_types
from tests.support import example_entries

PROJECT, STACK = "gpt-oss-infra", "test"
REGION = "us-east-2"
ZONES = ["us-east-2a", "us-east-2b", "us-east-2c"]
# A Capacity Block window still to come: its pool's nodes do not exist yet.
BLOCK_START, BLOCK_END = "2030-01-07T11:30:00+00:00", "2030-01-21T11:30:00+00:00"
# How Pulumi's RPC property format wraps a secret: {SIGNATURE_KEY: SECRET_SIGNATURE, "value": ...}.
SIGNATURE_KEY, SECRET_SIGNATURE = "4dabf18193072939515e22adb298388d", "1b47061264138c4ac30d75fd1eb44270"
CLUSTER_PROVIDER, SYSTEM_READY = "cluster", "system-ready"  # on_stand_in_cluster's resources
CRD_TYPE = "kubernetes:apiextensions.k8s.io/v1:CustomResourceDefinition"


class RecordingMocks(AccountMocks):
    """The mock engine's mocks (tools/pulumi_engine.py), keeping every registration and invoke. A resource's
    state is its inputs plus the outputs components read back from the providers (provider_outputs); the AWS
    lookups are answered from `account` (every catalog instance type; no Capacity Block until a test adds
    one), and any other invoke fails the run."""

    def __init__(self, catalog: Catalog):
        super().__init__(MockAccount(instance_types=catalog_instance_types(catalog), capacity_blocks={}, zones=ZONES))
        self.resources: list[pulumi.runtime.MockResourceArgs] = []
        self.calls: list[pulumi.runtime.MockCallArgs] = []

    def new_resource(self, args: pulumi.runtime.MockResourceArgs) -> tuple[str, dict[str, Any]]:
        self.resources.append(args)
        return super().new_resource(args)

    def state(self, type_: str, name: str, inputs: dict[str, Any]) -> dict[str, Any]:
        if type_ == CRD_TYPE:  # megabytes of schema that nothing reads back
            return {}
        return dict(inputs) | provider_outputs(type_, name, inputs)

    def call(self, args: pulumi.runtime.MockCallArgs) -> dict | tuple[dict, list[tuple[str, str]]]:
        self.calls.append(args)
        return super().call(args)


def capacity_block_answers(stack: Stack) -> dict[str, dict[str, Any]]:
    """aws:ec2/getCapacityBlockReservation's answer for each block the stack's pools name: matching its pool,
    not started yet."""
    return {
        pool.config.capacity_reservation_id: {
            "id": pool.config.capacity_reservation_id,
            "instanceType": pool.instance_type,
            "availabilityZone": pool.config.availability_zone,
            "instanceCount": pool.config.nodes,
            "startDate": BLOCK_START,
            "endDate": BLOCK_END,
            "state": "scheduled",
        }
        for pool in stack.pools.values()
        if pool.config.capacity_type == "CAPACITY_BLOCK"
    }


def provider_outputs(type_: str, name: str, inputs: dict[str, Any]) -> dict[str, Any]:
    """What the providers compute and the components read back."""
    if not type_.startswith("aws:"):
        return {}
    # The ARN and (auto-)name AWS gives every resource.
    outputs = {"arn": f"arn:aws:mock::{name}", "name": inputs.get("name", f"{name}-name")}
    if type_ == "aws:eks/cluster:Cluster":
        outputs |= {
            "endpoint": f"https://{name}.eks.example.com",
            "certificateAuthority": {"data": f"{name}-ca-data"},
            "vpcConfig": inputs["vpcConfig"] | {"clusterSecurityGroupId": f"{name}-sg-id", "vpcId": f"{name}-vpc-id"},
        }
    elif type_ == "aws:eks/nodeGroup:NodeGroup":  # EKS makes the group's Auto Scaling group
        outputs["resources"] = [{"autoscalingGroups": [{"name": f"{name}-asg"}]}]
    elif type_ == "aws:ec2/launchTemplate:LaunchTemplate":
        outputs["latestVersion"] = 3
    elif type_ == "aws:fsx/lustreFileSystem:LustreFileSystem":
        outputs |= {"dnsName": f"{name}.fsx.example.com", "mountName": f"{name}-mount"}
    return outputs


@dataclass(frozen=True)
class Built:
    """A resource the program constructed, with the options it was given."""

    resource: pulumi.Resource
    type: str
    opts: pulumi.ResourceOptions


class Engine:
    """Pulumi's mock engine with RecordingMocks, in a context of its own: Pulumi keeps its settings, config
    and root stack in context variables, so nothing set here reaches other tests or their program runs."""

    def __init__(self, mocks: RecordingMocks):
        self.mocks = mocks
        self.built: dict[str, Built] = {}  # by logical name
        self.urns: dict[str, str] = {}  # by logical name
        self.context = contextvars.Context()
        self.context.run(self._start)

    def _start(self) -> None:
        pulumi.runtime.set_mocks(
            self.mocks, project=PROJECT, stack=STACK, preview=False, organization=SELF_MANAGED_ORGANIZATION
        )
        pulumi.runtime.set_all_config({"aws:region": REGION})  # every stack that creates its cluster names one
        mark_offline()  # the mock engine: no cluster to read
        # The mocks see no parent and no options: a stack transformation sees both, for every resource.
        pulumi.runtime.register_stack_transformation(self._record)

    def _record(self, args: pulumi.ResourceTransformationArgs) -> None:
        if args.opts.urn is not None:  # one that exists, read by its URN (as the component provider does its providers)
            return
        assert args.name not in self.built, f"two resources named {args.name}"
        self.built[args.name] = Built(args.resource, args.type_, args.opts)

    def configure(self, config: dict[str, str], secret_keys: list[str] | None = None) -> None:
        """Set the stack's config, as the engine hands it to a program: the language host's environment
        variables (components/pulumi_config.py), which the `engine` fixture puts back after the test."""
        config = {"aws:region": REGION} | config
        self.context.run(pulumi.runtime.set_all_config, config, secret_keys)
        os.environ["PULUMI_CONFIG"] = json.dumps(config)
        os.environ["PULUMI_CONFIG_SECRET_KEYS"] = json.dumps(secret_keys or [])

    def call(self, function: Callable[[], Any]) -> Any:
        """`function()` in this engine's context, outside a program run."""
        return self.context.run(function)

    def run(self, program: Callable[[], dict[str, pulumi.Input[Any]] | None]) -> dict[str, Any]:
        """Run `program` on the engine; the values of the outputs it returns, once resolved.

        Every URN is awaited too (`urns`), and the program's exception is raised here."""
        resolved: dict[str, Any] = {}
        resolved_at_all: list[bool] = []

        @pulumi.runtime.test
        def test_program() -> pulumi.Output:
            outputs = program() or {}
            urns = {name: built.resource.urn for name, built in self.built.items()}
            return pulumi.Output.all(pulumi.Output.all(**urns), pulumi.Output.all(**outputs)).apply(keep)

        def keep(both: list[dict[str, Any]]) -> None:
            self.urns.update(both[0])
            resolved.update(both[1])
            resolved_at_all.append(True)

        self.context.run(test_program)
        assert resolved_at_all, "the program's outputs never resolved"
        return resolved

    # What the mocks recorded

    def registered(self, name: str) -> pulumi.runtime.MockResourceArgs:
        [found] = [args for args in self.mocks.resources if args.name == name]
        return found

    def inputs(self, name: str) -> dict[str, Any]:
        return self.registered(name).inputs

    def names_of(self, type_: str) -> list[str]:
        """The logical names of the resources of this type, in construction order."""
        return [name for name, built in self.built.items() if built.type == type_]

    def children(self, name: str) -> list[str]:
        """The logical names of the resources whose parent is the named one, in construction order."""
        parent = self.built[name].resource
        return [child for child, built in self.built.items() if built.opts.parent is parent]

    def waits_for(self, name: str) -> list[str]:
        """The logical names of the resources the named one was told to depend on, in order."""
        by_resource = {id(built.resource): other for other, built in self.built.items()}
        return [by_resource[id(resource)] for resource in self.built[name].opts.depends_on or []]

    def provider_of(self, name: str) -> str:
        """The URN of the provider the named resource was registered with."""
        return self.registered(name).provider.rsplit("::", 1)[0]

    def parent_type(self, name: str) -> str:
        """The type of the resource's parent, read from its URN (`...::<parent type>$<type>::<name>`)."""
        return self.urns[name].split("::")[2].split("$")[-2]

    def invoked(self, token: str) -> list[dict[str, Any]]:
        return [call.args for call in self.mocks.calls if call.token == token]

    def plain_strings(self) -> Iterator[str]:
        """Every string in every resource's inputs that is not inside a secret."""
        for args in self.mocks.resources:
            yield from _plain_strings(args.inputs)


def on_stand_in_cluster() -> pulumi.ResourceOptions:
    """What __main__ gives a Kubernetes component: the cluster's provider, and what all but GPU work waits for."""
    provider = k8s.Provider(CLUSTER_PROVIDER, kubeconfig="{}")
    return pulumi.ResourceOptions(
        providers=[provider], depends_on=[pulumi.ComponentResource("test:index:Ready", SYSTEM_READY)]
    )


def assert_on_the_cluster(engine: Engine, component: str, type_token: str) -> list[str]:
    """The names of the component's children, having checked that they are registered under it, each through
    the stand-in cluster's provider and waiting for what the component waits for (Pulumi would not pass that on)."""
    children = engine.children(component)
    assert children
    assert engine.urns[component].endswith(f"::pulumi:pulumi:Stack${type_token}::{component}")
    system_ready = engine.built[SYSTEM_READY].resource
    for child in children:
        assert engine.parent_type(child) == type_token
        assert system_ready in engine.built[child].opts.depends_on
        child_type = engine.registered(child).typ
        if child_type.startswith("gpt-oss-infra:"):  # a component of its own (the teardown guards): its children
            _assert_through_the_cluster(engine, child, system_ready)
        else:
            assert engine.provider_of(child) == engine.urns[CLUSTER_PROVIDER]
    return children


def _assert_through_the_cluster(engine: Engine, component: str, system_ready: pulumi.Resource) -> None:
    for child in engine.children(component):
        assert engine.provider_of(child) == engine.urns[CLUSTER_PROVIDER], child
        assert system_ready in engine.built[child].opts.depends_on, child


def _plain_strings(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict) and value.get(SIGNATURE_KEY) != SECRET_SIGNATURE:
        for item in value.values():
            yield from _plain_strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from _plain_strings(item)


def unwrap_secret(value: Any) -> Any:
    """The value inside a secret as the mocks receive it; fails if it is not a secret."""
    assert isinstance(value, dict) and value.get(SIGNATURE_KEY) == SECRET_SIGNATURE, f"not a secret: {value!r}"
    return value["value"]


def is_secret(output: pulumi.Output[Any]) -> pulumi.Output[bool]:
    """Whether `output` is a secret, as an output the run awaits."""
    return pulumi.Output.from_input(output.is_secret())


def string_data_is_secret(engine: Engine, name: str) -> pulumi.Output[bool] | bool:
    """Whether the named Kubernetes Secret's stringData output is a secret (False when there is no such Secret)."""
    built = engine.built.get(name)
    return is_secret(built.resource.string_data) if built else False


@pytest.fixture
def engine(catalog: Catalog, monkeypatch: pytest.MonkeyPatch) -> Engine:
    """A fresh mock engine for one test, which sees only the config the test gives it: Pulumi also reads config
    and its secret keys from the environment, and the Kubernetes provider falls back to $KUBECONFIG."""
    for variable in ("PULUMI_CONFIG", "PULUMI_CONFIG_SECRET_KEYS", "KUBECONFIG"):
        monkeypatch.delenv(variable, raising=False)
    return Engine(RecordingMocks(catalog))


@pytest.fixture(scope="session")
def example_stack(catalog: Catalog) -> Callable[..., Stack]:
    """build_stack of Pulumi.<name>.yaml (the project's or configs/examples/), with both secrets set unless
    told otherwise; built once per session (tests only read it)."""

    @functools.cache
    def build(name: str, with_secrets: bool = True) -> Stack:
        entries = example_entries(name)
        clients = sorted(
            entries.get("gpt-oss-infra:apiKeys") or {}
        )  # the gateways' clients, as the stack file names them
        raw = namespace_config(entries)
        return build_stack(raw, catalog, with_hf_token=with_secrets, with_ngc_key=with_secrets, api_key_clients=clients)

    return build


@pytest.fixture(scope="session")
def eks_plan(catalog: Catalog, example_stack: Callable[..., Stack]) -> Callable[[str], ClusterPlan]:
    """components.targets.eks.plan of an example stack, its AWS lookups answered by the mocks; once per session."""

    @functools.cache
    def plan(name: str) -> ClusterPlan:
        stack = example_stack(name)
        mocks = RecordingMocks(catalog)
        mocks.account.capacity_blocks.update(capacity_block_answers(stack))
        return Engine(mocks).call(lambda: eks_target.plan(stack, catalog))

    return plan
