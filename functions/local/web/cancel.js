// Cancelling a running trace (only its starter may). Filled in once the API
// has the route.
'use strict';

export function renderCancel() {}
