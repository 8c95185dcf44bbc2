export class UnsupportedNodeTypeError extends Error {
  constructor(readonly nodeType: string) {
    super(`no driver for node type ${nodeType}`);
    this.name = 'UnsupportedNodeTypeError';
  }
}

/** The node has no such operation (an HMC on a power shelf, a graceful shutdown of a shelf); nothing was sent. */
export class UnsupportedOperationError extends Error {
  constructor(
    readonly nodeType: string,
    readonly operation: string,
  ) {
    super(`${nodeType} does not support ${operation}`);
    this.name = 'UnsupportedOperationError';
  }
}
