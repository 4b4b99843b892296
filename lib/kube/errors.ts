// Typed Kubernetes API errors, mapped once from HTTP status + metav1.Status, so callers
// branch on classes (NotFound, Conflict, ...) instead of numbers and strings.

/** A metav1.Status body as the apiserver returns it on failure. */
export interface StatusBody {
  kind?: string;
  status?: string;
  message?: string;
  reason?: string;
  code?: number;
  details?: {
    name?: string;
    group?: string;
    kind?: string;
    retryAfterSeconds?: number;
    causes?: { reason?: string; message?: string; field?: string }[];
  };
}

/** Any non-2xx answer from the apiserver (or a transport failure, code 0). */
export class ApiError extends Error {
  readonly code: number;
  readonly reason: string;
  readonly status: StatusBody;
  constructor(code: number, status: StatusBody, fallback: string) {
    super(status.message ?? fallback);
    this.name = new.target.name;
    this.code = code;
    this.reason = status.reason ?? '';
    this.status = status;
  }
}

/** 400 BadRequest: the request itself does not parse (a label selector, a field of a query). */
export class BadRequestError extends ApiError {}
/** 404: the object (or the resource type) does not exist. */
export class NotFoundError extends ApiError {}
/** 409 Conflict: a stale resourceVersion; re-read and retry. */
export class ConflictError extends ApiError {}
/** 409 AlreadyExists on create. */
export class AlreadyExistsError extends ApiError {}
/** 401: the credentials were not accepted. */
export class UnauthorizedError extends ApiError {}
/** 403: RBAC (or admission) refused the request. */
export class ForbiddenError extends ApiError {}
/** 422 Invalid: schema or CEL validation failed; `causes` name the fields. */
export class InvalidError extends ApiError {
  /** Field paths and messages from `details.causes`. */
  get causes(): { field: string; message: string }[] {
    return (this.status.details?.causes ?? []).map((c) => ({
      field: c.field ?? '',
      message: c.message ?? '',
    }));
  }
}
/** 410 Gone: a watch's resourceVersion is too old; relist. */
export class GoneError extends ApiError {}
/** 429: throttled (API priority and fairness or an eviction blocked by a PDB). */
export class TooManyRequestsError extends ApiError {
  /** Seconds the server asked to wait, if it said. */
  get retryAfterSeconds(): number | undefined {
    return this.status.details?.retryAfterSeconds;
  }
}
/** 5xx, or the server could not be reached (code 0). */
export class ServerError extends ApiError {}

/** Maps an HTTP status and its body to the matching error class. */
export function apiErrorFrom(code: number, body: unknown, fallback = `HTTP ${code}`): ApiError {
  const status = isStatus(body)
    ? body
    : { message: typeof body === 'string' && body !== '' ? body.trim() : fallback };
  switch (code) {
    case 400:
      return new BadRequestError(code, status, fallback);
    case 401:
      return new UnauthorizedError(code, status, fallback);
    case 403:
      return new ForbiddenError(code, status, fallback);
    case 404:
      return new NotFoundError(code, status, fallback);
    case 409:
      return status.reason === 'AlreadyExists'
        ? new AlreadyExistsError(code, status, fallback)
        : new ConflictError(code, status, fallback);
    case 410:
      return new GoneError(code, status, fallback);
    case 422:
      return new InvalidError(code, status, fallback);
    case 429:
      return new TooManyRequestsError(code, status, fallback);
    default:
      return code === 0 || code >= 500
        ? new ServerError(code, status, fallback)
        : new ApiError(code, status, fallback);
  }
}

function isStatus(body: unknown): body is StatusBody {
  return typeof body === 'object' && body !== null && (body as { kind?: unknown }).kind === 'Status';
}

/** True for errors worth retrying with backoff: conflicts, throttling, server and transport failures. */
export function isRetryable(err: unknown): boolean {
  return err instanceof ConflictError || err instanceof TooManyRequestsError || err instanceof ServerError;
}
