import { LogController, type FastifyReply, type FastifyRequest } from 'fastify';

/**
 * One access line per request, written as it ends: method, URL, caller's address, status and time (the request id is
 * the logger's binding). Fastify's default is two info lines, one at arrival: half the log volume and about 0.1 ms of
 * CPU a request (docs/inventory.md "Listing devices"). The arrival line stays at debug level, for a request that
 * never ends. Fastify's other lines (its error handler, a 404, a failed serializer) are unchanged.
 */
export class AccessLog extends LogController {
  /** The caller's address, read at arrival: once the response has ended, the request no longer holds its socket. */
  private readonly callers = new WeakMap<FastifyRequest, string>();

  override incomingRequest(request: FastifyRequest): void {
    const address = request.ip;
    if (address) this.callers.set(request, address);
    request.log.debug({ method: request.method, url: request.url, remoteAddress: address }, 'incoming request');
  }

  override requestCompleted(error: Error | null | undefined, request: FastifyRequest, reply: FastifyReply): void {
    // Flat fields: the logger's `req` and `res` serializers read a live request and reply.
    const fields = {
      method: request.method,
      url: request.url,
      remoteAddress: this.callers.get(request),
      statusCode: reply.statusCode,
      responseTime: reply.elapsedTime,
    };
    if (error) reply.log.error({ ...fields, err: error }, 'request errored');
    else reply.log.info(fields, 'request completed');
  }
}
