// A stock relying party (openid-client) signing a person in through the service's authorization
// code flow with PKCE. It prints the authorization URL as a JSON line, reads the URL the browser
// was sent back to from standard input, exchanges the code, fetches userinfo and prints what it
// received as a JSON line. Arguments: issuer, client id, client secret, redirect URI.
import * as client from 'openid-client';
import { createInterface } from 'node:readline';

const [issuer, clientId, clientSecret, redirectUri] = process.argv.slice(2);
const lines = createInterface({ input: process.stdin })[Symbol.asyncIterator]();

const config = await client.discovery(new URL(issuer), clientId, clientSecret, undefined, {
  // The service answers on loopback over plain HTTP in tests.
  execute: [client.allowInsecureRequests],
});
const verifier = client.randomPKCECodeVerifier();
const state = client.randomState();
const nonce = client.randomNonce();
const url = client.buildAuthorizationUrl(config, {
  redirect_uri: redirectUri,
  scope: 'openid profile email',
  code_challenge: await client.calculatePKCECodeChallenge(verifier),
  code_challenge_method: 'S256',
  state,
  nonce,
});
console.log(JSON.stringify({ authorizationUrl: url.href }));

const { value: callback } = await lines.next();
const tokens = await client.authorizationCodeGrant(config, new URL(callback), {
  pkceCodeVerifier: verifier,
  expectedState: state,
  expectedNonce: nonce,
  idTokenExpected: true,
});
const claims = tokens.claims();
const userinfo = await client.fetchUserInfo(config, tokens.access_token, claims.sub);
console.log(JSON.stringify({ claims, userinfo, scope: tokens.scope, refreshToken: Boolean(tokens.refresh_token) }));
process.exit(0);
