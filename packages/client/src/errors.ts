import type { components } from './generated/api.js';

export type ErrorBody = components['schemas']['Error'];
export type ErrorDetail = NonNullable<ErrorBody['error']['details']>[number];

/** A hub answer that is not 2xx: the status and the hub's `{"error":{"code","message","details"}}`. */
export class ApiError extends Error {
  override readonly name = 'ApiError';

  constructor(
    readonly status: number,
    /** The hub's error code (NOT_FOUND, CONFLICT …), or HTTP_<status> when the body is not the hub's error shape. */
    readonly code: string,
    message: string,
    readonly details: ErrorDetail[],
    /** Where the request went, for messages. */
    readonly url: string,
  ) {
    super(message);
  }

  static from(response: Response, body: unknown): ApiError {
    const error = isErrorBody(body) ? body.error : undefined;
    const fallback = typeof body === 'string' && body ? body : response.statusText;
    return new ApiError(
      response.status,
      error?.code ?? `HTTP_${response.status}`,
      error?.message ?? fallback,
      error?.details ?? [],
      response.url,
    );
  }
}

function isErrorBody(body: unknown): body is ErrorBody {
  if (typeof body !== 'object' || body === null || !('error' in body)) return false;
  const error = body.error;
  return typeof error === 'object' && error !== null && 'code' in error && 'message' in error;
}

/** The type of `data` in what openapi-fetch resolves to: the member with `data` is the 2xx one. */
type Success<Answer> = Answer extends { data: infer Data } ? Data : never;

/** The data of a 2xx answer (undefined for 204); throws ApiError for any other status. */
export async function unwrap<Answer extends { response: Response }>(call: Promise<Answer>): Promise<Success<Answer>> {
  const answer: { data?: unknown; error?: unknown; response: Response } = await call;
  if (!answer.response.ok) throw ApiError.from(answer.response, answer.error);
  // openapi-fetch sets `data` to the parsed body whenever the status is 2xx.
  return answer.data as Success<Answer>;
}
