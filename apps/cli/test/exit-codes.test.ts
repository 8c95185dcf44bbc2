import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ApiError } from '@fleet/client';
import { CommanderError } from 'commander';
import { describeFailure, ExitCode, HubUnreachableError, JobFailedError, UsageError } from '../src/exit-codes.js';

describe('exit codes', () => {
  it('map each failure to its documented code and message', () => {
    const refused = new ApiError(
      400,
      'INVALID_ARGUMENT',
      'bad filter',
      [{ field: 'query.state', issue: 'unknown' }],
      '',
    );
    assert.deepEqual(describeFailure(refused), {
      code: ExitCode.refused,
      lines: ['error: INVALID_ARGUMENT (HTTP 400): bad filter', '  query.state: unknown'],
    });
    assert.equal(describeFailure(new ApiError(503, 'UNAVAILABLE', 'draining', [], '')).code, ExitCode.unreachable);
    assert.equal(describeFailure(new HubUnreachableError('http://h', 'ECONNREFUSED')).code, 4);
    assert.equal(describeFailure(new JobFailedError('job x failed')).code, 1);
    assert.deepEqual(describeFailure(new UsageError('no context')), { code: 2, lines: ['error: no context'] });
    // commander printed its own message already; --help is not a failure.
    assert.deepEqual(describeFailure(new CommanderError(1, 'commander.unknownOption', 'x')), { code: 2, lines: [] });
    assert.equal(describeFailure(new CommanderError(0, 'commander.helpDisplayed', '(outputHelp)')).code, 0);
  });
});
