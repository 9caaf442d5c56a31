"""make test's workers share a module's expensive setup: a module-scoped fixture that starts a process
(checkov's scan, a venv's install, AISimulate) or runs the whole program outside tests/support.py's shared
runs (a plan), and that two or more tests use, is made once per session only when those tests share one
xdist group. Ungrouped, `--dist loadgroup` hands them to any worker, and each worker that gets one makes
the fixture again (checkov's scan ran twice, 29 s each, before its module was grouped).

What is expensive is read from the calls a fixture makes, itself or through its module's functions: the
calls of EXPENSIVE, as written in the tests (`subprocess.run`, `plan.plan_files`, `estimate.ask`...)."""

from __future__ import annotations

import ast

from gpt_oss_infra.tools.plan import ROOT

EXPENSIVE = {
    *(f"subprocess.{name}" for name in ("run", "Popen", "check_output", "check_call")),
    # The whole program on the mock engine, not shared between workers (tests/support.py's runs are).
    "plan.main",
    "plan.plan_files",
    "plan_files",
    "trial.plan_manifests",
    "run_program",
    # Upstream tools started for the questions they answer.
    "estimate.ask",
    "Driver",
}


def _is_expensive(function: ast.FunctionDef, functions: dict[str, ast.FunctionDef], seen: set[str]) -> bool:
    """Whether `function` makes a call of EXPENSIVE, itself or through the module's own functions."""
    for node in ast.walk(function):
        if not isinstance(node, ast.Call):
            continue
        called = ast.unparse(node.func)
        if called in EXPENSIVE:
            return True
        if called in functions and called not in seen:
            seen.add(called)
            if _is_expensive(functions[called], functions, seen):
                return True
    return False


def _module_scoped(function: ast.FunctionDef) -> bool:
    return any(
        isinstance(decorator, ast.Call)
        and ast.unparse(decorator.func) == "pytest.fixture"
        and any(k.arg == "scope" and ast.literal_eval(k.value) == "module" for k in decorator.keywords)
        for decorator in function.decorator_list
    )


def _parametrized(function: ast.FunctionDef) -> bool:
    return any("parametrize" in ast.unparse(decorator) for decorator in function.decorator_list)


def _groups_named(node: ast.expr, aliases: dict[str, set[str]]) -> set[str]:
    """The xdist groups a mark expression names: pytest.mark.xdist_group("g"), a module-level name bound
    to one (ONE_RUN = pytest.mark.xdist_group(...)), or a list of marks."""
    if isinstance(node, ast.Name):
        return aliases.get(node.id, set())
    if isinstance(node, ast.List | ast.Tuple):
        return {group for element in node.elts for group in _groups_named(element, aliases)}
    if isinstance(node, ast.Call) and ast.unparse(node.func) == "pytest.mark.xdist_group":
        named = [*node.args[:1], *(keyword.value for keyword in node.keywords if keyword.arg == "name")]
        return {ast.literal_eval(named[0])} if named else set()
    return set()


def _module_marks(module: ast.Module) -> tuple[dict[str, set[str]], set[str]]:
    """Module-level names bound to xdist groups, and the groups of the module's own pytestmark."""
    aliases: dict[str, set[str]] = {}
    for statement in module.body:
        if isinstance(statement, ast.Assign):
            for target in statement.targets:
                if isinstance(target, ast.Name):
                    aliases[target.id] = _groups_named(statement.value, aliases)
    return aliases, aliases.get("pytestmark", set())


def _users(fixture: str, functions: dict[str, ast.FunctionDef]) -> list[ast.FunctionDef]:
    """The tests that use `fixture`, directly or through the module's other fixtures."""
    wanted = {fixture}
    while True:
        more = {
            name
            for name, function in functions.items()
            if not name.startswith("test_") and wanted & {argument.arg for argument in function.args.args}
        }
        if more <= wanted:
            break
        wanted |= more
    return [
        function
        for name, function in functions.items()
        if name.startswith("test_") and wanted & {argument.arg for argument in function.args.args}
    ]


def setups_run_per_worker(source: str) -> list[str]:
    """Module-scoped fixtures of a test module's source that are expensive and are used by two or more
    tests (a parametrized test is several) that do not all share one xdist group: 'fixture: test, test'."""
    module = ast.parse(source)
    functions = {node.name: node for node in module.body if isinstance(node, ast.FunctionDef)}
    aliases, module_groups = _module_marks(module)
    found = []
    for name, fixture in functions.items():
        if not _module_scoped(fixture) or not _is_expensive(fixture, functions, {name}):
            continue
        users = _users(name, functions)
        # pytest-xdist joins a test's group names into one group (remote.py): the users share a worker only
        # where each has the same names.
        groups = {
            frozenset(
                module_groups | {g for decorator in test.decorator_list for g in _groups_named(decorator, aliases)}
            )
            for test in users
        }
        items = sum(2 if _parametrized(test) else 1 for test in users)  # a parametrized test: two or more
        if items > 1 and (len(groups) != 1 or not next(iter(groups))):
            found.append(f"{name}: {', '.join(test.name for test in users)}")
    return found


def test_every_expensive_module_wide_setup_is_made_on_one_worker():
    checked = sorted((ROOT / "tests").rglob("test_*.py"))
    found = {
        str(path.relative_to(ROOT)): problems
        for path in checked
        if (problems := setups_run_per_worker(path.read_text()))
    }
    assert found == {}, "mark these modules pytest.mark.xdist_group(...), as tests/program/test_checkov.py is"
    assert len(checked) > 100  # every test module was read


UNGROUPED = """
import subprocess
import pytest

pytestmark = pytest.mark.end_to_end


def scanner(directory):
    return subprocess.run(["scanner", directory])


@pytest.fixture(scope="module")
def scan(tmp_path_factory):
    return scanner(tmp_path_factory.mktemp("x"))


def test_one(scan):
    pass


def test_two(scan):
    pass
"""


def variant(source: str, old: str, new: str) -> str:
    """`source` with `old` replaced, which it must hold (else the case would test the source unchanged)."""
    assert old in source, old
    return source.replace(old, new)


def test_a_shared_setup_that_starts_a_process_is_found_until_its_module_is_grouped():
    assert setups_run_per_worker(UNGROUPED) == ["scan: test_one, test_two"]
    marks = '[pytest.mark.end_to_end, pytest.mark.xdist_group("x")]'
    grouped = variant(UNGROUPED, "pytestmark = pytest.mark.end_to_end", f"pytestmark = {marks}")
    assert setups_run_per_worker(grouped) == []
    used_once = variant(UNGROUPED, "def test_two(scan):", "def test_two():")
    assert setups_run_per_worker(used_once) == []
    parametrized = variant(used_once, "def test_one(", '@pytest.mark.parametrize("n", [1, 2])\ndef test_one(')
    assert setups_run_per_worker(parametrized) == ["scan: test_one"]
    function_scoped = variant(UNGROUPED, '@pytest.fixture(scope="module")', "@pytest.fixture")
    assert setups_run_per_worker(function_scoped) == []


def test_a_group_given_by_a_name_counts_and_two_groups_are_not_one():
    alias = 'ONE_RUN = pytest.mark.xdist_group("x")\n\n\n'
    by_name = variant(UNGROUPED, "def test_one(", f"{alias}@ONE_RUN\ndef test_one(")
    by_name = variant(by_name, "def test_two(", "@ONE_RUN\ndef test_two(")
    assert setups_run_per_worker(by_name) == []
    two_groups = variant(by_name, "@ONE_RUN\ndef test_two(", '@pytest.mark.xdist_group("y")\ndef test_two(')
    assert setups_run_per_worker(two_groups) == ["scan: test_one, test_two"]
    by_keyword = variant(by_name, 'xdist_group("x")', 'xdist_group(name="x")')
    assert setups_run_per_worker(by_keyword) == []
    # A test with the module's group and one of its own is in another group (xdist joins their names).
    module_mark = variant(UNGROUPED, "pytestmark = pytest.mark.end_to_end", 'pytestmark = pytest.mark.xdist_group("x")')
    joined = variant(module_mark, "def test_two(", '@pytest.mark.xdist_group("y")\ndef test_two(')
    assert setups_run_per_worker(module_mark) == [] and setups_run_per_worker(joined) == ["scan: test_one, test_two"]


def test_a_plan_is_expensive_and_a_fixture_built_on_the_setup_passes_it_on():
    planned = variant(UNGROUPED, 'return scanner(tmp_path_factory.mktemp("x"))', 'return plan.plan_files("dev")')
    assert setups_run_per_worker(planned) == ["scan: test_one, test_two"]
    through = "@pytest.fixture\ndef scanned(scan):\n    return scan\n\n\ndef test_two(scanned):"
    chained = variant(UNGROUPED, "def test_two(scan):", through)
    assert setups_run_per_worker(chained) == ["scan: test_one, test_two"]


def test_the_checkov_module_is_the_case_this_guards():
    source = (ROOT / "tests/program/test_checkov.py").read_text()
    assert setups_run_per_worker(source) == []
    grouped = 'pytestmark = [pytest.mark.end_to_end, pytest.mark.xdist_group("checkov")]'
    ungrouped = variant(source, grouped, "pytestmark = pytest.mark.end_to_end")
    assert setups_run_per_worker(ungrouped) == [
        "scan: test_no_manifest_fails_a_check, test_every_job_of_every_stack_was_scanned,"
        " test_the_report_holds_no_code_blocks, test_every_skip_says_why, test_checkov_catches_what_it_is_here_for"
    ]
