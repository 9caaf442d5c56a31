"""Pulumi's engine as the offline tools use it (`make plan`, the tests), and every use of the Python
SDK's private API. Never on the `pulumi up` path: no module under components/ imports it
(tests/test_import_graph.py).

The mock engine: run the real Pulumi program on Pulumi's mock engine and record what it registers.
No CLI, no credentials, no network: `pulumi.runtime.set_mocks` stands in for the engine, a
recording monitor keeps every RegisterResource request (inputs with their secret markers, and
the options protect / retainOnDelete / dependsOn), and invokes get plausible, deterministic
answers so that two runs of one stack are identical. The config reaches the program as the
engine's language host hands it over (components/pulumi_config.py), and the run is marked offline.

The SDK's private API, all of it here: tests/tools/test_pulumi_engine_internals.py pins it to the
SDK version in requirements.txt and fails loudly when an upgrade changes it. What uses it: the mock
engine runs a program to completion synchronously, records resources in the order the program
constructs them, subclasses the mock monitor to keep every registration request, and skips the
stack walk the SDK makes for each resource; the tests hand a public component its inputs as the
SDK's provider host does for a program in another Pulumi language (as_a_provider_receives).
"""

from __future__ import annotations

import contextlib
import contextvars
import functools
import json
import logging
import os
import runpy
import sys
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import pulumi
import pulumi.resource
from google.protobuf import json_format
from pulumi.runtime import mocks
from pulumi.runtime.proto import source_pb2
from pulumi.runtime.stack import run_pulumi_func
from pulumi.runtime.sync_await import _sync_await

from gpt_oss_infra.components.pulumi_config import running_offline
from gpt_oss_infra.core.inputs.aws_values import enum
from gpt_oss_infra.core.placeholders import SECRET, UNKNOWN
from gpt_oss_infra.core.render.ownership import SELF_MANAGED_ORGANIZATION

if TYPE_CHECKING:
    from gpt_oss_infra.core.inputs.catalog import Catalog

T = TypeVar("T")

PINNED_SDK = "3.272.0"  # the pulumi version these were read from (requirements.txt)

MockMonitor = mocks.MockMonitor  # the monitor set_mocks installs; subclassed to record requests


@contextlib.contextmanager
def environment(variables: dict[str, str]) -> Iterator[None]:
    """These environment variables set, and put back as they were after."""
    before = {name: os.environ.get(name) for name in variables}
    os.environ.update(variables)
    try:
        yield
    finally:
        for name, value in before.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


def wait_for(awaitable: Awaitable[T]) -> T:
    """The awaitable's result, outside an event loop (after a program has run)."""
    return _sync_await(awaitable)


def run_program_function(program: Callable[[], None]) -> None:
    """Run a Pulumi program function as the engine would, until every registration is done."""
    _sync_await(run_pulumi_func(program))


@contextlib.contextmanager
def construction_order() -> Iterator[dict[tuple[str, str], int]]:
    """While open, every resource the program constructs gets its (type, name) -> position here.

    The mock monitor sees requests when their inputs resolve, an order asyncio does not fix
    between runs; the order in which the program constructs resources is fixed."""
    register = pulumi.resource.register_resource
    order: dict[tuple[str, str], int] = {}

    def recording_register(res, ty, name, *args, **kwargs):
        order.setdefault((ty, name), len(order))
        return register(res, ty, name, *args, **kwargs)

    pulumi.resource.register_resource = recording_register
    try:
        yield order
    finally:
        pulumi.resource.register_resource = register


@contextlib.contextmanager
def without_stack_traces() -> Iterator[None]:
    """While open, resources register without the call stack the SDK walks for each one (source
    positions for the engine's diagnostics): an offline run has no engine to read them, and walking
    the stack with its source lines is a fifth of a whole-stack plan's time."""
    stack_trace = pulumi.runtime.resource._get_stack_trace
    pulumi.runtime.resource._get_stack_trace = source_pb2.StackTrace
    try:
        yield
    finally:
        pulumi.runtime.resource._get_stack_trace = stack_trace


async def as_a_provider_receives(inputs: dict[str, Any]) -> dict[str, Any]:
    """Component inputs as the SDK's provider host hands them to a component constructed for another
    Pulumi language: serialized as the engine sends them, then deserialized by the host (a map with a
    secret in it arrives as one secret Output, numbers as floats)."""
    from pulumi.provider.server import ProviderServicer
    from pulumi.runtime import rpc

    wire = await rpc.serialize_properties(inputs, {})
    return await ProviderServicer._construct_inputs(wire, {})


# --- The mock engine

# Markers of the Pulumi RPC property format (pulumi/sdk/proto, rpc.py).
_SIG_KEY = "4dabf18193072939515e22adb298388d"
_SECRET_SIG = "1b47061264138c4ac30d75fd1eb44270"
_RESOURCE_SIG = "5cf8f73096256a8f31e491e813e4eb8e"
_UNKNOWN_VALUE = "04da6b54-80e4-46f7-96ec-b56ff0331ba9"

ACCOUNT_ID = "123456789012"


@dataclass(frozen=True)
class AliasSpec:
    """One alias as the SDK sends it to the engine: any of another name, type or parent (by name; or
    none: the stack's root), or a whole earlier URN."""

    name: str | None = None
    type: str | None = None
    parent: str | None = None
    no_parent: bool = False
    urn: str | None = None


@dataclass
class Registration:
    type: str
    name: str
    parent: str | None
    inputs: dict[str, Any]
    options: dict[str, Any]
    # Every resource this one waits for, by name: explicit dependsOn, the resources its inputs
    # come from, and its provider. Not in the plan files; the dependency-graph checks read it.
    waits_for: frozenset[str] = frozenset()
    # Every alias of the resource, the SDK's own type aliases among them. Not in the plan files (which
    # show the moves: options.aliases); the URN checks (tools/urns.py) match them as the engine does.
    alias_specs: tuple[AliasSpec, ...] = ()

    def as_json(self) -> dict[str, Any]:
        entry = {"type": self.type, "name": self.name, "parent": self.parent, "inputs": self.inputs}
        if self.options:
            entry["options"] = self.options
        return entry


@dataclass
class ProgramRun:
    resources: list[Registration] = field(default_factory=list)
    outputs: dict[str, Any] = field(default_factory=dict)
    log: list[str] = field(default_factory=list)  # warnings and errors the program logged
    error: BaseException | None = None  # what the program raised, e.g. pulumi.RunError


# Resources whose state the program never reads: echoing their inputs back (megabytes for the
# Dynamo CRDs) would only slow every run down.
_UNREAD_STATE = {"kubernetes:apiextensions.k8s.io/v1:CustomResourceDefinition"}


# The window the mock gives every Capacity Block: a placeholder, unmistakably not a real block
# (blocks end at 11:30 UTC [ec2-cb]). On `pulumi up` the program reads the block's real window.
MOCK_BLOCK_START, MOCK_BLOCK_END = "2030-01-07T11:30:00Z", "2030-01-21T11:30:00Z"


@dataclass(frozen=True)
class MockAccount:
    """What the mock answers for the AWS lookups the program makes before registering anything,
    in the data sources' own (camelCase) shape."""

    instance_types: dict[str, dict[str, Any]]  # aws:ec2/getInstanceType results by instance type
    capacity_blocks: dict[str, dict[str, Any]]  # aws:ec2/getCapacityBlockReservation results by id
    # Where EC2 offers an instance type (aws:ec2/getInstanceTypeOfferings): every type botocore's
    # ec2 model lists, in these zones.
    zones: list[str]


def mock_account(config: dict[str, str]) -> MockAccount:
    """The account a stack expects: every catalog instance type as configs/hardware.yaml describes
    it, and each Capacity Block a pool names, matching the pool and not started yet (the window
    above). Tests build other accounts to see the program refuse or adapt."""
    catalog = _catalog()
    pools = json.loads(config.get("gpt-oss-infra:nodePools", "{}"))
    pools = [pool for pool in pools.values() if isinstance(pool, dict)] if isinstance(pools, dict) else []
    blocks = {}
    for pool in pools:
        hardware = catalog.hardware.get(pool.get("hardware"))
        if hardware is None or pool.get("capacityType") != "CAPACITY_BLOCK" or not pool.get("capacityReservationId"):
            continue
        blocks[pool["capacityReservationId"]] = {
            "id": pool["capacityReservationId"],
            "instanceType": pool.get("instanceType") or hardware.default_instance_type,
            "availabilityZone": pool.get("availabilityZone"),
            "instanceCount": pool.get("nodes", 0),
            "startDate": MOCK_BLOCK_START,
            "endDate": MOCK_BLOCK_END,
            "state": "scheduled",
            "reservationType": "capacity-block",
        }
    pinned = [pool["availabilityZone"] for pool in pools if pool.get("availabilityZone")]
    zones = list(dict.fromkeys([*AVAILABILITY_ZONES["names"], *pinned]))
    return MockAccount(instance_types=catalog_instance_types(catalog), capacity_blocks=blocks, zones=zones)


def catalog_instance_types(catalog: Catalog) -> dict[str, dict[str, Any]]:
    """aws:ec2/getInstanceType's answer for every instance type of the catalog, as configs/hardware.yaml
    describes it."""
    return {
        name: instance_type_answer(name, instance.ec2.network_card_peak_gbps, instance.ec2.efa_maximum_interfaces)
        for hardware in catalog.hardware.values()
        for name, instance in hardware.instance_types.items()
    }


def instance_type_answer(name: str, card_gbps: list[float], efa_interfaces: int | None) -> dict[str, Any]:
    """aws:ec2/getInstanceType's answer for an instance type with these network cards (by index) and EFA
    interfaces (None: EC2 leaves the field out for a type without EFA)."""
    return {
        "instanceType": name,
        "maximumNetworkCards": len(card_gbps),
        "efaMaximumInterfaces": efa_interfaces,
        "efaSupported": bool(efa_interfaces),
        "networkCards": [
            {"index": index, "peakBandwidth": gbps, "baselineBandwidth": gbps} for index, gbps in enumerate(card_gbps)
        ],
    }


@functools.cache
def _catalog():
    from gpt_oss_infra.core.inputs.catalog import load_catalog

    return load_catalog()


def subnets_in_zones(filters: list[dict[str, Any]], zones_of: dict[str, str]) -> dict[str, Any]:
    """aws:ec2/getSubnets' answer to a subnet-id and availability-zone filter: the subnets in those zones
    (a subnet the program did not make, whose zone the mock cannot know, is taken as in them)."""
    values = {given["name"]: given["values"] for given in filters}
    zones = values["availability-zone"]
    return {"ids": [subnet for subnet in values["subnet-id"] if zones_of.get(subnet, zones[0]) in zones]}


def region_answer(provider: str, provider_regions: dict[str, str | None]) -> dict[str, Any]:
    """aws:index/getRegion's answer: the region of the AWS provider the invoke went through (its reference,
    "<urn>::<id>", ends in the id the mock gave it), else the default provider's, the stack's aws:region."""
    region = provider_regions.get(provider.rsplit("::", 1)[-1]) if provider else None
    region = region or pulumi.Config("aws").require("region")
    return {"region": region, "name": region, "id": region, "endpoint": f"ec2.{region}.amazonaws.com"}


def cluster_network(name: str) -> dict[str, Any]:
    """aws:eks/getCluster's answer: the network the mock's own clusters get (_extra_outputs)."""
    return {"name": name, "vpcConfig": {"clusterSecurityGroupId": f"{name}-sg-id", "vpcId": f"{name}-vpc-id"}}


def instance_type_offerings(instance_types: list[str], zones: list[str]) -> dict[str, Any]:
    """aws:ec2/getInstanceTypeOfferings' answer: each type botocore's ec2 model lists, in every zone."""
    offered = [(name, zone) for name in instance_types if name in enum("ec2", "InstanceType") for zone in zones]
    return {
        "instanceTypes": [name for name, _ in offered],
        "locations": [zone for _, zone in offered],
        "locationTypes": ["availability-zone"] * len(offered),
    }


class AccountMocks(pulumi.runtime.Mocks):
    """Resource state = inputs plus the few outputs programs read (state); every lookup a program makes
    answered from `account`, in kind: the one place a new lookup is answered, for the plan and the tests."""

    def __init__(self, account: MockAccount):
        self.account = account
        self.subnet_zones: dict[str, str] = {}  # the program's own subnets, by id
        self.provider_regions: dict[str, str | None] = {}  # the program's own AWS providers' regions, by id

    def new_resource(self, args: pulumi.runtime.MockResourceArgs) -> tuple[str, dict]:
        if args.typ == AWS_PROVIDER:
            self.provider_regions[f"{args.name}-id"] = args.inputs.get("region")
        if args.typ == "aws:ec2/subnet:Subnet":
            self.subnet_zones[f"{args.name}-id"] = args.inputs.get("availabilityZone")
        return f"{args.name}-id", self.state(args.typ, args.name, args.inputs)

    def state(self, type_: str, name: str, inputs: dict[str, Any]) -> dict[str, Any]:
        """A new resource's state: its inputs, and what its provider computes that programs read back."""
        if type_ in _UNREAD_STATE:
            return {}
        return dict(inputs) | _extra_outputs(type_, name, inputs)

    def call(self, args: pulumi.runtime.MockCallArgs) -> dict | tuple[dict, list[tuple[str, str]]]:
        if args.token == ZONES_TOKEN:
            return AVAILABILITY_ZONES
        if args.token == INSTANCE_TYPE_TOKEN:
            return self.account.instance_types[args.args["instanceType"]]
        if args.token == OFFERINGS_TOKEN:
            return instance_type_offerings(args.args["filters"][0]["values"], self.account.zones)
        if args.token == SUBNETS_TOKEN:
            return subnets_in_zones(args.args["filters"], self.subnet_zones)
        if args.token == CLUSTER_TOKEN:
            return cluster_network(args.args["name"])
        if args.token == REGION_TOKEN:
            return region_answer(args.provider, self.provider_regions)
        if args.token == CAPACITY_BLOCK_TOKEN:
            found = self.account.capacity_blocks.get(args.args.get("id"))
            # A failed invoke reaches the program as an exception, like the provider's "not found".
            return found if found is not None else ({}, [("id", "no matching EC2 Capacity Block reservation found")])
        raise NotImplementedError(f"the mock engine does not answer {args.token}: add it to tools/pulumi_engine.py")


class _RecordingMonitor(MockMonitor):
    def __init__(self, run: ProgramRun, account: MockAccount):
        super().__init__(AccountMocks(account))
        self.run = run

    def RegisterResource(self, request):
        if request.type != "pulumi:pulumi:Stack":
            self.run.resources.append(_registration(request))
        return super().RegisterResource(request)


class _LogCollector(logging.Handler):
    def __init__(self, run: ProgramRun):
        super().__init__(logging.WARNING)
        self.run = run

    def emit(self, record: logging.LogRecord) -> None:
        self.run.log.append(f"{record.levelname.lower()}: {record.getMessage()}")


def run_program(
    program: Path,
    project: str,
    stack: str,
    config: dict[str, str],
    secret_keys: list[str],
    account: MockAccount | None = None,
) -> ProgramRun:
    """Run `program` once, in a fresh context so runs never share Pulumi's global state.

    AWS lookups are answered from `account` (default: the account the stack expects, mock_account).
    What the program raises is kept in `ProgramRun.error`, beside what it registered before.
    """
    run = ProgramRun()
    account = account or mock_account(config)
    contextvars.Context().run(_run, program, project, stack, config, secret_keys, account, run)
    return run


def _run(program, project, stack, config, secret_keys, account: MockAccount, run: ProgramRun) -> None:
    logger = logging.getLogger(f"gpt-oss-infra.plan.{id(run)}")
    logger.propagate = False
    logger.addHandler(_LogCollector(run))
    pulumi.runtime.set_all_config(config, secret_keys)
    monitor = _RecordingMonitor(run, account)
    pulumi.runtime.set_mocks(
        monitor.mocks,
        project=project,
        stack=stack,
        preview=False,
        logger=logger,
        monitor=monitor,
        organization=SELF_MANAGED_ORGANIZATION,  # as a self-managed backend's stack: owners as its `up` writes them
    )
    program_dir = str(program.parent)
    # The plan lists resources in the order the program constructs them (fixed), not in the order
    # the monitor sees them (when their inputs resolve).
    # The config as the engine hands it to a program (components/pulumi_config.py), in this process's
    # environment for the run only; and the program told it runs offline.
    engine_environment = {"PULUMI_CONFIG": json.dumps(config), "PULUMI_CONFIG_SECRET_KEYS": json.dumps(secret_keys)}
    with construction_order() as order, without_stack_traces(), running_offline(), environment(engine_environment):
        try:
            run_program_function(lambda: _run_path(program, program_dir))
        except Exception as error:  # handed to the caller with what ran before it
            run.error = error
            return
        finally:
            run.resources.sort(key=lambda r: order.get((r.type, r.name), len(order)))
    root = pulumi.runtime.get_root_resource()
    for name, value in sorted(root.outputs.items()):
        output = pulumi.Output.from_input(value)
        secret = wait_for(output.is_secret())
        run.outputs[name] = SECRET if secret else wait_for(output.future())


def _run_path(program: Path, program_dir: str) -> None:
    sys.path.insert(0, program_dir)
    try:
        runpy.run_path(str(program), run_name="__main__")
    finally:
        sys.path.remove(program_dir)


def _registration(request) -> Registration:
    property_deps = {urn for deps in request.propertyDependencies.values() for urn in deps.urns}
    explicit_deps = [urn for urn in request.dependencies if urn not in property_deps]
    options: dict[str, Any] = {}
    if request.protect:
        options["protect"] = True
    if request.retainOnDelete:
        options["retainOnDelete"] = True
    if explicit_deps:
        options["dependsOn"] = sorted({_urn_name(urn) for urn in explicit_deps})
    if request.ignoreChanges:
        options["ignoreChanges"] = sorted(request.ignoreChanges)
    if request.replaceOnChanges:
        options["replaceOnChanges"] = sorted(request.replaceOnChanges)
    if request.deleteBeforeReplace:
        options["deleteBeforeReplace"] = True
    if request.importId:  # imported as it is, not created
        options["import"] = request.importId
    # Where the resource was before a move (name, parent); the SDK's own type aliases are left out.
    moves = [
        _alias(alias.spec)
        for alias in request.aliases
        if alias.spec.name or alias.spec.parentUrn or alias.spec.noParent
    ]
    if moves:
        options["aliases"] = moves
    return Registration(
        type=request.type,
        name=request.name,
        parent=None if _is_stack(request.parent) else _urn_name(request.parent),
        inputs=_plain(json_format.MessageToDict(request.object)),
        options=options,
        waits_for=frozenset(
            {_urn_name(urn) for urn in [*request.dependencies, *property_deps]} | {_provider_name(request.provider)}
        )
        - {""},
        alias_specs=tuple(_alias_spec(alias) for alias in request.aliases),
    )


def _alias_spec(alias) -> AliasSpec:
    if alias.urn:
        return AliasSpec(urn=alias.urn)
    spec = alias.spec
    return AliasSpec(
        name=spec.name or None,
        type=spec.type or None,
        parent=None if not spec.parentUrn or _is_stack(spec.parentUrn) else _urn_name(spec.parentUrn),
        no_parent=spec.noParent or (bool(spec.parentUrn) and _is_stack(spec.parentUrn)),
    )


def _alias(spec) -> dict[str, Any]:
    parent = "(stack)" if spec.noParent else (_urn_name(spec.parentUrn) if spec.parentUrn else "(same parent)")
    return {"name": spec.name or "(same name)", "parent": parent}


def _provider_name(reference: str) -> str:
    """The name of the provider in a provider reference `<urn>::<id>` ("" for the default one)."""
    urn = reference.rsplit("::", 1)[0] if reference else ""
    return "" if not urn or urn.split("::")[-1] == "default" or "::default_" in urn else _urn_name(urn)


def _is_stack(urn: str) -> bool:
    return not urn or urn.split("::")[2] == "pulumi:pulumi:Stack"


def _urn_name(urn: str) -> str:
    return urn.split("::")[-1]


def _plain(value: Any) -> Any:
    """RPC property values -> JSON: secrets become "[secret]" (a secret map, e.g. a Secret's
    stringData, keeps its keys, each value masked: a Secret in the plan stays a valid Secret), keys
    sorted for stable output."""
    if isinstance(value, dict):
        signature = value.get(_SIG_KEY)
        if signature == _SECRET_SIG:
            inner = value.get("value")
            return dict.fromkeys(sorted(inner), SECRET) if isinstance(inner, dict) else SECRET
        if signature == _RESOURCE_SIG:
            return f"[resource {_urn_name(value.get('urn', ''))}]"
        return {key: _plain(value[key]) for key in sorted(value)}
    if isinstance(value, list):
        return [_plain(item) for item in value]
    if value == _UNKNOWN_VALUE:
        return UNKNOWN
    if isinstance(value, float) and value.is_integer():
        return int(value)  # protobuf Struct numbers are doubles
    return value


def _extra_outputs(type_: str, name: str, inputs: dict) -> dict:
    """Outputs the provider computes that this program (or a user's) reads back."""
    if not type_.startswith("aws:"):
        return {}
    # Auto-named resources get their logical name, as a stand-in for Pulumi's name with a random suffix.
    named = {"arn": f"arn:aws:mock:::{type_.split(':')[-1].lower()}/{name}", "name": name} | {
        key: inputs[key] for key in ("arn", "name") if key in inputs
    }
    if type_ == "aws:eks/cluster:Cluster":
        return named | {
            "endpoint": f"https://{name}.example.eks.amazonaws.com",
            "certificateAuthority": {"data": "bW9jay1jYQ=="},
            "vpcConfig": dict(inputs.get("vpcConfig", {}))
            | {"clusterSecurityGroupId": f"{name}-sg-id", "vpcId": f"{name}-vpc-id"},
        }
    if type_ == "aws:fsx/lustreFileSystem:LustreFileSystem":
        return {"dnsName": f"{name}.fsx.us-east-2.amazonaws.com", "mountName": "abcdefgh"}
    if type_ == "aws:ec2/launchTemplate:LaunchTemplate":
        return {"latestVersion": 1, "arn": f"arn:aws:ec2:us-east-2:{ACCOUNT_ID}:launch-template/{name}"}
    if type_ == "aws:eks/nodeGroup:NodeGroup":  # EKS names the group's Auto Scaling group
        return {"resources": [{"autoscalingGroups": [{"name": f"eks-{name}-asg"}]}]}
    if type_ == "aws:iam/role:Role":  # the account in it, as IAM's: Karpenter's policies are read from it
        return named | {"arn": f"arn:aws:iam::{ACCOUNT_ID}:role/{named['name']}"}
    if type_ == "aws:sqs/queue:Queue":
        queue = named["name"]
        return named | {
            "url": f"https://sqs.us-east-2.amazonaws.com/{ACCOUNT_ID}/{queue}",
            "arn": f"arn:aws:sqs:us-east-2:{ACCOUNT_ID}:{queue}",
        }
    return named


# The only lookups the program makes, answered as AWS would for the mock account: a new lookup in
# the program must be answered here on purpose, not get an empty result that plans anything.
ZONES_TOKEN = "aws:index/getAvailabilityZones:getAvailabilityZones"
INSTANCE_TYPE_TOKEN = "aws:ec2/getInstanceType:getInstanceType"
CAPACITY_BLOCK_TOKEN = "aws:ec2/getCapacityBlockReservation:getCapacityBlockReservation"
OFFERINGS_TOKEN = "aws:ec2/getInstanceTypeOfferings:getInstanceTypeOfferings"
SUBNETS_TOKEN = "aws:ec2/getSubnets:getSubnets"
CLUSTER_TOKEN = "aws:eks/getCluster:getCluster"
REGION_TOKEN = "aws:index/getRegion:getRegion"
AWS_PROVIDER = "pulumi:providers:aws"
AVAILABILITY_ZONES = {
    "names": ["us-east-2a", "us-east-2b", "us-east-2c"],
    "zoneIds": ["use2-az1", "use2-az2", "use2-az3"],
}
