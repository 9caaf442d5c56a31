"""make test's workers share a module's expensive setup: a module-scoped fixture that starts a process
(checkov's scan, a venv's install) and that two or more tests use is made once per session only when
those tests share an xdist group. Ungrouped, `--dist loadgroup` hands them to any worker, and each
worker that gets one runs the fixture again (checkov's scan ran twice, 29 s each, before its module
was grouped)."""

from __future__ import annotations

import ast

from gpt_oss_infra.tools.plan import ROOT

PROCESS_STARTERS = {"run", "Popen", "check_output", "check_call"}  # subprocess's


def _starts_a_process(function: ast.FunctionDef, functions: dict[str, ast.FunctionDef], seen: set[str]) -> bool:
    """Whether `function` calls subprocess, itself or through the module's own functions."""
    for node in ast.walk(function):
        if not isinstance(node, ast.Call):
            continue
        called = node.func
        if (
            isinstance(called, ast.Attribute)
            and isinstance(called.value, ast.Name)
            and called.value.id == "subprocess"
            and called.attr in PROCESS_STARTERS
        ):
            return True
        if isinstance(called, ast.Name) and called.id in functions and called.id not in seen:
            seen.add(called.id)
            if _starts_a_process(functions[called.id], functions, seen):
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


def _grouped(function: ast.FunctionDef, module: ast.Module) -> bool:
    """A test in an xdist group: by its own mark, or by the module's pytestmark."""
    marks = [ast.unparse(decorator) for decorator in function.decorator_list]
    marks += [
        ast.unparse(statement.value)
        for statement in module.body
        if isinstance(statement, ast.Assign) and any(ast.unparse(t) == "pytestmark" for t in statement.targets)
    ]
    return any("xdist_group" in mark for mark in marks)


def setups_run_per_worker(source: str) -> list[str]:
    """Module-scoped fixtures of a test module's source that start a process and are used by two or
    more tests (a parametrized test is several) not all in an xdist group: 'fixture: test, test'."""
    module = ast.parse(source)
    functions = {node.name: node for node in module.body if isinstance(node, ast.FunctionDef)}
    tests = [function for name, function in functions.items() if name.startswith("test_")]
    found = []
    for name, fixture in functions.items():
        if not _module_scoped(fixture) or not _starts_a_process(fixture, functions, {name}):
            continue
        users = [test for test in tests if name in {argument.arg for argument in test.args.args}]
        items = sum(2 if _parametrized(test) else 1 for test in users)  # a parametrized test: two or more
        if items > 1 and not all(_grouped(test, module) for test in users):
            found.append(f"{name}: {', '.join(test.name for test in users)}")
    return found


def test_every_module_wide_setup_that_starts_a_process_runs_on_one_worker():
    checked = [path for path in sorted((ROOT / "tests").rglob("test_*.py"))]
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


def test_a_shared_setup_that_starts_a_process_is_found_until_its_module_is_grouped():
    assert setups_run_per_worker(UNGROUPED) == ["scan: test_one, test_two"]
    grouped = UNGROUPED.replace(
        "pytestmark = pytest.mark.end_to_end", 'pytestmark = [pytest.mark.end_to_end, pytest.mark.xdist_group("x")]'
    )
    assert setups_run_per_worker(grouped) == []
    used_once = UNGROUPED.replace("def test_two(scan):", "def test_two():")
    assert setups_run_per_worker(used_once) == []
    parametrized = used_once.replace("def test_one(", '@pytest.mark.parametrize("n", [1, 2])\ndef test_one(')
    assert setups_run_per_worker(parametrized) == ["scan: test_one"]
    function_scoped = UNGROUPED.replace('@pytest.fixture(scope="module")', "@pytest.fixture")
    assert setups_run_per_worker(function_scoped) == []


def test_the_checkov_module_is_the_case_this_guards():
    source = (ROOT / "tests/program/test_checkov.py").read_text()
    assert setups_run_per_worker(source) == []
    ungrouped = source.replace(
        'pytestmark = [pytest.mark.end_to_end, pytest.mark.xdist_group("checkov")]',
        "pytestmark = pytest.mark.end_to_end",
    )
    assert ungrouped != source
    assert setups_run_per_worker(ungrouped) == [
        "scan: test_no_manifest_fails_a_check, test_every_job_of_every_stack_was_scanned, test_every_skip_says_why"
    ]
