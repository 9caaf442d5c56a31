"""The component provider that hosts the public components for a program of another Pulumi language
(provider/__main__.py runs host()): the SDK's ComponentProvider, with its refusals keyed by argument.

The SDK wraps whatever a component's __init__ raises in an error of its own, which the engine then
shows as one text with a Python stack. A refusal of ours is an InputPropertiesError here
(components/arguments.py), taken out of that wrapper, so the caller's engine shows each problem under
its property path, as its language spells it, with no stack."""

from __future__ import annotations

import sys
from typing import Any

import pulumi
from pulumi.provider import main
from pulumi.provider.experimental.component import ComponentProvider

from gpt_oss_infra.components.arguments import serve_other_languages


class KeyedRefusalProvider(ComponentProvider):
    def construct(self, *args: Any, **kwargs: Any) -> Any:
        try:
            return super().construct(*args, **kwargs)
        except Exception as error:
            # The SDK raises its wrapper while handling ours: ours is the wrapper's context.
            refused = error.__context__
            if isinstance(refused, pulumi.InputPropertiesError):
                raise refused from None
            raise


def host(components: list[type[pulumi.ComponentResource]], package: str, version: str) -> None:
    serve_other_languages(components)
    main(KeyedRefusalProvider(components, package, None, version), sys.argv[1:])
