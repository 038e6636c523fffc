// An MCP client built with the official TypeScript SDK and its OAuth support, meeting an MCP server
// it has never seen: the SDK reads the server's protected resource metadata, the realm's metadata,
// registers itself (Dynamic Client Registration, or none at all when it is given the https address
// of its Client ID Metadata Document and the realm takes those), and sends the person to the authorization
// endpoint with PKCE and `resource`. The script plays the person's browser: it signs in on the
// login page, allows what the consent page asks, checks the answer's `iss` (RFC 9207) and hands
// the code back to the SDK. Then it calls a tool; a tool that needs one more scope is answered
// `insufficient_scope`, and the SDK asks again for it.
//
// Usage: node mcp_client.mjs SERVER_URL ISSUER USERNAME PASSWORD [METADATA_DOCUMENT_URL]. It
// prints one JSON line per step ({"page": "login"|"consent", ...}, {"tool": name, "text": ...}), then {"done": true}.

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { UnauthorizedError } from '@modelcontextprotocol/sdk/client/auth.js';

const [serverUrl, issuer, username, password, metadataDocument] = process.argv.slice(2);
const redirectUrl = 'http://127.0.0.1:9/callback';
const say = (line) => console.log(JSON.stringify(line));

// What the SDK asks a client application to keep. Refresh tokens are not kept: asked for more
// scopes, the SDK would refresh the narrower token instead of asking the person.
class Provider {
  saved = {};
  get redirectUrl() {
    return redirectUrl;
  }
  // The SDK uses it as the client_id where the realm's metadata says it takes such documents.
  get clientMetadataUrl() {
    return metadataDocument;
  }
  get clientMetadata() {
    return {
      client_name: 'SDK agent',
      redirect_uris: [redirectUrl],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
      software_id: 'mcp-typescript-sdk',
    };
  }
  clientInformation() {
    return this.saved.client;
  }
  saveClientInformation(information) {
    this.saved.client = information;
    say({ registered: information.client_id });
  }
  tokens() {
    return this.saved.tokens;
  }
  saveTokens({ refresh_token: _, ...tokens }) {
    this.saved.tokens = tokens;
  }
  redirectToAuthorization(url) {
    this.pending = url;
  }
  saveCodeVerifier(verifier) {
    this.verifier = verifier;
  }
  codeVerifier() {
    return this.verifier;
  }
}

// A browser: keeps cookies, follows no redirect.
const cookies = new Map();
async function visit(url, form) {
  const headers = { cookie: [...cookies].map(([name, value]) => `${name}=${value}`).join('; ') };
  const init = form
    ? { method: 'POST', headers: { ...headers, 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams(form) }
    : { headers };
  const response = await fetch(url, { ...init, redirect: 'manual' });
  for (const line of response.headers.getSetCookie()) {
    const [name, value] = line.split(';')[0].split('=');
    cookies.set(name, value);
  }
  return { status: response.status, location: response.headers.get('location'), body: await response.text() };
}

const unescape = (text) =>
  text.replaceAll('&quot;', '"').replaceAll('&#39;', "'").replaceAll('&lt;', '<').replaceAll('&gt;', '>').replaceAll('&amp;', '&');

function hiddenFields(body) {
  return Object.fromEntries([...body.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)">/g)].map((m) => [m[1], unescape(m[2])]));
}

function listAfter(body, sentence) {
  const at = body.indexOf(`<p>${sentence}</p>`);
  if (at < 0) return [];
  const list = body.slice(at, body.indexOf('</ul>', at));
  return [...list.matchAll(/<li>([^<]*)<\/li>/g)].map((m) => unescape(m[1]));
}

// The person at the authorization endpoint: the login page when not signed in, the consent page
// when asked; the answer's code goes back to the SDK.
async function authorize(transport, url) {
  say({ asked: Object.fromEntries(url.searchParams) });
  let page = await visit(url);
  while (page.status === 200) {
    const action = unescape(page.body.match(/<form method="post" action="([^"]+)"/)[1]);
    if (action.endsWith('/login')) {
      say({ page: 'login' });
      page = await visit(action, { ...hiddenFields(page.body), username, password });
    } else if (action.endsWith('/consent')) {
      say({ page: 'consent', asked: listAfter(page.body, 'It asks for:'), earlier: listAfter(page.body, 'You allowed it earlier:') });
      page = await visit(action, { ...hiddenFields(page.body), decision: 'allow' });
    } else {
      throw new Error(`an unexpected page: ${page.body}`);
    }
  }
  const answer = new URL(page.location);
  if (answer.searchParams.get('iss') !== issuer) throw new Error(`the answer's iss is ${answer.searchParams.get('iss')}`);
  await transport.finishAuth(answer.searchParams.get('code'));
}

const provider = new Provider();
async function connected() {
  for (let attempt = 0; attempt < 2; attempt += 1) {
    const client = new Client({ name: 'castellan-test-agent', version: '1.0.0' });
    const transport = new StreamableHTTPClientTransport(new URL(serverUrl), { authProvider: provider });
    try {
      await client.connect(transport);
      return { client, transport };
    } catch (error) {
      if (!(error instanceof UnauthorizedError)) throw error;
      await authorize(transport, provider.pending);
    }
  }
  throw new Error('still unauthorized after signing in');
}

async function call({ client, transport }, name) {
  try {
    return await client.callTool({ name });
  } catch (error) {
    if (!(error instanceof UnauthorizedError)) throw error;
    await authorize(transport, provider.pending);
    return client.callTool({ name });
  }
}

const session = await connected();
for (const name of ['whoami', 'report']) {
  const result = await call(session, name);
  say({ tool: name, text: result.content[0].text });
}
await session.client.close();
say({ done: true });
