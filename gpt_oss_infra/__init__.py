"""gpt-oss-infra: Pulumi components that run OpenAI's gpt-oss-120b on Kubernetes with NVIDIA Dynamo
and TensorRT-LLM. The public API is what this module exports (`__all__`); docs/components.md
shows it, and CHANGELOG.md records every change to it.

The components are imported on first use (`gpt_oss_infra.GptOssStack`), not with the package: the
functional core (`gpt_oss_infra.core`) then imports without Pulumi's providers, as the policy pack does
in its own venv (policy/requirements.txt: pulumi and pulumi-policy only)."""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

__version__ = "0.6.9"

if TYPE_CHECKING:  # what type checkers and editors resolve; at run time, __getattr__ below
    from gpt_oss_infra.components.dynamo_platform import DynamoPlatform, DynamoPlatformArgs
    from gpt_oss_infra.components.gpt_oss_deployment import Endpoint, GptOssDeployment, GptOssDeploymentArgs
    from gpt_oss_infra.components.gpt_oss_stack import GptOssStack, GptOssStackArgs, stack_config_args
    from gpt_oss_infra.components.gpu_node_pool import GpuNodePool, GpuNodePoolArgs
    from gpt_oss_infra.components.model_cache import ModelCache, ModelCacheArgs

PACKAGE = "gpt-oss-infra"  # the Pulumi package: its components' tokens are gpt-oss-infra:index:<Class>

# Each public name -> the module that defines it.
_PUBLIC = {
    **dict.fromkeys(["GpuNodePool", "GpuNodePoolArgs"], "gpt_oss_infra.components.gpu_node_pool"),
    **dict.fromkeys(["DynamoPlatform", "DynamoPlatformArgs"], "gpt_oss_infra.components.dynamo_platform"),
    **dict.fromkeys(["ModelCache", "ModelCacheArgs"], "gpt_oss_infra.components.model_cache"),
    **dict.fromkeys(
        ["GptOssDeployment", "GptOssDeploymentArgs", "Endpoint"], "gpt_oss_infra.components.gpt_oss_deployment"
    ),
    **dict.fromkeys(["GptOssStack", "GptOssStackArgs", "stack_config_args"], "gpt_oss_infra.components.gpt_oss_stack"),
}
# What provider/ hosts for every Pulumi language, by name (COMPONENTS: the classes).
_COMPONENT_NAMES = ["GptOssStack", "GpuNodePool", "DynamoPlatform", "ModelCache", "GptOssDeployment"]


def __getattr__(name: str) -> Any:
    if name == "COMPONENTS":
        return [__getattr__(component) for component in _COMPONENT_NAMES]
    if name in _PUBLIC:
        return getattr(importlib.import_module(_PUBLIC[name]), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


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
