// The API client and the user-facing wording of its refusals. No message
// names an internal field or code.
'use strict';

import { state } from './state.js';
import { CODE } from './constants.js';

export const IDENTITY_KEY = 'tracinglocks.devUser';
export const NAME_RE = /^[A-Za-z0-9 ._'-]{1,64}$/;

export function loadUser() {
  try {
    const u = JSON.parse(sessionStorage.getItem(IDENTITY_KEY) || 'null');
    return u && NAME_RE.test(u.name) && u.id ? u : null;
  } catch {
    return null;
  }
}

export function userFor(name) {
  name = name.trim().replace(/\s+/g, ' ');
  const slug = name.toLowerCase().replace(/[^a-z0-9]+/g, '-').replace(/^-|-$/g, '') || 'user';
  return { id: 'dev-' + slug, name };
}

export class APIError extends Error {
  constructor(status, problem) {
    super((problem && problem.title) || ('HTTP ' + status));
    this.status = status;
    this.problem = problem || {};
    this.code = this.problem.code || '';
    this.field = this.problem.field || '';
  }
}

// Sign-in hook (web/webauth, served as /auth.js): when the page
// signs in through OpenID Connect, tracingAuth.fetch adds the bearer token
// (renewing it once on a 401) and the development identity is never sent.
// The development identity is used only when /auth-config.json says
// {"mode": "dev"} (a local stack started without sign-in): without the
// sign-in module, or without its settings, the page sends no identity at all.
export const signInMode = () => (window.tracingAuth ? window.tracingAuth.mode() : 'unavailable');
const authFetch = (url, init) => (window.tracingAuth ? window.tracingAuth.fetch(url, init) : fetch(url, init));

// identityHeaders: the development identity, only without sign-in.
function identityHeaders() {
  if (signInMode() !== 'dev') return {};
  const h = {};
  if (state.user) {
    h['X-Dev-User'] = state.user.id;
    h['X-Dev-User-Name'] = state.user.name;
  }
  return h;
}

// api calls the API. Nothing is cached unless the caller asks (cache:
// 'default' for frame images, which never change); signal cancels,
// priority hints the fetch's priority; idempotencyKey makes a create
// retryable.
export async function api(method, path, { body, leaseId, accept, raw, keepalive, cache, signal, priority, idempotencyKey } = {}) {
  const headers = identityHeaders();
  if (idempotencyKey) headers['Idempotency-Key'] = idempotencyKey;
  if (body !== undefined) headers['Content-Type'] = 'application/json';
  if (leaseId) headers['Lease-Id'] = leaseId;
  headers.Accept = accept || 'application/json';
  const res = await authFetch(path, {
    method, headers, keepalive: !!keepalive, cache: cache || 'no-store', signal, priority: priority || 'auto',
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  if (!res.ok) {
    let problem = null;
    try { problem = await res.json(); } catch { /* not JSON */ }
    throw new APIError(res.status, problem);
  }
  if (raw) return res;
  if (res.status === 204) return null;
  const type = res.headers.get('Content-Type') || '';
  return type.includes('json') ? res.json() : res.text();
}

export const moviePath = (id) => '/movies/' + encodeURIComponent(id);

// errorText says what went wrong in the user's terms.
export function errorText(err) {
  if (!(err instanceof APIError)) return 'The server could not be reached. Check your connection and try again.';
  const h = err.problem.holder;
  switch (err.code) {
    case CODE.LEASE_HELD:
      return h ? h.userName + ' is editing this movie, so you cannot change it now.' : 'Someone else is editing this movie, so you cannot change it now.';
    case CODE.TRACING_IN_PROGRESS: return 'A trace is running: changes wait until it ends.';
    case CODE.LEASE_LOST: return 'You are no longer editing this movie: your editing session lapsed or was taken over.';
    case CODE.LEASE_REQUIRED: return 'You need to be editing this movie to change it.';
    case CODE.INVALID_INPUT: return 'That value is not allowed.';
    case CODE.NOT_FOUND: return 'This movie no longer exists.';
    case CODE.MOVIE_NOT_READY: return "This movie's video is not ready, so it cannot be analysed: it has not been uploaded yet, or it could not be read.";
    case CODE.UNAUTHENTICATED: return 'You are not signed in.';
    case CODE.SETTINGS_CHANGED: return 'The markers or settings changed while your correction was being saved, so it was not saved. Look at the frame again and correct it once more.';
    default: return err.status >= 500 ? 'The server could not do this. Try again in a moment.' : 'The request was refused.';
  }
}

// controlFor maps a refused field to the control that shows its error.
export function controlFor(field) {
  if (!field) return '';
  if (field === 'trim.start' || field === 'start') return 'trim-start';
  if (field === 'trim.end' || field === 'end' || field === 'trim') return 'trim-end';
  if (field === 'captureInterval') return 'capture-interval';
  if (field === 'fromFrame') return 'from-frame';
  if (field.startsWith('markers')) return 'markers';
  return '';
}
