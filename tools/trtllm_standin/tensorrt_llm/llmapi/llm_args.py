"""`tensorrt_llm.llmapi.llm_args.BaseLlmArgs`: only its fields' defaults, as pydantic exposes them
(`model_fields[name].default`), read from the field list named by GPT_OSS_TRTLLM_FIELDS
(vendor/trtllm/llm_args_fields.json)."""

import ast
import json
import os


class _Field:
    def __init__(self, default):
        self.default = default


def _value(text):
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError):  # a default the list gives as code (a factory): none to offer
        return None


with open(os.environ["GPT_OSS_TRTLLM_FIELDS"]) as _file:
    _FIELDS = json.load(_file)["classes"]["BaseLlmArgs"]


class BaseLlmArgs:
    model_fields = {name: _Field(_value(spec["default"])) for name, spec in _FIELDS.items()}
