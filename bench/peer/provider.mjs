// The peer of bench/peer.sh: panva's oidc-provider on plain HTTP on loopback, set up to do what
// the load runs ask of Castellan, the same way:
// - `agent` gets client-credentials tokens for the scope `orders:read`, as JWTs signed with ES256
//   (a resource server with JWT access tokens), so that each grant costs one signature, as
//   Castellan's do;
// - `web` signs people in with the code flow and PKCE (S256), its ID tokens signed with ES256; its
//   access tokens are the provider's own opaque ones, which its introspection looks up;
// - `app` is `web` with access tokens for the resource server, JWTs signed with ES256: a code
//   exchange of `app` signs two tokens, an access token and an ID token, as Castellan's do;
// - anyone may sign in with any name (the library's development pages), and every scope asked is
//   granted without a consent page, so that a signed-in browser's next authorization request is
//   answered at once with a code (single sign-on).
// Tokens, codes and sessions live in memory, in a map without bound (`Everything` below): the
// library's own memory adapter keeps only the last 1,000 models, which under load drops the
// signed-in session and the token introspected, so the peer would answer redirects to its login
// page and "not active" instead of doing the work asked.
//
//   node provider.mjs PORT [WORKERS]
//
// With WORKERS > 1 (node's cluster), each worker has its own memory: only stateless runs (client
// credentials) may use them. It prints {"listening": true} once it takes connections.
import cluster from 'node:cluster';
import { generateKeyPairSync } from 'node:crypto';
import http from 'node:http';
import Provider from 'oidc-provider';

/** An adapter keeping every model in memory until it expires: as a database would, without the I/O. */
class Everything {
  static models = new Map();

  constructor(name) {
    this.name = name;
  }

  key(id) {
    return `${this.name}:${id}`;
  }

  async upsert(id, payload, expiresIn) {
    const expires = expiresIn ? Date.now() + expiresIn * 1000 : Infinity;
    Everything.models.set(this.key(id), { payload, expires });
    if (payload.grantId) {
      const grant = `grant:${payload.grantId}`;
      const keys = Everything.models.get(grant)?.payload ?? [];
      keys.push(this.key(id));
      Everything.models.set(grant, { payload: keys, expires });
    }
    if (payload.uid) Everything.models.set(`uid:${payload.uid}`, { payload: id, expires });
    if (payload.userCode) Everything.models.set(`userCode:${payload.userCode}`, { payload: id, expires });
  }

  async find(id) {
    const found = Everything.models.get(this.key(id));
    if (!found) return undefined;
    if (found.expires < Date.now()) {
      Everything.models.delete(this.key(id));
      return undefined;
    }
    return found.payload;
  }

  async findByUid(uid) {
    const id = Everything.models.get(`uid:${uid}`)?.payload;
    return id === undefined ? undefined : this.find(id);
  }

  async findByUserCode(userCode) {
    const id = Everything.models.get(`userCode:${userCode}`)?.payload;
    return id === undefined ? undefined : this.find(id);
  }

  async consume(id) {
    const found = Everything.models.get(this.key(id));
    if (found) found.payload.consumed = Math.floor(Date.now() / 1000);
  }

  async destroy(id) {
    Everything.models.delete(this.key(id));
  }

  async revokeByGrantId(grantId) {
    for (const key of Everything.models.get(`grant:${grantId}`)?.payload ?? []) Everything.models.delete(key);
    Everything.models.delete(`grant:${grantId}`);
  }
}

const port = Number(process.argv[2]);
const workers = Number(process.argv[3] || 1);
const issuer = `http://127.0.0.1:${port}`;

if (cluster.isPrimary && workers > 1) {
  // Every worker signs with the same key and reads the same cookies.
  const key = generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey.export({ format: 'jwk' });
  let listening = 0;
  for (let i = 0; i < workers; i += 1) {
    cluster.fork({ PEER_KEY: JSON.stringify(key) }).on('message', () => {
      listening += 1;
      if (listening === workers) console.log(JSON.stringify({ listening: true }));
    });
  }
} else {
  const key = process.env.PEER_KEY
    ? JSON.parse(process.env.PEER_KEY)
    : generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey.export({ format: 'jwk' });
  const api = 'https://api.example';
  const provider = new Provider(issuer, {
    adapter: Everything,
    clients: [
      {
        client_id: 'agent',
        client_secret: 'agent-secret',
        grant_types: ['client_credentials'],
        response_types: [],
        redirect_uris: [],
        scope: 'orders:read',
        id_token_signed_response_alg: 'ES256',
      },
      ...['web', 'app'].map((id) => ({
        client_id: id,
        client_secret: `${id}-secret`,
        grant_types: ['authorization_code'],
        response_types: ['code'],
        redirect_uris: ['http://127.0.0.1:9/callback'],
        id_token_signed_response_alg: 'ES256',
      })),
    ],
    jwks: { keys: [{ ...key, kid: 'peer', alg: 'ES256', use: 'sig' }] },
    cookies: { keys: ['a bench key, the same in every worker'] },
    scopes: ['openid', 'orders:read'],
    findAccount: async (ctx, id) => ({ accountId: id, claims: async () => ({ sub: id }) }),
    loadExistingGrant: async (ctx) => {
      const grantId = ctx.oidc.result?.consent?.grantId || ctx.oidc.session.grantIdFor(ctx.oidc.client.clientId);
      if (grantId) {
        const existing = await ctx.oidc.provider.Grant.find(grantId);
        if (existing) return existing;
      }
      const grant = new ctx.oidc.provider.Grant({ clientId: ctx.oidc.client.clientId, accountId: ctx.oidc.session.accountId });
      grant.addOIDCScope(ctx.oidc.params.scope);
      if (ctx.oidc.client.clientId === 'app') grant.addResourceScope(api, 'orders:read');
      await grant.save();
      return grant;
    },
    pkce: { required: () => true },
    features: {
      clientCredentials: { enabled: true },
      introspection: { enabled: true },
      resourceIndicators: {
        enabled: true,
        defaultResource: (ctx, client) => (client.clientId === 'web' ? undefined : api),
        useGrantedResource: () => true,
        getResourceServerInfo: () => ({
          scope: 'orders:read',
          accessTokenFormat: 'jwt',
          accessTokenTTL: 300,
          jwt: { sign: { alg: 'ES256' } },
        }),
      },
    },
    ttl: { AccessToken: 300, ClientCredentials: 300, IdToken: 300, Grant: 3600, Session: 3600, Interaction: 600 },
  });
  provider.on('server_error', (ctx, error) => console.error('oidc-provider server_error:', error));
  http.createServer(provider.callback()).listen(port, '127.0.0.1', () => {
    if (cluster.isWorker) process.send('listening');
    else console.log(JSON.stringify({ listening: true }));
  });
}
