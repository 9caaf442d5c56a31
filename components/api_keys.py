"""A gateway's API keys as Pulumi hands them to a component.

From Python they are a dict of client name -> key, each key an input. From another Pulumi language, or
as another resource's output, the map arrives whole as one output (the SDK makes a map with a secret
value in it one secret). The client names name the API-key Secret's entries, the rate limits and the
smoke test's key, so they are needed before anything is registered: where the map is an output,
`api_clients` gives them, and each key is looked up by its client's name once the map is known.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pulumi

from gpt_oss_infra.core.errors import ConfigError, Problem


@dataclass(frozen=True)
class ApiKeys:
    clients: list[str]  # sorted
    values: pulumi.Output[dict[str, str]] | None  # client -> key, a secret; None without keys


def api_keys(keys: Any, clients: list[str] | None) -> ApiKeys:
    """The client names and the keys of `api_keys` and `api_clients`, or ConfigError keyed by them."""
    if keys is None:
        if clients:
            raise ConfigError([Problem("api_keys", "required with api_clients: each client's key")])
        return ApiKeys([], None)
    if isinstance(keys, dict):
        named = sorted(keys)
        if clients is not None and sorted(clients) != named:
            message = f"the client names of api_keys are {', '.join(named) or 'none'}; leave api_clients out"
            raise ConfigError([Problem("api_clients", message)])
    elif not clients:
        message = (
            "required: api_keys is an output (another resource's, or from another Pulumi language), known "
            "only during `up`, and the client names name the gateway's keys and rate limits before that"
        )
        raise ConfigError([Problem("api_clients", message)])
    else:
        named = sorted(clients)

    def each_client_has_a_key(given: Any) -> dict[str, str]:
        missing = [client for client in named if client not in (given or {})]
        if missing:
            raise ValueError(f"api_keys has no key for the api_clients {', '.join(missing)}")
        return {client: given[client] for client in named}

    return ApiKeys(named, pulumi.Output.secret(pulumi.Output.from_input(keys)).apply(each_client_has_a_key))
