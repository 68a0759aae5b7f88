// The Analyze page: the reference client of the browser API. Plain JS
// modules, no build step (docs/page.md). Everything the page may do is
// decided by the API; disabled controls are a courtesy, the API refuses
// writes without the live lease.
//
// One-way flow: state.js holds the one state; views/ render it (pure of
// writes, they bind DOM events to actions); actions/ call the API and
// commit the answers to the state, which renders the views again. Actions
// never import views (make lint checks it, and that no module imports
// another in a cycle). This module wires them and the browser's lifecycle.
'use strict';

import { state, subscribe, commit } from './state.js';
import { say } from './dom.js';
import { loadUser, signInMode } from './api.js';
import { navigate, setUser, refreshUser, restored } from './actions/nav.js';
import { leaveAnalyze } from './actions/movie.js';
import { heartbeat } from './actions/lease.js';
import * as routes from './views/routes.js';
import * as identity from './views/identity.js';
import * as list from './views/list.js';
import * as notready from './views/notready.js';
import * as analyze from './views/analyze.js';
import * as lease from './views/lease.js';
import * as player from './views/player.js';
import * as markers from './views/markers.js';
import * as settings from './views/settings.js';
import * as progress from './views/progress.js';
import * as job from './views/job.js';
import * as results from './views/results.js';
import * as history from './views/history.js';
import * as calibration from './views/calibration.js';
import * as plots from './views/plots.js';
import * as upload from './views/upload.js';
import * as manage from './views/manage.js';
import { syncResults } from './actions/results.js';
import { watchHistory } from './actions/history.js';
import { watchIdle, watchFree, noteActivity } from './actions/etiquette.js';
import * as etiquette from './views/etiquette.js';
import * as retrace from './views/retrace.js';
import * as correct from './views/correct.js';

// A panel is a module with render(state); a new panel adds itself here.
for (const v of [routes, identity, list, notready, analyze, lease, etiquette, player, markers, correct, settings, retrace, progress, job, results, history, calibration, plots, upload, manage]) {
  subscribe(v.render);
}
// A reaction, not a view: loads the derived results again when the frames,
// the calibration or the markers changed.
subscribe(syncResults);
subscribe(watchHistory);
subscribe(watchIdle);
subscribe(watchFree);
// Typing in the editor's controls is editing too: the idle clock restarts.
document.addEventListener('input', (e) => { if (state.leaseId && e.target.closest && e.target.closest('#analyze-view')) noteActivity(); });

commit({ user: loadUser() });

window.addEventListener('hashchange', navigate);
// Timers of a hidden tab are throttled: renew as soon as it is visible again.
document.addEventListener('visibilitychange', () => {
  if (document.visibilityState === 'visible' && state.leaseId) heartbeat(state.generation);
});
window.addEventListener('online', () => { if (state.leaseId) heartbeat(state.generation); });
window.addEventListener('offline', () => {
  if (state.leaseId) { commit({ offline: true }); say('You are offline: your changes cannot be saved until the connection returns.', 'error'); }
});
window.addEventListener('pagehide', () => leaveAnalyze(true));
window.addEventListener('pageshow', (e) => { if (e.persisted) restored(); });

// Sign-in hook: first let the sign-in module finish a redirect back from the
// provider; signed in, its user is the page's identity.
(window.tracingAuth ? window.tracingAuth.ready : Promise.resolve(null)).then((user) => {
  if (signInMode() === 'oidc') {
    commit({ user });
    window.tracingAuth.onChange((next) => {
      if (next && state.user && next.id === state.user.id) { refreshUser(next); return; }
      setUser(next);
    });
  } else if (signInMode() !== 'dev') {
    commit({ user: null }); // no sign-in available: no identity either
  }
  navigate();
});
