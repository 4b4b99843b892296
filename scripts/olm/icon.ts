// The package icon shown by OperatorHub and the console: a small SVG (a heartbeat line in
// a ring, "self-healing"), embedded base64 in the CSV and the catalog's olm.package.

const SVG = [
  '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 64 64" width="64" height="64">',
  '<circle cx="32" cy="32" r="29" fill="#0b3d5c" stroke="#37b6c9" stroke-width="4"/>',
  '<polyline points="10,34 22,34 27,22 33,44 38,28 42,34 54,34" fill="none" stroke="#ffffff"',
  ' stroke-width="4" stroke-linecap="round" stroke-linejoin="round"/>',
  '</svg>',
].join('');

/** The icon as OLM wants it: `{base64data, mediatype}`. */
export const ICON = { base64data: Buffer.from(SVG).toString('base64'), mediatype: 'image/svg+xml' } as const;
