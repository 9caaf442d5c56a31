"""gpt-oss-infra: Pulumi components that run OpenAI's gpt-oss-120b on Kubernetes with NVIDIA Dynamo
and TensorRT-LLM. The public API is what this module exports (`__all__`); README, "Use the components
in your own program", shows it, and CHANGELOG.md records every change to it."""

from pathlib import Path

__version__ = "0.2.0"

# Installed (a wheel), core/, components/ and tools/ are folders of this package. In the repository
# they are the top-level folders beside this one (pyproject.toml maps them so): a run from a clone
# finds them there, in that clone, with nothing installed.
_source_tree = Path(__file__).resolve().parent.parent
if not (Path(__file__).parent / "core").is_dir() and (_source_tree / "core" / "__init__.py").is_file():
    __path__.append(str(_source_tree))

from gpt_oss_infra.components.building_blocks import (  # noqa: E402
    DynamoPlatform,
    DynamoPlatformArgs,
    Endpoint,
    GptOssDeployment,
    GptOssDeploymentArgs,
    GpuNodePool,
    GpuNodePoolArgs,
    ModelCache,
    ModelCacheArgs,
)
from gpt_oss_infra.components.gpt_oss_stack import GptOssStack, GptOssStackArgs, stack_config_args  # noqa: E402

PACKAGE = "gpt-oss-infra"  # the Pulumi package: its components' tokens are gpt-oss-infra:index:<Class>
# What provider/ hosts for every Pulumi language.
COMPONENTS = [GptOssStack, GpuNodePool, DynamoPlatform, ModelCache, GptOssDeployment]

__all__ = [
    "COMPONENTS",
    "PACKAGE",
    "DynamoPlatform",
    "DynamoPlatformArgs",
    "Endpoint",
    "GptOssDeployment",
    "GptOssDeploymentArgs",
    "GptOssStack",
    "GptOssStackArgs",
    "GpuNodePool",
    "GpuNodePoolArgs",
    "ModelCache",
    "ModelCacheArgs",
    "__version__",
    "stack_config_args",
]
