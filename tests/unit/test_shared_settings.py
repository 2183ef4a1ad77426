"""The shared index's settings, validated like every other setting."""

from __future__ import annotations

from nearsym.workspace.config import Config, config_from_options


def test_a_postgresql_url_and_a_budget_are_taken() -> None:
    config, problems = config_from_options(
        {"sharedIndex": "postgresql://nearsym@db/nearsym", "sharedIndexBudgetMs": 80}
    )
    assert problems == []
    assert config.shared_index == "postgresql://nearsym@db/nearsym"
    assert config.shared_index_budget_ms == 80


def test_no_shared_index_by_default_or_when_emptied() -> None:
    assert Config().shared_index is None
    assert Config().shared_index_budget_ms == 150
    config, problems = config_from_options({"sharedIndex": ""})
    assert (config.shared_index, problems) == (None, [])


def test_a_url_of_another_kind_is_reported_and_ignored() -> None:
    config, problems = config_from_options(
        {"sharedIndex": "mysql://db/x", "sharedIndexBudgetMs": -1}
    )
    assert config.shared_index is None
    assert config.shared_index_budget_ms == 150
    assert len(problems) == 2
    assert "'sharedIndex' must be a postgresql:// URL" in problems[0]
