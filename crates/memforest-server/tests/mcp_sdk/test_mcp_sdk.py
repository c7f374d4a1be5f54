"""`memforest mcp` (stdio) and `memforest serve` (/mcp, streamable HTTP) driven by the
official Python MCP SDK. The binary is $MEMFOREST_BIN (default: target/debug/memforest)."""

import json
import os
import pathlib
import subprocess
import urllib.request

import anyio
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

ROOT = pathlib.Path(__file__).resolve().parents[4]
BIN = os.environ.get("MEMFOREST_BIN", str(ROOT / "target" / "debug" / "memforest"))
TOOLS = {
    "add_memory",
    "search_memory",
    "get_context",
    "get_memory",
    "update_memory",
    "delete_memory",
    "memory_history",
    "get_profile",
}
MESSAGE = {"role": "user", "text": "I adopted a cat named Miso from the shelter."}


def text(result):
    return "".join(getattr(c, "text", "") for c in result.content)


async def exercise(session, user_arg):
    await session.initialize()
    listed = await session.list_tools()
    assert {t.name for t in listed.tools} == TOOLS
    for tool in listed.tools:
        assert tool.input_schema["type"] == "object", tool.name
        assert len(tool.description or "") > 20, tool.name
    added = await session.call_tool(
        "add_memory", {**user_arg, "session": "s1", "messages": [MESSAGE]}
    )
    assert not added.is_error, text(added)
    memory_id = json.loads(text(added))["memories"][0]
    found = await session.call_tool("search_memory", {**user_arg, "query": "cat"})
    assert json.loads(text(found))["results"][0]["id"] == memory_id
    got = await session.call_tool("get_memory", {**user_arg, "id": memory_id})
    assert "Miso" in json.loads(text(got))["text"]
    other = await session.call_tool("search_memory", {"user": "bob", "query": "cat"})
    assert other.is_error, "a user outside the scope is refused"
    return memory_id


def test_stdio(tmp_path):
    params = StdioServerParameters(
        command=BIN, args=["mcp", "--db", str(tmp_path / "db"), "--user", "alice"]
    )

    async def run():
        async with stdio_client(params) as (read, write):
            async with ClientSession(read, write) as session:
                await exercise(session, {})

    anyio.run(run)


def test_streamable_http_with_keys(tmp_path):
    keys = tmp_path / "keys.json"
    key = subprocess.run(
        [BIN, "keys", "add", "--file", str(keys), "--name", "a", "--tenant", "alice=rw"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()
    server = subprocess.Popen(
        [BIN, "serve", "--db", str(tmp_path / "db"), "--keys", str(keys), "--listen", "127.0.0.1:0"],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    try:
        addr = server.stdout.readline().strip().removeprefix("listening on ")
        url = f"http://{addr}/mcp"

        async def run():
            client = create_mcp_http_client(headers={"Authorization": f"Bearer {key}"})
            async with client, streamable_http_client(url, http_client=client) as (read, write):
                async with ClientSession(read, write) as session:
                    await exercise(session, {"user": "alice"})

        anyio.run(run)

        async def unauthorized():
            with anyio.fail_after(30):
                async with streamable_http_client(url) as (read, write):
                    async with ClientSession(read, write) as session:
                        await session.initialize()

        refusal = None
        try:
            anyio.run(unauthorized)
        except Exception as e:  # the SDK's error for the 401, possibly in a group
            refusal = e
        assert refusal is not None, "no key: the session is refused"
        assert not isinstance(refusal, TimeoutError), refusal
        with urllib.request.urlopen(f"http://{addr}/metrics") as r:
            metrics = r.read().decode()
        assert 'route="/mcp",method="POST",status="401"' in metrics, metrics
    finally:
        server.terminate()
        assert server.wait(timeout=60) == 0
