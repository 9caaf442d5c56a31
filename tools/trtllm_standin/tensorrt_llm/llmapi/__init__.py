"""`tensorrt_llm.llmapi.BuildConfig`, as Dynamo before TensorRT-LLM 1.3.0rc21 imports it: the same
stand-in as llm_args.BaseLlmArgs (see the package's docstring)."""

from tensorrt_llm.llmapi.llm_args import BaseLlmArgs as BuildConfig

__all__ = ["BuildConfig"]
