// A resource server that verifies the service's access tokens with jose, as APIs do: it keeps the
// JWKS it fetched and fetches again only when its cache says so. Two verifiers run side by side:
//
// - "jose": createRemoteJWKSet with its defaults (keeps the JWKS 10 minutes, fetches again on an
//   unknown `kid` once 30 seconds have passed since the last fetch);
// - "cache": a verifier that honours the JWKS `max-age` (60 s) like an HTTP cache and never
//   fetches on an unknown `kid`, the strictest reader a key rollover must satisfy.
//
// Usage: node resource_server.mjs JWKS_URI ISSUER. Each line on stdin is {"token", "now"}, `now`
// being the service's clock in unix seconds: the time it moved since the last line is aged into
// both caches, and tokens are checked at that instant. Each answer is one JSON line:
// {"jose": {"ok", "kid", "code", "fetches"}, "cache": {...}}.

import { createInterface } from 'node:readline';
import { createRemoteJWKSet, customFetch, jwksCache, jwtVerify } from 'jose';

const [jwksUri, issuer] = process.argv.slice(2);

function verifier(options) {
  const cache = {};
  let fetches = 0;
  const counted = (...args) => {
    fetches += 1;
    return fetch(...args);
  };
  return {
    age(seconds) {
      if (Number.isFinite(cache.uat)) cache.uat -= seconds * 1000;
    },
    async verify(token, now) {
      const keys = createRemoteJWKSet(new URL(jwksUri), { ...options, [jwksCache]: cache, [customFetch]: counted });
      try {
        const { protectedHeader } = await jwtVerify(token, keys, { issuer, currentDate: new Date(now * 1000) });
        return { ok: true, kid: protectedHeader.kid, fetches };
      } catch (error) {
        return { ok: false, code: error.code ?? error.name, message: error.message, fetches };
      }
    },
  };
}

const verifiers = {
  jose: verifier({}),
  cache: verifier({ cacheMaxAge: 60_000, cooldownDuration: Infinity }),
};
let last;
for await (const line of createInterface({ input: process.stdin })) {
  const { token, now } = JSON.parse(line);
  const answer = {};
  for (const [name, one] of Object.entries(verifiers)) {
    if (last !== undefined) one.age(now - last);
    answer[name] = await one.verify(token, now);
  }
  last = now;
  process.stdout.write(JSON.stringify(answer) + '\n');
}
