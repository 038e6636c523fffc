// openid-client authenticating as a client that holds a key instead of a secret (private_key_jwt,
// RFC 7523): it makes an ES256 key pair with jose, prints the public JWK as a JSON line, reads the
// client id the test registered it under, then asks for client credentials tokens twice (a new
// assertion each time) and introspects the first, printing what it got as a JSON line.
// Argument: issuer.
import * as client from 'openid-client';
import { exportJWK, generateKeyPair } from 'jose';
import { createInterface } from 'node:readline';

const [issuer] = process.argv.slice(2);
const lines = createInterface({ input: process.stdin })[Symbol.asyncIterator]();
const kid = 'openid-client';
const { privateKey, publicKey } = await generateKeyPair('ES256', { extractable: true });
console.log(JSON.stringify({ jwk: { ...(await exportJWK(publicKey)), kid, alg: 'ES256', use: 'sig' } }));

const { value: clientId } = await lines.next();
const config = await client.discovery(new URL(issuer), clientId, undefined, client.PrivateKeyJwt({ key: privateKey, kid }), {
  // The service answers on loopback over plain HTTP in tests.
  execute: [client.allowInsecureRequests],
});
const granted = [];
for (let i = 0; i < 2; i += 1) {
  granted.push((await client.clientCredentialsGrant(config)).access_token);
}
const introspected = await client.tokenIntrospection(config, granted[0]);
console.log(JSON.stringify({ granted, active: introspected.active, client_id: introspected.client_id }));
process.exit(0);
