// An MCP server built with the official TypeScript SDK, protected by the service as the MCP
// authorization specification asks: it publishes its protected resource metadata (the document the
// service keeps for it, proxied), verifies each bearer token with the realm's JWKS (issuer,
// expiry, and its own address as audience), answers 401 pointing to its metadata when the token is
// missing or bad, and 403 `insufficient_scope` naming the scopes a tool needs.
//
// Usage: node mcp_server.mjs PORT ISSUER METADATA_URL. It serves http://127.0.0.1:PORT/mcp and
// prints {"listening": resource} once it listens. Tools: `whoami` (scope mcp:tools) answers the
// token's subject and scopes; `report` (scopes mcp:tools and mcp:admin) answers "report ready".

import { createServer } from 'node:http';
import { createRemoteJWKSet, jwtVerify } from 'jose';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';

const [port, issuer, metadataUrl] = process.argv.slice(2);
const origin = `http://127.0.0.1:${port}`;
const resource = `${origin}/mcp`;
const ownMetadata = `${origin}/.well-known/oauth-protected-resource/mcp`;
const keys = createRemoteJWKSet(new URL(`${issuer}/protocol/openid-connect/certs`));
const needs = { whoami: ['mcp:tools'], report: ['mcp:tools', 'mcp:admin'] };

function mcpServer() {
  const server = new McpServer({ name: 'castellan-test-tools', version: '1.0.0' });
  server.registerTool('whoami', { description: 'Who the token is for' }, async (extra) => ({
    content: [{ type: 'text', text: JSON.stringify({ sub: extra.authInfo?.extra?.sub, scopes: extra.authInfo?.scopes }) }],
  }));
  server.registerTool('report', { description: 'An administrative report' }, async () => ({
    content: [{ type: 'text', text: 'report ready' }],
  }));
  return server;
}

function refuse(res, status, challenge) {
  res.writeHead(status, { 'www-authenticate': challenge, 'content-type': 'application/json' });
  res.end(JSON.stringify({ error: status === 401 ? 'invalid_token' : 'insufficient_scope' }));
}

async function body(req) {
  const chunks = [];
  for await (const chunk of req) chunks.push(chunk);
  return chunks.length ? JSON.parse(Buffer.concat(chunks).toString('utf8')) : undefined;
}

createServer(async (req, res) => {
  try {
    if (req.url === '/.well-known/oauth-protected-resource/mcp' || req.url === '/.well-known/oauth-protected-resource') {
      const document = await fetch(metadataUrl);
      res.writeHead(document.status, { 'content-type': 'application/json' });
      res.end(await document.text());
      return;
    }
    if (!req.url.startsWith('/mcp')) {
      res.writeHead(404).end();
      return;
    }
    const authorization = req.headers.authorization ?? '';
    const token = authorization.startsWith('Bearer ') ? authorization.slice(7) : undefined;
    let claims;
    try {
      ({ payload: claims } = await jwtVerify(token ?? '', keys, { issuer, audience: resource }));
    } catch {
      refuse(res, 401, `Bearer resource_metadata="${ownMetadata}", scope="mcp:tools"`);
      return;
    }
    const scopes = (claims.scope ?? '').split(' ').filter(Boolean);
    const message = req.method === 'POST' ? await body(req) : undefined;
    const tool = message?.method === 'tools/call' ? message.params?.name : undefined;
    const missing = (needs[tool] ?? []).filter((scope) => !scopes.includes(scope));
    if (missing.length) {
      const wanted = [...new Set([...scopes, ...needs[tool]])].join(' ');
      refuse(res, 403, `Bearer error="insufficient_scope", scope="${wanted}", resource_metadata="${ownMetadata}"`);
      return;
    }
    req.auth = { token, clientId: claims.client_id ?? claims.azp, scopes, extra: { sub: claims.sub } };
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
    const server = mcpServer();
    res.on('close', () => {
      transport.close();
      server.close();
    });
    await server.connect(transport);
    await transport.handleRequest(req, res, message);
  } catch (error) {
    console.error(error);
    if (!res.headersSent) res.writeHead(500).end();
  }
}).listen(Number(port), '127.0.0.1', () => console.log(JSON.stringify({ listening: resource })));
