"""gpt-oss-infra: gpt-oss-120b on Kubernetes with NVIDIA Dynamo and TensorRT-LLM.

The whole stack is one public component, GptOssStack, built from this stack's config
(Pulumi.<stack>.yaml): the cluster (`cluster.kind`), the platform, the model cache and one graph per
deployment on it. Your own program can use it, or the smaller components, the same way (docs/components.md).
"""

from gpt_oss_infra import GptOssStack, stack_config_args

GptOssStack("gpt-oss-infra", stack_config_args()).export_stack_outputs()
