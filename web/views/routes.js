// Which section the page shows, and the document's title.
'use strict';

import { $, show } from '../dom.js';
import { ROUTE } from '../constants.js';
import { notReady } from '../facts.js';

export function render(s) {
  const r = s.route;
  if (!r) return;
  const signed = !!s.user;
  const analyzing = signed && r.name === ROUTE.ANALYZE;
  const m = s.movie;
  show($('#need-identity'), !signed);
  show($('#list-view'), signed && r.name === ROUTE.LIST);
  show($('#not-found'), signed && (r.name === ROUTE.UNKNOWN || (analyzing && !!s.notFound)));
  show($('#not-ready'), analyzing && notReady(m));
  show($('#analyze-view'), analyzing && !!m && !notReady(m));
  if (!signed) return;
  if (r.name === ROUTE.LIST) document.title = 'Movies - Movie tracing';
  else if (r.name === ROUTE.UNKNOWN) document.title = 'Page not found - Movie tracing';
  else if (s.notFound) document.title = 'Movie not found - Movie tracing';
  else if (notReady(m)) document.title = m.title + ' (not ready) - Movie tracing';
  else if (m) document.title = m.title + ' - Analyze';
}
