// The page's one state. Views read it; only actions change it, through
// commit(), which replaces it with a new frozen object and renders every
// view synchronously. Nothing else may assign to it (a frozen object: an
// assignment anywhere throws). Timers and caches are not state: they live
// in the action or view module that owns them.
'use strict';

// analysisFields: what belongs to the movie open in Analyze; reset when it
// closes.
export const analysisFields = () => ({
  movieId: null,
  movie: null,
  leaseId: null,        // our analysis lease, when we hold it
  leaseSeconds: 0,
  leaseExpiresAt: '',   // as the API last told us (grant or renewal)
  leaseStartedAt: '',   // the lock's start as the movie row showed it
  lostLease: false,     // we held it and lost it: the banner says so until reacquired
  offline: false,       // the last renewal could not reach the server
  frames: [],           // traced frames, sorted by frame index
  framesByIndex: new Map(),
  framesKey: null,      // what the loaded frames belong to
  frame: 0,             // the frame shown
  playing: false,
  view: Object.freeze({ zoom: 1, cx: 0.5, cy: 0.5 }), // the viewer's zoom and pan (web/viewport.js)
  selected: null,       // id of the marker the keyboard moves
  correcting: null,     // a point being corrected on the shown frame: {markerId, frame, x, y} (actions/keys.js)
  startedTrace: false,  // this page started the running trace
  dirty: new Set(),     // ids of settings inputs changed and not saved
  history: { events: [], older: [], next: null, loaded: false },
  notFound: false,      // the movie asked for does not exist
  results: null,        // GET /movies/{id}/results for resultsKey (actions/results.js)
  resultsKey: null,
  calPicking: null,     // what the next clicks on the frame set: 'line', 'origin' or null
  calPoints: [],        // the line's first end while picking it
  calDraft: null,       // picked, not yet saved calibration points (fractions of the frame)
  idleSeconds: 0,       // how long without an edit before "Still editing?" (the lease grant says)
  idleAsk: null,        // "Still editing?" is asked: when the lock is released unless answered (ISO time)
  notifyFree: false,    // this viewer asked to be told when the movie is free
  retraceAsk: null,     // Retrace waits for "Replace the results?": the form's values
});

export let state = Object.freeze({
  user: null,
  route: null,
  generation: 0,        // bumps on every route change: stale async work stops
  movies: null,         // the list, sorted by title
  uploads: [],          // the Add a movie panel's rows (actions/upload.js)
  manage: null,         // the open rename/delete dialog (actions/manage.js)
  speed: 1,             // playback speed, 0.25 to 4 (kept across movies)
  ...analysisFields(),
});

const views = [];
let rendering = false;
let again = false;

// subscribe adds a view: render(state) runs after every commit.
export function subscribe(render) { views.push(render); }

// commit applies a patch and renders. A commit made while rendering (a view
// must not make one, but a browser event may arrive) renders once more after.
export function commit(patch) {
  state = Object.freeze({ ...state, ...patch });
  if (rendering) { again = true; return; }
  rendering = true;
  try {
    do {
      again = false;
      for (const v of views) v(state);
    } while (again);
  } finally {
    rendering = false;
  }
}
