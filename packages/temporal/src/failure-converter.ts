import { DefaultFailureConverter } from '@temporalio/common';

/**
 * Failure messages and stack traces name devices and their URIs (typed errors do, by design). Encoded as common
 * attributes they travel as a payload, which the payload codec encrypts like any other; without a codec they are
 * plain JSON that Temporal's UI and CLI still show. Loaded by path (`failureConverterPath`) into the workflow bundle,
 * the worker and the clients, so all of them read and write failures the same way. It runs in the workflow sandbox:
 * no Node modules here.
 */
export const failureConverter = new DefaultFailureConverter({ encodeCommonAttributes: true });
