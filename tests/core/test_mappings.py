"""core/mappings.py's renamed_words: what the blocks' and the component provider's messages are renamed with."""

from __future__ import annotations

from gpt_oss_infra.core.mappings import renamed_words

RENAMES = {"capacity_type": "capacityType", "hf_token": "hfToken", "uses_hf_token": "usesHfToken"}


def test_whole_words_are_renamed_and_a_dotted_path_only_where_asked():
    text = "required with capacity_type; see pool.capacity_type, uses_hf_token and hf_token_file"
    assert renamed_words(text, RENAMES, after_dots=True) == (
        "required with capacityType; see pool.capacityType, usesHfToken and hf_token_file"
    )
    assert renamed_words(text, RENAMES, after_dots=False) == (
        "required with capacityType; see pool.capacity_type, usesHfToken and hf_token_file"
    )
    assert renamed_words(text, {}, after_dots=True) == text
