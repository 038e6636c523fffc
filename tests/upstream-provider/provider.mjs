// An upstream OpenID provider for the federation tests: panva's oidc-provider over HTTPS on
// loopback, with the certificate the test authority issued. Its one argument is a JSON object:
// { issuer, port, key, cert (PEM file paths), clients (oidc-provider client metadata) }.
// Anyone may sign in with any name and password (the library's development pages); every scope
// asked is granted without a consent page; clients allowed the refresh grant get refresh tokens,
// and access tokens live a minute. It prints {"listening": true} once it takes connections.
import https from 'node:https';
import { readFileSync } from 'node:fs';
import Provider from 'oidc-provider';

const { issuer, port, key, cert, clients } = JSON.parse(process.argv[2]);

const provider = new Provider(issuer, {
  clients,
  scopes: ['openid', 'offline_access', 'calendar.read'],
  claims: {
    openid: ['sub'],
    email: ['email', 'email_verified'],
    profile: ['preferred_username', 'given_name', 'family_name'],
  },
  findAccount: async (ctx, id) => ({
    accountId: id,
    claims: async () => ({
      sub: id,
      email: `${id}@upstream.example`,
      email_verified: true,
      preferred_username: id,
      given_name: id.charAt(0).toUpperCase() + id.slice(1),
    }),
  }),
  // Every scope and claim asked for is granted: no consent page.
  loadExistingGrant: async (ctx) => {
    const grantId = ctx.oidc.result?.consent?.grantId || ctx.oidc.session.grantIdFor(ctx.oidc.client.clientId);
    if (grantId) {
      const existing = await ctx.oidc.provider.Grant.find(grantId);
      if (existing) return existing;
    }
    const grant = new ctx.oidc.provider.Grant({ clientId: ctx.oidc.client.clientId, accountId: ctx.oidc.session.accountId });
    grant.addOIDCScope(ctx.oidc.params.scope);
    grant.addOIDCClaims(['email', 'email_verified', 'preferred_username', 'given_name', 'family_name']);
    await grant.save();
    return grant;
  },
  issueRefreshToken: async (ctx, client) => client.grantTypeAllowed('refresh_token'),
  // The test asks the provider whether the tokens the service hands out are its own and active.
  features: { introspection: { enabled: true } },
  ttl: { AccessToken: 60, IdToken: 300, RefreshToken: 3600, Grant: 3600, Session: 3600, Interaction: 600 },
});

// What goes wrong inside the provider is told on stderr, which the test shows when it fails.
provider.on('server_error', (ctx, error) => console.error('oidc-provider server_error:', error));

https
  .createServer({ key: readFileSync(key), cert: readFileSync(cert) }, provider.callback())
  .listen(port, '127.0.0.1', () => console.log(JSON.stringify({ listening: true })));
