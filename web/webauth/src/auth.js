// The page's sign-in module: OpenID Connect through oidc-client-ts
// (authorization code flow with PKCE, public client, no secret). Bundled at
// build time by esbuild (make web) into auth.bundle.js, served as /auth.js.
//
// Where it signs in is read from /auth-config.json: the local stack's OIDC
// provider under `make run`, Cognito's managed login when deployed. With
// {"mode": "dev"} (a local stack started without a provider) it does nothing
// and the page uses its development identity; without readable settings the
// page cannot sign in and sends no identity (never the development one).
//
// Tokens are kept in the tab's sessionStorage (oidc-client-ts's user store),
// never in localStorage: a reload keeps the user signed in, and the tokens
// end with the tab. A new tab of the same page asks the open ones for the
// signed-in user over a BroadcastChannel (same origin only; nothing is
// written to storage shared between tabs), and a sign-out in one tab signs
// all out. Tokens are renewed with the refresh token before they expire
// (automaticSilentRenew; signinSilent uses the refresh token), and a user
// found expired in storage is renewed the same way. The trade-off: a script
// injected into the page could read sessionStorage, as it could read a
// token in memory by calling the page's own functions; the CSP (scripts
// from the page's origin only) is what keeps such scripts out. The API is sent the ID token: it is the token whose aud is the
// client ID and that carries the name claim the API shows to other users
// (Cognito's access tokens carry neither).
//
// The page uses window.tracingAuth:
//   ready            Promise of the signed-in user {id, name} or null
//   mode()           'oidc' | 'dev' | 'loading' | 'unavailable' (no sign-in
//                    settings: no identity at all)
//   user()           {id, name} or null
//   fetch(url, init) fetch with the Authorization header; on a 401 it renews
//                    the tokens once and retries
//   signIn(), signOut()
//   onChange(fn)     fn(user or null) after a renewal changed the user or a
//                    sign-out
import { User, UserManager, WebStorageStateStore } from 'oidc-client-ts';

const listeners = [];
let manager = null;
let current = null; // oidc-client-ts User
let mode = 'loading';
let config = null;
let signInError = '';

function userOf(u) {
  if (!u || u.expired || !u.id_token) return null;
  const p = u.profile || {};
  return { id: p.sub, name: p.name || p.email || p.sub };
}

function notify() {
  const u = userOf(current);
  renderControls();
  for (const fn of listeners) {
    try { fn(u); } catch (e) { console.error(e); }
  }
}

function home() {
  return location.origin + '/';
}

// loadConfig reads the sign-in settings. Only an explicit {"mode": "dev"}
// turns the development identity on; settings that cannot be read leave the
// page unable to sign in (mode 'unavailable'), never on the development
// identity.
async function loadConfig() {
  try {
    const res = await fetch('/auth-config.json', { cache: 'no-store' });
    if (!res.ok) return { mode: 'unavailable' };
    return await res.json();
  } catch {
    return { mode: 'unavailable' };
  }
}

async function start() {
  config = await loadConfig();
  if (config.mode === 'dev') {
    mode = 'dev';
    return null;
  }
  if (config.mode !== 'oidc' || !config.authority || !config.clientId) {
    mode = 'unavailable';
    return null;
  }
  mode = 'oidc';
  manager = new UserManager({
    authority: config.authority,
    client_id: config.clientId,
    redirect_uri: home(),
    post_logout_redirect_uri: home(),
    response_type: 'code',
    scope: config.scope || 'openid profile email',
    userStore: new WebStorageStateStore({ store: window.sessionStorage }),
    automaticSilentRenew: true,
    loadUserInfo: false,
    monitorSession: false,
  });
  manager.events.addUserLoaded((u) => { current = u; notify(); });
  manager.events.addUserUnloaded(() => { current = null; notify(); });
  manager.events.addSilentRenewError((e) => console.warn('token renewal failed:', e && e.message));

  const params = new URLSearchParams(location.search);
  if (params.has('state') && (params.has('code') || params.has('error'))) {
    try {
      current = await manager.signinRedirectCallback();
      // Back to where the sign-in started (the hash route), without the code.
      const back = typeof current.state === 'string' && current.state.startsWith('#') ? current.state : '';
      history.replaceState(null, '', location.pathname + back);
    } catch (e) {
      history.replaceState(null, '', location.pathname);
      console.warn('sign-in failed:', e && e.message);
      signInError = (e && e.message) || 'sign-in failed';
    }
  } else {
    current = await manager.getUser();
    if (!current) current = await fromOtherTab();
    if (current && current.expired && current.refresh_token) await renew();
  }
  if (channel) channel.onmessage = answerTabs;
  return userOf(current);
}

// The tabs of this page share the signed-in user over a BroadcastChannel:
// a new tab asks ('who'), a tab with a user answers with it, a sign-out
// tells every tab.
const channel = typeof BroadcastChannel === 'function' ? new BroadcastChannel('tracing-auth') : null;

function answerTabs(e) {
  const m = e.data || {};
  if (m.kind === 'who' && current && !current.expired) {
    channel.postMessage({ kind: 'user', user: current.toStorageString() });
  } else if (m.kind === 'signed-out' && current) {
    manager.removeUser().catch(() => {});
  }
}

async function fromOtherTab() {
  if (!channel) return null;
  const answer = new Promise((resolve) => {
    const timer = setTimeout(() => { channel.onmessage = null; resolve(null); }, 400);
    channel.onmessage = (e) => {
      if (e.data && e.data.kind === 'user') {
        clearTimeout(timer);
        channel.onmessage = null;
        resolve(e.data.user);
      }
    };
  });
  channel.postMessage({ kind: 'who' });
  const stored = await answer;
  if (!stored) return null;
  try {
    const u = User.fromStorageString(stored);
    await manager.storeUser(u);
    return u;
  } catch {
    return null;
  }
}


async function signIn() {
  if (!manager) return;
  await manager.signinRedirect({ state: location.hash || '' });
}

async function signOut() {
  if (!manager) return;
  await manager.removeUser();
  if (channel) channel.postMessage({ kind: 'signed-out' });
  // Cognito's /logout (and the local provider's copy of it) ends the
  // provider's session and comes back to logout_uri.
  if (config.logoutUrl) {
    location.assign(config.logoutUrl + '&logout_uri=' + encodeURIComponent(home()));
  }
}

function headers() {
  const u = userOf(current);
  return u ? { Authorization: 'Bearer ' + current.id_token } : {};
}

async function renew() {
  try {
    current = await manager.signinSilent();
    return !!userOf(current);
  } catch {
    return false;
  }
}

async function authFetch(input, init = {}) {
  if (mode !== 'oidc') return fetch(input, init);
  const withToken = () => {
    const h = new Headers(init.headers || {});
    const a = headers();
    if (a.Authorization) h.set('Authorization', a.Authorization);
    return fetch(input, { ...init, headers: h });
  };
  const res = await withToken();
  if (res.status !== 401 || !current || !current.refresh_token) return res;
  // Expired or revoked between renewals: renew once and retry.
  if (!(await renew())) return res;
  return withToken();
}

// renderControls shows who is signed in and the sign-in / sign-out button
// in the page's header; in oidc mode the development name picker is hidden.
function renderControls() {
  if (mode === 'dev' || mode === 'loading') return;
  const picker = document.getElementById('identity-form');
  if (picker) picker.hidden = true;
  let box = document.getElementById('auth-controls');
  if (!box) {
    box = document.createElement('div');
    box.id = 'auth-controls';
    box.className = 'identity';
    const header = document.querySelector('header') || document.body;
    header.append(box);
  }
  const u = userOf(current);
  box.replaceChildren();
  if (mode === 'unavailable') {
    const why = document.createElement('span');
    why.dataset.testid = 'auth-user';
    why.className = 'muted';
    why.textContent = 'sign-in is unavailable';
    box.append(why);
    const need = document.getElementById('need-identity');
    const p = need && need.querySelector('p');
    if (p) p.textContent = 'Signing in is not possible right now: the page could not read its sign-in settings. Reload the page to try again.';
    return;
  }
  const who = document.createElement('span');
  who.dataset.testid = 'auth-user';
  who.className = 'muted';
  who.textContent = u ? 'signed in as ' + u.name : (signInError ? 'sign-in failed: ' + signInError : 'not signed in');
  const button = document.createElement('button');
  button.type = 'button';
  button.dataset.testid = u ? 'sign-out' : 'sign-in';
  button.textContent = u ? 'Sign out' : 'Sign in';
  button.addEventListener('click', () => (u ? signOut() : signIn()));
  box.append(who, ' ', button);
  const need = document.getElementById('need-identity');
  if (need && !u) {
    const p = need.querySelector('p');
    if (p) p.textContent = 'Sign in to see the movies. Your name comes from your sign-in; it is what others see while you edit a movie.';
  }
}

const ready = start().then((u) => {
  if (document.readyState === 'loading') {
    document.addEventListener('DOMContentLoaded', renderControls, { once: true });
  } else {
    renderControls();
  }
  return u;
});

window.tracingAuth = Object.freeze({
  ready,
  mode: () => mode,
  user: () => userOf(current),
  fetch: authFetch,
  signIn,
  signOut,
  onChange: (fn) => { listeners.push(fn); },
});
