import type { FastifyError, FastifyInstance } from 'fastify';
import type { ErrorBody } from '@fleet/domain';
import { ApiError } from '../errors.js';

/** One error shape for every failure: `{"error": {"code", "message", "details"}}`. */
export function registerErrorHandling(app: FastifyInstance): void {
  app.setErrorHandler((err: FastifyError | ApiError, request, reply) => {
    let body: ErrorBody;
    let status: number;
    if (err instanceof ApiError) {
      status = err.status;
      body = { error: { code: err.code, message: err.message, ...(err.details ? { details: err.details } : {}) } };
    } else if (err.validation || err.code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE' || err.statusCode === 400 || err.statusCode === 415 || err.statusCode === 413) {
      status = err.statusCode ?? 400;
      body = { error: { code: 'INVALID_ARGUMENT', message: err.message, details: [{ field: 'body', issue: err.message }] } };
    } else {
      status = 500;
      request.log.error({ err }, 'unhandled error');
      body = { error: { code: 'INTERNAL', message: 'internal error; see the hub log for request ' + String(request.id) } };
    }
    if (status >= 500 && err instanceof ApiError) request.log.error({ err }, err.message);
    void reply.status(status).send(body);
  });
  app.setNotFoundHandler((request, reply) => {
    void reply.status(404).send({ error: { code: 'NOT_FOUND', message: `no route ${request.method} ${request.url}` } } satisfies ErrorBody);
  });
}
