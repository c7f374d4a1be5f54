"""Fixtures shared by the MemForest Python tests."""

import datetime as dt
import subprocess
import sys
import textwrap

import pytest

import memforest

UTC = dt.timezone.utc


def exchange(user_text, assistant_text, name="Alice"):
    """One exchange: a user message said by `name` and the assistant's reply."""
    return [
        {"role": "user", "content": user_text, "name": name},
        {"role": "assistant", "content": assistant_text},
    ]


def run_python(code, timeout=120):
    """Runs `code` in a fresh interpreter; a hang fails the test instead of blocking it."""
    try:
        done = subprocess.run(
            [sys.executable, "-c", textwrap.dedent(code)],
            capture_output=True,
            text=True,
            timeout=timeout,
        )
    except subprocess.TimeoutExpired as e:
        pytest.fail(f"the child interpreter hung for {timeout} s: {e.stderr!r}")
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


@pytest.fixture
def store(tmp_path):
    """The directory of a fresh store."""
    return str(tmp_path / "memory")


@pytest.fixture
def mem(store):
    """An open store with the offline defaults, closed after the test."""
    m = memforest.Memory(store)
    yield m
    if not m.closed:
        m.close()
