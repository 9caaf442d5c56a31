"""What vulture (the dead-code finder, tests/test_dead_code.py) reports as unused, and why each stays.

Vulture reads this file as code that uses these names; nothing runs it.
"""

import http.client

from gpt_oss_infra.components.destroy_wait import WaitAtDestroyProvider
from gpt_oss_infra.components.dynamo_platform import DynamoPlatformArgs
from gpt_oss_infra.components.gpt_oss_deployment import Endpoint, GptOssDeploymentArgs
from gpt_oss_infra.components.gpt_oss_stack import GptOssStackArgs
from gpt_oss_infra.components.gpu_node_pool import GpuNodePoolArgs
from gpt_oss_infra.components.model_cache import ModelCacheArgs
from gpt_oss_infra.core.dynamo import DynamoVersionSpec
from gpt_oss_infra.core.inputs.catalog import GpuSizes, Hardware, Recipe, Traffic
from gpt_oss_infra.core.inputs.estimates import SupportEntry
from gpt_oss_infra.core.render.observability import ObservabilitySettings
from gpt_oss_infra.core.schema import StrictModel
from gpt_oss_infra.tools.pulumi_engine import AccountMocks
from tests.configs.scripts.test_smoke_test import _Frontend
from tests.support import JsonHandler

# Citations the data must carry (validated as present, shown to reviewers, read by no code).
DynamoVersionSpec.sources
Recipe.sources
Recipe.decisions
Hardware.gpu  # the GPU's marketing name: hardware.yaml's key is what code uses

# pydantic calls these: model settings and validators registered by decorator.
StrictModel.model_config
StrictModel._reject_unknown_keys
GpuSizes._default_is_allowed
Recipe._mode_has_its_roles
Traffic._one_concurrency
ObservabilitySettings._every_mode_has_a_threshold

# Pulumi's mock engine calls these (pulumi.runtime.Mocks).
AccountMocks.new_resource
AccountMocks.call

# http.server calls these on the test servers' request handlers (vulture matches by name, so this
# covers tests/tools/test_check_versions.py's handler too).
_Frontend.do_GET
_Frontend.do_POST
_Frontend.do_HEAD
JsonHandler.log_message
# and read these settings of theirs: the HTTP version a handler speaks, and whether it closes the connection
# after its answer (tests/tools/test_trial.py's stand-in frontend).
_Frontend.protocol_version
_Frontend.close_connection

# Pulumi's dynamic provider process calls these on a 0.2.0 destroy wait still in a live stack's state
# (components/destroy_wait.py): the `up` that drops it deletes it through this class.
WaitAtDestroyProvider.create
WaitAtDestroyProvider.diff
WaitAtDestroyProvider.update
WaitAtDestroyProvider.delete

# http.client calls connect() and reads sock on the smoke test's TLS connection (jobs/smoke_test.py).
http.client.HTTPSConnection.connect
http.client.HTTPSConnection.sock

# The building blocks' Args are TypedDicts read by key (core/blocks.py: arguments.get("...")),
# which vulture does not count as a use; the component schema every language's SDK gets is made from them.
GpuNodePoolArgs.node_role_arn
DynamoPlatformArgs.dynamo_release
ModelCacheArgs.fsx_dns_name
ModelCacheArgs.fsx_mount_name
ModelCacheArgs.dynamo_release
Endpoint.requests_per_minute
Endpoint.client_requests_per_minute
GptOssDeploymentArgs.recipe_definition
GptOssDeploymentArgs.pool_nodes
GptOssDeploymentArgs.dynamo_release
GptOssDeploymentArgs.api_clients
GptOssDeploymentArgs.uses_hf_token
ModelCacheArgs.file_system_id
GptOssStackArgs.api_clients

# What AISimulate supports per hardware type (configs/estimates.yaml `support`): recorded for readers
# (docs/recipes.md), read by no code.
SupportEntry.aggregated
SupportEntry.disaggregated

# Each replay's traces' SHA-256 (configs/simulated.yaml): provenance recorded for readers, read by no code.
from gpt_oss_infra.core.inputs.simulated import SimulatedDeployment  # noqa: E402

SimulatedDeployment.trace_sha256

# pytest reads a test module's `pytestmark` (tests/tools/test_estimate.py: skipped without .venv-trial).
from tests.tools import test_estimate  # noqa: E402

test_estimate.pytestmark

# pytest runs autouse fixtures without a caller: the workers' shared runs (tests/conftest.py).
from tests import conftest, worker_exit  # noqa: E402

conftest.shared_runs
conftest.pytest_configure  # pytest hooks: pytest calls them by name
worker_exit.pytest_unconfigure
conftest.pytest_collection_modifyitems

# MkDocs calls a hook module's on_files (mkdocs.yml `hooks:`).
from gpt_oss_infra.tools import docs_home  # noqa: E402

docs_home.on_files
