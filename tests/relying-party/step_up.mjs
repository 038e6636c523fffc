// Step-up authentication (RFC 9470) between a stock relying party (openid-client) and a resource
// server that verifies the service's access tokens with jose and asks for a stronger sign-in than a
// token shows. The client signs the person in, calls the resource server, reads its challenge
// (`WWW-Authenticate: Bearer error="insufficient_user_authentication", acr_values=...`) with
// openid-client's own parser, and signs the person in again with the `acr_values` it names.
//
// Lines out: {"authorizationUrl"} for each sign-in the browser must make, then {"calls": [...]},
// each call's status, the challenge's parameters and the `acr` of the token used. Lines in: the
// URL the browser was sent back to. Arguments: issuer, client id, client secret, redirect URI,
// the `acr` the resource server requires.
import * as client from 'openid-client';
import { createServer } from 'node:http';
import { createInterface } from 'node:readline';
import { createRemoteJWKSet, jwtVerify } from 'jose';

const [issuer, clientId, clientSecret, redirectUri, required] = process.argv.slice(2);
const lines = createInterface({ input: process.stdin })[Symbol.asyncIterator]();
const config = await client.discovery(new URL(issuer), clientId, clientSecret, undefined, {
  execute: [client.allowInsecureRequests],
});

// The resource server: the levels this service documents, weakest first.
const levels = ['1', '2', 'phr', 'phrh'];
const keys = createRemoteJWKSet(new URL(config.serverMetadata().jwks_uri));
const server = createServer(async (request, response) => {
  const token = (request.headers.authorization ?? '').replace(/^Bearer /, '');
  try {
    const { payload } = await jwtVerify(token, keys, { issuer });
    if (levels.indexOf(payload.acr) < levels.indexOf(required)) {
      response.writeHead(401, {
        'www-authenticate': `Bearer error="insufficient_user_authentication", error_description="A stronger sign-in is required", acr_values="${required}"`,
      });
      response.end();
      return;
    }
    response.writeHead(200, { 'content-type': 'application/json' });
    response.end(JSON.stringify({ orders: [], acr: payload.acr }));
  } catch {
    response.writeHead(401, { 'www-authenticate': 'Bearer error="invalid_token"' });
    response.end();
  }
});
await new Promise((ready) => server.listen(0, '127.0.0.1', ready));
const resource = new URL(`http://127.0.0.1:${server.address().port}/orders`);

async function signIn(extra) {
  const verifier = client.randomPKCECodeVerifier();
  const state = client.randomState();
  const url = client.buildAuthorizationUrl(config, {
    redirect_uri: redirectUri,
    scope: 'openid profile',
    code_challenge: await client.calculatePKCECodeChallenge(verifier),
    code_challenge_method: 'S256',
    state,
    ...extra,
  });
  console.log(JSON.stringify({ authorizationUrl: url.href }));
  const { value: callback } = await lines.next();
  return client.authorizationCodeGrant(config, new URL(callback), { pkceCodeVerifier: verifier, expectedState: state });
}

async function call(tokens) {
  const acr = tokens.claims()?.acr;
  try {
    const response = await client.fetchProtectedResource(config, tokens.access_token, resource, 'GET');
    return { status: response.status, body: await response.json(), acr };
  } catch (error) {
    if (!(error instanceof client.WWWAuthenticateChallengeError)) throw error;
    return { status: error.status, challenge: error.cause[0]?.parameters, acr };
  }
}

const calls = [];
let tokens = await signIn({});
calls.push(await call(tokens));
const challenge = calls[0].challenge;
if (challenge?.error === 'insufficient_user_authentication') {
  const extra = { acr_values: challenge.acr_values };
  if (challenge.max_age !== undefined) extra.max_age = challenge.max_age;
  tokens = await signIn(extra);
  calls.push(await call(tokens));
}
console.log(JSON.stringify({ calls }));
server.close();
process.exit(0);
