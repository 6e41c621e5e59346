// A real OpenID Connect provider for shardstore's tests: panva's
// oidc-provider (an OpenID Certified implementation) configured with two
// users, a policy claim and a groups claim, two clients of the
// authorization-code flow and a service client of the client-credentials
// grant (JWT access tokens for audience shardstore-svc, with a policy
// claim readonly). Usage:
//   node provider.mjs PORT REDIRECT_URI[,REDIRECT_URI...]
// It prints "listening" once it serves.
import Provider from 'oidc-provider';

const [port, redirect] = process.argv.slice(2);
const redirects = redirect.split(',');
const accounts = {
  // alice's preferred_username holds a wildcard: ${jwt:preferred_username}
  // must match it as text only.
  alice: { policy: 'readonly', groups: ['readers'], preferred_username: 'al*' },
  bob: { policy: ['readwrite', 'diagnostics'], groups: ['writers'], preferred_username: 'bob' },
};
const issuer = `http://127.0.0.1:${port}`;
const provider = new Provider(issuer, {
  clients: [
    { client_id: 'shardstore', client_secret: 'shardstore-client-secret', redirect_uris: redirects,
      grant_types: ['authorization_code'], response_types: ['code'] },
    { client_id: 'other-app', client_secret: 'other-app-secret', redirect_uris: redirects,
      grant_types: ['authorization_code'], response_types: ['code'] },
    { client_id: 'shardstore-svc', client_secret: 'shardstore-svc-secret', redirect_uris: [],
      grant_types: ['client_credentials'], response_types: [] },
  ],
  async extraTokenClaims(ctx, token) {
    if (token.kind === 'ClientCredentials') return { policy: 'readonly' };
    return undefined;
  },
  claims: { openid: ['sub', 'policy', 'groups', 'preferred_username'] },
  conformIdTokenClaims: false, // the scope's claims go into the ID token
  async findAccount(ctx, id) {
    const a = accounts[id];
    if (!a) return undefined;
    return { accountId: id, async claims() { return { sub: id, ...a }; } };
  },
  features: {
    devInteractions: { enabled: true },
    clientCredentials: { enabled: true },
    resourceIndicators: {
      enabled: true,
      // Only a request naming the resource gets a JWT access token.
      defaultResource: () => undefined,
      getResourceServerInfo: () => ({ scope: 'read', audience: 'shardstore-svc', accessTokenFormat: 'jwt', accessTokenTTL: 3600 }),
    },
  },
  pkce: { required: () => false },
  cookies: { keys: ['shardstore-test-cookie-key'] },
  ttl: { IdToken: 3600 },
});
provider.proxy = false;
provider.listen(Number(port), '127.0.0.1', () => console.log('listening'));
