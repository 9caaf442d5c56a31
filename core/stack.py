"""The functional core as one pipeline: raw config keys -> every object of a stack, checked.

Each stage is a package that imports only from the stages before it (tests/test_import_graph.py):
core/inputs (config models, the catalog, cross-field rules) -> core/resolve (pools, recipes to workers,
EFA, GPU fit, costs) -> core/render (every object, as plain dicts) -> core/checks (schemas, storage,
placement) -> core/report (what the plan and the stack outputs say). Below them all: errors, schemas,
YAML, the Dynamo-release and serving-backend seams (core/dynamo.py, core/backends/). The public blocks'
own pipelines (core/blocks.py) call the same stages, one part at a time.
"""

from __future__ import annotations

from typing import Any

from gpt_oss_infra.core.checks.stack_checks import part_problems, policy_warnings, stack_problems
from gpt_oss_infra.core.errors import refuse
from gpt_oss_infra.core.inputs.catalog import Catalog
from gpt_oss_infra.core.inputs.rules import aws_problems, parse_stack_config
from gpt_oss_infra.core.render import ownership
from gpt_oss_infra.core.render.stack_objects import Stack, render_parts, render_stack
from gpt_oss_infra.core.resolve.resolution import resolve_stack


def build_stack(
    raw_config: dict[str, Any],
    catalog: Catalog,
    with_hf_token: bool,
    with_ngc_key: bool = False,
    api_key_clients: list[str] | None = None,
    region: str | None = None,
    owner: str | None = None,
) -> Stack:
    """Validate, resolve, render and check; ConfigError (every bad key named) before anything is built.
    `api_key_clients`: the client names of apiKeys (its keys; the values are secrets the shell keeps).
    `owner`: the Pulumi project and stack (ownership.owner_of) the objects are marked as made by."""
    clients = sorted(api_key_clients or [])
    config, warnings = parse_stack_config(raw_config, catalog, region=region)
    refuse(aws_problems(config, region))
    resolved = resolve_stack(config, catalog)
    parts = render_parts(config, resolved, catalog, with_ngc_key, region)
    refuse(resolved.problems + part_problems(config, resolved, parts, catalog, clients))
    warnings = warnings + resolved.warnings + policy_warnings(config)
    stack = render_stack(config, resolved, parts, catalog, with_hf_token, with_ngc_key, clients, warnings)
    problems, placement_warnings = stack_problems(stack, catalog)
    stack.warnings.extend(placement_warnings)
    adopt = getattr(config.cluster, "adopt", [])
    refuse(problems + ownership.name_problems(stack) + ownership.adoption_problems(stack, adopt))
    return ownership.marked(stack, owner, adopt) if owner else stack
