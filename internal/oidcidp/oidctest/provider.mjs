// A real OpenID Connect provider for shardstore's tests: panva's
// oidc-provider (an OpenID Certified implementation) configured with two
// users, a policy claim and a groups claim, and two clients. Usage:
//   node provider.mjs PORT REDIRECT_URI[,REDIRECT_URI...]
// It prints "listening" once it serves.
import Provider from 'oidc-provider';

const [port, redirect] = process.argv.slice(2);
const redirects = redirect.split(',');
const accounts = {
  alice: { policy: 'readonly', groups: ['readers'] },
  bob: { policy: ['readwrite', 'diagnostics'], groups: ['writers'] },
};
const issuer = `http://127.0.0.1:${port}`;
const provider = new Provider(issuer, {
  clients: [
    { client_id: 'shardstore', client_secret: 'shardstore-client-secret', redirect_uris: redirects,
      grant_types: ['authorization_code'], response_types: ['code'] },
    { client_id: 'other-app', client_secret: 'other-app-secret', redirect_uris: redirects,
      grant_types: ['authorization_code'], response_types: ['code'] },
  ],
  claims: { openid: ['sub', 'policy', 'groups'] },
  conformIdTokenClaims: false, // the scope's claims go into the ID token
  async findAccount(ctx, id) {
    const a = accounts[id];
    if (!a) return undefined;
    return { accountId: id, async claims() { return { sub: id, ...a }; } };
  },
  features: { devInteractions: { enabled: true } },
  pkce: { required: () => false },
  cookies: { keys: ['shardstore-test-cookie-key'] },
  ttl: { IdToken: 3600 },
});
provider.proxy = false;
provider.listen(Number(port), '127.0.0.1', () => console.log('listening'));
