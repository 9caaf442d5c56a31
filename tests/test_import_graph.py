"""The import graph of the product code, drawn from the code: no import cycle anywhere, and the core's
stages (core/stack.py says which) import only from the stages before them. A failure names the modules."""

from __future__ import annotations

import ast
import collections
from pathlib import Path

import pytest

from gpt_oss_infra.tools.plan import ROOT

PRODUCT = ["core", "components", "tools", "gpt_oss_infra", "provider"]
# The core's stages in order; a module may import its own stage and the ones before it. Everything of
# core/ outside the stage packages is the foundation (errors, schemas, YAML, the release and backend seams).
STAGES = ["foundation", "inputs", "resolve", "render", "checks", "report", "pipeline"]


def module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    if parts[0] != "gpt_oss_infra":
        parts = ("gpt_oss_infra", *parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def import_graph(sources: dict[str, str]) -> dict[str, set[str]]:
    """module -> the modules of `sources` it imports (TYPE_CHECKING imports too: a cycle there is one)."""
    graph: dict[str, set[str]] = {name: set() for name in sources}
    for name, text in sources.items():
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, ast.ImportFrom) and node.module:
                for alias in node.names:
                    target = f"{node.module}.{alias.name}"
                    graph[name].add(target if target in sources else node.module)
            elif isinstance(node, ast.Import):
                graph[name].update(alias.name for alias in node.names)
        graph[name] = {target for target in graph[name] if target in sources and target != name}
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Every set of modules that import each other, round and round (Tarjan's strongly connected components)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(module: str) -> None:
        index[module] = low[module] = len(index)
        stack.append(module)
        for target in sorted(graph[module]):
            if target not in index:
                visit(target)
                low[module] = min(low[module], low[target])
            elif target in stack:
                low[module] = min(low[module], index[target])
        if low[module] == index[module]:
            component = []
            while True:
                member = stack.pop()
                component.append(member)
                if member == module:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for module in sorted(graph):
        if module not in index:
            visit(module)
    return found


def stage(module: str) -> str | None:
    parts = module.split(".")
    if parts[1:2] != ["core"]:
        return None
    if len(parts) > 2 and parts[2] in STAGES:
        return parts[2]
    return "pipeline" if parts[2:] in (["stack"], ["blocks"]) else "foundation"


def upward_imports(graph: dict[str, set[str]]) -> list[str]:
    """Each import of the core from a stage into a later one."""
    found = []
    for module, targets in sorted(graph.items()):
        here = stage(module)
        for target in sorted(targets):
            there = stage(target)
            if here and there and STAGES.index(there) > STAGES.index(here):
                found.append(f"{module} ({here}) imports {target} ({there})")
    return found


@pytest.fixture(scope="module")
def product_graph() -> dict[str, set[str]]:
    paths = [path for folder in PRODUCT for path in (ROOT / folder).rglob("*.py")]
    return import_graph({module_name(path): path.read_text() for path in paths})


def test_no_module_of_the_product_imports_one_that_imports_it_back(product_graph):
    assert cycles(product_graph) == []


def test_each_stage_of_the_core_imports_only_from_the_stages_before_it(product_graph):
    assert upward_imports(product_graph) == []
    assert {stage(module) for module in product_graph if module.startswith("gpt_oss_infra.core.")} == set(STAGES)


def shell_module(name: str) -> bool:
    """A module of the shell: the Pulumi components or the command-line tools."""
    return name.startswith(("gpt_oss_infra.components", "gpt_oss_infra.tools"))


def test_the_core_imports_no_pulumi_and_nothing_of_the_shell():
    for path in (ROOT / "core").rglob("*.py"):
        imported = set()
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.module:
                imported.add(node.module)
            elif isinstance(node, ast.Import):
                imported.update(alias.name for alias in node.names)
        shell = sorted(name for name in imported if name.split(".")[0].startswith("pulumi") or shell_module(name))
        assert not shell, f"{path.relative_to(ROOT)} imports {shell}"


def test_a_cycle_and_an_upward_import_are_caught_by_name():
    sources = {
        "gpt_oss_infra.core.resolve.a": "from gpt_oss_infra.core.resolve.b import x\n",
        "gpt_oss_infra.core.resolve.b": "from gpt_oss_infra.core.resolve import a\n",
        "gpt_oss_infra.core.render.c": "from gpt_oss_infra.core.report.d import y\n",
        "gpt_oss_infra.core.report.d": "import gpt_oss_infra.core.render.c\n",  # a cycle through stages too
        "gpt_oss_infra.core.inputs.e": "from gpt_oss_infra.core.render.c import z\n",
    }
    graph = import_graph(sources)
    assert cycles(graph) == [
        ["gpt_oss_infra.core.render.c", "gpt_oss_infra.core.report.d"],
        ["gpt_oss_infra.core.resolve.a", "gpt_oss_infra.core.resolve.b"],
    ]
    assert upward_imports(graph) == [
        "gpt_oss_infra.core.inputs.e (inputs) imports gpt_oss_infra.core.render.c (render)",
        "gpt_oss_infra.core.render.c (render) imports gpt_oss_infra.core.report.d (report)",
    ]


def sdk_private_uses(text: str) -> list[str]:
    """What a module reaches of the Pulumi SDK beyond its public API: a `pulumi.runtime` submodule or a
    name `pulumi.runtime` does not export (its __all__), or a private `_name` anywhere under `pulumi`."""
    import pulumi.runtime

    public_runtime = set(pulumi.runtime.__all__)
    found = []
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.split(".")[0] == "pulumi":
            names = [alias.name for alias in node.names]
            if node.module.startswith("pulumi.runtime."):
                found.append(f"from {node.module} import {', '.join(names)}")
            elif node.module == "pulumi.runtime":
                found += [f"pulumi.runtime.{name}" for name in names if name not in public_runtime]
            found += [f"{node.module}.{name}" for name in names if name.startswith("_")]
        elif isinstance(node, ast.Import):
            found += [alias.name for alias in node.names if alias.name.startswith("pulumi.runtime.")]
        elif isinstance(node, ast.Attribute) and isinstance(node.value, ast.Attribute):
            owner = node.value
            reached = (owner.value.id, owner.attr) if isinstance(owner.value, ast.Name) else None
            if reached == ("pulumi", "runtime") and node.attr not in public_runtime:
                found.append(f"pulumi.runtime.{node.attr}")
    return sorted(set(found))


# `python -m gpt_oss_infra <command>`: it runs the offline tools (every command is a module of tools/, imported
# by name) and ends its process as they do (tools/process.py); no module on the `pulumi up` path imports it.
COMMAND_LINE = ROOT / "gpt_oss_infra" / "__main__.py"


def test_no_component_imports_the_offline_tools_or_the_sdks_private_api():
    """The `pulumi up` path (components/, and the package's own modules) needs only the public SDK: the
    mock engine and the private API it uses stay in tools/ (tools/pulumi_engine.py)."""
    offending = {}
    for folder in ("components", "gpt_oss_infra", "provider"):
        for path in (ROOT / folder).rglob("*.py"):
            text = path.read_text()
            tools = [
                node.module
                for node in ast.walk(ast.parse(text))
                if isinstance(node, ast.ImportFrom)
                and node.module
                and node.module.startswith("gpt_oss_infra.tools")
                and (path, node.module) != (COMMAND_LINE, "gpt_oss_infra.tools.process")
            ]
            if uses := tools + sdk_private_uses(text):
                offending[str(path.relative_to(ROOT))] = uses
    assert offending == {}


def test_a_private_sdk_use_is_caught_by_name():
    text = (
        "import pulumi\nfrom pulumi.runtime import settings\nfrom pulumi.runtime.config import CONFIG\n"
        "from pulumi.runtime import get_config\nx = pulumi.runtime.settings.get_monitor()\n"
        "y = pulumi.runtime.get_root_resource()\n"
    )
    assert sdk_private_uses(text) == [
        "from pulumi.runtime.config import CONFIG",
        "pulumi.runtime.settings",
    ]


def aws_constructions(text: str) -> list[str]:
    """Every `aws.<module>.<Class>(...)` a module calls: a resource it registers itself (invokes, the
    lower-case get_* functions, are reads)."""
    return sorted(
        f"aws.{node.func.value.attr}.{node.func.attr}"
        for node in ast.walk(ast.parse(text))
        if isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and isinstance(node.func.value, ast.Attribute)
        and isinstance(node.func.value.value, ast.Name)
        and node.func.value.value.id == "aws"
        and node.func.attr[:1].isupper()
    )


def test_every_aws_resource_has_one_path_from_the_config_to_the_cloud():
    """core/render/aws/resources.py describes every AWS resource; components/aws/build.py registers them,
    by type token, and no other module of the shell constructs one: what `up` checks against AWS's API
    (core/checks/aws_contract.py) is what it makes. The `pulumi up` path starts no other process."""
    made_elsewhere, processes = {}, []
    for path in (ROOT / "components").rglob("*.py"):
        text = path.read_text()
        if constructed := aws_constructions(text):
            made_elsewhere[str(path.relative_to(ROOT))] = constructed
        if "subprocess" in {
            alias.name for node in ast.walk(ast.parse(text)) if isinstance(node, ast.Import) for alias in node.names
        }:
            processes.append(str(path.relative_to(ROOT)))
    assert made_elsewhere == {}
    assert processes == []


def test_an_aws_resource_made_outside_the_description_is_caught_by_name():
    text = (
        "import pulumi_aws as aws\nrole = aws.iam.Role('r', assume_role_policy='{}')\n"
        "zones = aws.get_availability_zones()\n"
    )
    assert aws_constructions(text) == ["aws.iam.Role"]


def test_no_two_classes_of_the_product_share_a_name():
    """A reader (and an editor's symbol search) finds one class per name: DynamoPlatformArgs was two."""
    defined: dict[str, list[str]] = {}
    for folder in ("core", "components", "tools"):
        for path in (ROOT / folder).rglob("*.py"):
            for node in ast.walk(ast.parse(path.read_text())):
                if isinstance(node, ast.ClassDef):
                    defined.setdefault(node.name, []).append(str(path.relative_to(ROOT)))
    assert {name: paths for name, paths in defined.items() if len(paths) > 1} == {}


def kubernetes_constructions(text: str) -> list[tuple[str, str]]:
    """Every pulumi_kubernetes class a module uses (however it imported pulumi_kubernetes), and how: "from
    a manifest" (called with `**resource_args(<a rendered manifest>)` and at most the shell's own opts and
    string_data), "by hand" (called otherwise), or "by reference" (named without a call, e.g. in a table)."""
    tree = ast.parse(text)
    roots: dict[str, str] = {}  # a local name -> the pulumi_kubernetes path it stands for
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] == "pulumi_kubernetes":
                    roots[alias.asname or alias.name.split(".")[0]] = (
                        alias.asname and alias.name
                    ) or "pulumi_kubernetes"
        elif isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "pulumi_kubernetes":
            for alias in node.names:
                roots[alias.asname or alias.name] = f"{node.module}.{alias.name}"

    def path_of(expr: ast.expr) -> str | None:
        parts = []
        while isinstance(expr, ast.Attribute):
            parts.insert(0, expr.attr)
            expr = expr.value
        if not (isinstance(expr, ast.Name) and expr.id in roots):
            return None
        path = ".".join([roots[expr.id], *parts]).replace("pulumi_kubernetes", "k8s", 1)
        return path if path.rsplit(".", 1)[-1][:1].isupper() else None

    annotations = {
        id(inner) for node in ast.walk(tree) for annotation in _annotations(node) for inner in ast.walk(annotation)
    }  # types, not uses
    called, found = set(), []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and (path := path_of(node.func)):
            called.add(id(node.func))
            found.append((path, "from a manifest" if _from_a_manifest(node) else "by hand"))
    for node in ast.walk(tree):  # a class named but not called here: a table, an alias of it
        if (
            isinstance(node, ast.Attribute | ast.Name)
            and id(node) not in called | annotations
            and (path := path_of(node))
        ):
            found.append((path, "by reference"))
    return sorted(found)


def _annotations(node: ast.AST) -> list[ast.expr]:
    if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
        arguments = [*node.args.posonlyargs, *node.args.args, *node.args.kwonlyargs]
        return [a.annotation for a in arguments if a.annotation] + ([node.returns] if node.returns else [])
    if isinstance(node, ast.AnnAssign):
        return [node.annotation]
    return []


SHELL_ONLY = {"opts", "string_data"}  # what the shell adds to a rendered manifest: options, secret values


def _from_a_manifest(call: ast.Call) -> bool:
    expanded = [keyword.value for keyword in call.keywords if keyword.arg is None]
    named = {keyword.arg for keyword in call.keywords if keyword.arg is not None}
    if len(expanded) != 1 or not named <= SHELL_ONLY:
        return False
    value = expanded[0]
    if isinstance(value, ast.BinOp) and isinstance(value.right, ast.Dict):  # resource_args(...) | {...}
        if not {key.value for key in value.right.keys if isinstance(key, ast.Constant)} <= SHELL_ONLY:
            return False
        value = value.left
    return (
        isinstance(value, ast.Call)
        and isinstance(value.func, ast.Name)
        and value.func.id == "resource_args"
        and not any(isinstance(argument, ast.Dict) for argument in value.args)  # a manifest, not a literal
    )


# The Kubernetes classes the shell uses other than on one rendered manifest, each for its reason, with
# how many times; every other use constructs a class from the core's manifest (resource_args).
NOT_FROM_ONE_MANIFEST = collections.Counter(
    {
        # Providers: how the program reaches the cluster, not objects in it.
        ("components/aws/eks_cluster.py", "k8s.Provider", "by hand"): 1,
        ("components/targets/existing.py", "k8s.Provider", "by hand"): 1,
        ("components/kubernetes.py", "k8s.Provider", "by hand"): 1,  # the Dynamo CRDs' own, upserting provider
        # Helm releases: a pinned chart and the core's values for it (ChartRelease, PlatformObjects).
        ("components/kubernetes.py", "k8s.helm.v3.Release", "by hand"): 1,
        ("components/dynamo_platform.py", "k8s.helm.v3.Release", "by hand"): 1,
        # A rendered custom resource (its apiVersion and kind are arguments, not implied by a class).
        ("components/kubernetes.py", "k8s.apiextensions.CustomResource", "by hand"): 1,
        # An adopted namespace: only the ownership annotation of the rendered Namespace is patched.
        ("components/kubernetes.py", "k8s.core.v1.NamespacePatch", "by hand"): 1,
        # MANIFEST_CLASSES, the class of each kind registered by its manifest's kind (with resource_args).
        **{
            ("components/kubernetes.py", f"k8s.{path}", "by reference"): 1
            for path in [
                "core.v1.Namespace",
                "core.v1.ServiceAccount",
                "rbac.v1.Role",
                "rbac.v1.RoleBinding",
                "rbac.v1.ClusterRole",
                "rbac.v1.ClusterRoleBinding",
                "core.v1.ConfigMap",
            ]
        },
    }
)


def test_every_kubernetes_object_has_one_path_from_the_config_to_the_cluster():
    """The core renders every Kubernetes object as a manifest and checks it (schemas, CRDs, placement);
    the shell registers that manifest as it is. Only the uses counted above are otherwise: a new one
    fails this, and so does one more of them."""
    otherwise: collections.Counter[tuple[str, str, str]] = collections.Counter()
    for path in (ROOT / "components").rglob("*.py"):
        for constructed, how in kubernetes_constructions(path.read_text()):
            if how != "from a manifest":
                otherwise[(str(path.relative_to(ROOT)), constructed, how)] += 1
    assert otherwise == NOT_FROM_ONE_MANIFEST


def test_a_kubernetes_object_made_by_hand_is_caught_by_name():
    text = (
        "import pulumi_kubernetes as k8s\n"
        "import pulumi_kubernetes as kube\n"
        "from pulumi_kubernetes.core.v1 import ConfigMap\n"
        "a = k8s.core.v1.ConfigMap('a', **resource_args(manifest), opts=opts)\n"
        "b = k8s.core.v1.Secret('b', **resource_args(manifest) | {'string_data': data})\n"
        "c = k8s.core.v1.ConfigMap('c', metadata={'name': 'c'}, data={'k': 'v'})\n"
        "d = kube.core.v1.ConfigMap('d', **resource_args({'metadata': {'name': 'd'}}))\n"
        "e = ConfigMap('e', **resource_args(manifest), data={'k': 'v'})\n"
        "f = k8s.core.v1.Secret('f', **resource_args(manifest) | {'data': data})\n"
        "kinds = {'Role': k8s.rbac.v1.Role}\n"
    )
    assert kubernetes_constructions(text) == [
        ("k8s.core.v1.ConfigMap", "by hand"),  # c: no manifest
        ("k8s.core.v1.ConfigMap", "by hand"),  # d: a literal, through another import name
        ("k8s.core.v1.ConfigMap", "by hand"),  # e: imported by class, a field set beside the manifest
        ("k8s.core.v1.ConfigMap", "from a manifest"),
        ("k8s.core.v1.Secret", "by hand"),  # f: data merged over the manifest
        ("k8s.core.v1.Secret", "from a manifest"),
        ("k8s.rbac.v1.Role", "by reference"),
    ]
