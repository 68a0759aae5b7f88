// DOM helpers with no page state: element building, text that changes only
// when it differs, and the effects actions may cause in fixed places (the
// message area, a field's error, focus). No module state is read here.
'use strict';

export const $ = (sel) => document.querySelector(sel);

export function show(e, on) { e.hidden = !on; }

export function el(tag, attrs, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (k === 'dataset') Object.assign(e.dataset, v);
    else if (k === 'style') e.style.cssText = v;
    else if (k.startsWith('aria-') || k === 'role') e.setAttribute(k, v);
    else if (k in e) e[k] = v;
    else e.setAttribute(k, v);
  }
  for (const c of children) if (c != null) e.append(c);
  return e;
}

export function fmtTime(iso) {
  if (!iso) return '';
  const d = new Date(iso);
  if (isNaN(d)) return '';
  const sameDay = new Date().toDateString() === d.toDateString();
  return sameDay ? d.toLocaleTimeString(undefined, { timeStyle: 'medium' })
    : d.toLocaleString(undefined, { dateStyle: 'medium', timeStyle: 'medium' });
}

export function timeEl(iso, testid) {
  const t = document.createElement('time');
  t.dateTime = iso;
  t.textContent = fmtTime(iso);
  if (testid) t.dataset.testid = testid;
  return t;
}

// say shows a message in the reserved area above the page (it never moves
// the page) and clears it after a while; a newer message replaces it.
let sayTimer = null;
export function say(text, kind, ms) {
  const m = $('#message');
  clearTimeout(sayTimer);
  m.textContent = text || '';
  m.dataset.kind = text ? (kind || 'info') : '';
  m.title = text || '';
  if (text) sayTimer = setTimeout(() => { m.textContent = ''; m.dataset.kind = ''; m.title = ''; }, ms || (kind === 'error' ? 10000 : 6000));
}

// setText changes an element's text only when it differs, so a live region
// is announced only when what it says changes.
export function setText(e, text) {
  if (e.textContent !== text) e.textContent = text;
}

// replaceIfChanged swaps an element's children only when their text differs.
export function replaceIfChanged(e, nodes) {
  const key = nodes.map((n) => (typeof n === 'string' ? n : n.textContent + '|' + (n.dateTime || ''))).join('');
  if (e.dataset.key === key) return;
  e.dataset.key = key;
  e.replaceChildren(...nodes);
}

// Field errors sit next to their control, which gets aria-invalid.
export function fieldError(inputId, text) {
  const input = document.getElementById(inputId);
  const err = document.getElementById(inputId + '-error');
  if (input && input.tagName === 'INPUT') {
    if (text) input.setAttribute('aria-invalid', 'true'); else input.removeAttribute('aria-invalid');
  }
  if (err) { err.textContent = text || ''; show(err, !!text); }
}

export function clearFieldErrors() {
  for (const i of document.querySelectorAll('[aria-invalid]')) i.removeAttribute('aria-invalid');
  for (const e of document.querySelectorAll('.field-error')) { e.textContent = ''; e.hidden = true; }
}

// focusEl moves focus to an element (a heading after a route change), so
// keyboard and screen reader users start at the new view.
export function focusEl(sel) {
  const h = $(sel);
  if (h && !h.hidden) h.focus({ preventScroll: false });
}

export const plural = (n, one, many) => n + ' ' + (n === 1 ? one : (many || one + 's'));
