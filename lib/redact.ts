// URLs in text a tenant or a person reads (status conditions, Events, plugin output) never
// carry a secret: the userinfo (`http://user:pass@host`) and the query string (tokens such as
// `?access_token=…`) are replaced by `***`, and so are those of any URL inside an error
// message. Shared by the operator (Prometheus, LLM errors) and the plugin. Pure.

/** Replacement of a redacted part. */
export const REDACTED = '***';

/**
 * `url` without userinfo, query or fragment values: `http://u:p@h:9090/p?q=1#f` →
 * `http://***@h:9090/p?***` (a bare `/` path is left out). A string that does not parse as a URL is run through
 * `redactUrls` instead, so a malformed URL with credentials is still covered.
 */
export function redactUrl(url: string): string {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return redactUrls(url);
  }
  const auth = u.username !== '' || u.password !== '' ? `${REDACTED}@` : '';
  const query = u.search !== '' ? `?${REDACTED}` : '';
  const hash = u.hash !== '' ? `#${REDACTED}` : '';
  const path = u.pathname === '/' ? '' : u.pathname;
  return `${u.protocol}//${auth}${u.host}${path}${query}${hash}`;
}

/**
 * Every `scheme://…` URL in `text` redacted (redactUrl's rule: userinfo up to the last `@`
 * before the path, the query and fragment up to the next whitespace); the rest unchanged.
 */
export function redactUrls(text: string): string {
  return text.replace(
    /\b([a-zA-Z][a-zA-Z0-9+.-]*:\/\/)([^\s/?#]*@)?([^\s/?#]*)([^\s?#]*)(\?[^\s#]*)?(#\S*)?/g,
    (
      _m,
      scheme: string,
      auth: string | undefined,
      host: string,
      path: string,
      query?: string,
      hash?: string,
    ) =>
      scheme +
      (auth !== undefined ? `${REDACTED}@` : '') +
      host +
      path +
      (query !== undefined ? `?${REDACTED}` : '') +
      (hash !== undefined ? `#${REDACTED}` : ''),
  );
}
