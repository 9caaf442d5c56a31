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


def import_graph(sources: dict[str, str], packages: frozenset[str] = frozenset()) -> dict[str, set[str]]:
    """module -> the modules of `sources` it imports, however written (TYPE_CHECKING imports too: a cycle
    there is one); `packages`: those of `sources` that are packages (an __init__.py), whose relative imports
    start at themselves."""
    graph: dict[str, set[str]] = {}
    for name, text in sources.items():
        package = name if name in packages else name.rsplit(".", 1)[0]
        # a path reaches the module it names, or the module that holds the name (module.function)
        targets = {path if path in sources else path.rsplit(".", 1)[0] for path in reached(text, package)}
        graph[name] = {target for target in targets if target in sources and target != name}
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
    packages = frozenset(module_name(path) for path in paths if path.name == "__init__.py")
    return import_graph({module_name(path): path.read_text() for path in paths}, packages)


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
        imported = reached(path.read_text(), package_of(path))
        shell = sorted(name for name in imported if name.split(".")[0].startswith("pulumi") or shell_module(name))
        assert not shell, f"{path.relative_to(ROOT)} imports {shell}"


# The repository's folders that are parts of the package: imported by these names only in a clone, whose
# root is on sys.path; the installed wheel has them under gpt_oss_infra only.
PACKAGE_FOLDERS = ("core", "components", "tools", "provider")


def folder_imports(text: str, package: str) -> list[str]:
    """What a module imports by a folder's name (tools.plan) instead of the package's (gpt_oss_infra.tools.plan)."""
    return sorted(path for path in reached(text, package) if path.split(".")[0] in PACKAGE_FOLDERS)


def test_the_product_imports_its_own_modules_by_the_packages_name():
    found = {}
    for folder in PRODUCT:
        for path in (ROOT / folder).rglob("*.py"):
            if imported := folder_imports(path.read_text(), package_of(path)):
                found[str(path.relative_to(ROOT))] = imported
    assert found == {}
    assert folder_imports("import tools.plan\nfrom core.errors import Problem\n", "x") == [
        "core.errors",
        "core.errors.Problem",
        "tools",
        "tools.plan",
    ]


def test_a_cycle_and_an_upward_import_are_caught_by_name():
    sources = {
        "gpt_oss_infra.core.resolve.a": "from gpt_oss_infra.core.resolve.b import x\n",
        "gpt_oss_infra.core.resolve.b": "from gpt_oss_infra.core.resolve import a\n",
        "gpt_oss_infra.core.render.c": "from gpt_oss_infra.core.report.d import y\n",
        "gpt_oss_infra.core.report.d": "import gpt_oss_infra.core.render.c\n",  # a cycle through stages too
        "gpt_oss_infra.core.inputs.e": "from gpt_oss_infra.core.render.c import z\n",
        "gpt_oss_infra.core.inputs.f": "from ..render import c\n",  # relative, as written in core/inputs/
    }
    graph = import_graph(sources)
    assert cycles(graph) == [
        ["gpt_oss_infra.core.render.c", "gpt_oss_infra.core.report.d"],
        ["gpt_oss_infra.core.resolve.a", "gpt_oss_infra.core.resolve.b"],
    ]
    assert upward_imports(graph) == [
        "gpt_oss_infra.core.inputs.e (inputs) imports gpt_oss_infra.core.render.c (render)",
        "gpt_oss_infra.core.inputs.f (inputs) imports gpt_oss_infra.core.render.c (render)",
        "gpt_oss_infra.core.render.c (render) imports gpt_oss_infra.core.report.d (report)",
    ]


def import_roots(tree: ast.Module, package: str) -> dict[str, str]:
    """Each name a module binds by importing -> the dotted path it stands for, relative imports resolved
    against `package` (`from ..tools import plan` in gpt_oss_infra.components -> gpt_oss_infra.tools.plan)."""
    roots: dict[str, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                head = alias.name.split(".")[0]
                roots[alias.asname or head] = alias.name if alias.asname else head
        elif isinstance(node, ast.ImportFrom):
            base = _absolute(node, package)
            for alias in node.names:
                roots[alias.asname or alias.name] = f"{base}.{alias.name}"
    return roots


def _absolute(node: ast.ImportFrom, package: str) -> str:
    if not node.level:
        return node.module or ""
    parent = package.rsplit(".", node.level - 1)[0] if node.level > 1 else package
    return f"{parent}.{node.module}" if node.module else parent


def dotted_path(expr: ast.expr, roots: dict[str, str]) -> str | None:
    """`a.b.c` as the full dotted path of what it reaches, its head resolved through the imports; None for
    an expression that does not start at an imported name."""
    parts = []
    while isinstance(expr, ast.Attribute):
        parts.insert(0, expr.attr)
        expr = expr.value
    if not (isinstance(expr, ast.Name) and expr.id in roots):
        return None
    return ".".join([roots[expr.id], *parts])


def reached(text: str, package: str) -> set[str]:
    """Every dotted path a module reaches of other modules, however it is written: what it imports (plain,
    from, relative, importlib.import_module of a literal) and each attribute chain off an imported name
    (rt.settings, after `from pulumi import runtime as rt`, is pulumi.runtime.settings)."""
    tree = ast.parse(text)
    roots = import_roots(tree, package)
    found = set(roots.values())
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            found.add(_absolute(node, package))
        elif isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.Attribute | ast.Name) and (path := dotted_path(node, roots)):
            found.add(path)
        if (
            isinstance(node, ast.Call)
            and dotted_path(node.func, roots) == "importlib.import_module"
            and node.args
            and isinstance(node.args[0], ast.Constant)
            and isinstance(node.args[0].value, str)
        ):
            found.add(node.args[0].value)
    return found


def package_of(path: Path) -> str:
    """The package a module's relative imports start from: itself for an __init__.py."""
    name = module_name(path)
    return name if path.name == "__init__.py" else name.rsplit(".", 1)[0]


def sdk_private_uses(text: str, package: str = "gpt_oss_infra") -> list[str]:
    """What a module reaches of the Pulumi SDK beyond its public API, each cut where it leaves it: a
    `pulumi.runtime` name it does not export (its __all__: settings, config, ... are submodules it keeps
    to itself), or a private `_name` anywhere under `pulumi`."""
    import pulumi.runtime

    public_runtime = set(pulumi.runtime.__all__)
    found = set()
    for path in reached(text, package):
        parts = path.split(".")
        if parts[0] != "pulumi":
            continue
        for depth, part in enumerate(parts[1:], start=2):
            private = part.startswith("_") and not (part.startswith("__") and part.endswith("__"))
            unexported = depth == 3 and parts[1] == "runtime" and part not in public_runtime
            if private or unexported:
                found.add(".".join(parts[:depth]))
                break
    return sorted(found)


# `python -m gpt_oss_infra <command>`: it runs the offline tools (every command is a module of tools/, imported
# by name) and ends its process as they do (tools/process.py); no module on the `pulumi up` path imports it.
COMMAND_LINE = ROOT / "gpt_oss_infra" / "__main__.py"


def test_no_component_imports_the_offline_tools_or_the_sdks_private_api():
    """The `pulumi up` path (components/, and the package's own modules) needs only the public SDK: the
    mock engine and the private API it uses stay in tools/ (tools/pulumi_engine.py)."""
    offending = {}
    for folder in ("components", "gpt_oss_infra", "provider"):
        for path in (ROOT / folder).rglob("*.py"):
            text, package = path.read_text(), package_of(path)
            allowed = "gpt_oss_infra.tools.process" if path == COMMAND_LINE else None
            if uses := offline_tools_used(text, package, allowed) + sdk_private_uses(text, package):
                offending[str(path.relative_to(ROOT))] = uses
    assert offending == {}


def offline_tools_used(text: str, package: str, allowed: str | None = None) -> list[str]:
    """The modules of tools/ a module reaches (`allowed` and what is under it aside)."""
    tools = "gpt_oss_infra.tools"
    return sorted(
        path
        for path in reached(text, package)
        if (path == tools or path.startswith(f"{tools}."))
        and not (allowed and (path == allowed or path.startswith(f"{allowed}.")))
    )


def test_an_offline_tool_reached_any_way_is_caught_by_name():
    """Each way of writing the import reaches tools/, the command line's one allowed module aside."""
    ways = {
        "from gpt_oss_infra.tools.plan import planned\n": [
            "gpt_oss_infra.tools.plan",
            "gpt_oss_infra.tools.plan.planned",
        ],
        "import gpt_oss_infra.tools.plan\n": ["gpt_oss_infra.tools.plan"],
        "from gpt_oss_infra import tools\n": ["gpt_oss_infra.tools"],
        "from ..tools import plan\n": ["gpt_oss_infra.tools", "gpt_oss_infra.tools.plan"],
        "import importlib\nimportlib.import_module('gpt_oss_infra.tools.plan')\n": ["gpt_oss_infra.tools.plan"],
        "from gpt_oss_infra.tools.process import hard_exit\n": [],
    }
    found = {text: offline_tools_used(text, "gpt_oss_infra.components", "gpt_oss_infra.tools.process") for text in ways}
    assert found == ways


def test_a_private_sdk_use_is_caught_by_name():
    text = (
        "import pulumi\nfrom pulumi.runtime import settings\nfrom pulumi.runtime.config import CONFIG\n"
        "from pulumi.runtime import get_config\nx = pulumi.runtime.settings.get_monitor()\n"
        "y = pulumi.runtime.get_root_resource()\n"
        "from pulumi import runtime as rt\nz = rt.mocks.MockMonitor\n"
        "from pulumi._utils import is_empty_function\nimport pulumi._types\n"
    )
    assert sdk_private_uses(text) == [
        "pulumi._types",
        "pulumi._utils",
        "pulumi.runtime.config",
        "pulumi.runtime.mocks",
        "pulumi.runtime.settings",
    ]


def aws_constructions(text: str, package: str = "gpt_oss_infra") -> list[str]:
    """Every pulumi_aws class a module calls, however it imported it: a resource it registers itself (the
    provider aside, which is how the program reaches AWS; invokes, the lower-case get_* functions, are reads)."""
    tree = ast.parse(text)
    roots = import_roots(tree, package)
    return sorted(
        path
        for node in ast.walk(tree)
        if isinstance(node, ast.Call)
        and (path := dotted_path(node.func, roots))
        and path.startswith("pulumi_aws.")
        and path.rsplit(".", 1)[-1][:1].isupper()
        and path != "pulumi_aws.Provider"
    )


PROCESS_STARTERS = (
    "subprocess",
    "multiprocessing",
    "os.system",
    "os.popen",
    "os.spawn",
    "os.posix_spawn",
    "os.exec",
    "os.fork",
    "asyncio.create_subprocess",
)


def starts_a_process(text: str, package: str) -> bool:
    return any(path.startswith(PROCESS_STARTERS) for path in reached(text, package))


def test_every_aws_resource_has_one_path_from_the_config_to_the_cloud():
    """core/render/aws/resources.py describes every AWS resource; components/aws/build.py registers them,
    by type token, and no other module of the shell constructs one: what `up` checks against AWS's API
    (core/checks/aws_contract.py) is what it makes. The `pulumi up` path starts no other process."""
    made_elsewhere, processes = {}, []
    for path in (ROOT / "components").rglob("*.py"):
        text, package = path.read_text(), package_of(path)
        if constructed := aws_constructions(text, package):
            made_elsewhere[str(path.relative_to(ROOT))] = constructed
        if starts_a_process(text, package):
            processes.append(str(path.relative_to(ROOT)))
    assert made_elsewhere == {}
    assert processes == []


def test_an_aws_resource_made_outside_the_description_is_caught_by_name():
    text = (
        "import pulumi_aws as aws\nimport pulumi_aws\nfrom pulumi_aws.iam import Role\n"
        "a = aws.iam.Role('a', assume_role_policy='{}')\nb = pulumi_aws.iam.Role('b', assume_role_policy='{}')\n"
        "c = Role('c', assume_role_policy='{}')\nd = aws.iam.role.Role('d', assume_role_policy='{}')\n"
        "zones = aws.get_availability_zones()\nprovider = aws.Provider('aws', region='us-east-2')\n"
    )
    assert aws_constructions(text) == ["pulumi_aws.iam.Role"] * 3 + ["pulumi_aws.iam.role.Role"]


def test_a_process_started_any_way_is_caught():
    starts = [
        "import subprocess\nsubprocess.run(['true'])\n",
        "from subprocess import run\nrun(['true'])\n",
        "import os\nos.system('true')\n",
        "import asyncio\nasyncio.create_subprocess_exec('true')\n",
    ]
    assert [starts_a_process(text, "gpt_oss_infra") for text in starts] == [True] * 4
    assert not starts_a_process("import os\nos.environ.get('A')\n", "gpt_oss_infra")


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
    roots = import_roots(tree, "gpt_oss_infra")

    def path_of(expr: ast.expr) -> str | None:
        path = dotted_path(expr, roots)
        if path is None or path.split(".")[0] != "pulumi_kubernetes":
            return None
        path = path.replace("pulumi_kubernetes", "k8s", 1)
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
