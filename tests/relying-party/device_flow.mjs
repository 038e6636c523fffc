// openid-client as a device without a browser (the device authorization grant, RFC 8628): it asks
// for a device code, prints what the person is to be shown as a JSON line, reads a line once the
// test's person has answered, then polls the token endpoint until it gets the tokens, and prints
// them with the user info they open.
// Arguments: issuer, client id, scope.
import * as client from 'openid-client';
import { createInterface } from 'node:readline';

const [issuer, clientId, scope] = process.argv.slice(2);
const lines = createInterface({ input: process.stdin })[Symbol.asyncIterator]();
const config = await client.discovery(new URL(issuer), clientId, undefined, client.None(), {
  // The service answers on loopback over plain HTTP in tests.
  execute: [client.allowInsecureRequests],
});
const started = await client.initiateDeviceAuthorization(config, { scope });
console.log(JSON.stringify(started));

await lines.next();
// The test's clock has already moved past the interval: the first poll is answered at once.
const tokens = await client.pollDeviceAuthorizationGrant(config, { ...started, interval: 0 });
const claims = tokens.claims();
const info = await client.fetchUserInfo(config, tokens.access_token, claims.sub);
console.log(JSON.stringify({ token_type: tokens.token_type, scope: tokens.scope, sub: claims.sub, userinfo_sub: info.sub }));
process.exit(0);
