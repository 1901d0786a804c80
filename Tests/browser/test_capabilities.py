"""The suite itself: a server that answers a feature's requests with `unknown_type` is a
regression, so a test that needs the feature fails rather than skips (issue 13)."""

import pytest


def test_a_missing_capability_fails_the_test_instead_of_skipping_it(needs, capabilities, monkeypatch):
    monkeypatch.setattr(capabilities, "documents", False)
    outcome = None
    try:
        needs("documents")
    except BaseException as raised:  # pytest's skip and fail outcomes are BaseExceptions
        outcome = raised
    assert isinstance(outcome, pytest.fail.Exception), (
        f"a missing capability gave {type(outcome).__name__}: {outcome}; it must fail the test"
    )
    assert "documents" in str(outcome)


def test_the_server_answers_every_feature_the_browser_tests_use(capabilities):
    missing = [name for name, present in vars(capabilities).items() if not present]
    assert not missing, f"the server answers unknown_type for: {', '.join(missing)}"
