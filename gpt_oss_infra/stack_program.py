"""The Pulumi program of a stack of GptOssStack: the whole stack from the stack's config. It is what
the repository's __main__.py does, shipped in the package so that GptOssStack's offline check
(`python -m gpt_oss_infra.tools.plan --check`) can plan any program's stack, installed or not."""

from gpt_oss_infra import GptOssStack, stack_config_args

GptOssStack("gpt-oss-infra", stack_config_args()).export_stack_outputs()
