"""An MCP client built with the official Python SDK (`mcp`) and its OAuth support, meeting an MCP
server it has never seen: the SDK discovers the server's protected resource metadata and the
realm's metadata, registers itself, and sends the person to sign in with PKCE and `resource`. This
script plays the person's browser on the login and consent pages and hands the SDK the answer
(code, state and `iss`, which the SDK checks against the issuer). Then it calls `whoami`, and
`report`, which needs one more scope: the server answers `insufficient_scope` and the SDK asks
again within the same call.

Usage: python mcp_agent.py SERVER_URL USERNAME PASSWORD. One JSON line per step, then
{"done": true}.
"""

import asyncio
import html
import json
import re
import sys
from urllib.parse import parse_qs, urlparse

import httpx2
from mcp import Client
from mcp.client.auth import AuthorizationCodeResult, OAuthClientProvider
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.auth import OAuthClientInformationFull, OAuthClientMetadata, OAuthToken

REDIRECT = "http://127.0.0.1:9/callback"


def say(line: dict) -> None:
    print(json.dumps(line), flush=True)


class Memory:
    """What the SDK asks the application to keep, kept in memory."""

    def __init__(self) -> None:
        self.tokens: OAuthToken | None = None
        self.client: OAuthClientInformationFull | None = None

    async def get_tokens(self) -> OAuthToken | None:
        return self.tokens

    async def set_tokens(self, tokens: OAuthToken) -> None:
        self.tokens = tokens

    async def get_client_info(self) -> OAuthClientInformationFull | None:
        return self.client

    async def set_client_info(self, client_info: OAuthClientInformationFull) -> None:
        self.client = client_info
        say({"registered": client_info.client_id})


def listed(page: str, sentence: str) -> list[str]:
    at = page.find(f"<p>{sentence}</p>")
    if at < 0:
        return []
    return [html.unescape(item) for item in re.findall(r"<li>([^<]*)</li>", page[at : page.find("</ul>", at)])]


class Person:
    """The person's browser: keeps cookies, follows no redirect."""

    def __init__(self, username: str, password: str) -> None:
        self.browser = httpx2.AsyncClient(follow_redirects=False)
        self.username, self.password = username, password
        self.pending = ""

    async def redirect(self, url: str) -> None:
        self.pending = url

    async def answer(self) -> AuthorizationCodeResult:
        say({"asked": {name: values[0] for name, values in parse_qs(urlparse(self.pending).query).items()}})
        page = await self.browser.get(self.pending)
        while page.status_code == 200:
            action = html.unescape(re.search(r'<form method="post" action="([^"]+)"', page.text).group(1))
            fields = {
                name: html.unescape(value)
                for name, value in re.findall(r'<input type="hidden" name="([^"]+)" value="([^"]*)">', page.text)
            }
            if action.endswith("/login"):
                say({"page": "login"})
                fields.update(username=self.username, password=self.password)
            elif action.endswith("/consent"):
                asked, earlier = listed(page.text, "It asks for:"), listed(page.text, "You allowed it earlier:")
                say({"page": "consent", "asked": asked, "earlier": earlier})
                fields["decision"] = "allow"
            else:
                raise RuntimeError(f"an unexpected page: {page.text}")
            page = await self.browser.post(action, data=fields)
        answer = {name: values[0] for name, values in parse_qs(urlparse(page.headers["location"]).query).items()}
        return AuthorizationCodeResult(code=answer["code"], state=answer.get("state"), iss=answer.get("iss"))


async def main(server_url: str, username: str, password: str) -> None:
    person = Person(username, password)
    metadata = OAuthClientMetadata(
        client_name="Python SDK agent",
        redirect_uris=[REDIRECT],
        grant_types=["authorization_code", "refresh_token"],
        token_endpoint_auth_method="none",
        software_id="mcp-python-sdk",
    )
    auth = OAuthClientProvider(server_url, metadata, Memory(), person.redirect, person.answer)
    http = httpx2.AsyncClient(auth=auth, follow_redirects=False)
    async with Client(streamable_http_client(server_url, http_client=http)) as client:
        for name in ("whoami", "report"):
            result = await client.call_tool(name, {})
            say({"tool": name, "text": result.content[0].text})
    say({"done": True})


if __name__ == "__main__":
    asyncio.run(main(*sys.argv[1:4]))
